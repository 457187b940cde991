"""The views table as splits, index and datasets use it (the tables themselves are read
through :mod:`vault_pipeline.store.tables`).

The views table is cleaned once here for every consumer: an exact duplicate row is
collapsed, while conflicting copies of one (paper, view), an unknown view name or an empty
text are set aside with the problem named, never used and never dropped silently."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from vault_pipeline.ideas.views import VIEW_NAMES
from vault_pipeline.store.tables import require_columns

__all__ = ["CleanViews", "clean_views", "views_wide"]
PROVENANCE = ("backend", "model", "prompt_version", "input_hash")


@dataclass(frozen=True)
class CleanViews:
    views: pl.DataFrame  # one row per (arxiv_id, view): arxiv_id, view, text, version,
    # provenance (those the table has)
    problems: pl.DataFrame  # arxiv_id, view, problem
    duplicates_collapsed: int


def clean_views(views: pl.DataFrame) -> CleanViews:
    """One usable row per (paper, view), and every row that could not be used, with why."""
    require_columns(views, "views", ("arxiv_id", "view", "text"))
    keep = ["arxiv_id", "view", "text",
            *(c for c in ("version", *PROVENANCE) if c in views.columns)]
    frame = views.select(keep).with_columns(
        pl.col("text").str.strip_chars().alias("text"))
    problem = (
        pl.when(~pl.col("view").is_in(VIEW_NAMES)).then(pl.lit("unknown view name"))
        .when(pl.col("text").is_null() | (pl.col("text") == "")).then(pl.lit("empty text"))
        .when(pl.col("text").n_unique().over("arxiv_id", "view") > 1)
        .then(pl.lit("conflicting duplicate rows"))
    )
    frame = frame.with_columns(problem.alias("problem"))
    bad = (frame.filter(pl.col("problem").is_not_null())
           .select("arxiv_id", "view", "problem").unique().sort("arxiv_id", "view"))
    good = frame.filter(pl.col("problem").is_null()).drop("problem")
    unique = good.unique(["arxiv_id", "view"], keep="first", maintain_order=True)
    return CleanViews(unique.sort("arxiv_id", "view"), bad, good.height - unique.height)


def views_wide(views: pl.DataFrame) -> pl.DataFrame:
    """One row per paper, one text column per view (null where the paper lacks it)."""
    wide = views.pivot("view", index="arxiv_id", values="text", aggregate_function="first")
    for name in VIEW_NAMES:
        if name not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.String).alias(name))
    return wide.select("arxiv_id", *VIEW_NAMES)
