"""Task decontamination by n-gram overlap, as NeMo Curator decontaminates downstream tasks
(13-grams by default): the share of a held-out text's n-grams found in one other text.
A held-out target whose text shares that much with a retrievable paper or a training
example of another split has its answer outside its split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from vault_pipeline.duplicates import scratch
from vault_pipeline.duplicates.minhash import shingle_hashes, words

DEFAULT_N = 13


def ngram_frame(ids: list[str], texts: list[str], n: int = DEFAULT_N) -> pl.DataFrame:
    """One row per (id, distinct n-gram hash); a text under ``n`` words has none (too short
    to say anything by overlap)."""
    series = pl.Series(texts, dtype=pl.String)
    hashes, offsets = shingle_hashes(series, n)
    counts = np.diff(offsets).astype(np.int64)
    lengths = words(series).list.len().to_numpy()
    keep = np.repeat(lengths >= n, counts)
    return pl.DataFrame({"id": np.repeat(np.asarray(ids, dtype=object), counts)[keep],
                         "gram": hashes[keep]},
                        schema={"id": pl.String, "gram": pl.UInt64}).unique()


def overlaps(queries: pl.DataFrame, corpus: pl.DataFrame, n: int = DEFAULT_N,
             threshold: float = 0.0, symmetric: bool = False, best: bool = True
             ) -> pl.DataFrame:
    """Query texts (`id`, `text`) against corpus texts (`id`, `text`): `query`, `match`,
    `shared` n-grams, `grams` (the query's, or with ``symmetric`` the shorter text's) and
    `overlap` (shared / grams), kept when `overlap` > ``threshold``; with ``best`` only
    each query's best match. A text is never compared with itself (same id)."""
    q = ngram_frame(queries["id"].to_list(), queries["text"].to_list(), n)
    c = ngram_frame(corpus["id"].to_list(), corpus["text"].to_list(), n)
    sizes = q.group_by("id").len("grams")
    corpus_sizes = c.group_by("id").len("grams_match").rename({"id": "id_match"})
    shared = (q.join(c, on="gram", suffix="_match").filter(pl.col("id") != pl.col("id_match"))
              .group_by("id", "id_match").len("shared"))
    scored = shared.join(sizes, on="id").join(corpus_sizes, on="id_match")
    if symmetric:
        scored = scored.with_columns(grams=pl.min_horizontal("grams", "grams_match"))
    scored = (scored.with_columns(overlap=pl.col("shared") / pl.col("grams"))
              .filter(pl.col("overlap") > threshold)
              .sort(["overlap", "id_match"], descending=[True, False]))
    best = scored.unique("id", keep="first") if best else scored
    return best.select(query="id", match="id_match", shared=pl.col("shared").cast(pl.Int64),
                       grams=pl.col("grams").cast(pl.Int64), overlap="overlap"
                       ).sort("query", "match")


def overlaps_on_disk(grams: Path, work: Path, threshold: float) -> pl.DataFrame:
    """:func:`overlaps` with ``symmetric`` and every match (not only the best), of the texts
    whose n-grams (:func:`ngram_frame` with a column `new`) are in the Parquet file
    ``grams``: the `new` texts against every other, as one DuckDB join that spills to
    ``work`` past its memory limit."""
    g = scratch.scan(grams)
    with scratch.connect(work) as db:
        return scratch.frame(db, f"""
            WITH sizes AS (SELECT id, count(*) AS grams FROM {g} GROUP BY id),
            shared AS (SELECT q.id AS query, c.id AS match, count(*) AS shared
                       FROM {g} q JOIN {g} c ON q.gram = c.gram
                       WHERE q.new AND q.id <> c.id GROUP BY q.id, c.id),
            scored AS (SELECT query, match, shared, least(sq.grams, sc.grams) AS grams
                       FROM shared JOIN sizes sq ON sq.id = query
                       JOIN sizes sc ON sc.id = match)
            SELECT query, match, shared::BIGINT AS shared, grams::BIGINT AS grams,
                   shared / grams AS overlap
            FROM scored WHERE shared / grams > {float(threshold)!r}::DOUBLE
            ORDER BY query, match""").cast(
            {"query": pl.String, "match": pl.String, "shared": pl.Int64, "grams": pl.Int64,
             "overlap": pl.Float64})
