"""Build the `papers` table from the raw zone.

Each metadata file is parsed in batches into a staging Parquet file (bounded memory), bad
records go to `papers_rejected`, then duplicates across files and sources are resolved: the
newest version wins (latest version date, then version number), and a field the winner lacks
is filled from the next-best record of the same paper (a DOI only the snapshot carries, say).
Only the rows of papers seen more than once are ever held in memory together."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from .errors import RawFormatError
from .parse import METADATA_KINDS, parse_raw_file
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


def stage_candidates(zone: RawZone, raws: Iterable[RawFile], staging: Path,
                     report: PapersReport) -> pl.DataFrame:
    """Parse every file into ``staging`` (Parquet); return the rejects."""
    rejected: list[pl.DataFrame] = []
    schema = PAPERS.polars
    schema["position"] = pl.Int64
    writer = pq.ParquetWriter(staging, pl.DataFrame(schema=schema).to_arrow().schema)
    try:
        for raw in raws:
            report.files += 1
            try:
                for batch in parse_raw_file(zone.absolute(raw), raw.kind, raw.wrapper):
                    valid, invalid = finalize(batch.candidates, raw.sha256)
                    if valid.height:
                        writer.write_table(valid.to_arrow())
                    report.candidates += valid.height
                    rejected += [invalid, _parse_rejects(raw, batch.rejects)]
            except (RawFormatError, OSError) as exc:
                report.failed_files += 1
                rejected.append(_file_reject(raw, str(exc)))
    finally:
        writer.close()
    return pl.concat(rejected) if rejected else pl.DataFrame(schema=PAPERS_REJECTED.polars)


def resolve_duplicates(staging: Path) -> pl.LazyFrame:
    """One row per arxiv_id: the newest version, its gaps filled from older records."""
    staged = pl.scan_parquet(staging)
    counts = staged.group_by("arxiv_id").agg(pl.len().alias("_n"))
    duplicated = counts.filter(pl.col("_n") > 1).select("arxiv_id").collect()
    singles = staged.join(duplicated.lazy(), on="arxiv_id", how="anti")
    merged = (
        staged.join(duplicated.lazy(), on="arxiv_id", how="semi")
        .with_columns(_source_rank=pl.col("source").replace_strict(SOURCE_RANK, default=9))
        .sort(ORDER, descending=DESCENDING, nulls_last=True)
        .group_by("arxiv_id", maintain_order=True)
        .agg(pl.all().exclude("arxiv_id", "_source_rank").drop_nulls().first())
    )
    return pl.concat([singles, merged], how="diagonal").select(PAPERS.names)


def build_papers(paths: VaultPaths) -> PapersReport:
    """Rebuild `papers` and `papers_rejected` from the raw zone, atomically."""
    paths.ensure()
    zone = RawZone(paths)
    report = PapersReport()
    staging = paths.scratch / f"papers-candidates-{uuid.uuid4().hex}.parquet"
    try:
        rejected = stage_candidates(zone, zone.files(METADATA_KINDS), staging, report)
        with atomic_path(paths.table(PAPERS.name)) as tmp:
            resolve_duplicates(staging).cast(PAPERS.polars).sink_parquet(  # type: ignore[arg-type]
                tmp, compression="zstd")
        papers = pl.scan_parquet(paths.table(PAPERS.name))
        report.rows = papers.select(pl.len()).collect().item()
        report.by_source = dict(
            papers.group_by("source").len().collect().iter_rows()
        )
    finally:
        staging.unlink(missing_ok=True)
    report.superseded = report.candidates - report.rows
    report.rejected = write_table(paths.table(PAPERS_REJECTED.name), rejected, PAPERS_REJECTED)
    return report
