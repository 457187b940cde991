"""The metrics of each set's card, from the set's own rows and the ratings behind them."""

from __future__ import annotations

from typing import Any

import polars as pl

from vault_pipeline.evalsets.cards import counts, reliability, score_summary


def idea_set_metrics(frame: pl.DataFrame, forums: list[str], reviews: pl.DataFrame,
                     ratings: pl.Series) -> dict[str, Any]:
    return {"rows": frame.height, "reliability": reliability(forums, reviews),
            "scores": score_summary(ratings)}


def pointwise_metrics(frame: pl.DataFrame, reviews: pl.DataFrame) -> dict[str, Any]:
    metrics = idea_set_metrics(frame, frame.get_column("forum_id").to_list(), reviews,
                               frame.get_column("mean_rating"))
    metrics |= {"labels": counts(frame, "label"),
                "labels_by_venue": counts(frame, "venue_id", "label"),
                "label_3class": counts(frame, "label_3class"),
                "label_binary": counts(frame, "label_binary")}
    return metrics


def pairwise_metrics(frame: pl.DataFrame, reviews: pl.DataFrame) -> dict[str, Any]:
    forums = sorted(set(frame.get_column("forum_id_a")) | set(frame.get_column("forum_id_b")))
    ratings = pl.concat([frame.get_column("mean_rating_a"), frame.get_column("mean_rating_b")])
    metrics = idea_set_metrics(frame, forums, reviews, ratings)
    sims = frame.get_column("similarity")
    metrics |= {"pair_types": counts(frame, "pair_type"),
                "difficulty": counts(frame, "difficulty"),
                "pairs_by_venue": counts(frame, "venue_id", "pair_type"),
                "better_is_a": int((frame.get_column("better") == "a").sum()),
                "similarity": score_summary(sims), "distinct_submissions": len(forums)}
    return metrics


def groupwise_metrics(frame: pl.DataFrame, reviews: pl.DataFrame) -> dict[str, Any]:
    if frame.is_empty():
        return idea_set_metrics(frame, [], reviews, pl.Series([], dtype=pl.Float64)) | {
            "groups": 0}
    forums = sorted(set(frame.get_column("forum_id")))
    metrics = idea_set_metrics(frame, forums, reviews, frame.get_column("mean_rating"))
    groups = frame.group_by("group_id").agg(size=pl.len(), venue_id=pl.col("venue_id").first())
    best = frame.filter(pl.col("is_best"))
    metrics |= {"groups": groups.height, "members": frame.height,
                "group_sizes": counts(groups, "size"),
                "groups_by_venue": counts(groups, "venue_id"),
                "best_labels": counts(best, "label"), "labels": counts(frame, "label"),
                "distinct_submissions": len(forums),
                "retrieved_similarity": score_summary(
                    frame.filter(~pl.col("is_query")).get_column("similarity"))}
    return metrics


def review_metrics(frame: pl.DataFrame, reviews: pl.DataFrame,
                   eligible: pl.DataFrame | None = None) -> dict[str, Any]:
    """Population, stratified or anchor set; reliability over ``eligible`` (default all)."""
    basis = frame if eligible is None else eligible
    metrics = {"rows": frame.height,
               "reliability": reliability(basis.get_column("forum_id").to_list(), reviews),
               "scores": score_summary(frame.get_column("mean_rating")),
               "score_bins": counts(frame, "score_bin"),
               "decisions": counts(frame.with_columns(pl.col("decision").fill_null("(none)")),
                                   "decision"),
               "withdrawn": int(frame.get_column("withdrawn").sum()),
               "accept_by_threshold": int(frame.get_column("accept_by_threshold").sum()),
               "citations_matched": int(frame.get_column("s2_id").is_not_null().sum())}
    decided = frame.filter(~pl.col("withdrawn") & pl.col("decision").is_not_null())
    if decided.height:
        accepted = decided.get_column("decision").str.starts_with("Accept")
        agree = (accepted == decided.get_column("accept_by_threshold")).mean()
        metrics["threshold_agrees_with_decision"] = round(float(agree), 4)
    if "full_text_source" in frame.columns:
        metrics["full_text_sources"] = counts(frame, "full_text_source")
    return metrics
