"""Semantic matches: cosine similarity of title-and-abstract embeddings (the index's model),
at a threshold calibrated on labelled pairs. New vectors are compared with every stored one
in blocks, so memory stays at one block of scores; the vectors themselves are read from a
flat file a block at a time (:class:`VectorFile`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

BLOCK = 4096  # new vectors compared at a time
ALL_BLOCK = 16_384  # vectors they are compared with at a time (24 MB at 384 dimensions)
PAIR_SCHEMA = {"a": pl.Int64, "b": pl.Int64, "score": pl.Float64}


def cosine_pairs(new: np.ndarray, old: np.ndarray, threshold: float) -> pl.DataFrame:
    """Row pairs (``a`` of old or new rows, ``b`` new; new rows numbered after the old) with
    cosine at or above ``threshold`` (vectors are unit length), each once, never a row with
    itself."""
    everything = np.vstack([old, new]) if len(old) else new
    n_old, found = len(old), []
    for start in range(0, len(new), BLOCK):
        block = new[start:start + BLOCK]
        scores = block @ everything.T
        rows, cols = np.nonzero(scores >= threshold)
        b = rows + n_old + start
        keep = cols < b
        found.append(pl.DataFrame({"a": cols[keep].astype(np.int64),
                                   "b": b[keep].astype(np.int64),
                                   "score": scores[rows[keep], cols[keep]].astype(np.float64)}))
    if not found:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    return pl.concat(found).sort("a", "b")


class VectorFile:
    """Unit vectors appended to one flat float32 file and read back a block at a time, so
    the comparison holds two blocks, never every vector (as :class:`lsh.BlockedLSH`'s
    signatures)."""

    def __init__(self, path: Path, dimension: int) -> None:
        self.path, self.dimension, self.rows = path, dimension, 0
        path.write_bytes(b"")

    def add(self, vectors: np.ndarray) -> None:
        block = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dimension)
        with self.path.open("ab") as handle:
            handle.write(block.tobytes())
        self.rows += len(block)

    def block(self, start: int, stop: int) -> np.ndarray:
        return np.fromfile(self.path, dtype=np.float32, count=(stop - start) * self.dimension,
                           offset=start * self.dimension * 4).reshape(-1, self.dimension)

    def pairs(self, n_old: int, threshold: float) -> pl.DataFrame:
        """:func:`cosine_pairs` of the rows from ``n_old`` on (new) against every earlier
        row and each other, a block of new rows against a block of all at a time."""
        found = [pl.DataFrame(schema=PAIR_SCHEMA)]
        for start in range(n_old, self.rows, BLOCK):
            stop = min(start + BLOCK, self.rows)
            new = self.block(start, stop)
            for first in range(0, stop, ALL_BLOCK):
                scores = new @ self.block(first, min(first + ALL_BLOCK, stop)).T
                rows, cols = np.nonzero(scores >= threshold)
                a, b = cols + first, rows + start
                keep = a < b
                found.append(pl.DataFrame({
                    "a": a[keep].astype(np.int64), "b": b[keep].astype(np.int64),
                    "score": scores[rows[keep], cols[keep]].astype(np.float64)}))
        return pl.concat(found).sort("a", "b")
