"""The studies' metrics from predictions and human truth: scipy and scikit-learn compute
every statistic they have; here are only the choices the studies make (thresholds, the
base-rate-matched cut, seeded bootstrap intervals) and ICC(2,1) for test-retest."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    f1_score,
    recall_score,
    roc_auc_score,
)

# (metric, value, ci_low, ci_high, n)
Row = tuple[str, float | None, float | None, float | None, int]
Stat = Callable[[np.ndarray, np.ndarray], float]


def _finite(value: float) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def bootstrap(stat: Stat, pred: np.ndarray, truth: np.ndarray, resamples: int, seed: int
              ) -> tuple[float | None, float | None]:
    """Percentile 95% interval of ``stat`` over items resampled with replacement (seeded);
    resamples where the statistic is undefined are skipped. Pearson, Spearman and accuracy
    are computed for all resamples at once (scipy's `axis`), the same values as one by one."""
    if resamples < 1 or len(pred) < 3:
        return None, None
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(pred), (resamples, len(pred)))  # the stream of one by one
    rowwise = _ROWWISE.get(stat)
    if rowwise is not None:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = np.asarray(rowwise(pred[picks], truth[picks]), dtype=float)
        values = found[np.isfinite(found)].tolist()
    else:
        values = []
        for pick in picks:
            with np.errstate(all="ignore"):
                value = _safe(stat, pred[pick], truth[pick])
            if value is not None:
                values.append(value)
    if not values:
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def _safe(stat: Stat, pred: np.ndarray, truth: np.ndarray) -> float | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _finite(stat(pred, truth))
    except ValueError:  # one class only, constant input
        return None


def pearson(p: np.ndarray, t: np.ndarray) -> float:
    return stats.pearsonr(p, t).statistic


def spearman(p: np.ndarray, t: np.ndarray) -> float:
    return stats.spearmanr(p, t).statistic


def kendall(p: np.ndarray, t: np.ndarray) -> float:
    return stats.kendalltau(p, t).statistic


