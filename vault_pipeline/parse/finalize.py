"""Candidates → `papers` rows: one normalisation for every source (ids, whitespace, empty
strings), then validation. A row that fails carries its reason into `papers_rejected`.

The work is one lazy plan (:func:`finalize_plan`) so that the batch parsers and the streaming
snapshot reader share it to the expression. Intermediate values are materialised as columns
(``with_columns`` in steps) rather than repeated inside ``when``: common-subexpression
elimination does not reach into ``when`` branches or ``list.eval``, so a repeated expression
would be computed twice."""

from __future__ import annotations

from datetime import date

import polars as pl

from vault_pipeline.ids import id_and_version
from vault_pipeline.schemas import PAPERS, PAPERS_REJECTED

TEXT_COLUMNS = ("title", "abstract", "doi", "journal_ref", "comments", "license",
                "primary_category")
LIST_COLUMNS = ("authors", "categories")

WHITESPACE_TO_COLLAPSE = r"\s\s+|[^\S ]"
"""What ``\\s+ → " "`` actually changes: runs of two or more, or one whitespace character that
is not a space. Same result, but prose's lone spaces are no match, so the regex engine makes
a tenth of the replacements (abstracts are most of the bytes)."""

ASCII_WHITESPACE_BUT_SPACE = r"[\t\n\x0b\x0c\r]"
ASCII_TO_COLLAPSE = r"[\t\n\x0b\x0c\r]|  "
"""An ASCII string needs collapsing iff it holds one of these (a quick literal scan)."""


def collapse_whitespace(expr: pl.Expr) -> pl.Expr:
    """Every run of whitespace becomes one space, exactly as ``\\s+ → " "`` does.

    In ASCII text (nearly all of arXiv) the only whitespace is ``[\\t\\n\\v\\f\\r ]``, so
    two byte-level passes do it: each of those characters becomes a space, then runs of
    spaces shrink to one, and only rows that hold something to change take them (most DOIs,
    licences, titles do not). Other strings take the Unicode regex. Each branch sees nulls
    for the rows it does not own, which cost nothing (``when`` evaluates both branches)."""
    ascii_only = expr.str.len_bytes() == expr.str.len_chars()
    needs_work = ascii_only & expr.str.contains(ASCII_TO_COLLAPSE)
    ascii_rows = (pl.when(needs_work).then(expr)
                  .str.replace_all(ASCII_WHITESPACE_BUT_SPACE, " ").str.replace_all(" {2,}", " "))
    other_rows = (pl.when(ascii_only).then(None).otherwise(expr)
                  .str.replace_all(WHITESPACE_TO_COLLAPSE, " "))
    return pl.coalesce(ascii_rows, other_rows, expr)


def clean_text(expr: pl.Expr) -> pl.Expr:
    """Collapse runs of whitespace and strip (an empty string stays empty here:
    :func:`finalize_plan` nulls it in its next step)."""
    return collapse_whitespace(expr).str.strip_chars()


def null_if_blank(column: str) -> pl.Expr:
    """An empty string becomes null. (Not ``replace("", None)``: the streaming engine
    runs ``replace`` on the whole column in memory.)"""
    return pl.when(pl.col(column) != "").then(pl.col(column))


def clean_names(column: str) -> pl.Expr:
    """Each element cleaned as :func:`clean_text` does, empty and null elements dropped
    (an empty list stays empty here: :func:`finalize_plan` nulls it in its next step)."""
    return pl.col(column).list.eval(
        pl.element().str.replace_all(WHITESPACE_TO_COLLAPSE, " ").str.strip_chars()
    ).list.eval(pl.element().filter(pl.element() != ""))


def null_if_empty(column: str) -> pl.Expr:
    return pl.when(pl.col(column).list.len() > 0).then(pl.col(column))


FIRST_DAY = date(1991, 8, 1)
"""arXiv's first day: an earlier date is a parse error or a forgery."""
MAX_CHARS = {"title": 2_000, "abstract": 20_000, "comments": 10_000, "journal_ref": 2_000,
             "doi": 500, "license": 500}
