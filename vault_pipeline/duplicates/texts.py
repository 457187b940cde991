"""The texts a fuzzy method compares, as batches that can be read again (``id``, ``text``
frames): from the store's tables a batch at a time, or from frames already in memory (the
tests). Streaming them is what keeps the stage's memory to one block of texts, not the
corpus: the MinHash methods read them twice (once to hash, once to sign the new ones)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import polars as pl

from vault_pipeline.duplicates import records

Batches = Callable[[], Iterable[pl.DataFrame]]  # a table's batches, every call afresh
TEXT_SCHEMA = {"id": pl.String, "text": pl.String}


def none() -> Iterator[pl.DataFrame]:
    """The batches of a table that is not there."""
    return iter(())


def frame_batches(frame: pl.DataFrame | None) -> Batches:
    """A frame in memory as one batch (none when it is absent)."""
    return lambda: [] if frame is None else [frame]


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


def materialise(source: Batches) -> tuple[list[str], list[str]]:
    """(ids, texts), the first text of each id: for the methods that hold every text."""
    frames = list(present(source))
    if not frames:
        return [], []
    whole = (pl.concat(frames).unique("id", keep="first", maintain_order=True)
             .filter(pl.col("text").is_not_null()))
    return whole["id"].to_list(), whole["text"].to_list()
