"""The state of a vault in a few distributions: papers by year and by category, split sizes,
document statuses, and the leak and quarantine rates of the latest integrity report. The
same figures feed `vault report` and the charts in the assets' Dagster metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .paths import VaultPaths

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


def _rate(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def integrity_rates(report: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """Leak and quarantine rates of an integrity report (`integrity/latest.json`)."""
    if not report:
        return []
    records = report.get("records", {})
    views = report.get("views", {})
    residual = report.get("residual", {})
    quarantined = report.get("quarantined", {}).get("papers", 0)
    rows, view_rows = records.get("rows", 0), views.get("rows", 0)
    return [
        ("papers quarantined", _rate(quarantined, rows + quarantined)),
        ("records with a leaky answer", _rate(records.get("with_leaky_answer", 0), rows)),
        ("records left leaking", _rate(residual.get("record_leaks", 0), rows)),
        ("views left leaking", _rate(residual.get("view_leaks", 0), view_rows)),
        ("method leaks in problem views", float(
            report.get("method_leaks", {}).get("remaining_rate", 0.0))),
        ("placeholder views", float(views.get("placeholder_rate", 0.0))),
    ]


@dataclass
class Overview:
    home: str
    built_at: str
    papers: int = 0
    by_year: list[tuple[str, int]] = field(default_factory=list)
    by_category: list[tuple[str, int]] = field(default_factory=list)
    splits: list[tuple[str, int]] = field(default_factory=list)
    cutoff: str | None = None
    documents: list[tuple[str, int]] = field(default_factory=list)
    integrity: list[tuple[str, float]] = field(default_factory=list)
    integrity_run: str | None = None
    missing: list[str] = field(default_factory=list)  # tables not built yet


def _counts(paths: VaultPaths, table: str, column: str, overview: Overview) -> dict[str, int]:
    frame = paths.store.read_optional(table, [column])
    if frame is None:
        overview.missing.append(table)
        return {}
    return {str(k): int(n) for k, n in frame.group_by(column).len().iter_rows()}


def collect(paths: VaultPaths) -> Overview:
    """The overview of the vault at ``paths`` (tables not built yet are listed, not an
    error: a new vault has a report too)."""
    import polars as pl

    from .integrity.report import read_latest

    overview = Overview(home=str(paths.home),
                        built_at=datetime.now(UTC).isoformat(timespec="seconds"))
    papers = paths.store.read_optional("papers", ["published", "primary_category"])
    if papers is None:
        overview.missing.append("papers")
    else:
        overview.papers = papers.height
        by_year = papers.group_by(pl.col("published").dt.year().alias("year")).len()
        overview.by_year = years({("unknown" if y is None else y): n
                                  for y, n in by_year.iter_rows()})
        overview.by_category = top({("none" if c is None else c): n for c, n in
                                    papers.group_by("primary_category").len().iter_rows()})
    overview.splits = split_sizes(_counts(paths, "splits", "split", overview))
    if "splits" not in overview.missing:
        cutoffs = paths.store.read_required("splits", ["cutoff"])["cutoff"].unique()
        overview.cutoff = str(cutoffs[0]) if cutoffs.len() == 1 else None
    overview.documents = top(_counts(paths, "documents", "status", overview))
    report = read_latest(paths)
    overview.integrity = integrity_rates(report)
    overview.integrity_run = (report or {}).get("built_at")
    if report is None:
        overview.missing.append("integrity report")
    return overview
