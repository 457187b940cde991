"""Point-wise set: per label, the first `quota` labelled submissions of the idea venues in
the seeded order. Quotas are totals over the idea venues, as InnoEval reports its set (217
ideas from ICLR 2025 and NeurIPS 2025 together: Reject 138, Poster 66, Spotlight 9, Oral 4);
splitting an odd total such as 9 spotlights into equal per-venue quotas cannot reach it, so
the venues are pooled and each venue's share follows from the draw. A label with fewer
submissions than its quota keeps them all and is reported as a shortfall (the card says so);
nothing is padded or repeated."""

from __future__ import annotations

import polars as pl

from vault_pipeline.evalsets.labels import order_key
from vault_pipeline.evalsets.review_paradigm import Shortfall
from vault_pipeline.evalsets.settings import EvalSetsSettings

POINTWISE = "pointwise"


def pooled_venues(settings: EvalSetsSettings) -> str:
    """How a shortfall of a set drawn over all idea venues names its venue."""
    return " + ".join(settings.idea_venues)


def pointwise_set(candidates: pl.DataFrame, settings: EvalSetsSettings
                  ) -> tuple[pl.DataFrame, list[Shortfall]]:
    keys = [order_key(settings.seed, f"{POINTWISE}:{lab}", f) for f, lab in
            candidates.select("forum_id", "label").iter_rows()]
    keyed = (candidates.with_columns(_key=pl.Series(keys, dtype=pl.String)).sort("_key")
             .filter(pl.col("venue_id").is_in(list(settings.idea_venues))))
    parts, short = [], []
    for label, quota in settings.pointwise_quota.items():
        rows = keyed.filter(pl.col("label") == label)
        if rows.height < quota:
            short.append(Shortfall(POINTWISE, pooled_venues(settings), label, quota,
                                   rows.height))
        parts.append(rows.head(quota))
    sample = pl.concat(parts) if parts else keyed.clear()
    order = {label: i for i, label in enumerate(settings.pointwise_quota)}
    return (sample.with_columns(_order=pl.col("label").replace_strict(order,
                                                                      return_dtype=pl.Int32),
                                seed=pl.lit(settings.seed, pl.Int64))
            .sort("venue_id", "_order", "_key").drop("_key", "_order")), short
