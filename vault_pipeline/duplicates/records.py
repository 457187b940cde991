"""The records compared: every arXiv paper, OpenReview submission and Semantic Scholar paper
the vault knows, in one frame (`id`, `source`, `title`, `abstract`, `authors`, `doi`,
`arxiv_ref`, `ref_how`, `date`). arXiv papers keep their version-less id; the others are
named `openreview:<forum id>` and `s2:<paper id>`, so one id never means two records."""

from __future__ import annotations

import polars as pl

from vault_pipeline.ids import id_expr

ARXIV, OPENREVIEW, S2 = "arxiv", "openreview", "s2"
COLUMNS = {"id": pl.String, "source": pl.String, "title": pl.String, "abstract": pl.String,
           "authors": pl.List(pl.String), "doi": pl.String, "arxiv_ref": pl.String,
           "ref_how": pl.String, "date": pl.Date}


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=COLUMNS)


def _fill(frame: pl.DataFrame) -> pl.DataFrame:
    for name, dtype in COLUMNS.items():
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype).alias(name))
    return frame.select([pl.col(n).cast(t) for n, t in COLUMNS.items()])


def forum_key(forum_id: str) -> str:
    return f"{OPENREVIEW}:{forum_id}"


def paper_records(papers: pl.DataFrame) -> pl.DataFrame:
    """arXiv papers as records (dated by v1; abstracts may be left out, streamed apart)."""
    return _fill(papers.select(
        "arxiv_id", "title", "authors",
        *(c for c in ("abstract", "doi") if c in papers.columns), "published").rename(
        {"arxiv_id": "id", "published": "date"}).with_columns(source=pl.lit(ARXIV)))


def submission_records(submissions: pl.DataFrame) -> pl.DataFrame:
    """OpenReview submissions as records: `arxiv_ref` the arXiv paper the reviews stage
    matched (title and author), dated by creation."""
    return _fill(submissions.with_columns(
        id=pl.lit(f"{OPENREVIEW}:") + pl.col("forum_id"), source=pl.lit(OPENREVIEW),
        arxiv_ref=id_expr("arxiv_id") if "arxiv_id" in submissions.columns
        else pl.lit(None, pl.String),
        ref_how=pl.col("arxiv_match") if "arxiv_match" in submissions.columns
        else pl.lit(None, pl.String),
        date=pl.col("created").dt.date() if "created" in submissions.columns
        else pl.lit(None, pl.Date)))


def s2_records(counts: pl.DataFrame) -> pl.DataFrame:
    """Semantic Scholar papers as records (the last row of an S2 id): `arxiv_ref` the arXiv
    id S2 lists (any version, normalised), no date (a year alone is no date)."""
    return _fill(counts.unique("s2_id", keep="last", maintain_order=True).with_columns(
        id=pl.lit(f"{S2}:") + pl.col("s2_id"), source=pl.lit(S2),
        arxiv_ref=id_expr("arxiv_id"), ref_how=pl.lit("Semantic Scholar arXiv id"),
        abstract=pl.lit(None, pl.String)))


def gather(papers: pl.DataFrame | None, submissions: pl.DataFrame | None,
           counts: pl.DataFrame | None) -> pl.DataFrame:
    """One row per record, the first of an id (:func:`paper_records`,
    :func:`submission_records`, :func:`s2_records`)."""
    frames = [make(frame) for frame, make in ((papers, paper_records),
                                               (submissions, submission_records),
                                               (counts, s2_records))
              if frame is not None and not frame.is_empty()]
    if not frames:
        return empty()
    return pl.concat(frames).unique("id", keep="first").sort("id")


def compared_text(records: pl.DataFrame) -> pl.Series:
    """Title and abstract, what the fuzzy and semantic methods compare; null without an
    abstract (a title alone is matched exactly, never fuzzily)."""
    return records.select(pl.when(pl.col("abstract").str.strip_chars().str.len_chars() > 0)
                          .then(pl.col("title").fill_null("") + "\n" + pl.col("abstract"))
                          ).to_series()
