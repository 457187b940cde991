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

from vault_pipeline.documents.cleaning import truncate
from vault_pipeline.parse.openreview import RATING_ALIASES
from vault_pipeline.schemas import CITATION_COUNTS, CITATIONS, DOCUMENTS, REVIEWS, SUBMISSIONS
from vault_pipeline.store.paths import VaultPaths

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
    documents: pl.DataFrame | None  # the documents table (rows with an arXiv or forum id)
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


OPENREVIEW_PDF = "openreview_pdf"  # `full_text_source` of a submission's own PDF


def usable() -> pl.Expr:
    """A documents row with full text: converted, from LaTeX or a PDF, not empty."""
    return ((pl.col("status") == "ok") & pl.col("source").is_in(FULL_TEXT_SOURCES)
            & (pl.col("text").str.strip_chars().str.len_chars() > 0))


def forum_documents(forums: pl.DataFrame, documents: pl.DataFrame | None
                    ) -> pl.DataFrame | None:
    """One documents row per forum of ``forums`` (`forum_id`, `arxiv_id`): the text of the
    submission's own PDF from OpenReview where it converted (seed 001 read the submitted
    PDF), else that of its arXiv match, else the row that says why there is none (the
    OpenReview row first). `full_text_from` says which (`openreview`, `arxiv`)."""
    if documents is None or documents.is_empty():
        return None
    if "forum_id" not in documents.columns:
        documents = documents.with_columns(forum_id=pl.lit(None, pl.String))
    wanted = forums.select("forum_id", "arxiv_id").unique("forum_id", keep="first")
    own = (documents.filter(pl.col("forum_id").is_not_null()).drop("arxiv_id")
           .join(wanted.select("forum_id"), on="forum_id", how="semi")
           .with_columns(full_text_from=pl.lit("openreview"),
                         _rank=pl.when(usable()).then(0).otherwise(2)))
    links = wanted.filter(pl.col("arxiv_id").is_not_null())
    matched = (documents.filter(pl.col("arxiv_id").is_not_null()).drop("forum_id")
               .join(links, on="arxiv_id", how="inner").drop("arxiv_id")
               .with_columns(full_text_from=pl.lit("arxiv"),
                             _rank=pl.when(usable()).then(1).otherwise(3)))
    both = pl.concat([own, matched.select(own.columns)], how="vertical_relaxed")
    return (both.sort("forum_id", "_rank").unique("forum_id", keep="first",
                                                  maintain_order=True).drop("_rank"))


def read_inputs(paths: VaultPaths, scale: tuple[float, float]) -> Inputs:
    store = paths.store
    submissions = store.read(SUBMISSIONS)
    reviews, excluded = check_ratings(store.read(REVIEWS), scale)
    documents = store.read_optional(DOCUMENTS)
    if documents is not None:
        if "forum_id" not in documents.columns:  # a table built before OpenReview PDFs
            documents = documents.with_columns(forum_id=pl.lit(None, pl.String))
        documents = documents.filter(pl.col("arxiv_id").is_not_null()
                                     | pl.col("forum_id").is_not_null())
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
    from vault_pipeline.evalsets.citation_windows import match_records

    newest = (counts.sort("read_at", descending=True, nulls_last=True)
              .unique("s2_id", keep="first", maintain_order=True))
    matched = match_records(frame.drop(*columns, strict=False), newest)
    keep = newest.select("s2_id", "citation_count", "influential_citation_count",
                         citations_read_at="read_at")
    return matched.join(keep, on="s2_id", how="left", maintain_order="left")


def attach_representations(frame: pl.DataFrame, documents: pl.DataFrame | None,
                           max_chars: int) -> pl.DataFrame:
    """The two input representations of seed 001: title + abstract, and the cleaned full
    text cut at ``max_chars``: the submission's own OpenReview PDF, else its arXiv match's
    text (:func:`forum_documents`), else the title and abstract with the reason."""
    found = forum_documents(frame, documents)
    docs = pl.DataFrame(schema={"forum_id": pl.String, "_src": pl.String,
                                "_text": pl.String, "_cut": pl.Boolean, "_chars": pl.Int64,
                                "_why": pl.String})
    if found is not None:
        why = pl.format("{} ({}): title and abstract only",
                        pl.when(pl.col("full_text_from") == "openreview")
                        .then(pl.lit("no converted OpenReview PDF"))
                        .otherwise(pl.lit("no converted full text of its arXiv match")),
                        pl.coalesce(pl.col("error"), pl.col("status")))
        docs = found.select(
            "forum_id",
            _src=pl.when(~usable()).then(None)
            .when(pl.col("full_text_from") == "openreview").then(pl.lit(OPENREVIEW_PDF))
            .otherwise(pl.col("source")),
            _text=pl.when(usable()).then(pl.col("text")),
            _cut=pl.col("truncated"), _chars=pl.when(usable()).then(pl.col("n_chars")),
            _why=pl.when(~usable()).then(why))
    joined = frame.join(docs, on="forum_id", how="left", maintain_order="left")
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
    note = (pl.when(pl.col("_why").is_not_null()).then(pl.col("_why"))
            .when(pl.col("arxiv_id").is_null())
            .then(pl.lit("no OpenReview PDF and no arXiv match for this submission: title "
                         "and abstract only"))
            .otherwise(pl.lit("no converted full text for its arXiv id: title and abstract "
                              "only")))
    return joined.with_columns(
        title_abstract=short,
        full_text=pl.coalesce(pl.Series(texts, dtype=pl.String), short),
        full_text_source=pl.coalesce(pl.col("_src"), pl.lit("abstract_only")),
        full_text_truncated=pl.Series(cut, dtype=pl.Boolean),
        full_text_chars=pl.col("_chars"),
        full_text_note=pl.when(pl.col("_text").is_null()).then(note),
    ).drop("_src", "_text", "_cut", "_chars", "_why")
