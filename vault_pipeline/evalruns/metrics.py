"""The studies' metrics from predictions and human truth: scipy and scikit-learn compute
every statistic they have; here are only the choices the studies make (thresholds, the
base-rate-matched cut, the always-reject baseline, seeded bootstrap intervals), balanced
accuracy and its rows for the vectorised bootstrap, and ICC(2,1) for test-retest."""

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


def balanced_accuracy(p: np.ndarray, t: np.ndarray) -> float:
    """Mean of the accept and the reject recall (undefined when a class is absent)."""
    return float(_balanced_rows(np.asarray(p, dtype=bool)[None],
                                np.asarray(t, dtype=bool)[None])[0])


def _balanced_rows(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        accept = (p & t).sum(axis=1) / t.sum(axis=1)
        reject = (~p & ~t).sum(axis=1) / (~t).sum(axis=1)
    return (accept + reject) / 2


def always_reject_accuracy(p: np.ndarray, t: np.ndarray) -> float:
    """Accuracy of the trivial baseline that rejects every paper: the human reject share."""
    return float(np.mean(~np.asarray(t, dtype=bool)))


def accuracy_over_always_reject(p: np.ndarray, t: np.ndarray) -> float:
    """Accuracy minus the always-reject baseline's on the same papers (paired)."""
    p, t = np.asarray(p, dtype=bool), np.asarray(t, dtype=bool)
    return float(np.mean(p == t) - np.mean(~t))


_ROWWISE.update({
    balanced_accuracy: lambda p, t: _balanced_rows(p.astype(bool), t.astype(bool)),
    always_reject_accuracy: lambda p, t: (~t.astype(bool)).mean(axis=1),
    accuracy_over_always_reject: lambda p, t: ((p == t).mean(axis=1)
                                               - (~t.astype(bool)).mean(axis=1))})


def matched_cut(pred: np.ndarray, reject_share: float) -> float:
    """The base-rate-matched threshold of seed 001 (its Section 4.5 and Appendix E): of the
    cuts at each distinct prediction (accept iff prediction >= cut; above the highest, all
    rejected), the one whose predicted reject share is closest to the human reject share;
    of two equally close, the one rejecting fewer. Tied predictions always fall on the
    same side of a cut, so it depends on the scores alone, never on the order of papers
    with equal scores (a rank cut at exactly the human share would split a tie block by
    that order); the price is that the matched share is only as close as the ties allow
    (the study's Direct: 62.4% against 59.5%). ``inf`` when rejecting all is closest."""
    values = np.unique(pred)
    cuts = np.append(values, np.inf)
    shares = np.searchsorted(np.sort(pred), cuts, side="left") / max(len(pred), 1)
    return float(cuts[int(np.argmin(np.abs(shares - reject_share)))])


def _decisions(said: np.ndarray, accept: np.ndarray, suffix: str = "") -> list[Row]:
    """κ, macro F1 (and at the fixed threshold weighted F1 and reject recall) of one set of
    accept decisions against the human ones."""
    n = len(said)
    rows: list[Row] = [
        (f"kappa{suffix or '_fixed'}", _safe(lambda a, b: cohen_kappa_score(b, a), said,
                                             accept), None, None, n),
        (f"f1_macro{suffix}", _safe(lambda a, b: f1_score(b, a, average="macro",
                                                          zero_division=0), said, accept),
         None, None, n)]
    if not suffix:
        rows += [("f1_weighted", _safe(lambda a, b: f1_score(b, a, average="weighted",
                                                             zero_division=0), said, accept),
                  None, None, n),
                 ("reject_recall", _safe(lambda a, b: recall_score(b, a, pos_label=False,
                                                                   zero_division=0),
                                         said, accept), None, None, n)]
    return rows


def rating_metrics(pred: Sequence[float], human: Sequence[float], threshold: float,
                   resamples: int, seed: int) -> list[Row]:
    """Correlations (with intervals), AUC for acceptance, MSE, inflation; at the fixed
    threshold accuracy, balanced accuracy and the always-reject baseline's accuracy (each
    with an interval, and the paired difference to the baseline), κ, macro / weighted F1
    and reject recall; at the base-rate-matched cut the cut, κ and macro F1."""
    p, t = np.asarray(pred, dtype=float), np.asarray(human, dtype=float)
    n = len(p)
    accept = t >= threshold
    rows: list[Row] = []
    for name, stat in (("pearson", pearson), ("spearman", spearman), ("kendall", kendall)):
        low, high = bootstrap(stat, p, t, resamples, seed)
        rows.append((name, _safe(stat, p, t), low, high, n))
    rows.append(("auc", _safe(lambda a, b: roc_auc_score(b >= threshold, a), p, t), None,
                 None, n))
    rows += [("mse", _finite(np.mean((p - t) ** 2)) if n else None, None, None, n),
             ("inflation", _finite(np.mean(p - t)) if n else None, None, None, n)]
    said = p >= threshold
    for name, stat in (("accuracy", accuracy), ("balanced_accuracy", balanced_accuracy),
                       ("always_reject_accuracy", always_reject_accuracy),
                       ("accuracy_over_always_reject", accuracy_over_always_reject)):
        low, high = bootstrap(stat, said, accept, resamples, seed)
        rows.append((name, _safe(stat, said, accept) if n else None, low, high, n))
    rows += _decisions(said, accept)
    cut = matched_cut(p, float(np.mean(~accept))) if n else None
    rows.append(("matched_cut", _finite(cut) if cut is not None else None, None, None, n))
    matched = p >= cut if cut is not None else said
    rows += _decisions(matched, accept, "_matched")
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
