"""Build `citations` and `citation_counts` from the Semantic Scholar responses in the raw
zone (batches, single papers, references and citations pages). Counts change over time, so
each row keeps the day it was read and the newest read of a paper wins; a paper's references
come from the newest response that listed them."""

from __future__ import annotations

import json
from dataclasses import dataclass

import polars as pl

from .citations_parse import S2_KIND, parse_batch
from .paths import VaultPaths
from .raw.zone import RawZone
from .schemas import CITATION_COUNTS, CITATIONS
from .stages import Stage, plain


@dataclass
class CitationsReport:
    files: int = 0
    papers: int = 0
    citations: int = 0
    cited_with_arxiv_id: int = 0


def _newest(frame: pl.DataFrame, key: str, complete: str | None = None) -> pl.DataFrame:
    """The newest read per ``key``; on one day, a read holding ``complete`` (a paper's
    citation count) before one without it, then the file checksum (a stable order)."""
    lacking = [pl.col(complete).is_null()] if complete else []
    return (frame.sort([pl.col("read_at"), *lacking, pl.col("raw_sha256")],
                       descending=[True, *[False] * len(lacking), False])
            .unique(key, keep="first", maintain_order=True))


def build_citations(paths: VaultPaths) -> CitationsReport:
    zone = RawZone(paths.ensure())
    report = CitationsReport()
    counts, citations, reads = [], [], []
    for raw in zone.files([S2_KIND]):
        report.files += 1
        payload = json.loads(zone.absolute(raw).read_bytes())
        c, r, d = parse_batch(payload, raw.received_at.date(), raw.sha256)
        counts += c
        citations += r
        reads += d
    count_frame = _newest(pl.DataFrame(counts, schema=CITATION_COUNTS.polars), "s2_id",
                          complete="citation_count")
    citation_frame = pl.DataFrame(citations, schema=CITATIONS.polars)
    read_schema = {"citing_s2_id": pl.String, "read_at": pl.Date, "raw_sha256": pl.String}
    winners = _newest(pl.DataFrame(reads, schema=read_schema), "citing_s2_id")
    citation_frame = (citation_frame.join(winners, on=["citing_s2_id", "raw_sha256"],
                                          how="semi")
                      .unique(maintain_order=True)
                      .sort("citing_s2_id", "cited_position", nulls_last=True))
    report.papers = paths.store.write(CITATION_COUNTS, count_frame.sort("s2_id"))
    report.citations = paths.store.write(CITATIONS, citation_frame)
    report.cited_with_arxiv_id = citation_frame.get_column("cited_arxiv_id").drop_nulls().len()
    return report


STAGE = Stage(
    "citations", "citations", inputs=("raw_files",), outputs=(CITATIONS, CITATION_COUNTS),
    run=plain(build_citations),
    describe=lambda r: (f"{r.citations} references of {r.papers} papers from {r.files} "
                        "Semantic Scholar responses"),
    figures=lambda r: {
        CITATIONS.name: {"dagster/row_count": r.citations, "responses_parsed": r.files,
                         "cited_with_arxiv_id": r.cited_with_arxiv_id},
        CITATION_COUNTS.name: {"dagster/row_count": r.papers}})
