"""What a user checks on `splits`: every paper exactly once, in exactly one split, on the
right side of the cutoff, under one cutoff and seed."""

from __future__ import annotations

import polars as pl

from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.splits.assign import TARGET_SPLITS
from vault_pipeline.splits.build import SPLIT_NAMES, VAULT


def disjoint_and_complete(splits: pl.DataFrame, papers: pl.DataFrame) -> Outcome:
    """No id twice, none missing, none unknown, valid split names, one cutoff and seed,
    vault papers before the cutoff and targets on or after it (a pre-cutoff paper may be
    excluded: revised after the cutoff)."""
    ids = set(papers["arxiv_id"].to_list())
    counts = splits.group_by("arxiv_id").len()
    twice = counts.filter(pl.col("len") > 1)["arxiv_id"].to_list()
    seen = set(counts["arxiv_id"].to_list())
    missing, unknown = sorted(ids - seen), sorted(seen - ids)
    bad_names = sorted(set(splits["split"].to_list()) - set(SPLIT_NAMES))
    settings = splits.select("cutoff", "seed").unique()
    cutoff = settings["cutoff"][0] if settings.height == 1 else None
    wrong_side = []
    if cutoff is not None:
        early = pl.col("published") < cutoff
        wrong_side = splits.filter(
            ((pl.col("split") == VAULT) & ~early)
            | (pl.col("split").is_in(TARGET_SPLITS) & early)
        )["arxiv_id"].to_list()
    problems = {
        "ids_in_two_rows": twice, "papers_missing": missing, "ids_not_in_papers": unknown,
        "unknown_split_names": bad_names, "wrong_side_of_cutoff": wrong_side,
    }
    found = {k: v for k, v in problems.items() if v}
    if settings.height > 1:
        found["several_cutoffs_or_seeds"] = [str(r) for r in settings.iter_rows()]
    description = ("every paper in exactly one split, on the right side of the cutoff"
                   if not found else "; ".join(f"{k}: {len(v)}" for k, v in found.items()))
    counts_by_split = dict(splits.group_by("split").len().iter_rows())
    return Outcome(not found, description,
                   {**{k: v[:10] for k, v in found.items()}, "rows_by_split": counts_by_split})
