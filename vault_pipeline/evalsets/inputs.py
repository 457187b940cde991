"""What the evaluation sets read: `submissions`, `reviews`, `documents`,
`citation_counts` and `citations`, with every official review's rating checked once.

A review counts towards a paper's ratings only with a numeric rating inside the venue scale
(default 1-10). The `reviews` stage already reads "8: accept, good paper" as 8; what it could
not read (no rating, words only, a number off the scale) becomes an `eval_excluded` row with
the review's id and the text it gave, never a silent gap in a rating list."""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from ..documents.cleaning import truncate
from ..paths import VaultPaths
from ..reviews_parse import RATING_ALIASES
from ..schemas import CITATION_COUNTS, CITATIONS, DOCUMENTS, REVIEWS, SUBMISSIONS

RATINGS_SCOPE = "ratings"  # `set_name` of exclusions that concern every set
_RATING_SECTION = re.compile(
    rf"^## (?:{'|'.join([*RATING_ALIASES, 'recommendation'])})\n\n(?P<raw>.*?)(?=\n\n## |\Z)",
    re.MULTILINE | re.DOTALL)
FULL_TEXT_SOURCES = ("latex", "pdf")


@dataclass(frozen=True)
class Inputs:
    submissions: pl.DataFrame
    reviews: pl.DataFrame  # official reviews with a valid rating
    excluded: pl.DataFrame  # reviews whose rating could not be used, with the reason
    documents: pl.DataFrame | None  # the documents table (rows with an arXiv id)
    citation_counts: pl.DataFrame | None
    citations: pl.DataFrame | None = None  # citing rows with dates, for citation windows


def excluded_frame(rows: list[dict]) -> pl.DataFrame:
    schema = {"set_name": pl.String, "venue_id": pl.String, "forum_id": pl.String,
              "note_id": pl.String, "reason": pl.String}
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


def rating_text(text: str | None) -> str | None:
    """The rating a review gave as words (the `reviews` stage keeps unreadable rating
    strings in the review's Markdown text under `## rating`)."""
    match = _RATING_SECTION.search(text or "")
    return " ".join(match.group("raw").split())[:120] if match else None


