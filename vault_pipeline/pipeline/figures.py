"""Distributions as a stage's figures show them (and `vault report` draws them): years in
order, the largest categories, split sizes in pipeline order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SPLIT_ORDER = ("vault", "train", "validation", "test", "excluded")
TOP_CATEGORIES = 15


def years(counts: Mapping[Any, int]) -> list[tuple[str, int]]:
    """Counts by year in order, every year from the first to the last (zeros included), so
    that a gap shows as one; labels that are not years (a missing date) come last."""
    known = {int(k): int(v) for k, v in counts.items() if str(k).isdigit()}
    other = [(str(k), int(v)) for k, v in counts.items() if not str(k).isdigit()]
    if not known:
        return other
    span = range(min(known), max(known) + 1)
    return [(str(y), known.get(y, 0)) for y in span] + other


def top(counts: Mapping[Any, int], n: int = TOP_CATEGORIES) -> list[tuple[str, int]]:
    """The ``n`` largest, largest first, the rest summed as `other`."""
    ranked = sorted(((str(k), int(v)) for k, v in counts.items()), key=lambda kv: (-kv[1], kv[0]))
    head, rest = ranked[:n], ranked[n:]
    return head + ([(f"other ({len(rest)})", sum(v for _, v in rest))] if rest else [])


def split_sizes(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Split sizes in pipeline order (vault, train, validation, test, excluded)."""
    ordered = [(s, int(counts.get(s, 0))) for s in SPLIT_ORDER]
    return ordered + [(str(k), int(v)) for k, v in counts.items() if k not in SPLIT_ORDER]


