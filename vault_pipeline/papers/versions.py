"""Which version of each paper the vault holds: for a paper published before the cutoff, the
last version created before it.

A paper revised after the cutoff keeps its place in the vault through that earlier version:
its full text is that version's file (fetched by versioned id), its title and abstract that
version's where a source gave them (`paper_versions`), and where no source did the row says
so instead of carrying the later text. Every stage that reads a pre-cutoff paper's text
(`documents`, the ideas stage, the full-text harvest, `splits`, the index check) asks here,
with the split's cutoff, so they all agree on the version."""

from __future__ import annotations

from datetime import date

import polars as pl

from vault_pipeline.schemas import PAPER_VERSIONS, PAPERS
from vault_pipeline.store.tables import TableStore

SCHEMA = pl.Schema({
    "arxiv_id": pl.String, "version": pl.Int32, "created": pl.Date, "latest_version": pl.Int32,
    "updated": pl.Date, "revised": pl.Boolean, "title": pl.String, "abstract": pl.String,
    "note": pl.String,
})
"""`version`: the version the vault holds (null when the paper was revised after the cutoff
and no source lists its versions; also null for an unrevised paper whose source gives no
version number); `revised`: a later version was created on or after the cutoff; `title` and
`abstract`: for a revised paper, that version's (null when unknown, then `note` says why);
null for the others, whose latest title and abstract in `papers` are the held version's."""


def _chosen(cutoff: date) -> tuple[pl.Expr, pl.Expr]:
    """(version, created) of the last listed version created before the cutoff."""
    before = pl.col("versions").list.eval(
        pl.element().filter(pl.element().struct.field("created") < pl.lit(cutoff)))
    last = before.list.eval(pl.element().sort_by(pl.element().struct.field("version"))
                            ).list.last()
    return last.struct.field("version"), last.struct.field("created")


def vault_versions(papers: pl.DataFrame | pl.LazyFrame, earlier: pl.DataFrame | None,
                   cutoff: date) -> pl.DataFrame:
    """One row per paper published before ``cutoff`` (see :data:`SCHEMA`)."""
    papers = papers.lazy()
    if "versions" not in papers.collect_schema().names():  # a table built before histories
        papers = papers.with_columns(versions=pl.lit(None, PAPERS.polars["versions"]))
    frame = papers.filter(pl.col("published") < cutoff).select(
        "arxiv_id", "latest_version", "updated", "versions")
    version, created = _chosen(cutoff)
    frame = frame.with_columns(revised=pl.col("updated") >= cutoff).with_columns(
        _version=version, _created=created)
    if earlier is None:
        earlier = PAPER_VERSIONS.polars.to_frame()
    own = earlier.lazy().select("arxiv_id", pl.col("version").alias("_version"),
                                pl.col("title").alias("_title"),
                                pl.col("abstract").alias("_abstract"))
    frame = frame.join(own, on=["arxiv_id", "_version"], how="left")
    revised = pl.col("revised")
    unknown_history = revised & pl.col("_version").is_null()
    unknown_text = revised & pl.col("_version").is_not_null() & pl.col("_abstract").is_null()
    note = (pl.when(unknown_history).then(pl.format(
                "revised on {} (v{}), after the cutoff, and no source lists its earlier "
                "versions: no pre-cutoff version is known", "updated",
                pl.col("latest_version").cast(pl.String).fill_null("?")))
            .when(unknown_text).then(pl.format(
                "title and abstract of v{} unknown: the sources give only v{}'s, of {}, "
                "after the cutoff", "_version",
                pl.col("latest_version").cast(pl.String).fill_null("?"), "updated")))
    out = frame.select(
        "arxiv_id",
        version=pl.when(revised).then("_version").otherwise("latest_version"),
        created=pl.when(revised).then("_created").otherwise("updated"),
        latest_version="latest_version", updated="updated", revised=revised,
        title=pl.when(revised).then("_title"),
        abstract=pl.when(revised).then("_abstract"),
        note=note,
    )
    return out.collect().cast(SCHEMA)  # type: ignore[arg-type]


def read_vault_versions(store: TableStore, cutoff: date) -> pl.DataFrame | None:
    """:func:`vault_versions` of the vault's tables; None without a `papers` table."""
    papers = store.scan_optional(PAPERS)
    if papers is None:
        return None
    return vault_versions(papers, store.read_optional(PAPER_VERSIONS), cutoff)


def text_dates(rows: pl.DataFrame, papers: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """``rows`` (with ``arxiv_id`` and ``version``: the version a text was read from) plus
    ``text_created``, the day that version was created as `papers` lists it, and
    ``text_updated``, the paper's latest version's day. A text is before a cutoff when its
    version is (``text_created``), or, of unknown version, when the paper's latest is
    (``text_updated``): see :func:`text_before`."""
    papers = papers.lazy()
    if "versions" not in papers.collect_schema().names():
        papers = papers.with_columns(versions=pl.lit(None, PAPERS.polars["versions"]))
    listed = (papers.select("arxiv_id", "versions").explode("versions")
              .filter(pl.col("versions").is_not_null())
              .select("arxiv_id", pl.col("versions").struct.field("version"),
                      pl.col("versions").struct.field("created").alias("text_created"))
              .unique(["arxiv_id", "version"]))
    latest = papers.select("arxiv_id", pl.col("updated").alias("text_updated"))
    return (rows.lazy().join(listed, on=["arxiv_id", "version"], how="left")
            .join(latest, on="arxiv_id", how="left").collect())


def text_before(cutoff: date) -> pl.Expr:
    """On :func:`text_dates` rows: the text was written before ``cutoff``."""
    return ((pl.col("text_created") < cutoff)
            | (pl.col("text_created").is_null() & (pl.col("text_updated") < cutoff))
            ).fill_null(False)