def check_ratings(reviews: pl.DataFrame, scale: tuple[float, float]
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(official reviews with a usable rating, exclusions of the others with reasons)."""
    low, high = scale
    official = reviews.filter(pl.col("kind") == "review")
    usable = pl.col("rating").is_not_null() & pl.col("rating").is_between(low, high)
    rows = []
    for row in official.filter(~usable).iter_rows(named=True):
        if row["rating"] is not None:
            reason = f"rating {row['rating']:g} is outside the scale {low:g}-{high:g}"
        elif (raw := rating_text(row["text"])) is not None:
            reason = f"rating {raw!r} is not a number"
        else:
            reason = "the review gives no rating"
        rows.append({"set_name": RATINGS_SCOPE, "venue_id": row["venue_id"],
                     "forum_id": row["forum_id"], "note_id": row["note_id"],
                     "reason": reason})
    kept = official.filter(usable).sort("forum_id", "created", "note_id", nulls_last=True)
    return kept, excluded_frame(rows)


def usable_documents(documents: pl.DataFrame | None) -> pl.DataFrame | None:
    if documents is None or documents.is_empty():
        return None
    return (documents.filter(pl.col("arxiv_id").is_not_null() & (pl.col("status") == "ok")
                             & pl.col("source").is_in(FULL_TEXT_SOURCES)
                             & (pl.col("text").str.strip_chars().str.len_chars() > 0))
            .select("arxiv_id", "source", "text", "truncated", "n_chars")
            .unique("arxiv_id", keep="first", maintain_order=True))


def read_inputs(paths: VaultPaths, scale: tuple[float, float]) -> Inputs:
    store = paths.store
    submissions = store.read(SUBMISSIONS)
    reviews, excluded = check_ratings(store.read(REVIEWS), scale)
    documents = store.read_optional(DOCUMENTS)
    if documents is not None:
        documents = documents.filter(pl.col("arxiv_id").is_not_null())
    counts = store.read_optional(CITATION_COUNTS)
    return Inputs(submissions, reviews, excluded, documents, counts,
                  store.read_optional(CITATIONS))


def attach_ratings(frame: pl.DataFrame, reviews: pl.DataFrame) -> pl.DataFrame:
    """`ratings` and `confidences` of the reviews with a valid rating, in review order (a
    confidence the review left out is null, so the two lists stay aligned), their count,
    mean and sd."""
    per_paper = reviews.group_by("forum_id", maintain_order=True).agg(
        ratings=pl.col("rating"), confidences=pl.col("confidence"),
        rated_reviews=pl.len().cast(pl.Int32))
    joined = frame.drop([c for c in ("ratings", "confidences", "mean_rating")
                         if c in frame.columns]).join(per_paper, on="forum_id", how="left",
                                                      maintain_order="left")
    return joined.with_columns(
        ratings=pl.col("ratings").fill_null(pl.lit([], pl.List(pl.Float64))),
        confidences=pl.col("confidences").fill_null(pl.lit([], pl.List(pl.Float64))),
        rated_reviews=pl.col("rated_reviews").fill_null(0),
        mean_rating=pl.col("ratings").list.mean(),
        rating_sd=pl.col("ratings").list.std(ddof=1),
    )


def attach_citations(frame: pl.DataFrame, counts: pl.DataFrame | None) -> pl.DataFrame:
    """Citation count and read date where Semantic Scholar matched, as seed 001 matched:
    by DOI, else by the arXiv id the vault matched, else by title similarity >= 0.90
    (:mod:`.citation_windows`); `citation_match` says which, `citation_title_ratio` how
    close the title was."""
    columns = {"s2_id": pl.String, "citation_count": pl.Int64,
               "influential_citation_count": pl.Int64, "citations_read_at": pl.Date,
               "citation_match": pl.String, "citation_title_ratio": pl.Float64}
    if counts is None or counts.is_empty():
        return frame.with_columns(*(pl.lit(None, dtype).alias(name)
                                    for name, dtype in columns.items()))
    from .citation_windows import match_records

    newest = (counts.sort("read_at", descending=True, nulls_last=True)
              .unique("s2_id", keep="first", maintain_order=True))
    matched = match_records(frame.drop(*columns, strict=False), newest)
    keep = newest.select("s2_id", "citation_count", "influential_citation_count",
                         citations_read_at="read_at")
    return matched.join(keep, on="s2_id", how="left", maintain_order="left")


def attach_representations(frame: pl.DataFrame, documents: pl.DataFrame | None,
                           max_chars: int) -> pl.DataFrame:
    """The two input representations of seed 001: title + abstract, and the cleaned full
    text cut at ``max_chars`` (the title and abstract when no full text converted)."""
    docs = usable_documents(documents)
    docs = docs if docs is not None else pl.DataFrame(
        schema={"arxiv_id": pl.String, "source": pl.String, "text": pl.String,
                "truncated": pl.Boolean, "n_chars": pl.Int64})
    joined = frame.join(docs.rename({"source": "_src", "text": "_text",
                                     "truncated": "_cut", "n_chars": "_chars"}),
                        on="arxiv_id", how="left", maintain_order="left")
    short = pl.concat_str([pl.col("title").fill_null(""), pl.col("abstract").fill_null("")],
                          separator="\n\n")
    texts, cut = [], []
    for body, already in joined.select("_text", "_cut").iter_rows():
        if body is None:
            texts.append(None)
            cut.append(False)
            continue
        kept, was_cut = truncate(body, max_chars)
        texts.append(kept)
        cut.append(bool(was_cut or already))
    note = (pl.when(pl.col("arxiv_id").is_null())
            .then(pl.lit("no arXiv match for this submission: title and abstract only"))
            .otherwise(pl.lit("no converted full text for its arXiv id: title and abstract "
                              "only")))
    return joined.with_columns(
        title_abstract=short,
        full_text=pl.coalesce(pl.Series(texts, dtype=pl.String), short),
        full_text_source=pl.coalesce(pl.col("_src"), pl.lit("abstract_only")),
        full_text_truncated=pl.Series(cut, dtype=pl.Boolean),
        full_text_chars=pl.col("_chars"),
        full_text_note=pl.when(pl.col("_text").is_null()).then(note),
    ).drop("_src", "_text", "_cut", "_chars")
