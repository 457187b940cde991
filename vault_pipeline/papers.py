"""Build the `papers` table from the raw zone.

Each metadata file is parsed in batches into a staging Parquet file (bounded memory), bad
records go to `papers_rejected`, then duplicates across files and sources are resolved: the
newest version wins (latest version date, then version number), and a field the winner lacks
is filled from the next-best record of the same paper (a DOI only the snapshot carries, say).
Only the rows of papers seen more than once are ever held in memory together.

The staging file is written in the table's own format, so when no paper is seen twice (a
first snapshot import) it simply becomes the table: the rows are compressed once, not twice.
Parsing, finalizing and compressing run in three threads, one batch apart, on every core."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import polars as pl
import pyarrow.parquet as pq

from .errors import RawFormatError
from .parse import METADATA_KINDS, Batch, ParseReject, parse_raw_file
from .parse.finalize import finalize
from .paths import VaultPaths
from .raw.zone import RawFile, RawZone
from .schemas import PAPERS, PAPERS_REJECTED
from .storage import atomic_path, write_table

# On a tie of dates and versions, prefer the richer source.
SOURCE_RANK = {"oai_arXivRaw": 0, "oai_arXiv": 1, "arxiv_snapshot": 2, "arxiv_api": 3,
               "oai_dc": 4}
ORDER = ["updated", "latest_version", "_source_rank", "raw_sha256", "position"]
DESCENDING = [True, True, False, False, False]
# Level 1: about half the CPU of Polars' default level (3), for a few percent more bytes.
COMPRESSION = {"compression": "zstd", "compression_level": 1}
POSITION = pl.Schema({"position": pl.Int64})
ROW_GROUP = 20_000  # rows the Parquet sink buffers (its default buffers ~750 MB of papers)

T = TypeVar("T")


@dataclass
class PapersReport:
    rows: int = 0
    candidates: int = 0
    rejected: int = 0
    superseded: int = 0
    files: int = 0
    failed_files: int = 0
    by_source: dict[str, int] = field(default_factory=dict)


def _file_reject(raw: RawFile, reason: str) -> pl.DataFrame:
    return pl.DataFrame(
        {"raw_sha256": [raw.sha256], "source": [raw.kind], "position": [None],
         "record_id": [None], "reason": [reason], "snippet": [raw.original_name]},
        schema=PAPERS_REJECTED.polars,
    )


def _parse_rejects(raw: RawFile, rejects: list) -> pl.DataFrame:
    return pl.DataFrame(
        {"raw_sha256": [raw.sha256] * len(rejects), "source": [raw.kind] * len(rejects),
         "position": [r.position for r in rejects], "record_id": [r.record_id for r in rejects],
         "reason": [r.reason for r in rejects], "snippet": [r.snippet for r in rejects]},
        schema=PAPERS_REJECTED.polars,
    )


@dataclass(frozen=True)
class Staging:
    """Candidate rows in the `papers` schema, and beside them, row for row, their ``position``
    (only needed to break ties between duplicates, so it stays out of the table's file)."""

    rows: Path
    positions: Path


def _one_ahead(items: Iterator[T]) -> Iterator[T]:
    """Compute the next item in a worker thread while the caller handles this one.

    Polars, lxml and file reads release the GIL, so on two cores the parser of the next
    batch runs beside the finalizing and compressing of this one. Errors surface here."""
    end = object()
    with ThreadPoolExecutor(1, thread_name_prefix="parse-ahead") as worker:
        pending = worker.submit(next, items, end)
        while (item := pending.result()) is not end:
            pending = worker.submit(next, items, end)
            yield item  # type: ignore[misc]


def _finalized(batches: Iterator[Batch], raw_sha256: str
               ) -> Iterator[tuple[pl.DataFrame, pl.DataFrame, list[ParseReject]]]:
    for batch in batches:
        valid, invalid = finalize(batch.candidates, raw_sha256)
        yield valid, invalid, batch.rejects


def stage_candidates(zone: RawZone, raws: Iterable[RawFile], staging: Staging,
                     report: PapersReport) -> pl.DataFrame:
    """Parse every file into ``staging`` (Parquet); return the rejects.

    A three-stage pipeline, one thread each: parse, finalize, write (compress)."""
    rejected: list[pl.DataFrame] = []
    rows = pq.ParquetWriter(staging.rows, PAPERS.polars.to_frame().to_arrow().schema,
                            **COMPRESSION)
    positions = pq.ParquetWriter(staging.positions, POSITION.to_frame().to_arrow().schema)
    try:
        for raw in raws:
            report.files += 1
            try:
                batches = parse_raw_file(zone.absolute(raw), raw.kind, raw.wrapper)
                for valid, invalid, rejects in _one_ahead(
                        _finalized(_one_ahead(batches), raw.sha256)):
                    if valid.height:
                        rows.write_table(valid.select(PAPERS.names).to_arrow())
                        positions.write_table(valid.select("position").to_arrow())
                    report.candidates += valid.height
                    rejected += [invalid, _parse_rejects(raw, rejects)]
            except (RawFormatError, OSError) as exc:
                report.failed_files += 1
                rejected.append(_file_reject(raw, str(exc)))
    finally:
        rows.close()
        positions.close()
    return pl.concat(rejected) if rejected else pl.DataFrame(schema=PAPERS_REJECTED.polars)


def duplicated_ids(staging: Staging) -> pl.DataFrame:
    """The ids staged more than once (reads the id column only)."""
    counts = pl.scan_parquet(staging.rows).group_by("arxiv_id").agg(pl.len().alias("_n"))
    return counts.filter(pl.col("_n") > 1).select("arxiv_id").collect()


def resolve_duplicates(staging: Staging, duplicated: pl.DataFrame) -> pl.LazyFrame:
    """One row per arxiv_id: the newest version, its gaps filled from older records.

    Papers staged once stream through a filter against the set of duplicated ids (a
    streaming anti-join would buffer its whole input); only the copies of duplicated papers
    are sorted and merged in memory, with their positions joined by row number."""
    ids = duplicated.get_column("arxiv_id").implode()
    rows = pl.scan_parquet(staging.rows)
    singles = rows.filter(~pl.col("arxiv_id").is_in(ids))
    positions = pl.scan_parquet(staging.positions).with_row_index("_row")
    merged = (
        rows.with_row_index("_row").filter(pl.col("arxiv_id").is_in(ids))
        .join(positions, on="_row")
        .with_columns(_source_rank=pl.col("source").replace_strict(SOURCE_RANK, default=9))
        .sort(ORDER, descending=DESCENDING, nulls_last=True)
        .group_by("arxiv_id", maintain_order=True)
        .agg(pl.all().exclude("arxiv_id", "_source_rank", "_row").drop_nulls().first())
    )
    return pl.concat([singles, merged], how="diagonal").select(PAPERS.names)


def build_papers(paths: VaultPaths) -> PapersReport:
    """Rebuild `papers` and `papers_rejected` from the raw zone, atomically."""
    paths.ensure()
    zone = RawZone(paths)
    report = PapersReport()
    name = f"papers-candidates-{uuid.uuid4().hex}"
    staging = Staging(paths.scratch / f"{name}.parquet", paths.scratch / f"{name}.pos.parquet")
    try:
        rejected = stage_candidates(zone, zone.files(METADATA_KINDS), staging, report)
        duplicated = duplicated_ids(staging)
        with atomic_path(paths.table(PAPERS.name)) as tmp:
            if duplicated.height:
                resolved = resolve_duplicates(staging, duplicated).cast(PAPERS.polars)  # type: ignore[arg-type]
                resolved.sink_parquet(tmp, row_group_size=ROW_GROUP, **COMPRESSION)
            else:  # already one row per paper, in the table's schema and compression
                os.replace(staging.rows, tmp)
        papers = pl.scan_parquet(paths.table(PAPERS.name))
        report.rows = papers.select(pl.len()).collect().item()
        report.by_source = dict(
            papers.group_by("source").len().collect().iter_rows()
        )
    finally:
        staging.rows.unlink(missing_ok=True)
        staging.positions.unlink(missing_ok=True)
    report.superseded = report.candidates - report.rows
    report.rejected = write_table(paths.table(PAPERS_REJECTED.name), rejected, PAPERS_REJECTED)
    return report
