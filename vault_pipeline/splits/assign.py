"""The seeded hash split of targets into train / validation / test.

Each target gets a number in [0, 1) from sha256(seed, id), which depends on nothing but the
seed and the id. With fractions, the split follows from that number alone, so adding papers
never moves an existing one. Fixed sizes cannot be both exact and stable without memory (a
newcomer with a small number would push someone out), so sizes keep the previous assignment
of every paper still a target and fill only free held-out places, in hash order."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

TRAIN, VALIDATION, TEST = "train", "validation", "test"
TARGET_SPLITS = (TRAIN, VALIDATION, TEST)


def hash_unit(arxiv_id: str, seed: int) -> float:
    """A uniform number in [0, 1), fixed by the seed and the id."""
    digest = hashlib.sha256(f"{seed}\x1f{arxiv_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def by_fraction(ids: Iterable[str], seed: int, validation: float,
                test: float) -> dict[str, str]:
    """test below ``test``, validation below ``test + validation``, train above."""
    out = {}
    for arxiv_id in ids:
        unit = hash_unit(arxiv_id, seed)
        out[arxiv_id] = TEST if unit < test else VALIDATION if unit < test + validation \
            else TRAIN
    return out


def by_size(ids: Iterable[str], seed: int, validation: int, test: int,
            previous: Mapping[str, str]) -> dict[str, str]:
    """Keep every previous assignment; fill free test, then validation places in hash
    order; the rest train. ``previous`` must come from the same cutoff and seed."""
    ids = list(ids)
    out = {i: previous[i] for i in ids if previous.get(i) in TARGET_SPLITS}
    free = {TEST: test - sum(s == TEST for s in out.values()),
            VALIDATION: validation - sum(s == VALIDATION for s in out.values())}
    for arxiv_id in sorted((i for i in ids if i not in out),
                           key=lambda i: (hash_unit(i, seed), i)):
        split = next((s for s in (TEST, VALIDATION) if free[s] > 0), TRAIN)
        if split != TRAIN:
            free[split] -= 1
        out[arxiv_id] = split
    return out
