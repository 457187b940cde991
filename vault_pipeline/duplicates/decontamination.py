"""Task decontamination of the held-out targets (validation and test), as NeMo Curator
decontaminates downstream tasks: the share of a held-out target's n-grams (13 by default)
that one retrievable vault paper's views hold, and that one training target of another split
holds. A training example over the threshold is removed (its answer would be a held-out
target's); a held-out target over it against the vault is counted on the data card (the
duplicates stage makes it no target: its views' n-grams match a pre-cutoff paper's, so the
count is zero unless a stage ran out of order)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from vault_pipeline.duplicates import ngrams
from vault_pipeline.duplicates.settings import DuplicatesSettings

HELD_OUT, TRAIN, VAULT = ("validation", "test"), "train", "vault"


@dataclass(frozen=True)
class Decontamination:
    n: int
    threshold: float
    held_out: int  # held-out targets compared
    against_vault: pl.DataFrame  # held-out target (query) in a vault paper (match)
    against_training: pl.DataFrame  # training target (query) holding a held-out one's n-grams

    def summary(self) -> dict[str, object]:
        return {"n": self.n, "threshold": self.threshold, "held_out_targets": self.held_out,
                "held_out_overlapping_vault": self.against_vault.height,
                "training_targets_removed": self.against_training.height,
                "removed": sorted(self.against_training["query"].to_list())}


def _texts(views: pl.DataFrame, ids: pl.Series) -> pl.DataFrame:
    return (views.filter(pl.col("arxiv_id").is_in(ids.implode()) & pl.col("text").is_not_null())
            .sort("arxiv_id", "view").group_by("arxiv_id", maintain_order=True)
            .agg(pl.col("text").str.join("\n")).rename({"arxiv_id": "id"}))


def decontaminate(splits: pl.DataFrame, views: pl.DataFrame,
                  settings: DuplicatesSettings) -> Decontamination:
    """Overlaps of the held-out targets' views with the vault's and the training targets'."""
    def ids(*names: str) -> pl.Series:
        return splits.filter(pl.col("split").is_in(names))["arxiv_id"]

    held = _texts(views, ids(*HELD_OUT))
    n, t = settings.overlap_n, settings.overlap_threshold
    return Decontamination(
        n, t, held.height,
        ngrams.overlaps(held, _texts(views, ids(VAULT)), n, t),
        ngrams.overlaps(_texts(views, ids(TRAIN)), held, n, t, symmetric=True))
