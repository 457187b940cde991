"""The learned half of the extractive paper-kind classifier: a hashed n-gram logistic
regression over title and abstract, consulted only when no cue phrase decides.

The cue rules of :mod:`.kinds` are precise but miss methods stated without a cue ("An
algorithm for searching ... is presented", a system described in the third person), so on
the labelled sets their recall stayed near one half. This model is the integrity judge's
machinery (:mod:`vault_pipeline.integrity.classifier`: the same features, fitting,
out-of-fold scores and weights file), trained on paper texts instead of sentences, so no
second text classifier lives in the package. It is trained only on the `dev` halves of the
labelled paper sets (`benchmarks/data/`), never on their held-out halves; `python
benchmarks/bench_paper_kinds.py --train` trains it again and writes the weights file."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vault_pipeline.integrity.classifier import SentenceJudge, fit, load_hashed, out_of_fold_scores

WEIGHTS = Path(__file__).parent / "data" / "paper_kind_weights.npz"
NAME = "paper-kind-lr"
GRID = tuple(round(0.30 + 0.05 * i, 2) for i in range(9))  # 0.30 ... 0.70
SEEDS = (0, 1, 2)


def text_of(title: str, abstract: str) -> str:
    """What the model reads of a paper (the record is left to the cue rules)."""
    return " ".join(f"{title or ''} {abstract or ''}".split())


@functools.lru_cache(maxsize=1)
def model(path: Path = WEIGHTS) -> SentenceJudge | None:
    """The shipped model, or None when its weights file is absent (rules alone then)."""
    return load_hashed(path)


def probability(title: str, abstract: str, judge: SentenceJudge | None = None) -> float | None:
    """The model's probability that the paper is methodological; None without a model."""
    judge = judge or model()
    if judge is None:
        return None
    return float(judge.scores([text_of(title, abstract)])[0])


def combined(rule_kinds: Sequence[str], scores: np.ndarray, threshold: float) -> np.ndarray:
    """The classifier's verdict from the rules' kinds and the model's scores: a rival kind
    (survey, position, dataset, empirical) found by the rules rejects, a method cue
    accepts, and only where no cue decided does the model's score count."""
    kinds = np.asarray(rule_kinds)
    rival = ~np.isin(kinds, ["methodological", "no_method_found"])
    return ~rival & ((kinds == "methodological") | (np.asarray(scores) >= threshold))


def _f1(truth: np.ndarray, verdict: np.ndarray) -> float:
    tp = int((truth & verdict).sum())
    wrong = int((truth ^ verdict).sum())
    return 2 * tp / (2 * tp + wrong) if tp + wrong else 0.0


def choose_threshold(rule_kinds: Sequence[str], labels: Sequence[bool],
                     oof: Sequence[np.ndarray]) -> tuple[float, float]:
    """The grid threshold with the best mean out-of-fold F1 of the combined verdict (ties:
    the higher threshold, the fewer papers the model alone admits), and that F1."""
    truth = np.asarray(labels, dtype=bool)
    best = max(GRID, key=lambda t: (round(float(np.mean(
        [_f1(truth, combined(rule_kinds, s, t)) for s in oof])), 6), t))
    return best, float(np.mean([_f1(truth, combined(rule_kinds, s, best)) for s in oof]))


def train(texts: Sequence[str], labels: Sequence[bool], rule_kinds: Sequence[str],
          trained_on_sha256: str) -> SentenceJudge:
    """Fit on ``texts`` (dev papers only) and pick the threshold out of fold (5 folds, three
    seeds), so the threshold is never chosen on scores of papers the model was fitted on."""
    y = np.asarray(labels, dtype=bool)
    oof = [out_of_fold_scores(list(texts), y, seed=s) for s in SEEDS]
    threshold, oof_f1 = choose_threshold(rule_kinds, y, oof)
    fitted = fit(list(texts), y)
    meta = {"name": NAME, "trained_on_sha256": trained_on_sha256, "papers": len(y),
            "methodological": int(y.sum()), "out_of_fold_f1": round(oof_f1, 4),
            "threshold_rule": "best mean out-of-fold F1 of rules + model over thresholds "
                              f"{GRID[0]}-{GRID[-1]} (5 folds, seeds {list(SEEDS)}), dev only"}
    return SentenceJudge(fitted.coef_[0].astype(np.float64), float(fitted.intercept_[0]),
                         threshold, threshold, meta)
