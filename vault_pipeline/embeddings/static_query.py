"""A static query encoder distilled from the index's own model, kept in that model's vector
space so the built index answers it: the agent tools' cheap query path under load.

Why: on two CPU cores the index model (all-MiniLM-L6-v2 on ONNX Runtime) costs about 20 ms
of CPU for a problem-setting-and-challenge query, 85% of a loaded server's time, so two
cores embed at most about 100 cold queries a second before any search (benchmarks/README.md).
This encoder costs about 0.3 ms a query.

How, as model2vec distils but without leaving the model's space: each vocabulary token's
vector is the model's output for that token alone (mean-pooled, centred); a text's vector is
the idf-weighted sum of its tokens' vectors, mapped into the model's space by a ridge
regression fitted on the index's own rows (their texts and the model's vectors of them). The
model2vec package's distiller is not used: it pins a transformers version this project's
other parts cannot run with.

What it costs in quality (`benchmarks/bench_static_queries.py`, abstracts nobody tuned on):
an abstract's opening three sentences find the rest of it in the top 10 for 0.931 of
queries, against 0.965 with the model. It is therefore a choice (`vault serve
--query-encoder static`), not the default.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import numpy as np

from vault_pipeline.store.atomic import atomic_path

log = logging.getLogger(__name__)

RIDGE = 1e-2
FIT_ROWS = 50_000  # index rows the map is fitted on (a seeded sample of larger indexes)


@functools.cache
def _blas() -> Any:
    """The process's thread pools (found once: a search then pays 0.3 ms, not 1 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class StaticQueryEncoder:
    """Texts to unit vectors in the index model's space, one table lookup per token."""

    def __init__(self, tokenizer: Any, rows: np.ndarray, mapping: np.ndarray, name: str
                 ) -> None:
        """``rows``: each token's vector times its idf weight (a text is their sum)."""
        self._tokenizer = tokenizer
        self._specials = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "<s>", "</s>")
                          if tokenizer.token_to_id(t) is not None}
        self._rows = rows.astype(np.float32)
        self._mapping = mapping.astype(np.float32)
        self.name = f"static({name})"
        self.dimension = int(mapping.shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, in the order of ``texts``.

        The map runs on one BLAS thread: OpenBLAS's idle threads spin for a while after a
        threaded product and took the second core from the graph walk that follows, which
        made a batch of 64 searches take 114-152 ms against 84-91 ms on two cores
        (benchmarks/README.md)."""
        summed = self._summed(texts)
        with _blas().limit(limits=1, user_api="blas"):
            summed = summed @ self._mapping
        return summed / np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), 1e-12)

    def _summed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._rows.shape[1]), np.float32)
        # the fast batch skips the offsets nothing here reads: 5 ms against 8 for 64 queries
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        for i, encoding in enumerate(encode(list(texts))):
            ids = [t for t in encoding.ids if t not in self._specials]
            if ids:
                out[i] = self._rows[ids].sum(0)
        return out

    @classmethod
    def distill(cls, model: Any, texts: list[str], vectors: np.ndarray) -> StaticQueryEncoder:
        """Distil ``model`` (an ONNX embedder) and fit its map on ``texts`` and the model's
        ``vectors`` of them (the index's rows)."""
        tokens = model.token_vectors()
        frequency = np.zeros(len(tokens))
        for encoding in model.tokenizer.encode_batch(list(texts)):
            frequency[list(set(encoding.ids))] += 1
        weights = (np.log((len(texts) + 1) / (frequency + 1)) + 1).astype(np.float32)
        rows = tokens * weights[:, None]
        unmapped = cls(model.tokenizer, rows, np.eye(tokens.shape[1]), model.name)
        summed = unmapped._summed(texts)
        summed /= np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), 1e-12)
        mapping = np.linalg.solve(summed.T @ summed + RIDGE * np.eye(summed.shape[1]),
                                  summed.T @ vectors)
        return cls(model.tokenizer, rows, mapping, model.name)

    def save(self, path: Path) -> None:
        """Write atomically (a failed write only costs the next start a distillation)."""
        try:
            with atomic_path(path) as partial, partial.open("wb") as file:
                np.savez(file, rows=self._rows, mapping=self._mapping)
        except OSError as exc:
            log.warning("static query encoder not saved (%s)", exc)

    @classmethod
    def load(cls, path: Path, model: Any) -> StaticQueryEncoder | None:
        """The saved encoder, or None when it is missing or unreadable."""
        try:
            with np.load(path) as saved:
                return cls(model.tokenizer, saved["rows"], saved["mapping"], model.name)
        except (OSError, ValueError, KeyError):
            return None


def for_index(texts: list[str], vectors: np.ndarray, model: Any, path: Path | None
              ) -> StaticQueryEncoder:
    """The encoder of one index version (its rows' ``texts`` and ``vectors``): read from
    ``path`` when saved there, else distilled from ``model`` and fitted on up to
    ``FIT_ROWS`` of the rows (then saved there, older versions' files removed)."""
    if not hasattr(model, "token_vectors"):
        from vault_pipeline.errors import VaultError

        raise VaultError(f"a static query encoder is distilled on ONNX Runtime; {model.name} "
                         "runs on torch here: use the model query encoder")
    if path is not None and path.exists():
        found = StaticQueryEncoder.load(path, model)
        if found is not None and found.dimension == model.dimension:
            return found
    if len(texts) > FIT_ROWS:
        keep = np.sort(np.random.default_rng(0).choice(len(texts), FIT_ROWS, replace=False))
        texts, vectors = [texts[i] for i in keep], vectors[keep]
    log.info("distilling a static query encoder from %s on %d index rows", model.name,
             len(texts))
    encoder = StaticQueryEncoder.distill(model, texts, vectors)
    if path is not None:
        encoder.save(path)
        for old in path.parent.glob("query-*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    return encoder
