"""Semantic matches: cosine similarity of title-and-abstract embeddings (the index's model),
at a threshold calibrated on labelled pairs. New vectors are compared with every stored one
in blocks, so memory stays at one block of scores."""

from __future__ import annotations

import numpy as np
import polars as pl

BLOCK = 4096


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
