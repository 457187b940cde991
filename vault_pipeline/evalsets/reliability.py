"""Inter-reviewer reliability of a mean rating: ICC(1,1) and ICC(1,k) from a one-way
random-effects ANOVA (Shrout & Fleiss 1979, case 1) with an unequal number of reviewers per
paper, and the ceiling it puts on any rank correlation with that mean (Spearman's correction
for attenuation with a perfectly reliable predictor: sqrt(ICC(1,k))).

Written here because no maintained library covers the unbalanced case: pingouin's
`intraclass_corr` and statsmodels' ICC need every paper rated by the same raters. The
ANOVA is a few aggregates; the tests check it against Shrout & Fleiss's published example
and against scipy's one-way ANOVA F statistic on unbalanced data.

- ICC(1,1) = (MSB - MSW) / (MSB + (k0 - 1) MSW), with k0 = (N - sum n_i^2 / N) / (n - 1),
  the standard group-size correction for unequal groups (equal to k when balanced).
- ICC(1,k) is the reliability of the mean of the k = N / n reviewers a paper receives on
  average, by Spearman-Brown: k ICC(1,1) / (1 + (k - 1) ICC(1,1)). With equal groups this
  is exactly Shrout & Fleiss's (MSB - MSW) / MSB."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl


@dataclass(frozen=True)
class Reliability:
    papers: int  # papers with at least one rating
    ratings: int  # ratings in all
    mean_reviewers: float | None  # N / n: the k of ICC(1,k)
    k0: float | None  # size correction of the unbalanced ANOVA
    msb: float | None  # between-paper mean square
    msw: float | None  # within-paper mean square
    icc_1_1: float | None
    icc_1_k: float | None
    spearman_ceiling: float | None  # sqrt(max(ICC(1,k), 0))
    note: str | None = None  # why a figure is missing

    def as_dict(self) -> dict[str, Any]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def _undefined(papers: int, ratings: int, note: str) -> Reliability:
    mean = ratings / papers if papers else None
    return Reliability(papers, ratings, mean, None, None, None, None, None, None, note)


def spearman_brown(icc: float, k: float) -> float:
    """Reliability of the mean of ``k`` ratings whose single-rating reliability is ``icc``."""
    return k * icc / (1 + (k - 1) * icc)


def icc_oneway(groups: list[np.ndarray] | pl.DataFrame, *, group: str = "forum_id",
               value: str = "rating") -> Reliability:
    """ICC(1,1), ICC(1,k) and the Spearman ceiling of ratings grouped by paper.

    ``groups``: one array of ratings per paper, or a long frame (``group``, ``value``);
    null ratings are ignored, papers left with none are not counted."""
    if isinstance(groups, pl.DataFrame):
        stats = (groups.filter(pl.col(value).is_not_null() & pl.col(value).is_not_nan())
                 .group_by(group)
                 .agg(n=pl.len(), mean=pl.col(value).mean(),
                      ss=((pl.col(value) - pl.col(value).mean()) ** 2).sum())
                 .sort(group))  # a fixed summation order: the same figures every run
        sizes = stats["n"].to_numpy().astype(float)
        means = stats["mean"].to_numpy().astype(float)
        within = float(stats["ss"].sum()) if stats.height else 0.0
    else:
        kept = [np.asarray(g, dtype=float) for g in groups]
        kept = [g[~np.isnan(g)] for g in kept]
        kept = [g for g in kept if g.size]
        sizes = np.array([g.size for g in kept], dtype=float)
        means = np.array([g.mean() for g in kept], dtype=float)
        within = float(sum(((g - g.mean()) ** 2).sum() for g in kept))
    n, total = int(sizes.size), int(sizes.sum())
    if n < 2:
        return _undefined(n, total, "fewer than two rated papers")
    if total - n < 1:
        return _undefined(n, total, "no paper has two ratings: within-paper variance "
                                    "cannot be estimated")
    grand = float((sizes * means).sum() / total)
    msb = float((sizes * (means - grand) ** 2).sum()) / (n - 1)
    msw = within / (total - n)
    k0 = (total - float((sizes ** 2).sum()) / total) / (n - 1)
    mean_k = total / n
    denominator = msb + (k0 - 1) * msw
    # rounding leaves ~1e-31 of between-paper variance when every rating is equal after a
    # shift: relative to the ratings' size, that is zero
    if denominator <= 1e-12 * max(1.0, grand ** 2):
        return Reliability(n, total, mean_k, k0, msb, msw, None, None, None,
                           "all ratings are equal: reliability undefined")
    icc1 = (msb - msw) / denominator
    icck = spearman_brown(icc1, mean_k) if 1 + (mean_k - 1) * icc1 != 0 else None
    ceiling = math.sqrt(max(icck, 0.0)) if icck is not None else None
    return Reliability(n, total, mean_k, k0, msb, msw, icc1, icck, ceiling)
