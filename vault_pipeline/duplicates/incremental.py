"""A MinHash method run incrementally over streamed texts: the texts are hashed a batch at
a time, the stored signatures of unchanged texts are read a batch at a time into the LSH
(:mod:`.lsh`), only the new texts are signed, a block at a time, and every signature row goes
to a sink as it is made. What stays in memory is one (id, text hash) per text and the
pairs, never the texts or the signatures."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl

from vault_pipeline.duplicates import lsh, minhash
from vault_pipeline.duplicates.exact import PAIR_COLUMNS, empty_pairs
from vault_pipeline.duplicates.texts import Batches, present

SIGNATURE_COLUMNS = {"id": pl.String, "method": pl.String, "params": pl.String,
                     "text_sha256": pl.String, "signature": pl.List(pl.UInt32),
                     "vector": pl.List(pl.Float32)}
Sink = Callable[[pl.DataFrame], None]  # takes signature rows as they are made
T = TypeVar("T")


def sha(texts: list[str | None]) -> list[str | None]:
    return [None if t is None else hashlib.sha256(t.encode()).hexdigest() for t in texts]


def current_keys(source: Batches) -> pl.DataFrame:
    """(seq, id, text_sha256) of each id's first row with a text; ``seq`` numbers the rows
    of :func:`texts.present` so that a second read finds them again."""
    frames, seq = [], 0
    for batch in present(source):
        frames.append(pl.DataFrame({
            "seq": np.arange(seq, seq + batch.height, dtype=np.int64), "id": batch["id"],
            "text_sha256": pl.Series(sha(batch["text"].to_list()), dtype=pl.String)}))
        seq += batch.height
    if not frames:
        return pl.DataFrame(schema={"seq": pl.Int64, "id": pl.String,
                                    "text_sha256": pl.String})
    return (pl.concat(frames).unique("id", keep="first", maintain_order=True)
            .filter(pl.col("text_sha256").is_not_null()))


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


def kept(previous: Batches, method: str, old_ids: list[str]) -> pl.DataFrame:
    """Pairs of a method found before between two texts that are stored unchanged."""
    mine = pl.concat([empty_pairs(), *(b.filter(pl.col("method") == method)
                                       .select(list(PAIR_COLUMNS)) for b in previous())])
    keep = pl.Series(old_ids, dtype=pl.String).implode()  # one set, not one a batch
    return mine.filter(pl.col("a").is_in(keep) & pl.col("b").is_in(keep))


@dataclass
class Counted:
    """Row numbers of one comparison: the stored unchanged texts first, then the new."""

    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return self.old + self.new


def unchanged(rows: pl.DataFrame, ids: pl.Series, hashes: pl.Series) -> pl.Series:
    """Which rows' (id, text hash) are among the current texts' (``ids`` sorted): a binary
    search per row, not a hash table of every current text built again for each batch."""
    if rows.is_empty() or ids.is_empty():
        return pl.Series([False] * rows.height, dtype=pl.Boolean)
    at = ids.search_sorted(rows["id"]).clip(0, ids.len() - 1)
    return ((ids.gather(at) == rows["id"]) & (hashes.gather(at) == rows["text_sha256"])
            ).fill_null(False)


def stored_blocks(stored: Batches, method: str, key: str, current: pl.DataFrame,
                  num_perm: int, sink: Sink, counted: Counted) -> Iterator[np.ndarray]:
    """The stored signatures of unchanged texts, a batch at a time, as (rows, num_perm)
    arrays; each batch's rows go to the sink and their ids to ``counted.old``."""
    want = current.select("id", "text_sha256").sort("id")
    for batch in stored():
        mine = batch.filter((pl.col("method") == method) & (pl.col("params") == key))
        mine = mine.filter(unchanged(mine, want["id"], want["text_sha256"]))
        if mine.is_empty():
            continue
        counted.old.extend(mine["id"].to_list())
        sink(mine.select(list(SIGNATURE_COLUMNS)).cast(SIGNATURE_COLUMNS))
        for start in range(0, mine.height, lsh.BLOCK):
            column = mine["signature"].slice(start, lsh.BLOCK)
            yield (column.explode().to_numpy().astype(np.uint32)
                   .reshape(len(column), num_perm))


def new_blocks(source: Batches, method: str, key: str, current: pl.DataFrame,
               params: minhash.MinHashParams, sink: Sink, counted: Counted
               ) -> Iterator[np.ndarray]:
    """Signatures of the texts not stored unchanged (read after :func:`stored_blocks`, so
    ``counted.old`` is complete), a block at a time; rows to the sink, ids to
    ``counted.new``."""
    old = pl.Series(counted.old, dtype=pl.String).implode()
    fresh = current.filter(~pl.col("id").is_in(old))
    wanted = np.zeros(int(current["seq"].max() or 0) + 1 if current.height else 0, bool)
    wanted[fresh["seq"].to_numpy()] = True

    def rows() -> Iterator[tuple[str, str]]:
        seq = 0
        for batch in present(source):
            picked = wanted[seq:seq + batch.height]
            seq += batch.height
            if picked.any():
                yield from batch.filter(pl.Series(
                    np.pad(picked, (0, batch.height - len(picked))))).iter_rows()

    for block in text_blocks(rows(), lambda row: len(row[1])):
        ids, texts = [r[0] for r in block], [r[1] for r in block]
        sig = minhash.signatures(pl.Series(texts, dtype=pl.String), params)
        counted.new.extend(ids)
        sink(signature_rows(method, key, ids, sha(texts), signatures=sig))
        yield sig


def minhash_method(method: str, source: Batches, stored: Batches, previous: Batches,
                   params: minhash.MinHashParams, threshold: float, sink: Sink,
                   work: Path | None = None) -> tuple[pl.DataFrame, Counted]:
    """(pairs, counted) of one MinHash method, comparing new texts only, every step a
    block at a time; the method's signature rows go to ``sink``."""
    key = f"{params.name()}:t{threshold}"
    current = current_keys(source)
    counted = Counted()
    scored, _ = lsh.lsh_pairs(
        stored_blocks(stored, method, key, current, params.num_perm, sink, counted),
        new_blocks(source, method, key, current, params, sink, counted),
        params, threshold, work)
    evidence = pl.format(f"estimated Jaccard {{}} of {params.ngram}-word shingles "
                         f"(LSH {params.bands}x{params.rows})", pl.col("score").round(3))
    pairs = pl.concat([kept(previous, method, counted.old),
                       named(scored, counted.ids, method, evidence)])
    return pairs, counted


def named(rows: pl.DataFrame, ids: list[str], method: str, evidence: pl.Expr
          ) -> pl.DataFrame:
    """Row-number pairs as record pairs, each once (``a`` < ``b``), with their evidence."""
    names = pl.Series(ids, dtype=pl.String)
    return rows.with_columns(a=names.gather(rows["a"]), b=names.gather(rows["b"])).select(
        a=pl.min_horizontal("a", "b"), b=pl.max_horizontal("a", "b"), method=pl.lit(method),
        score=pl.col("score").cast(pl.Float64).round(4), evidence=evidence)