"""Caps far above any real record (arXiv's own abstract limit is 1,920 characters): a
field past one is hostile or broken input, and would flood every stage after this one."""
MAX_AUTHORS = 10_000  # the largest collaborations sign about 5,000


def _too_long() -> tuple[tuple[str, pl.Expr], ...]:
    return tuple((f"{name} over {limit:,} characters", pl.col(name).str.len_chars() > limit)
                 for name, limit in MAX_CHARS.items())


def reject_rules() -> tuple[tuple[str, pl.Expr], ...]:
    """(reason, condition) in order: the first that holds is the row's reason. Built per
    plan, so "today" is the day of the build, not of the process start."""
    return (
        ("missing or invalid arXiv id", pl.col("arxiv_id").is_null()),
        ("empty title", pl.col("title").is_null()),
        ("empty abstract", pl.col("abstract").is_null()),
        ("no authors", pl.col("authors").is_null()),
        ("missing or unreadable v1 date", pl.col("published").is_null()),
        ("published after updated (v1 dated after a later version)",
         pl.col("published") > pl.col("updated")),
        ("date outside arXiv's range (August 1991 to today)",
         (pl.col("published") < FIRST_DAY) | (pl.col("updated") > pl.lit(date.today()))),
        *_too_long(),
        (f"more than {MAX_AUTHORS:,} authors", pl.col("authors").list.len() > MAX_AUTHORS),
    )


def _reason() -> pl.Expr:
    expr = pl.lit(None, dtype=pl.String)
    for reason, condition in reversed(reject_rules()):
        expr = pl.when(condition).then(pl.lit(reason)).otherwise(expr)
    return expr


def finalize_plan(candidates: pl.LazyFrame, raw_sha256: str) -> pl.LazyFrame:
    """Candidates with every `papers` column normalised and a ``_reason`` column (null for a
    valid row). Other columns pass through untouched."""
    return candidates.with_columns(
        _id=id_and_version("raw_id"),
        **{c: clean_text(pl.col(c)) for c in TEXT_COLUMNS},
        **{c: clean_names(c) for c in LIST_COLUMNS},
        raw_sha256=pl.lit(raw_sha256),
    ).with_columns(
        arxiv_id=pl.col("_id").struct.field("id"),
        latest_version=pl.col("_id").struct.field("version"),
        **{c: null_if_blank(c) for c in TEXT_COLUMNS},
        **{c: null_if_empty(c) for c in LIST_COLUMNS},
    ).with_columns(
        updated=pl.coalesce("updated", "published"),
        primary_category=pl.coalesce("primary_category", pl.col("categories").list.first()),
    ).with_columns(_reason=_reason())


def valid_rows(finalized: pl.LazyFrame) -> pl.LazyFrame:
    """The rows of `papers`, in its schema."""
    return (finalized.filter(pl.col("_reason").is_null()).select(PAPERS.names)
            .cast(PAPERS.polars))  # type: ignore[arg-type]


def rejected_rows(finalized: pl.LazyFrame, *keep: str) -> pl.LazyFrame:
    """The rows of `papers_rejected` (plus the columns named in ``keep``)."""
    return finalized.filter(pl.col("_reason").is_not_null()).select(
        "raw_sha256", "source", "position", *keep,
        record_id=pl.col("raw_id"),
        reason=pl.col("_reason"),
        snippet=pl.coalesce("title", "raw_id").str.slice(0, 200),
    ).cast(PAPERS_REJECTED.polars)  # type: ignore[arg-type]


def finalize(candidates: pl.DataFrame, raw_sha256: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (valid rows in the `papers` schema, rejected rows) of one batch."""
    frame = finalize_plan(candidates.lazy(), raw_sha256).collect()
    if frame.get_column("_reason").null_count() == frame.height:  # no filter copy needed
        return (frame.select(PAPERS.names).cast(PAPERS.polars),  # type: ignore[arg-type]
                PAPERS_REJECTED.polars.to_frame())
    lazy = frame.lazy()
    return valid_rows(lazy).collect(), rejected_rows(lazy).collect()
