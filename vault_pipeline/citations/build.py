"""Build `citations` and `citation_counts` from the Semantic Scholar responses in the raw
zone (batches, single papers, references and citations pages). Counts change over time, so
each row keeps the day it was read and the newest read of a paper wins; a list (a paper's
references, or the papers citing it) comes from its newest read: every page of that day.
A citation seen from both sides (A's references list B, B's citations list A) is one row,
the reference's (it has a position); a citing paper's publication date, given by any
response, is on each of its rows."""

from __future__ import annotations

import json
from dataclasses import dataclass

import polars as pl

from vault_pipeline.parse.semantic_scholar import S2_KIND, parse_batch, unresolved_citing
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import CITATION_COUNTS, CITATIONS
from vault_pipeline.store.paths import VaultPaths


@dataclass
class CitationsReport(Counters, counts=("files", "papers", "citations", "cited_with_arxiv_id",
                                        "unresolved_citing")):
    """Responses read, papers and citations written; ``unresolved_citing``: citations-page
    entries with no citing paper id (they make no row)."""


def _newest(frame: pl.DataFrame, key: str, complete: str | None = None) -> pl.DataFrame:
    """The newest read per ``key``; on one day, a read holding ``complete`` (a paper's
    citation count) before one without it, then the file checksum (a stable order)."""
    lacking = [pl.col(complete).is_null()] if complete else []
    return (frame.sort([pl.col("read_at"), *lacking, pl.col("raw_sha256")],
                       descending=[True, *[False] * len(lacking), False])
            .unique(key, keep="first", maintain_order=True))


ROW_SCHEMA = {**CITATIONS.polars, "list_key": pl.String}
READ_SCHEMA = {"list_key": pl.String, "read_at": pl.Date, "raw_sha256": pl.String,
               "whole": pl.Boolean, "offset": pl.Int64, "last": pl.Boolean}


def _newest_first(frame: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """The newest read per ``key`` (on one day the first by checksum, a stable order)."""
    return (frame.sort(["read_at", "raw_sha256"], descending=[True, False])
            .unique(key, keep="first", maintain_order=True))


def winning_reads(reads: pl.DataFrame) -> pl.DataFrame:
    """The responses each list is taken from: its newest whole read (a paper with nested
    references), unless pages were read later; then the newest read of each page, up to the
    last page of the newest read that reached the end (a page re-read unchanged keeps its
    first day, since the raw zone stores a response once, so pages of one list may carry
    different days)."""
    whole = _newest_first(reads.filter(pl.col("whole")), ["list_key"])
    pages = _newest_first(reads.filter(~pl.col("whole")), ["list_key", "offset"])
    ends = (_newest_first(pages.filter(pl.col("last")), ["list_key"])
            .select("list_key", end=pl.col("offset")))
    pages = (pages.join(ends, on="list_key", how="left")
             .filter(pl.col("end").is_null() | (pl.col("offset") <= pl.col("end"))))
    paged_day = pages.group_by("list_key").agg(paged_at=pl.col("read_at").max())
    whole = (whole.join(paged_day, on="list_key", how="left")
             .filter(pl.col("paged_at").is_null() | (pl.col("read_at") >= pl.col("paged_at"))))
    pages = pages.join(whole, on="list_key", how="anti")
    return pl.concat([whole.select("list_key", "raw_sha256"),
                      pages.select("list_key", "raw_sha256")])


def newest_lists(rows: pl.DataFrame, reads: pl.DataFrame) -> pl.DataFrame:
    """One row per citation: each list from its winning reads (:func:`winning_reads`), each
    entry once, a pair seen from both sides once."""
    winners = winning_reads(reads)
    kept = rows.join(winners, on=["list_key", "raw_sha256"], how="semi")
    entry = pl.when(pl.col("cited_position").is_not_null()) \
        .then(pl.format("#{}", pl.col("cited_position"))).otherwise(pl.col("citing_s2_id"))
    kept = (kept.with_columns(_entry=entry)
            .sort("raw_sha256").unique(["list_key", "_entry"], keep="first", maintain_order=True)
            .with_columns(pl.col("citing_date").max().over("citing_s2_id")))
    pair = pl.col("cited_s2_id").is_not_null()
    resolved = (kept.filter(pair).sort("cited_position", nulls_last=True)
                .unique(["citing_s2_id", "cited_s2_id"], keep="first", maintain_order=True))
    return (pl.concat([resolved, kept.filter(~pair)])
            .select(CITATIONS.names)
            .sort("citing_s2_id", "cited_position", "cited_s2_id", nulls_last=True))


def build_citations(paths: VaultPaths) -> CitationsReport:
    zone = RawZone(paths.ensure())
    report = CitationsReport()
    counts, citations, reads = [], [], []
    for raw in zone.files([S2_KIND]):
        report.files += 1
        payload = json.loads(zone.absolute(raw).read_bytes())
        c, r, d = parse_batch(payload, raw.received_at.date(), raw.sha256, raw.origin)
        counts += c
        citations += r
        reads += d
        report.unresolved_citing += unresolved_citing(payload)
    count_frame = _newest(pl.DataFrame(counts, schema=CITATION_COUNTS.polars), "s2_id",
                          complete="citation_count")
    citation_frame = newest_lists(pl.DataFrame(citations, schema=ROW_SCHEMA),
                                  pl.DataFrame(reads, schema=READ_SCHEMA))
    report.papers = paths.store.write(CITATION_COUNTS, count_frame.sort("s2_id"))
    report.citations = paths.store.write(CITATIONS, citation_frame)
    report.cited_with_arxiv_id = citation_frame.get_column("cited_arxiv_id").drop_nulls().len()
    return report


