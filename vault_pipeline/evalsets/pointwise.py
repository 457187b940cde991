"""Point-wise set: per venue and label, the first `quota` labelled submissions in the seeded
order. A label with fewer submissions than its quota keeps them all and is reported as a
shortfall (the card says so); nothing is padded or repeated."""

from __future__ import annotations

import polars as pl

from .labels import order_key
from .review_paradigm import Shortfall
from .settings import EvalSetsSettings

POINTWISE = "pointwise"


def pointwise_set(candidates: pl.DataFrame, settings: EvalSetsSettings
                  ) -> tuple[pl.DataFrame, list[Shortfall]]:
    keys = [order_key(settings.seed, f"{POINTWISE}:{v}:{lab}", f) for f, v, lab in
            candidates.select("forum_id", "venue_id", "label").iter_rows()]
    keyed = candidates.with_columns(_key=pl.Series(keys, dtype=pl.String)).sort("_key")
    parts, short = [], []
    for venue in settings.idea_venues:
        for label, quota in settings.pointwise_quota.items():
            rows = keyed.filter((pl.col("venue_id") == venue) & (pl.col("label") == label))
            if rows.height < quota:
                short.append(Shortfall(POINTWISE, venue, label, quota, rows.height))
            parts.append(rows.head(quota))
    sample = pl.concat(parts) if parts else keyed.clear()
    order = {label: i for i, label in enumerate(settings.pointwise_quota)}
    return (sample.with_columns(_order=pl.col("label").replace_strict(order,
                                                                      return_dtype=pl.Int32),
                                seed=pl.lit(settings.seed, pl.Int64))
            .sort("venue_id", "_order", "_key").drop("_key", "_order")), short
