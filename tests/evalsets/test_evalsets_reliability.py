"""ICC(1,1), ICC(1,k) and the Spearman ceiling against Shrout & Fleiss's published example and
against an independent computation (scipy's one-way ANOVA F) on unbalanced data."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import f_oneway

from vault_pipeline.evalsets.reliability import icc_oneway, spearman_brown

# Shrout & Fleiss (1979), Table 2: six targets rated by four judges.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                 [6, 2, 4, 7]]


def test_shrout_fleiss_textbook_values() -> None:
    result = icc_oneway([np.array(row) for row in SHROUT_FLEISS])
    assert round(result.msb, 2) == 11.24 and round(result.msw, 2) == 6.26  # their Table 3
    assert round(result.icc_1_1, 2) == 0.17  # ICC(1,1) as published
    assert round(result.icc_1_k, 2) == 0.44  # ICC(1,4) as published
    assert result.k0 == 4 and result.mean_reviewers == 4
    assert result.spearman_ceiling == pytest.approx(math.sqrt(result.icc_1_k))


def test_long_frame_gives_the_same_figures_as_groups() -> None:
    frame = pl.DataFrame({"forum_id": [f"p{i}" for i, row in enumerate(SHROUT_FLEISS)
                                       for _ in row],
                          "rating": [float(x) for row in SHROUT_FLEISS for x in row]})
    long, grouped = icc_oneway(frame), icc_oneway([np.array(r) for r in SHROUT_FLEISS])
    assert long.as_dict() == grouped.as_dict()  # equal to six digits
    assert long.icc_1_1 == pytest.approx(grouped.icc_1_1, rel=1e-12)
    assert icc_oneway(frame.reverse()) == long  # row order does not change a digit


def test_seed_001_population_figures_follow_from_spearman_brown() -> None:
    # ICC(1,1) = 0.327 over 4.05 reviewers a paper gives ICC(1,k) = 0.663 and a ceiling of
    # about 0.815, the figures the review-paradigm paper reports.
    icck = spearman_brown(0.327, 4.05)
    assert round(icck, 3) == 0.663
    assert round(math.sqrt(icck), 2) == 0.81


def _independent(groups: list[np.ndarray]) -> tuple[float, float]:
    """ICC(1,1) and ICC(1,k) from scipy's F statistic: (F - 1) / (F + k0 - 1)."""
    f = f_oneway(*groups).statistic
    sizes = np.array([g.size for g in groups], dtype=float)
    n, total = sizes.size, sizes.sum()
    k0 = (total - (sizes ** 2).sum() / total) / (n - 1)
    icc1 = (f - 1) / (f + k0 - 1)
    k = total / n
    return icc1, k * icc1 / (1 + (k - 1) * icc1)


def test_unbalanced_data_matches_scipy_anova() -> None:
    rng = np.random.default_rng(7)
    groups = [np.clip(np.round(rng.normal(q, 1.5, size=rng.integers(2, 8))), 1, 10)
              for q in rng.normal(5, 1.2, size=300)]
    result = icc_oneway(groups)
    icc1, icck = _independent(groups)
    assert result.icc_1_1 == pytest.approx(icc1, rel=1e-9)
    assert result.icc_1_k == pytest.approx(icck, rel=1e-9)
    assert 0.2 < result.icc_1_1 < 0.6  # a realistic reviewer-like signal


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 10), min_size=1, max_size=7), min_size=2,
                max_size=40),
       st.floats(0.5, 3.0), st.floats(-5, 5))
def test_icc_is_unchanged_by_a_change_of_scale(groups, scale, shift) -> None:
    arrays = [np.array(g, dtype=float) for g in groups]
    first = icc_oneway(arrays)
    second = icc_oneway([a * scale + shift for a in arrays])
    if first.icc_1_1 is None:
        assert second.icc_1_1 is None
        return
    assert second.icc_1_1 == pytest.approx(first.icc_1_1, abs=1e-9)
    assert first.icc_1_1 <= 1 + 1e-12
    sizes = [len(g) for g in groups]
    if len(set(sizes)) == 1 and sizes[0] > 1 and first.msb > 0:  # balanced: S&F's form
        assert first.icc_1_k == pytest.approx((first.msb - first.msw) / first.msb, abs=1e-9)


def test_degenerate_inputs_say_why_there_is_no_figure() -> None:
    assert icc_oneway([np.array([5.0, 6.0])]).note == "fewer than two rated papers"
    single = icc_oneway([np.array([5.0]), np.array([6.0]), np.array([3.0])])
    assert single.icc_1_1 is None and "two ratings" in single.note
    flat = icc_oneway([np.array([5.0, 5.0]), np.array([5.0, 5.0])])
    assert flat.icc_1_1 is None and "all ratings are equal" in flat.note
    unanimous = icc_oneway([np.array([3.0, 3.0]), np.array([8.0, 8.0, 8.0])])
    assert unanimous.icc_1_1 == 1.0 and unanimous.spearman_ceiling == 1.0
    with_nans = icc_oneway([np.array([5.0, np.nan, 6.0]), np.array([np.nan]),
                            np.array([2.0, 3.0])])
    assert with_nans.papers == 2 and with_nans.ratings == 4
