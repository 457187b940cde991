"""MinHash-LSH whose memory is bounded by a block, not by the corpus: signatures are
appended to one flat file (only the rows being verified are read back), band keys are
written per block as Parquet, candidate pairs come from a DuckDB join of those files
(DuckDB spills to disk past its memory limit) and are verified a bounded batch at a time.

The pairs are the whole-corpus definition's: two rows sharing one band key
(:func:`minhash.band_keys`), every new row against the stored rows and the other new ones,
each pair once, kept when :func:`minhash.estimate` reaches the threshold."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import polars as pl

from vault_pipeline.duplicates import scratch
from vault_pipeline.duplicates.minhash import MinHashParams, band_keys, estimate

BLOCK = 5_000  # texts signed, and stored signatures read, at a time
BLOCK_CHARS = 5_000_000  # characters signed at a time (5,000 abstracts; 80 full texts)
VERIFY_BATCH = 4096  # candidate pairs per verification batch: at most 8,192 rows read
PAIR_SCHEMA = {"a": pl.Int64, "b": pl.Int64, "score": pl.Float64}


class BlockedLSH:
    """Rows are numbered in the order their blocks are added: add the stored (old)
    signatures first, then the new ones, and ask :meth:`pairs` for ``n_old``."""

    def __init__(self, work: Path, params: MinHashParams,
                 memory_limit: str = scratch.MEMORY_LIMIT,
                 threads: int = 1) -> None:
        self.work, self.params = work, params
        self.memory_limit, self.threads = memory_limit, threads
        (work / "keys").mkdir(parents=True, exist_ok=True)
        self.sig_file = work / "signatures.u32"
        self.sig_file.write_bytes(b"")
        self.rows = 0
        self._blocks = 0

    def add(self, sig: np.ndarray) -> None:
        """Append one block of (n, num_perm) signatures and write its band keys."""
        sig = np.ascontiguousarray(sig, dtype=np.uint32)
        if sig.shape[0] == 0:
            return
        with self.sig_file.open("ab") as handle:
            handle.write(sig.tobytes())
        keys = band_keys(sig, self.params)
        n, bands = keys.shape
        frame = pl.DataFrame({
            "band": np.tile(np.arange(bands, dtype=np.uint8), n),
            "key": keys.ravel(),
            "row": np.repeat(np.arange(self.rows, self.rows + n, dtype=np.int64), bands)})
        frame.filter(pl.col("key") != 0).write_parquet(
            self.work / "keys" / f"block_{self._blocks:06d}.parquet", statistics=True)
        self.rows += n
        self._blocks += 1

    def read_rows(self, rows: np.ndarray) -> np.ndarray:
        """The signatures of ``rows``, read from the file one row at a time. Not a memory
        map: reading 8,192 random rows of a mapped million left 650 MB resident (the
        kernel maps the pages around each one touched), reading them leaves 8,192."""
        width = self.params.num_perm * 4
        with self.sig_file.open("rb", buffering=0) as handle:
            data = b"".join(os.pread(handle.fileno(), width, int(r) * width) for r in rows)
        return np.frombuffer(data, dtype=np.uint32).reshape(len(rows), self.params.num_perm)

    def candidates(self, n_old: int) -> Path | None:
        """A Parquet file of the distinct (a, b) row pairs, a < b, b new, sharing a band."""
        if self.rows <= n_old or self._blocks == 0:
            return None
        out = self.work / "candidates.parquet"
        keys = scratch.scan(self.work / "keys" / "*.parquet")
        with scratch.connect(self.work, self.memory_limit, self.threads) as db:
            scratch.copy_to(db, (
                f"SELECT DISTINCT o.row AS a, n.row AS b "
                f"FROM {keys} n JOIN {keys} o "
                f"ON n.band = o.band AND n.key = o.key "
                f"WHERE n.row >= {int(n_old)} AND o.row < n.row"), out)
        return out

    def pairs(self, n_old: int, threshold: float) -> pl.DataFrame:
        """(a, b, score) of the candidate pairs whose estimated Jaccard reaches
        ``threshold``, sorted; only the candidates' signature rows are read."""
        return self.verify(self.candidates(n_old), threshold)

    def verify(self, candidates: Path | None, threshold: float) -> pl.DataFrame:
        """The candidates of :meth:`candidates` kept by their estimated Jaccard, a bounded
        batch of signature rows read at a time."""
        if candidates is None:
            return pl.DataFrame(schema=PAIR_SCHEMA)
        import pyarrow.parquet as pq

        found = []
        for batch in pq.ParquetFile(candidates).iter_batches(batch_size=VERIFY_BATCH):
            a = batch.column("a").to_numpy().astype(np.int64)
            b = batch.column("b").to_numpy().astype(np.int64)
            rows, where = np.unique(np.concatenate([a, b]), return_inverse=True)
            sig = self.read_rows(rows)
            score = estimate(sig[where[:len(a)]], sig[where[len(a):]])
            keep = score >= threshold
            found.append(pl.DataFrame({"a": a[keep], "b": b[keep], "score": score[keep]},
                                      schema=PAIR_SCHEMA))
        if not found:
            return pl.DataFrame(schema=PAIR_SCHEMA)
        return pl.concat(found).sort("a", "b")


def lsh_pairs(old_blocks: Iterable[np.ndarray], new_blocks: Iterable[np.ndarray],
              params: MinHashParams, threshold: float, work: Path | None = None,
              on_new=None) -> tuple[pl.DataFrame, int]:
    """(pairs, n_old): the verified pairs of every new row against the stored rows and the
    other new rows; ``on_new`` sees each new block once (to store it)."""
    with tempfile.TemporaryDirectory(dir=work, prefix="lsh-") as tmp:
        lsh = BlockedLSH(Path(tmp), params)
        for block in old_blocks:
            lsh.add(block)
        n_old = lsh.rows
        for block in new_blocks:
            lsh.add(block)
            if on_new is not None:
                on_new(block)
        return lsh.pairs(n_old, threshold), n_old
