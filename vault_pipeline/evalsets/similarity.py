"""Topic similarity between submissions: cosine of the vault's embeddings of title and
abstract (`vault_pipeline.embeddings.embedders`, the same models as the retrieval index), or,
when asked for or when no embedder is installed, cosine of TF-IDF vectors (scikit-learn),
named `lexical-tfidf` wherever it was used so a set never passes one off as the other.

Embeddings are cached under `$VAULT_HOME/evalsets/vectors/`, one Parquet file per model,
keyed by the sha256 of the text: a rebuild embeds only texts it has not seen."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from vault_pipeline.evalsets.settings import LEXICAL
from vault_pipeline.store import checksums
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.tables import readable

LEXICAL_METHOD = "lexical-tfidf"


def topic_text(title: str | None, abstract: str | None) -> str:
    return f"{title or ''}\n\n{abstract or ''}".strip()


@dataclass
class TopicSpace:
    """Unit vectors of a set of texts (dense, or sparse TF-IDF) and the method behind them."""

    method: str  # `embedding:<model name>` or `lexical-tfidf`
    note: str | None  # why the lexical fallback was used, when it was
    vectors: object  # np.ndarray (n, d) or scipy.sparse matrix (n, vocabulary)

    def similarity(self, rows: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
        """Cosine similarity of ``rows`` against ``cols`` (default: every text)."""
        left = self.vectors[rows]
        right = self.vectors if cols is None else self.vectors[cols]
        product = left @ right.T
        return np.asarray(product.todense() if hasattr(product, "todense") else product,
                          dtype=np.float32)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:120]


def _cache_file(paths: VaultPaths, model_name: str) -> Path:
    return paths.home / "evalsets" / "vectors" / f"{_slug(model_name)}.parquet"


def embed_cached(paths: VaultPaths, embedder, texts: list[str]) -> np.ndarray:
    """Embeddings of ``texts`` with ``embedder``, computing only those not cached."""
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    cache_file = _cache_file(paths, embedder.name)
    intact = cache_file.exists() and checksums.check(cache_file, readable) is None
    cached = (pl.read_parquet(cache_file) if intact  # a damaged cache is computed again
              else pl.DataFrame(schema={"text_sha256": pl.String,
                                        "vector": pl.List(pl.Float32)}))
    known = dict(zip(cached.get_column("text_sha256").to_list(),
                     range(cached.height), strict=True))
    missing = sorted({k for k in keys if k not in known})
    by_key = {k: t for k, t in zip(keys, texts, strict=True)}
    matrix = (np.asarray(cached.get_column("vector").to_list(), dtype=np.float32)
              if cached.height else np.zeros((0, embedder.dimension), dtype=np.float32))
    if missing:
        fresh = embedder.embed([by_key[k] for k in missing])
        matrix = np.vstack([matrix, fresh]) if matrix.size else fresh
        for offset, key in enumerate(missing):
            known[key] = cached.height + offset
        frame = pl.DataFrame({"text_sha256": [*cached.get_column("text_sha256").to_list(),
                                              *missing],
                              "vector": pl.Series(list(matrix), dtype=pl.List(pl.Float32))})
        with checksums.recorded_path(cache_file) as tmp:  # a cache: no schema of its own
            frame.write_parquet(tmp)
    return matrix[[known[k] for k in keys]]


def lexical_space(texts: list[str], note: str | None) -> TopicSpace:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=1,
                                 dtype=np.float32)
    try:
        vectors = vectorizer.fit_transform(texts).tocsr()
    except ValueError:  # no word to weigh (no texts, or stop words only): nothing is similar
        vectors = np.zeros((len(texts), 1), dtype=np.float32)
    return TopicSpace(LEXICAL_METHOD, note, vectors)


def topic_space(paths: VaultPaths, texts: list[str], model: str, batch_size: int = 64,
                backend: str = "onnx") -> TopicSpace:
    """Vectors of ``texts`` with the configured embedder, or the lexical fallback. The
    embedder runs on ONNX Runtime by default, as the index's and the duplicates' do: the
    same weights and similarities without importing torch and sentence-transformers (13.0
    against 5.4 s on the demo's submissions: benchmarks/bench_topic_space.py)."""
    if model == LEXICAL:
        return lexical_space(texts, "lexical similarity requested (embedder = lexical)")
    from vault_pipeline.embeddings.embedders import (
        EmbedderNotInstalled,
        EmbedderSettings,
        load_embedder,
    )

    try:
        embedder = load_embedder(EmbedderSettings(model=model, batch_size=batch_size,
                                                  backend=backend))
    except EmbedderNotInstalled as exc:
        return lexical_space(texts, f"no embedder installed ({exc})")
    if not texts:
        return TopicSpace(f"embedding:{embedder.name}", None,
                          np.zeros((0, embedder.dimension), dtype=np.float32))
    return TopicSpace(f"embedding:{embedder.name}", None, embed_cached(paths, embedder, texts))
