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


def gather(papers: pl.DataFrame | None, submissions: pl.DataFrame | None,
           counts: pl.DataFrame | None) -> pl.DataFrame:
    """One row per record. A submission's `arxiv_ref` is the arXiv paper the reviews stage
    matched it to (title and author), an S2 paper's the arXiv id S2 lists (any version,
    normalised); dates: v1 for arXiv, creation for OpenReview, none for S2 (a year alone is
    no date)."""
    frames = []
    if papers is not None and not papers.is_empty():
        frames.append(_fill(papers.select(  # abstracts may be left out (streamed apart)
            "arxiv_id", "title", "authors",
            *(c for c in ("abstract", "doi") if c in papers.columns), "published").rename(
            {"arxiv_id": "id", "published": "date"}).with_columns(source=pl.lit(ARXIV))))
    if submissions is not None and not submissions.is_empty():
        subs = submissions.with_columns(
            id=pl.lit(f"{OPENREVIEW}:") + pl.col("forum_id"), source=pl.lit(OPENREVIEW),
            arxiv_ref=id_expr("arxiv_id") if "arxiv_id" in submissions.columns
            else pl.lit(None, pl.String),
            ref_how=pl.col("arxiv_match") if "arxiv_match" in submissions.columns
            else pl.lit(None, pl.String),
            date=pl.col("created").dt.date() if "created" in submissions.columns
            else pl.lit(None, pl.Date))
        frames.append(_fill(subs))
    if counts is not None and not counts.is_empty():
        s2 = counts.unique("s2_id", keep="last").with_columns(
            id=pl.lit(f"{S2}:") + pl.col("s2_id"), source=pl.lit(S2),
            arxiv_ref=id_expr("arxiv_id"), ref_how=pl.lit("Semantic Scholar arXiv id"),
            abstract=pl.lit(None, pl.String))
        frames.append(_fill(s2))
    if not frames:
        return empty()
    return pl.concat(frames).unique("id", keep="first").sort("id")


def compared_text(records: pl.DataFrame) -> pl.Series:
    """Title and abstract, what the fuzzy and semantic methods compare; null without an
    abstract (a title alone is matched exactly, never fuzzily)."""
    return records.select(pl.when(pl.col("abstract").str.strip_chars().str.len_chars() > 0)
                          .then(pl.col("title").fill_null("") + "\n" + pl.col("abstract"))
                          ).to_series()
