"""The same sentence-transformers model run by ONNX Runtime: no torch at query time.

torch and sentence-transformers take seconds and hundreds of MB to import, which a one-shot
`vault search` would pay on every call. The model folder's transformer is exported to ONNX
once (with torch, at index build or first use), cached, and from then on loaded with
onnxruntime and the model's own `tokenizer.json`; pooling and normalisation are done here
exactly as sentence-transformers does them (mean of the token vectors under the attention
mask, or the CLS vector; then unit length), so the vectors match the torch ones (cosine
>= 0.999, tested) and both can search the same index.

Batches are formed by token length (texts sorted by length, then cut into batches), so a
batch pads to its own longest text rather than to the longest of the whole input."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from vault_pipeline.errors import VaultError
from vault_pipeline.executors.cores import thread_share

ONNX_FILE = "model.onnx"
SUPPORTED_MODULES = {"Transformer", "Pooling", "Normalize"}
CACHE_ENV = "VAULT_MODEL_CACHE"


class OnnxUnavailable(VaultError):
    """This model cannot be run by ONNX Runtime here (library missing, unsupported layers)."""


def default_cache_dir() -> Path:
    """Where exported models are kept when no vault is given: ``$VAULT_MODEL_CACHE``, else
    the user's cache folder (exports are per model, not per vault)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "research-idea-vault" / "onnx"


def _pipeline(model_dir: Path) -> tuple[str, bool, int]:
    """(pooling mode, normalise, max tokens) from the sentence-transformers config files."""
    modules_file = model_dir / "modules.json"
    modules = json.loads(modules_file.read_text()) if modules_file.exists() else []
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    unsupported = sorted(set(kinds) - SUPPORTED_MODULES)
    if unsupported:
        raise OnnxUnavailable(f"the onnx backend cannot run {', '.join(unsupported)} layers "
                              f"of {model_dir.name}: use the torch backend")
    pooling = "mean"
    pooling_dir = next((m["path"] for m in modules if m["type"].endswith("Pooling")), None)
    if pooling_dir is not None:
        config = json.loads((model_dir / pooling_dir / "config.json").read_text())
        if config.get("pooling_mode_cls_token"):
            pooling = "cls"
        elif not config.get("pooling_mode_mean_tokens", True):
            raise OnnxUnavailable(f"the onnx backend supports mean or CLS pooling, not "
                                  f"{model_dir.name}'s: use the torch backend")
    bert_config = model_dir / "sentence_bert_config.json"
    max_tokens = json.loads(bert_config.read_text()).get("max_seq_length", 512) \
        if bert_config.exists() else 512
    return pooling, "Normalize" in kinds, int(max_tokens)


def cached_onnx(model_dir: Path, name: str, cache_dir: Path | None = None) -> Path:
    """The ONNX export of ``model_dir``, made once (with torch) and reused; keyed by the
    model's name and weights so a new model version is exported again."""
    weights = sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("*.bin"))
    stamp = "|".join(f"{w.name}:{w.stat().st_size}" for w in weights)
    key = hashlib.sha256(f"{name}|{stamp}".encode()).hexdigest()[:16]
    target = (cache_dir or default_cache_dir()) / key / ONNX_FILE
    if target.exists():
        return target
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not target.exists():  # another process may have exported it meanwhile
            partial = target.with_suffix(".onnx.partial")
            export_onnx(model_dir, partial)
            partial.replace(target)
    return target


def export_onnx(model_dir: Path, out: Path) -> None:
    """Export the transformer of a sentence-transformers folder (token vectors out)."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError:
        raise OnnxUnavailable("exporting the model to ONNX needs torch and transformers "
                              "once: pip install torch transformers") from None
    import inspect
    import warnings

    model = AutoModel.from_pretrained(str(model_dir)).eval()
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in inspect.signature(model.forward).parameters:
        names.append("token_type_ids")

    class TokenVectors(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    example = tuple(torch.ones(2, 8, dtype=torch.long) for _ in names)
    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "token_vectors"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(TokenVectors(), example, str(out), input_names=names,
                              output_names=["token_vectors"], dynamic_axes=axes,
                              opset_version=17, dynamo=False)
        except Exception as exc:  # noqa: BLE001 - the exporter fails in many types
            raise OnnxUnavailable(f"cannot export {model_dir.name} to ONNX: {exc}") from None


def optimized_once(onnx_file: Path) -> Path:
    """The export with ONNX Runtime's graph optimisations applied, saved beside it the first
    time (portable level: no hardware-specific layout), so a query session loads it as it is
    instead of optimising the graph at every start."""
    import onnxruntime as ort

    target = onnx_file.with_name(f"{onnx_file.stem}.optimized.onnx")
    if target.exists():
        return target
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(partial)
    ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
    partial.replace(target)  # atomic: a concurrent first search writes the same file
    return target


class OnnxEmbedder:
    """A sentence-transformers model run by ONNX Runtime, with length-bucketed batches."""

    def __init__(self, model_dir: Path, onnx_file: Path, name: str, source: str,
                 batch_size: int = 32, threads: int | None = None, prepack: bool = True) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise OnnxUnavailable("the onnx backend needs onnxruntime and tokenizers: "
                                  "pip install onnxruntime tokenizers") from None
        self.name = name
        self.source = source
        self.batch_size = batch_size
        self._pooling, self._normalise, max_tokens = _pipeline(model_dir)
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_tokens)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        threads = threads or thread_share()  # a pool worker's share of the cores
        if threads:
            options.intra_op_num_threads = threads
        if not prepack:  # a session for queries: starts in half the time
            options.add_session_config_entry("session.disable_prepacking", "1")
            # idle threads that spin take the core a query's graph walk runs on next
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            onnx_file = optimized_once(onnx_file)
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self._session = ort.InferenceSession(str(onnx_file), options,
                                             providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    @property
    def tokenizer(self):
        """The model's own tokenizer (a static encoder distilled from it shares it)."""
        return self._tokenizer

    def token_vectors(self) -> np.ndarray:
        """The model's pooled output for each vocabulary token alone, centred: the rows a
        static encoder distils (`embeddings.static_query`)."""
        size = self._tokenizer.get_vocab_size()
        ids = np.arange(size)
        cls_id = self._tokenizer.token_to_id("[CLS]") or 0
        sep_id = self._tokenizer.token_to_id("[SEP]") or 0
        out = np.zeros((size, self.dimension), np.float32)
        for start in range(0, size, 512):
            part = ids[start:start + 512]
            batch = np.stack([np.full(len(part), cls_id), part, np.full(len(part), sep_id)], 1)
            feed = {"input_ids": batch, "attention_mask": np.ones_like(batch),
                    "token_type_ids": np.zeros_like(batch)}
            tokens = self._session.run(None, {k: v for k, v in feed.items()
                                              if k in self._inputs})[0]
            out[part] = tokens.mean(1)
        return out - out.mean(0, keepdims=True)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, in the order of ``texts``."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            out[batch] = self._embed_batch([encodings[i] for i in batch])
        return out

    def _embed_batch(self, encodings: list) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        tokens = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        if self._pooling == "cls":
            pooled = tokens[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self._normalise:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32)
