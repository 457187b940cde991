"""The texts a fuzzy method compares, as batches that can be read again (``id``, ``text``
frames): from the store's tables a batch at a time, or from frames already in memory (the
tests). Streaming them is what keeps the stage's memory to one block of texts, not the
corpus: the MinHash methods read them twice (once to hash, once to sign the new ones)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from vault_pipeline.duplicates import records

# A table's batches, every call afresh; a table's (not a text source's) takes the columns
# to read, all when none are named.
Batches = Callable[..., Iterable[pl.DataFrame]]
TEXT_SCHEMA = {"id": pl.String, "text": pl.String}
VIEW_SCHEMA = {"arxiv_id": pl.String, "view": pl.String, "text": pl.String}


def none(columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
    """The batches of a table that is not there."""
    return iter(())


def frame_batches(frame: pl.DataFrame | None) -> Batches:
    """A frame in memory as one batch (none when it is absent)."""
    def read(columns: Sequence[str] | None = None) -> list[pl.DataFrame]:
        if frame is None:
            return []
        return [frame if columns is None else frame.select(columns)]
    return read


def _compared(frame: pl.DataFrame, ids: pl.Expr) -> pl.DataFrame:
    return frame.select(id=ids, text=records.compared_text(frame))


def record_texts(recs: pl.DataFrame) -> Batches:
    """Title and abstract of gathered records (:func:`records.gather`)."""
    return lambda: [_compared(recs, pl.col("id"))]


def abstract_texts(papers: Batches, submissions: Batches) -> Batches:
    """Title and abstract of every arXiv paper, then every OpenReview submission (the
    order :func:`records.gather` keeps the first of an id in; S2 records have none)."""
    def read() -> Iterator[pl.DataFrame]:
        for batch in papers():
            yield _compared(batch, pl.col("arxiv_id"))
        for batch in submissions():
            yield _compared(batch, pl.lit(f"{records.OPENREVIEW}:") + pl.col("forum_id"))
    return read


def fulltexts(documents: Batches, chars: int) -> Batches:
    """Every converted full text (not an abstract fallback), its first ``chars``."""
    def read() -> Iterator[pl.DataFrame]:
        for batch in documents():
            done = batch.filter((pl.col("status") == "ok")
                                & (pl.col("source") != "abstract_only")
                                & pl.col("text").is_not_null())
            yield done.select(
                id=pl.coalesce(pl.col("arxiv_id"),
                               pl.lit(f"{records.OPENREVIEW}:") + pl.col("forum_id")),
                text=pl.col("text").str.slice(0, chars))
    return read


def present(source: Batches) -> Iterator[pl.DataFrame]:
    """The batches' rows with an id, in order, their numbering (the first of an id is its
    record, as in :func:`records.gather`, even when its text is null and a later one's is
    not)."""
    for batch in source():
        kept = batch.filter(pl.col("id").is_not_null())
        if kept.height:
            yield kept.select(list(TEXT_SCHEMA)).cast(TEXT_SCHEMA)


def _joined(rows: pl.DataFrame) -> pl.DataFrame:
    return (rows.group_by("arxiv_id", maintain_order=True).agg(pl.col("text").str.join("\n"))
            .rename({"arxiv_id": "id"}))


def view_texts(views: Batches, work: Path) -> Batches:
    """Each paper's views joined in view order (`id`, `text`), sorted by id: the views are
    copied to ``work``, sorted there by DuckDB (spilling) and joined a paper at a time, so
    no step holds every view."""
    from vault_pipeline.duplicates import scratch

    rows = scratch.Appender(work / "views.parquet", VIEW_SCHEMA)
    for batch in views(tuple(VIEW_SCHEMA)):
        rows(batch.filter(pl.col("text").is_not_null() & pl.col("arxiv_id").is_not_null())
             .select(list(VIEW_SCHEMA)).cast(VIEW_SCHEMA))
    out = scratch.Appender(work / "view_texts.parquet", TEXT_SCHEMA)
    with scratch.connect(work) as db:
        carry = pl.DataFrame(schema=VIEW_SCHEMA)
        for batch in scratch.batches(db, f"SELECT * FROM {scratch.scan(rows.close())} "
                                         "ORDER BY arxiv_id, view"):
            batch = pl.concat([carry, batch.cast(VIEW_SCHEMA)])
            last = batch["arxiv_id"][-1]
            carry = batch.filter(pl.col("arxiv_id") == last)
            out(_joined(batch.filter(pl.col("arxiv_id") != last)))
        out(_joined(carry))
    path = out.close()

    def read(columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(
                batch_size=scratch.ROW_GROUP):
            yield pl.DataFrame(pl.from_arrow(batch))
    return read
