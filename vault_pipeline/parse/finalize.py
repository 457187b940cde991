"""Candidates → `papers` rows: one normalisation for every source (ids, whitespace, empty
strings), then validation. A row that fails carries its reason into `papers_rejected`."""

from __future__ import annotations

import polars as pl

from ..ids import id_expr, version_expr
from ..schemas import PAPERS, PAPERS_REJECTED

TEXT_COLUMNS = ("title", "abstract", "doi", "journal_ref", "comments", "license",
                "primary_category")


WHITESPACE_TO_COLLAPSE = r"\s\s+|[^\S ]"
"""What ``\\s+ → " "`` actually changes: runs of two or more, or one whitespace character that
is not a space. Same result, but prose's lone spaces are no match, so the regex engine makes
a tenth of the replacements (abstracts are most of the bytes)."""


ASCII_WHITESPACE_BUT_SPACE = r"[\t\n\x0b\x0c\r]"


def collapse_whitespace(expr: pl.Expr) -> pl.Expr:
    """Every run of whitespace becomes one space, exactly as ``\\s+ → " "`` does.

    In ASCII text (nearly all of arXiv) the only whitespace is ``[\\t\\n\\v\\f\\r ]``, so
    two byte-level passes do it: each of those characters becomes a space, then runs of
    spaces shrink to one. That costs about two thirds of the Unicode ``\\s`` class over abstracts.
    Other strings take the regex; each branch sees nulls for the other's rows, which cost
    nothing (``when`` evaluates both branches)."""
    ascii_only = expr.str.len_bytes() == expr.str.len_chars()
    ascii_rows = (pl.when(ascii_only).then(expr)
                  .str.replace_all(ASCII_WHITESPACE_BUT_SPACE, " ").str.replace_all(" {2,}", " "))
    other_rows = (pl.when(ascii_only).then(None).otherwise(expr)
                  .str.replace_all(WHITESPACE_TO_COLLAPSE, " "))
    return pl.coalesce(ascii_rows, other_rows)


def _clean(expr: pl.Expr) -> pl.Expr:
    """Collapse runs of whitespace; an empty string becomes null."""
    cleaned = collapse_whitespace(expr).str.strip_chars()
    return pl.when(cleaned == "").then(None).otherwise(cleaned)


def _clean_list(column: str) -> pl.Expr:
    """Each element cleaned as :func:`_clean` does; empty and null elements dropped; an empty
    list becomes null. (Two plain passes: common-subexpression elimination does not reach
    inside ``list.eval``, where :func:`_clean` would collapse every name twice.)"""
    cleaned = pl.col(column).list.eval(
        pl.element().str.replace_all(WHITESPACE_TO_COLLAPSE, " ").str.strip_chars())
    kept = cleaned.list.eval(pl.element().filter(pl.element() != ""))
    return pl.when(kept.list.len() > 0).then(kept).otherwise(None)


REJECT_RULES: tuple[tuple[str, pl.Expr], ...] = (
    ("missing or invalid arXiv id", pl.col("arxiv_id").is_null()),
    ("empty title", pl.col("title").is_null()),
    ("empty abstract", pl.col("abstract").is_null()),
    ("no authors", pl.col("authors").is_null()),
    ("missing or unreadable v1 date", pl.col("published").is_null()),
    ("published after updated", pl.col("published") > pl.col("updated")),
)


def _reason() -> pl.Expr:
    expr = pl.lit(None, dtype=pl.String)
    for reason, condition in reversed(REJECT_RULES):
        expr = pl.when(condition).then(pl.lit(reason)).otherwise(expr)
    return expr


def finalize(candidates: pl.DataFrame, raw_sha256: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (valid rows in the `papers` schema plus `position`, rejected rows).

    Evaluated lazily: the eager engine skips common-subexpression elimination, so each
    cleaned column would be computed twice (once for the empty-string test)."""
    frame = candidates.lazy().with_columns(
        arxiv_id=id_expr("raw_id"),
        latest_version=version_expr("raw_id"),
        **{c: _clean(pl.col(c)) for c in TEXT_COLUMNS},
        authors=_clean_list("authors"),
        categories=_clean_list("categories"),
        raw_sha256=pl.lit(raw_sha256),
    ).with_columns(
        updated=pl.coalesce("updated", "published"),
        primary_category=pl.coalesce("primary_category", pl.col("categories").list.first()),
        _reason=_reason(),
    ).collect()
    rejected = frame.filter(pl.col("_reason").is_not_null()).select(
        "raw_sha256", "source", "position",
        record_id=pl.col("raw_id"),
        reason=pl.col("_reason"),
        snippet=pl.coalesce("title", "raw_id").str.slice(0, 200),
    ).cast(PAPERS_REJECTED.polars)  # type: ignore[arg-type]
    valid = frame.filter(pl.col("_reason").is_null()).select(
        *PAPERS.names, "position"
    ).cast(PAPERS.polars)  # type: ignore[arg-type]
    return valid, rejected
