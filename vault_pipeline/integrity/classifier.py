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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).parent / "data" / "judge_weights.npz"
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
    threshold: float  # masking a made record: keeps ~92 % of clean sentences out of fold
    strict_threshold: float  # choosing what to copy from a paper: keeps ~80 %
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
def load(path: Path = WEIGHTS) -> SentenceJudge | None:
    """The shipped judge, or None when the weights file is absent."""
    if not path.exists():
        return None
    data = np.load(path)
    coef = np.zeros(2 * N_FEATURES, dtype=np.float64)
    coef[data["index"]] = data["value"]
    return SentenceJudge(coef, float(data["intercept"]), float(data["threshold"]),
                         float(data["strict_threshold"]), json.loads(str(data["meta"])))


def fit(sentences: Sequence[str], labels: Sequence[bool], c: float = 4.0):
    """A logistic regression on ``sentences`` (class-balanced: a missed result costs more
    than a kept clean sentence, which the threshold then trades off)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    model.fit(features(sentences), np.asarray(labels, dtype=bool))
    return model


def out_of_fold_scores(sentences: Sequence[str], labels: Sequence[bool], folds: int = 5,
                       seed: int = 0) -> np.ndarray:
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(labels, dtype=bool)
    scores = np.zeros(len(y))
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in split.split(np.zeros(len(y)), y):
        model = fit([sentences[i] for i in train], y[train])
        scores[test] = model.predict_proba(features([sentences[i] for i in test]))[:, 1]
    return scores


def choose_threshold(scores: np.ndarray, labels: Sequence[bool], min_kept: float) -> float:
    """The lowest threshold at which the judge alone still keeps ``min_kept`` of the clean
    sentences (out-of-fold): every result it can catch at that cost, no more."""
    clean = np.sort(np.asarray(scores)[~np.asarray(labels, dtype=bool)])
    if not len(clean):
        return 0.5
    return float(clean[min(len(clean) - 1, int(np.ceil(min_kept * len(clean))) - 1)]) + 1e-9


def train(rows: Sequence[dict], min_kept: float = 0.92,
          strict_kept: float = 0.80) -> SentenceJudge:
    """Train on ``rows`` (labelled sentences, never the held-out half) and pick the
    threshold at which the judge alone keeps ``min_kept`` of clean sentences out of fold.
    0.92: the rules already cost about 6 % of clean sentences, and the masked record loses
    sentences, never gains wrong ones, from a stricter judge."""
    from .labelled import rows_sha256

    texts = [r["text"] for r in rows]
    labels = [r["label"] == "result" for r in rows]
    oof = out_of_fold_scores(texts, labels)
    threshold = choose_threshold(oof, labels, min_kept)
    strict = choose_threshold(oof, labels, strict_kept)
    model = fit(texts, labels)
    meta = {"trained_on_sha256": rows_sha256(rows), "sentences": len(rows),
            "results": sum(labels), "threshold_rule": f"judge alone keeps {min_kept} "
                                                      f"(strict: {strict_kept}) of clean "
                                                      "sentences (5-fold, dev + train)"}
    return SentenceJudge(model.coef_[0].astype(np.float64), float(model.intercept_[0]),
                         threshold, strict, meta)


if __name__ == "__main__":
    from .labelled import load_rows

    judge = train(load_rows("dev") + load_rows("train"))
    judge.save()
    print(f"trained {judge.version} on {judge.meta['sentences']} dev + train sentences, "
          f"threshold {judge.threshold:.3f} -> {WEIGHTS.name}")
