"""Exact matches: the same arXiv id (any version) carried by another source's record, the
same DOI, the same normalised title with the same first author. Cheap hash joins, so they
are recomputed whole on every run."""

from __future__ import annotations

import polars as pl

from vault_pipeline.duplicates.records import ARXIV, OPENREVIEW
from vault_pipeline.reviews.build import title_key

PAIR_COLUMNS = {"a": pl.String, "b": pl.String, "method": pl.String, "score": pl.Float64,
                "evidence": pl.String}
EXACT_ID, EXACT_DOI, EXACT_TITLE, LINK_OPENREVIEW = (
    "exact_arxiv_id", "exact_doi", "exact_title_author", "link_openreview")


def empty_pairs() -> pl.DataFrame:
    return pl.DataFrame(schema=PAIR_COLUMNS)


def ordered(frame: pl.DataFrame) -> pl.DataFrame:
    """Each pair once, ``a`` < ``b``."""
    return frame.with_columns(a=pl.min_horizontal("a", "b"), b=pl.max_horizontal("a", "b"))


def doi_key(column: str) -> pl.Expr:
    """A DOI without its resolver prefix, lower-cased (DOIs are case-insensitive)."""
    return (pl.col(column).str.strip_chars().str.to_lowercase()
            .str.replace(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", "")
            .replace("", None))


def first_author(column: str) -> pl.Expr:
    """The first author's surname, lower-case ASCII letters (`Garcia` for `García`)."""
    return (pl.col(column).list.first().str.normalize("NFKD").str.to_lowercase()
            .str.replace_all(r"[^a-z\s-]", "").str.strip_chars().str.split(" ").list.last()
            .replace("", None))


def _star(frame: pl.DataFrame, key: str, method: str, evidence: pl.Expr) -> pl.DataFrame:
    """Pairs of every record with the first (earliest, then lowest id) of its key group:
    enough to join them in one cluster, without the square of a large group."""
    keyed = frame.filter(pl.col(key).is_not_null()).sort("date", "id", nulls_last=True)
    first = keyed.group_by(key, maintain_order=True).agg(first=pl.col("id").first())
    pairs = keyed.join(first, on=key).filter(pl.col("id") != pl.col("first"))
    return ordered(pairs.select(a="first", b="id", method=pl.lit(method),
                                score=pl.lit(1.0), evidence=evidence))


KEY_COLUMNS = {"doi_key": pl.String, "title_key": pl.String, "author": pl.String,
               "ta": pl.String}


def with_keys(records: pl.DataFrame) -> pl.DataFrame:
    """The records with their exact keys: DOI, normalised title, first author's surname and
    title + author (`ta`, where both are there)."""
    return records.with_columns(
        doi_key=doi_key("doi"), title_key=title_key("title"), author=first_author("authors")
    ).with_columns(
        ta=pl.when((pl.col("title_key").str.len_chars() > 0) & pl.col("author").is_not_null())
        .then(pl.col("title_key") + "|" + pl.col("author")))


def exact_pairs(records: pl.DataFrame) -> pl.DataFrame:
    """Every exact pair, each once, with what matched."""
    if records.is_empty():
        return empty_pairs()
    return keyed_pairs(with_keys(records))


def keyed_pairs(keyed: pl.DataFrame) -> pl.DataFrame:
    """The exact pairs of records with their keys (:func:`with_keys`): only the records
    that share a key or link to an arXiv paper matter, so a subset holding all of those
    gives the pairs of the whole."""
    if keyed.is_empty():
        return empty_pairs()
    arxiv = keyed.filter(pl.col("source") == ARXIV).select("id")
    refs = keyed.filter(pl.col("arxiv_ref").is_not_null()).join(
        arxiv, left_on="arxiv_ref", right_on="id", how="semi")
    linked = ordered(refs.select(
        a="arxiv_ref", b="id",
        method=pl.when(pl.col("source") == OPENREVIEW).then(pl.lit(LINK_OPENREVIEW))
        .otherwise(pl.lit(EXACT_ID)),
        score=pl.lit(1.0),
        evidence=pl.format("{} names arXiv {} ({})", pl.col("id"), pl.col("arxiv_ref"),
                           pl.col("ref_how").fill_null("linked"))))
    pairs = pl.concat([
        linked,
        _star(keyed, "doi_key", EXACT_DOI, pl.format("DOI {}", pl.col("doi_key"))),
        _star(keyed, "ta", EXACT_TITLE, pl.format("title '{}', first author {}",
                                                  pl.col("title_key"), pl.col("author"))),
    ]).select(list(PAIR_COLUMNS))
    return pairs.unique(["a", "b", "method"], keep="first").sort("a", "b", "method")
