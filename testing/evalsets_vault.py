"""Small vaults of evaluation sets for the evalsets and evalruns tests: constructed OpenReview
venues written as raw pages, their `reviews` built, the sets drawn under small settings (the
lexical similarity, a few dozen papers a label)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vault_pipeline.evalsets.build import build_evalsets
from vault_pipeline.evalsets.constructed import constructed_venue, write_pages
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.store.paths import VaultPaths

ICLR25, ICLR24, ICLR26 = ("ICLR.cc/2025/Conference", "ICLR.cc/2024/Conference",
                          "ICLR.cc/2026/Conference")
QUOTA = {"Reject": 40, "Poster": 20, "Spotlight": 6, "Oral": 3}
PAIRS = {"reject-oral": 5, "poster-oral": 4, "reject-poster": 10, "poster-spotlight": 6}


def small(**changes) -> EvalSetsSettings:
    """Settings of small sets drawn from ICLR 2025 (``changes`` over them)."""
    base = {"idea_venues": (ICLR25,), "pointwise_quota": QUOTA, "pair_quota": PAIRS,
            "groups_per_venue": 12, "group_pool": 60, "group_top_k": 25, "per_bin": 10,
            "anchor_size": 8, "embedder": "lexical"}
    return EvalSetsSettings.resolve(run_config=base | changes)


def vault_with(root: Path, notes: dict[str, list[dict]], extra: Sequence[Path] = ()
               ) -> VaultPaths:
    """A vault under ``root`` whose raw zone holds ``notes`` (pages of 200 notes a venue stem)
    and the ``extra`` files, with `reviews` built."""
    paths = VaultPaths(root / "vault").ensure()
    inbox = root / "inbox"
    for stem, venue_notes in notes.items():
        write_pages(venue_notes, inbox, stem, page_size=200)
    RawZone(paths).import_paths([inbox, *extra])
    build_reviews(paths)
    return paths


def two_venue_sets(root: Path, iclr25: int, iclr24: int, settings: EvalSetsSettings
                   ) -> VaultPaths:
    """The sets of two constructed venues: ``iclr25`` submissions of ICLR 2025 (seed 1) and
    ``iclr24`` of ICLR 2024 (seed 2, ratings as strings), drawn under ``settings``."""
    paths = vault_with(root, {
        "iclr25": constructed_venue(ICLR25, iclr25, seed=1),
        "iclr24": constructed_venue(ICLR24, iclr24, seed=2, rating_style="string"),
    })
    build_evalsets(paths, settings, log=lambda *_: None)
    return paths
