"""The labelled sentence set (result / not_result) and the gate's figures on it.

Sentences of real paper text (arXiv abstracts, real paper PDFs, the source studies' text)
and model-style record sentences, labelled under `docs/integrity/labelling-guide.md`.
Split by document: the `dev` half may shape rules and train the offline judge; `train`
rows (written later, from other documents) only train it; the `heldout` half never shapes
either and is what precision, recall and clean-kept are reported on."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

LABELLED = Path(__file__).parent / "data" / "labelled_sentences.jsonl"


@functools.lru_cache(maxsize=4)
def _all_rows(path: Path = LABELLED) -> tuple[dict, ...]:
    if not path.exists():
        return ()
    return tuple(json.loads(line) for line in path.read_text().splitlines() if line.strip())


def load_rows(split: str | None = None, path: Path = LABELLED) -> list[dict]:
    """Labelled rows, of one split (`dev`, `heldout`) or all."""
    return [r for r in _all_rows(path) if split is None or r["split"] == split]


def rows_sha256(rows: Sequence[dict]) -> str:
    payload = "\n".join(f"{r['label']}\t{r['text']}" for r in rows)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class Scores:
    """Figures of one layer (or the combined gate) on one split."""

    layer: str
    split: str
    sentences: int
    results: int
    true_positives: int
    false_positives: int

    @property
    def recall(self) -> float:
        return self.true_positives / self.results if self.results else 1.0

    @property
    def precision(self) -> float:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else 1.0

    @property
    def clean_kept(self) -> float:
        clean = self.sentences - self.results
        return 1 - self.false_positives / clean if clean else 1.0

    def as_dict(self) -> dict:
        return {**asdict(self), "recall": round(self.recall, 4),
                "precision": round(self.precision, 4), "clean_kept": round(self.clean_kept, 4)}


def score(layer: str, split: str, rows: Sequence[dict], flags: Sequence[bool]) -> Scores:
    labels = [r["label"] == "result" for r in rows]
    tp = sum(1 for y, f in zip(labels, flags, strict=True) if y and f)
    fp = sum(1 for y, f in zip(labels, flags, strict=True) if not y and f)
    return Scores(layer, split, len(rows), sum(labels), tp, fp)


def planning(row: dict) -> bool:
    """Whether the sentence stands in a field read in planning voice (predictions)."""
    return (row.get("field_hint") or "").startswith("falsifiable_predictions")


def evaluate(split: str, layers: dict[str, Callable[[list[dict]], list[bool]]],
             rows: Sequence[dict] | None = None) -> list[Scores]:
    """Each layer's figures on ``split`` and those of all layers together (any flags)."""
    rows = list(rows) if rows is not None else load_rows(split)
    flags = {name: fn(rows) for name, fn in layers.items()}
    out = [score(name, split, rows, f) for name, f in flags.items()]
    combined = [any(f[i] for f in flags.values()) for i in range(len(rows))]
    out.append(score("combined", split, rows, combined))
    return out


def rules_layer(rows: Sequence[dict]) -> list[bool]:
    from vault_pipeline.integrity.leaks import find_leaks

    return [bool(find_leaks(r["text"], planning(r))) for r in rows]


def judge_layer(rows: Sequence[dict], judge=None) -> list[bool]:
    """The offline judge's flags (``judge``: another judge than the shipped one)."""
    from vault_pipeline.integrity import classifier

    judge = judge or classifier.load()
    return judge.flags([r["text"] for r in rows]) if judge else [False] * len(rows)


def strict_judge_layer(rows: Sequence[dict], judge=None) -> list[bool]:
    """The offline judge at the threshold the extractive reader copies by."""
    from vault_pipeline.integrity import classifier

    judge = judge or classifier.load()
    return judge.flags([r["text"] for r in rows], strict=True) if judge else [False] * len(rows)


def gate_figures(split: str = "heldout") -> list[dict]:
    """The gate's figures on ``split`` for the layers that need no paper (rules, offline
    judge) and combined: what the integrity report and the cards quote.

    They depend on nothing in a vault, only on the code, the labelled rows and the judge
    that loaded, so they are kept on this machine under a key of those three (beside the
    exported models) and computed again when any of them changes: scoring the labelled set
    was about 9 s of every run's integrity report."""
    from vault_pipeline.integrity import classifier
    from vault_pipeline.store.atomic import atomic_write_bytes

    rows = load_rows(split)
    if not rows:
        return []
    judge = classifier.load()
    file = _figures_file(split, rows, judge)
    try:
        return json.loads(file.read_text())
    except (OSError, ValueError):  # not computed here yet, or a torn or damaged copy
        pass
    figures = [s.as_dict() for s in evaluate(split, {
        "rules": rules_layer, "judge": functools.partial(judge_layer, judge=judge)}, rows)]
    atomic_write_bytes(file, json.dumps(figures).encode())  # a racing run writes the same
    return figures


def _figures_file(split: str, rows: Sequence[dict], judge) -> Path:
    """Where the figures of this code, these rows and this judge are kept."""
    from vault_pipeline.embeddings.embedders import EMBEDDED_PACKAGE
    from vault_pipeline.embeddings.onnx import default_cache_dir
    from vault_pipeline.freshness.code_version import code_version
    from vault_pipeline.integrity.classifier import WEIGHTS
    from vault_pipeline.integrity.finetuned import HEAD

    digest = hashlib.sha256()
    for part in (code_version(), split, rows_sha256(rows), type(judge).__name__,
                 EMBEDDED_PACKAGE):
        digest.update(f"{part}\0".encode())
    for weights in (WEIGHTS, HEAD):
        digest.update(weights.read_bytes() if weights.exists() else b"absent")
    return default_cache_dir() / "gate-figures" / f"{digest.hexdigest()[:24]}.json"
