"""MinHash signatures and LSH banding over word shingles, for many texts at once.

Texts are normalised and split into words by Polars (Rust, no Python loop per text), each
word hashed once, shingles hashed from consecutive word hashes with NumPy, and signatures
computed by `rensa` from the one flat buffer of shingle hashes
(`RMinHash.digest_matrix_from_flat_token_hashes`). Measured on 20,000 abstracts, one core:
rensa's MinHash 214,000 texts/s, datasketch 2,900 texts/s and datatrove's signature step
(spaCy words, NumPy per text) 170 texts/s (benchmarks/bench_duplicates_speed.py). The
candidates and their verification, a block at a time, are :mod:`.lsh`'s."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit multiplier (golden ratio): shingle mixing
_WORDS = r"[^\p{L}\p{N}]+"


@dataclass(frozen=True)
class MinHashParams:
    """``ngram`` words per shingle, ``bands`` x ``rows`` permutations (LSH: two texts become
    candidates when one band of ``rows`` values agrees), ``seed`` of the permutations."""

    ngram: int = 5
    bands: int = 28
    rows: int = 4
    seed: int = 0

    @property
    def num_perm(self) -> int:
        return self.bands * self.rows

    def name(self) -> str:
        return f"minhash:{self.ngram}g:{self.bands}x{self.rows}:s{self.seed}"


def words(texts: pl.Series) -> pl.Series:
    """Lower-case word lists (letters and digits; LaTeX markup and punctuation dropped)."""
    return (texts.fill_null("").str.normalize("NFKC").str.to_lowercase()
            .str.replace_all(_WORDS, " ").str.strip_chars().str.split(" ")
            .list.eval(pl.element().filter(pl.element() != "")))


def shingle_hashes(texts: pl.Series, ngram: int, seed: int = 0
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, offsets): the uint64 hash of every ``ngram``-word shingle of every text,
    flat, and the row offsets (text i owns ``hashes[offsets[i]:offsets[i + 1]]``). A text
    shorter than ``ngram`` words has one shingle of all its words, an empty one none."""
    tokens = words(texts)
    lengths = tokens.list.len().to_numpy().astype(np.int64)
    flat = tokens.explode().drop_nulls().hash(seed=seed + 1).to_numpy().astype(np.uint64)
    combined = flat.copy()
    with np.errstate(over="ignore"):
        for j in range(1, ngram):
            combined[:-j] = combined[:-j] * _MIX + flat[j:]
    count = np.where(lengths > 0, np.maximum(lengths - ngram + 1, 1), 0)
    short = (lengths > 0) & (lengths < ngram)
    if short.any():  # a short text's one shingle covers its words only: hash them alone
        starts = np.cumsum(lengths) - lengths
        for i in np.flatnonzero(short):
            value = np.uint64(0)
            with np.errstate(over="ignore"):
                for h in flat[starts[i]:starts[i] + lengths[i]]:
                    value = value * _MIX + h
            combined[starts[i]] = value
    starts = np.cumsum(lengths) - lengths
    total = int(count.sum())
    first = np.repeat(np.cumsum(count) - count, count)
    index = np.repeat(starts, count) + (np.arange(total) - first)
    offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.uint64)
    return combined[index], offsets


def signatures(texts: pl.Series, params: MinHashParams) -> np.ndarray:
    """(n, num_perm) uint32 MinHash signatures; a text without words gets a row of zeros
    (see :func:`band_keys`: it never becomes a candidate)."""
    import rensa

    hashes, offsets = shingle_hashes(texts, params.ngram, params.seed)
    if len(texts) == 0:
        return np.zeros((0, params.num_perm), dtype=np.uint32)
    matrix = rensa.RMinHash.digest_matrix_from_flat_token_hashes(
        hashes, offsets, params.num_perm, params.seed)
    out = np.asarray(matrix.to_rows(), dtype=np.uint32).reshape(len(texts), params.num_perm)
    out[np.diff(offsets) == 0] = 0
    return out


def band_keys(sig: np.ndarray, params: MinHashParams) -> np.ndarray:
    """(n, bands) uint64: one hash per band of ``rows`` signature values; 0 marks a text
    without words (no band of it is ever compared)."""
    n = sig.shape[0]
    rng = np.random.default_rng(params.seed + 7)
    mult = rng.integers(1, 2**63, size=params.rows, dtype=np.uint64) | np.uint64(1)
    blocks = sig.astype(np.uint64).reshape(n, params.bands, params.rows)
    with np.errstate(over="ignore"):
        keys = (blocks * mult).sum(axis=2, dtype=np.uint64)
        keys = (keys ^ (keys >> np.uint64(29))) * _MIX + np.arange(params.bands,
                                                                   dtype=np.uint64)
    keys[keys == 0] = 1
    keys[~sig.any(axis=1)] = 0
    return keys


def estimate(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Estimated Jaccard similarity of row pairs (share of equal signature values)."""
    return (sig_a == sig_b).mean(axis=1)