def _pearson_rows(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    return stats.pearsonr(p, t, axis=1).statistic


def _spearman_rows(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spearman's ρ per row: Pearson of the average ranks (what `spearmanr` computes)."""
    return _pearson_rows(stats.rankdata(p, axis=1), stats.rankdata(t, axis=1))


def accuracy(p: np.ndarray, t: np.ndarray) -> float:
    return accuracy_score(t, p)


_ROWWISE: dict[Stat, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    pearson: _pearson_rows, spearman: _spearman_rows,
    accuracy: lambda p, t: (p == t).mean(axis=1)}


def matched_cut(pred: np.ndarray, positives: int) -> np.ndarray:
    """Predicted accepts at the base-rate-matched threshold: the ``positives`` highest
    predictions (ties broken by order), so predicted and human accept rates are equal."""
    chosen = np.zeros(len(pred), dtype=bool)
    if positives > 0:
        chosen[np.argsort(-pred, kind="stable")[:positives]] = True
    return chosen


def rating_metrics(pred: Sequence[float], human: Sequence[float], threshold: float,
                   resamples: int, seed: int) -> list[Row]:
    """Correlations (with intervals), AUC for acceptance, κ at the base-rate-matched cut,
    MSE, inflation, and at the fixed threshold κ, macro / weighted F1 and reject recall."""
    p, t = np.asarray(pred, dtype=float), np.asarray(human, dtype=float)
    n = len(p)
    accept = t >= threshold
    rows: list[Row] = []
    for name, stat in (("pearson", pearson), ("spearman", spearman), ("kendall", kendall)):
        low, high = bootstrap(stat, p, t, resamples, seed)
        rows.append((name, _safe(stat, p, t), low, high, n))
    rows.append(("auc", _safe(lambda a, b: roc_auc_score(b >= threshold, a), p, t), None,
                 None, n))
    matched = matched_cut(p, int(accept.sum()))
    rows.append(("kappa_matched", _safe(lambda a, b: cohen_kappa_score(b, a), matched,
                                        accept), None, None, n))
    said = p >= threshold
    rows += [("mse", _finite(np.mean((p - t) ** 2)) if n else None, None, None, n),
             ("inflation", _finite(np.mean(p - t)) if n else None, None, None, n),
             ("kappa_fixed", _safe(lambda a, b: cohen_kappa_score(b, a), said, accept),
              None, None, n),
             ("f1_macro", _safe(lambda a, b: f1_score(b, a, average="macro",
                                                      zero_division=0), said, accept),
              None, None, n),
             ("f1_weighted", _safe(lambda a, b: f1_score(b, a, average="weighted",
                                                         zero_division=0), said, accept),
              None, None, n),
             ("reject_recall", _safe(lambda a, b: recall_score(b, a, pos_label=False,
                                                               zero_division=0),
                                     said, accept), None, None, n)]
    return rows


def label_metrics(pred: Sequence[str], truth: Sequence[str], resamples: int, seed: int
                  ) -> list[Row]:
    p, t = np.asarray(pred, dtype=object), np.asarray(truth, dtype=object)
    low, high = bootstrap(accuracy, p, t, resamples, seed)
    return [("accuracy", _safe(accuracy, p, t), low, high, len(p)),
            ("f1_macro", _safe(lambda a, b: f1_score(b, a, average="macro", zero_division=0),
                               p, t), None, None, len(p))]


def ranking_kendall(predicted: Sequence[Sequence[str]], truth: Sequence[Sequence[str]]
                    ) -> float | None:
    """Mean Kendall τ between each predicted ranking and the true one (members missing from
    a prediction are placed last, in their true order)."""
    taus = []
    for guess, true in zip(predicted, truth, strict=True):
        place = {f: i for i, f in enumerate(guess)}
        ranks = [place.get(f, len(guess) + i) for i, f in enumerate(true)]
        tau = _safe(kendall, np.asarray(ranks, dtype=float), np.arange(len(true), dtype=float))
        if tau is not None:
            taus.append(tau)
    return float(np.mean(taus)) if taus else None


def icc_2_1(scores: np.ndarray) -> float | None:
    """ICC(2,1) (two-way random, absolute agreement, single measure; Shrout and Fleiss) of
    an items x repeats matrix: how well one run agrees with another."""
    x = np.asarray(scores, dtype=float)
    n, k = x.shape
    if n < 2 or k < 2:
        return None
    grand = x.mean()
    ms_rows = k * ((x.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    ms_cols = n * ((x.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand
    ms_err = (resid ** 2).sum() / ((n - 1) * (k - 1))
    denom = ms_rows + (k - 1) * ms_err + k * (ms_cols - ms_err) / n
    return _finite((ms_rows - ms_err) / denom) if denom else None


def partial_pearson(pred: Sequence[float], human: Sequence[float],
                    control: Sequence[float]) -> float | None:
    """Pearson correlation of prediction and truth with the control (input length) partialled
    out of both: whether a paradigm tracks quality or just length."""
    x, y, z = (np.asarray(v, dtype=float) for v in (pred, human, control))
    if len(x) < 4:
        return None

    def residual(v: np.ndarray) -> np.ndarray:
        design = np.column_stack([np.ones_like(z), z])
        return v - design @ np.linalg.lstsq(design, v, rcond=None)[0]

    return _safe(pearson, residual(x), residual(y))


def wilcoxon_errors(first: Sequence[float], second: Sequence[float], human: Sequence[float]
                    ) -> Row:
    """Wilcoxon signed-rank test of two paradigms' absolute errors on the same papers; the
    value is the p-value, the interval is left empty."""
    h = np.asarray(human, dtype=float)
    a = np.abs(np.asarray(first, dtype=float) - h)
    b = np.abs(np.asarray(second, dtype=float) - h)
    p = _safe(lambda u, v: stats.wilcoxon(u, v).pvalue, a, b) if len(h) >= 2 and \
        np.any(a != b) else None
    return ("wilcoxon_p_abs_error", p, None, None, len(h))
