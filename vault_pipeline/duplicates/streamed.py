"""The semantic and view-overlap methods over streamed texts, incremental as the MinHash
ones (:mod:`.incremental`): the split into stored and new texts on disk (:mod:`.split`),
the vectors in a flat file read a block at a time (:class:`semantic.VectorFile`), the
views' n-grams in a scratch Parquet file joined by DuckDB (spilling past its limit). Only
the new texts are embedded and only their n-grams are matched, against every text's."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

from vault_pipeline.duplicates import ngrams, scratch
from vault_pipeline.duplicates.incremental import SIGNATURE_COLUMNS, Sink, named, signature_rows
from vault_pipeline.duplicates.lsh import BLOCK
from vault_pipeline.duplicates.semantic import VectorFile
from vault_pipeline.duplicates.split import RowIds, Split, sha, split
from vault_pipeline.duplicates.texts import Batches

SEMANTIC, VIEWS_OVERLAP = "semantic", "views_ngram"
GRAMS = {"id": pl.String, "gram": pl.UInt64, "new": pl.Boolean}


def _blocks(frames: Iterator[pl.DataFrame], rows: int = BLOCK) -> Iterator[pl.DataFrame]:
    """The frames' rows in blocks of ``rows`` (the last may be shorter)."""
    held: list[pl.DataFrame] = []
    count = 0
    for frame in frames:
        held.append(frame)
        count += frame.height
        while count >= rows:
            whole = pl.concat(held)
            yield whole.head(rows)
            held, count = [whole.slice(rows)], count - rows
    if count:
        yield pl.concat(held)


def _stored(where: Split, stored: Batches, ids: RowIds, sink: Sink
            ) -> Iterator[pl.DataFrame]:
    """The stored rows of unchanged texts, a batch at a time, to the sink and ``ids``."""
    for rows in where.stored_rows(stored):
        ids.add(rows["id"])
        sink(rows.select(list(SIGNATURE_COLUMNS)).cast(SIGNATURE_COLUMNS))
        yield rows


def semantic_method(source: Batches, stored: Batches, previous: Batches, embedder,
                    threshold: float, sink: Sink, work: Path | None = None
                    ) -> tuple[pl.DataFrame, Split]:
    """Cosine of title-and-abstract embeddings: new texts embedded a block at a time and
    compared with every stored and new vector, read back a block at a time."""
    key = f"{embedder.name}:t{threshold}"
    with tempfile.TemporaryDirectory(dir=work, prefix="semantic-") as tmp:
        where = split(source, stored, SEMANTIC, key, Path(tmp))
        ids, vectors = RowIds(Path(tmp)), VectorFile(Path(tmp) / "vectors.f32",
                                                     embedder.dimension)
        for rows in _stored(where, stored, ids, sink):
            vectors.add(np.asarray(rows["vector"].to_list(), dtype=np.float32))
        n_old = vectors.rows
        for block in _blocks(where.texts(source, where.new)):
            texts = block["text"].to_list()
            new = np.asarray(embedder.embed(texts), dtype=np.float32)
            vectors.add(new)
            ids.add(block["id"])
            sink(signature_rows(SEMANTIC, key, block["id"].to_list(), sha(texts),
                                vectors=new))
        evidence = pl.format(f"cosine {{}} of title-and-abstract embeddings ({embedder.name})",
                             pl.col("score").round(3))
        return pl.concat([ids.kept(previous, SEMANTIC, n_old),
                          named(ids.named(vectors.pairs(n_old, threshold)), SEMANTIC,
                                evidence)]), where


def overlap_method(source: Batches, stored: Batches, previous: Batches, n: int,
                   threshold: float, sink: Sink, work: Path | None = None
                   ) -> tuple[pl.DataFrame, Split]:
    """Views sharing more than ``threshold`` of the shorter one's ``n``-grams: new views
    against every other paper's, joined on disk."""
    key = f"ngram{n}:t{threshold}"
    with tempfile.TemporaryDirectory(dir=work, prefix="views-") as tmp:
        where = split(source, stored, VIEWS_OVERLAP, key, Path(tmp))
        ids = RowIds(Path(tmp))
        for _ in _stored(where, stored, ids, sink):
            pass
        n_old = ids.out.rows
        grams = scratch.Appender(Path(tmp) / "grams.parquet", GRAMS)
        for batch in where.texts(source, where.current, flag=where.new):  # one read
            fresh = batch.filter(pl.col("new"))
            ids.add(fresh["id"])
            sink(signature_rows(VIEWS_OVERLAP, key, fresh["id"].to_list(),
                                sha(fresh["text"].to_list())))
            grams(ngrams.ngram_frame(batch["id"].to_list(), batch["text"].to_list(), n)
                  .join(batch.select("id", "new"), on="id"))
        found = ngrams.overlaps_on_disk(grams.close(), Path(tmp), threshold)
        pairs = found.select(
            a=pl.min_horizontal("query", "match"), b=pl.max_horizontal("query", "match"),
            method=pl.lit(VIEWS_OVERLAP), score=pl.col("overlap").round(4),
            evidence=pl.format(f"{{}} of the shorter text's {n}-grams shared ({{}} of {{}})",
                               pl.col("overlap").round(3), pl.col("shared"), pl.col("grams")))
        return pl.concat([ids.kept(previous, VIEWS_OVERLAP, n_old), pairs]), where
