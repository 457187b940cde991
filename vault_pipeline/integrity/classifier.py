"""The offline judge: a small sentence classifier (result / not result) shipped with the
package, for runs with no LLM backend.

Hashed word and character n-grams of the sentence (digits folded to 0, so "94.1%" and
"71.3%" look alike) into a logistic regression (scikit-learn). Chosen over the bundled
sentence embedder because it needs no torch at run time, scores a whole paper's sentences
in milliseconds, and its few hundred kilobytes of weights ship as a NumPy file; the
labelled-set figures in `benchmarks/bench_leak_gate.py` are what it is judged by.

Trained only on the `dev` half and the training-only `train` rows of the labelled set
(:mod:`.labelled`), never on `heldout`; the threshold is chosen on out-of-fold scores of
those rows (:func:`train` says the rule). `python -m
vault_pipeline.integrity.classifier` trains it again and writes the weights file."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).parent / "data" / "judge_weights.npz"
log = logging.getLogger(__name__)
N_FEATURES = 2 ** 18
_DIGIT = re.compile(r"\d")


def _normalise(sentence: str) -> str:
    return _DIGIT.sub("0", " ".join(sentence.lower().split()))


@functools.lru_cache(maxsize=1)
def _vectorizers():
    from sklearn.feature_extraction.text import HashingVectorizer

    words = HashingVectorizer(n_features=N_FEATURES, ngram_range=(1, 3), alternate_sign=False,
                              norm="l2", token_pattern=r"(?u)\b\w+\b|[%±×]")
    chars = HashingVectorizer(n_features=N_FEATURES, analyzer="char_wb", ngram_range=(3, 5),
                              alternate_sign=False, norm="l2")
    return words, chars


def features(sentences: Sequence[str]):
    """The sparse feature matrix of ``sentences`` (words and characters side by side)."""
    from scipy.sparse import hstack

    words, chars = _vectorizers()
    texts = [_normalise(s) for s in sentences]
    return hstack([words.transform(texts), chars.transform(texts)]).tocsr()


@dataclass(frozen=True)
class SentenceJudge:
    """Logistic regression weights over :func:`features` and the flagging threshold."""

    coef: np.ndarray  # dense, 2 * N_FEATURES
    intercept: float
    threshold: float  # masking a made record: keeps MIN_KEPT of clean sentences out of fold
    strict_threshold: float  # choosing what to copy from a paper: keeps STRICT_KEPT
    meta: dict

    @property
    def version(self) -> str:
        name = self.meta.get("name", "judge-lr")  # the paper-kind model reuses this class
        return f"{name}/{self.meta.get('trained_on_sha256', 'unknown')[:12]}"

    def scores(self, sentences: Sequence[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        z = features(sentences) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def flags(self, sentences: Sequence[str], strict: bool = False) -> list[bool]:
        """Sentences judged results. ``strict``: the lower threshold, for choosing what an
        extractive reader may copy (a clean sentence passed over costs coverage, never
        truth)."""
        threshold = self.strict_threshold if strict else self.threshold
        return [bool(s >= threshold) for s in self.scores(sentences)]

    def save(self, path: Path = WEIGHTS) -> None:
        nonzero = np.flatnonzero(self.coef)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, index=nonzero.astype(np.int32),
                            value=self.coef[nonzero].astype(np.float32),
                            intercept=np.float64(self.intercept),
                            threshold=np.float64(self.threshold),
                            strict_threshold=np.float64(self.strict_threshold),
                            meta=np.array(json.dumps(self.meta, sort_keys=True)))


@functools.lru_cache(maxsize=1)
def load_hashed(path: Path = WEIGHTS) -> SentenceJudge | None:
    """The hashed n-gram judge alone, or None when the weights file is absent."""
    if not path.exists():
        return None
    data = np.load(path)
    coef = np.zeros(2 * N_FEATURES, dtype=np.float64)
    coef[data["index"]] = data["value"]
    return SentenceJudge(coef, float(data["intercept"]), float(data["threshold"]),
                         float(data["strict_threshold"]), json.loads(str(data["meta"])))


@dataclass(frozen=True)
class BlendedJudge:
    """The hashed judge and the fine-tuned MiniLM (:mod:`.finetuned`) together: a weighted
    sum of their logits, with thresholds chosen on the blend's out-of-fold scores."""

    hashed: SentenceJudge
    tuned: object  # finetuned.FineTunedScorer (imported lazily: it pulls in ONNX Runtime)

    @property
    def threshold(self) -> float:
        return self.tuned.head.threshold

    @property
    def strict_threshold(self) -> float:
        return self.tuned.head.strict_threshold

    @property
    def meta(self) -> dict:
        return self.tuned.head.meta

    @property
    def version(self) -> str:
        return f"judge-blend/{self.hashed.version.split('/')[-1]}+{self.tuned.head.sha256[:12]}"

    def scores(self, sentences: Sequence[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        p = np.clip(self.hashed.scores(sentences), 1e-6, 1 - 1e-6)
        w = self.tuned.head.blend
        z = w * self.tuned.logits(list(sentences)) + (1 - w) * np.log(p / (1 - p))
        return 1.0 / (1.0 + np.exp(-z))

    def flags(self, sentences: Sequence[str], strict: bool = False) -> list[bool]:
        threshold = self.strict_threshold if strict else self.threshold
        return [bool(s >= threshold) for s in self.scores(sentences)]


@functools.lru_cache(maxsize=1)
def load() -> SentenceJudge | BlendedJudge | None:
    """The shipped offline judge: the blend when the fine-tuned MiniLM head ships and its
    ONNX model can be built here, else the hashed judge alone (None when neither ships)."""
    from vault_pipeline.integrity.finetuned import load_head, load_scorer

    hashed = load_hashed()
    head = load_head() if hashed is not None else None
    if head is not None and head.meta.get("hashed_version") != hashed.version:
        log.warning("offline judge: the MiniLM head was blended with %s, not the shipped %s; "
                    "using the hashed n-gram judge alone (train both again: python -m "
                    "vault_pipeline.integrity.finetune)", head.meta.get("hashed_version"),
                    hashed.version)
        return hashed
    tuned = load_scorer() if head is not None else None
    return BlendedJudge(hashed, tuned) if tuned is not None else hashed


MIN_KEPT = 0.92  # masking a made record: the judge alone keeps this share of clean sentences
STRICT_KEPT = 0.80  # choosing what an extractive reader may copy from a paper


def fit_features(matrix, labels: Sequence[bool], c: float = 4.0):
    """A logistic regression on a :func:`features` matrix (class-balanced: a missed result
    costs more than a kept clean sentence, which the threshold then trades off)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    model.fit(matrix, np.asarray(labels, dtype=bool))
    return model


def fit(sentences: Sequence[str], labels: Sequence[bool], c: float = 4.0):
    """:func:`fit_features` on the sentences' features."""
    return fit_features(features(sentences), labels, c)


def out_of_fold_scores(sentences: Sequence[str], labels: Sequence[bool],
                       groups: Sequence[str] | None = None, folds: int = 5,
                       seed: int = 0) -> np.ndarray:
    """Scores of each sentence by a model that did not see it in training; with ``groups``
    (the sentence's document) no document has sentences on both sides of a fold."""
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    y = np.asarray(labels, dtype=bool)
    matrix = features(sentences)
    scores = np.zeros(len(y))
    split = (GroupKFold(n_splits=folds).split(matrix, y, list(groups)) if groups is not None
             else StratifiedKFold(n_splits=folds, shuffle=True,
                                  random_state=seed).split(matrix, y))
    for train, test in split:
        scores[test] = fit_features(matrix[train], y[train]).predict_proba(matrix[test])[:, 1]
    return scores


def choose_threshold(scores: np.ndarray, labels: Sequence[bool], min_kept: float) -> float:
    """The lowest threshold at which the judge alone still keeps ``min_kept`` of the clean
    sentences (out-of-fold): every result it can catch at that cost, no more."""
    clean = np.sort(np.asarray(scores)[~np.asarray(labels, dtype=bool)])
    if not len(clean):
        return 0.5
    return float(clean[min(len(clean) - 1, int(np.ceil(min_kept * len(clean))) - 1)]) + 1e-9


