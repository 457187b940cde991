"""Which vault papers the evaluation sets use, so a training export and the retrieval index
can leave them out (both on by default) and the card can say so: a model trained on a paper,
or retrieving it, while it is judged on it measures memory, not ideation."""

from __future__ import annotations

import polars as pl

from vault_pipeline.ids import id_expr
from vault_pipeline.store.paths import VaultPaths

# The evaluation sets (the review population is where the stratified set is drawn from).
EVALUATION_TABLES = ("eval_pointwise", "eval_pairwise", "eval_groupwise",
                     "eval_review_stratified", "eval_review_anchors")


def evaluation_papers(paths: VaultPaths) -> set[str]:
    """arXiv ids of every paper an evaluation set uses: by its own arXiv id, or by its
    OpenReview forum matched to an arXiv id in `submissions`."""
    submissions = paths.store.read_optional("submissions")
    by_forum: dict[str, str] = {}
    if submissions is not None and {"forum_id", "arxiv_id"} <= set(submissions.columns):
        pairs = submissions.select("forum_id", id_expr("arxiv_id").alias("arxiv_id"))
        by_forum = dict(pairs.drop_nulls().iter_rows())
    ids: set[str] = set()
    for name in EVALUATION_TABLES:
        frame = paths.store.read_optional(name)
        if frame is None:
            continue
        if "arxiv_id" in frame.columns:
            ids |= set(frame.select(id_expr("arxiv_id")).drop_nulls().to_series().to_list())
        for column in (c for c in frame.columns if c.startswith("forum_id")):
            ids |= {by_forum[f] for f in frame[column].drop_nulls().to_list() if f in by_forum}
    return ids


def mark(frame: pl.DataFrame, evaluation: set[str]) -> pl.DataFrame:
    """``frame`` with `evaluation_paper`: whether an evaluation set uses its `arxiv_id`."""
    return frame.with_columns(pl.col("arxiv_id").is_in(sorted(evaluation))
                              .alias("evaluation_paper"))
