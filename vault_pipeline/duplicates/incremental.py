"""A fuzzy method run incrementally over streamed texts: which texts are stored unchanged
is worked out on disk (:mod:`.split`), the stored signatures of unchanged texts are read a
batch at a time into the LSH (:mod:`.lsh`), only the new texts are signed, a block at a
time, and every signature row goes to a sink as it is made. What stays in memory is a bit
a text and the pairs, never the texts, their ids or the signatures."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl

from vault_pipeline.duplicates import lsh, minhash
from vault_pipeline.duplicates.split import RowIds, Split, sha, split
from vault_pipeline.duplicates.texts import Batches

SIGNATURE_COLUMNS = {"id": pl.String, "method": pl.String, "params": pl.String,
                     "text_sha256": pl.String, "signature": pl.List(pl.UInt32),
                     "vector": pl.List(pl.Float32)}
Sink = Callable[[pl.DataFrame], None]  # takes signature rows as they are made
T = TypeVar("T")


def text_blocks(items: Iterable[T], length: Callable[[T], int]) -> Iterator[list[T]]:
    """At most :data:`lsh.BLOCK` items or :data:`lsh.BLOCK_CHARS` characters at a time (a
    full text is some 60 abstracts: its blocks hold fewer texts); a longer item alone."""
    block: list[T] = []
    chars = 0
    for item in items:
        n = length(item)
        if block and (len(block) >= lsh.BLOCK or chars + n > lsh.BLOCK_CHARS):
            yield block
            block, chars = [], 0
        block.append(item)
        chars += n
    if block:
        yield block


def signed_blocks(texts: Iterable[str], params: minhash.MinHashParams
                  ) -> Iterator[np.ndarray]:
    """Signatures of :func:`text_blocks` of the texts."""
    for block in text_blocks(texts, len):
        yield minhash.signatures(pl.Series(block, dtype=pl.String), params)


def signature_rows(method: str, params: str, ids: list[str], hashes: list[str],
                   signatures: np.ndarray | None = None, vectors=None) -> pl.DataFrame:
    n = len(ids)
    return pl.DataFrame({
        "id": ids, "method": [method] * n, "params": [params] * n, "text_sha256": hashes,
        "signature": (pl.Series(signatures).cast(pl.List(pl.UInt32))
                      if signatures is not None else [None] * n),
        "vector": list(vectors) if vectors is not None else [None] * n},
        schema=SIGNATURE_COLUMNS)


def stored_signatures(where: Split, stored: Batches, ids: RowIds, sink: Sink,
                      num_perm: int) -> Iterator[np.ndarray]:
    """The stored signatures of unchanged texts as (rows, num_perm) arrays, a batch at a
    time; their rows go to the sink, their ids to ``ids``."""
    for rows in where.stored_rows(stored):
        ids.add(rows["id"])
        sink(rows.select(list(SIGNATURE_COLUMNS)).cast(SIGNATURE_COLUMNS))
        for start in range(0, rows.height, lsh.BLOCK):
            column = rows["signature"].slice(start, lsh.BLOCK)
            yield (column.explode().to_numpy().astype(np.uint32)
                   .reshape(len(column), num_perm))


def new_signatures(where: Split, source: Batches, ids: RowIds, sink: Sink,
                   params: minhash.MinHashParams) -> Iterator[np.ndarray]:
    """Signatures of the texts not stored unchanged, a block at a time; their rows go to
    the sink, their ids to ``ids``."""
    def rows() -> Iterator[tuple[str, str]]:
        for batch in where.texts(source, where.new):
            yield from batch.iter_rows()

    for block in text_blocks(rows(), lambda row: len(row[1])):
        names, texts = [r[0] for r in block], [r[1] for r in block]
        sig = minhash.signatures(pl.Series(texts, dtype=pl.String), params)
        ids.add(pl.Series(names, dtype=pl.String))
        sink(signature_rows(where.method, where.params, names, sha(texts), signatures=sig))
        yield sig


def minhash_method(method: str, source: Batches, stored: Batches, previous: Batches,
                   params: minhash.MinHashParams, threshold: float, sink: Sink,
                   work: Path | None = None) -> tuple[pl.DataFrame, Split]:
    """(pairs, split) of one MinHash method, comparing new texts only, every step a block
    at a time or on disk; the method's signature rows go to ``sink``."""
    with tempfile.TemporaryDirectory(dir=work, prefix=f"{method}-") as tmp:
        where = split(source, stored, method, f"{params.name()}:t{threshold}", Path(tmp))
        ids = RowIds(Path(tmp))
        scored, n_old = lsh.lsh_pairs(
            stored_signatures(where, stored, ids, sink, params.num_perm),
            new_signatures(where, source, ids, sink, params), params, threshold, Path(tmp))
        evidence = pl.format(f"estimated Jaccard {{}} of {params.ngram}-word shingles "
                             f"(LSH {params.bands}x{params.rows})", pl.col("score").round(3))
        return pl.concat([ids.kept(previous, method, n_old),
                          named(ids.named(scored), method, evidence)]), where


def named(rows: pl.DataFrame, method: str, evidence: pl.Expr) -> pl.DataFrame:
    """Pairs named by id (:meth:`RowIds.named`), each once (``a`` < ``b``), with their
    evidence."""
    return rows.select(
        a=pl.min_horizontal("a", "b"), b=pl.max_horizontal("a", "b"), method=pl.lit(method),
        score=pl.col("score").cast(pl.Float64).round(4), evidence=evidence)
