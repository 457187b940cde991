"""Build the `papers` table from the raw zone.

Every metadata file is parsed into staging Parquet parts (bounded memory), bad records go to
`papers_rejected`, then duplicates across files and sources are resolved: the newest version
wins (latest version date, then version number), and a field the winner lacks is filled from
the next-best record of the same paper (a DOI only the snapshot carries, say). Only the rows
of papers seen more than once are ever held in memory together.

A plain snapshot file, the bulk of any vault, is one Polars streaming query from its lines
to its staging part (decode, candidates, normalisation, validation and compression run on
every core, morsel by morsel). The other parsers' batches share one part, written by a
pipeline of threads. Parts are written in the table's own format, so when a single part holds
no paper twice (a first snapshot import) it simply becomes the table: the rows are
compressed once, not twice."""

from __future__ import annotations

import os
import shutil
import uuid
import zlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import polars as pl
import pyarrow.parquet as pq

from vault_pipeline.errors import RawFormatError
from vault_pipeline.papers import quality as papers_quality
from vault_pipeline.parse import METADATA_KINDS, Batch, ParseReject, parse_raw_file
from vault_pipeline.parse.finalize import finalize, finalize_plan, rejected_rows, valid_rows
from vault_pipeline.parse.snapshot import (
    count_lines,
    is_gzip,
    reread_lines,
    scan_snapshot,
    snapshot_candidates,
)
from vault_pipeline.pipeline import figures
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.pipeline.stage import Chart, Counts, NoSettings, RunContext, StageResult
from vault_pipeline.raw.zone import RawFile, RawZone
from vault_pipeline.schemas import PAPER_VERSIONS, PAPERS, PAPERS_REJECTED
from vault_pipeline.store.paths import VaultPaths

# On a tie of dates and versions, prefer the richer source.
SOURCE_RANK = {"oai_arXivRaw": 0, "oai_arXiv": 1, "arxiv_snapshot": 2, "arxiv_api": 3,
               "oai_dc": 4}
ORDER = ["updated", "latest_version", "_source_rank", "raw_sha256", "_row"]
"""The last key, the staging row number, is the record's order within its raw file: each
file's rows are staged together and in order, so between two copies of one version in one
file the first wins."""
DESCENDING = [True, True, False, False, False]
COMPRESSION: dict[str, object] = {"compression": "lz4"}
"""`papers` is a working table, rebuilt from the raw zone at bulk rates (millions of rows) and
read by every later stage, so it is written with LZ4: zstd, even at level 1, costs a quarter
of the build's CPU and takes 0.7x the bytes (benchmarks/README.md measures both side by
side). What leaves the vault, `vault export`, is written with zstd."""
ROW_GROUP = 20_000  # rows a Parquet writer buffers (Polars' default buffers ~750 MB of papers)
SUSPECT = "suspect: judged by the strict reader"

T = TypeVar("T")


@dataclass
class PapersReport(Counters, counts=("rows", "candidates", "rejected", "superseded",
                                     "earlier_versions", "files", "failed_files",
                                     "streamed_files", "stream_passes")):
    """Rows written, candidates read, rejected and superseded (an older record of a paper);
    ``earlier_versions``: `paper_versions` rows (earlier versions' own metadata); files read,
    failed and streamed; ``stream_passes``: one per clean streamed file, two where one had
    rejects."""


def _file_reject(raw: RawFile, reason: str) -> pl.DataFrame:
    return pl.DataFrame(
        {"raw_sha256": [raw.sha256], "source": [raw.kind], "position": [None],
         "record_id": [None], "reason": [reason], "snippet": [raw.original_name]},
        schema=PAPERS_REJECTED.polars,
    )


def _parse_rejects(raw: RawFile, rejects: list[ParseReject]) -> pl.DataFrame:
    return pl.DataFrame(
        {"raw_sha256": [raw.sha256] * len(rejects), "source": [raw.kind] * len(rejects),
         "position": [r.position for r in rejects], "record_id": [r.record_id for r in rejects],
         "reason": [r.reason for r in rejects], "snippet": [r.snippet for r in rejects]},
        schema=PAPERS_REJECTED.polars,
    )


@dataclass
class Staging:
    """Candidate rows in the `papers` schema, as Parquet parts in one scratch folder."""

    folder: Path
    parts: list[Path] = field(default_factory=list)

    def new_part(self, name: str) -> Path:
        part = self.folder / f"{len(self.parts):04d}-{name}.parquet"
        self.parts.append(part)
        return part


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


class BatchPart:
    """The staging part of every row that comes in batches, opened at its first row."""

    def __init__(self, staging: Staging) -> None:
        self.staging = staging
        self.writer: pq.ParquetWriter | None = None

    def write(self, rows: pl.DataFrame) -> None:
        table = rows.to_arrow()  # every batch is cast to the `papers` schema by `finalize`
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.staging.new_part("batches"), table.schema,
                                           **COMPRESSION)
        self.writer.write_table(table)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def stage(self, raw: RawFile, batches: Iterator[Batch], report: PapersReport
              ) -> list[pl.DataFrame]:
        """Parse, finalize and write (compress) in three threads; return the rejects."""
        rejected: list[pl.DataFrame] = []
        for valid, invalid, rejects in _one_ahead(_finalized(_one_ahead(batches), raw.sha256)):
            if valid.height:
                self.write(valid)
            report.candidates += valid.height
            rejected += [invalid, _parse_rejects(raw, rejects)]
        return rejected


@dataclass(frozen=True)
class Streamed:
    """What :func:`stream_snapshot` staged and set aside."""

    rows: int
    rejects: pl.DataFrame
    suspects: list[tuple[int, bytes]]
    passes: int


def stream_snapshot(path: Path, raw_sha256: str, part: Path) -> Streamed:
    """Stage a plain snapshot with one streaming query into ``part``.

    The query has one sink, the part: a second sink for rejects (a plan with two outputs)
    costs about 8 % more on every file. So when every line became a row (CSV rows are
    counted without being parsed) the file is done in one pass; otherwise a second query
    collects its rejects, and its suspect lines (see
    :func:`~vault_pipeline.parse.snapshot.suspect`) come back to be read by the strict
    reader. Raises ``PolarsError`` when a line is not JSON or not UTF-8."""
    finalized = finalize_plan(
        snapshot_candidates(scan_snapshot(path), "_suspect", "_text"), raw_sha256
    ).with_columns(
        _reason=pl.when("_suspect").then(pl.lit(SUSPECT)).otherwise("_reason")
    )
    valid_rows(finalized).sink_parquet(part, row_group_size=ROW_GROUP,
                                       **COMPRESSION)  # type: ignore[call-overload]
    staged = pq.read_metadata(part).num_rows
    if staged == count_lines(path):
        return Streamed(staged, PAPERS_REJECTED.polars.to_frame(), [], passes=1)
    side = rejected_rows(finalized, "_suspect", "_text").collect(engine="streaming")
    suspects = side.filter("_suspect")
    lines = [(n, text.encode("utf-8")) for n, text in
             zip(suspects.get_column("position"), suspects.get_column("_text"), strict=True)]
    rejects = side.filter(~pl.col("_suspect")).select(PAPERS_REJECTED.names)
    return Streamed(staged, rejects, lines, passes=2)


def _stage_streamed(raw: RawFile, path: Path, staging: Staging, batches: BatchPart,
                    report: PapersReport) -> list[pl.DataFrame] | None:
    """Stage a plain snapshot with :func:`stream_snapshot`; its rejects, or None when a line
    it cannot read sends the whole file to the batch reader (its part is dropped)."""
    part = staging.new_part(raw.sha256[:16])
    try:
        streamed = stream_snapshot(path, raw.sha256, part)
    except pl.exceptions.PolarsError:
        staging.parts.remove(part)
        part.unlink(missing_ok=True)
        return None
    report.streamed_files += 1
    report.stream_passes += streamed.passes
    report.candidates += streamed.rows
    rejected = [streamed.rejects]
    if streamed.suspects:
        rejected += batches.stage(raw, iter([reread_lines(streamed.suspects)]), report)
    return rejected


def stage_candidates(zone: RawZone, raws: Iterable[RawFile], staging: Staging,
                     report: PapersReport, stream_snapshots: bool = True) -> pl.DataFrame:
    """Parse every file into ``staging``; return the rejects. (``stream_snapshots=False``
    sends plain snapshots through the batch reader too: the benchmark compares the two.)"""
    rejected: list[pl.DataFrame] = []
    batches = BatchPart(staging)
    try:
        for raw in raws:
            report.files += 1
            path = zone.absolute(raw)
            try:
                streamable = (stream_snapshots and raw.kind == "arxiv_snapshot"
                              and not is_gzip(path))
                streamed = (_stage_streamed(raw, path, staging, batches, report)
                            if streamable else None)
                rejected += streamed if streamed is not None else batches.stage(
                    raw, parse_raw_file(path, raw.kind, raw.wrapper), report)
            except (RawFormatError, OSError, EOFError, zlib.error) as exc:
                # one unreadable file (a gzip cut short, say) is quarantined with its
                # reason; every other file still builds
                report.failed_files += 1
                rejected.append(_file_reject(raw, f"unreadable file: {exc}"))
    finally:
        batches.close()
    return pl.concat(rejected) if rejected else PAPERS_REJECTED.polars.to_frame()


def duplicated_ids(parts: list[Path]) -> pl.DataFrame:
    """The ids staged more than once (reads the id column only)."""
    counts = pl.scan_parquet(parts).group_by("arxiv_id").agg(pl.len().alias("_n"))
    return counts.filter(pl.col("_n") > 1).select("arxiv_id").collect()


def resolve_duplicates(parts: list[Path], duplicated: pl.DataFrame) -> pl.LazyFrame:
    """One row per arxiv_id: the newest version, its gaps filled from older records.

    Papers staged once stream through a filter against the set of duplicated ids (a
    streaming anti-join would buffer its whole input); only the copies of duplicated papers
    are sorted and merged in memory."""
    ids = duplicated.get_column("arxiv_id").implode()
    rows = pl.scan_parquet(parts)
    singles = rows.filter(~pl.col("arxiv_id").is_in(ids))
    merged = (
        rows.with_row_index("_row").filter(pl.col("arxiv_id").is_in(ids))
        .with_columns(_source_rank=pl.col("source").replace_strict(SOURCE_RANK, default=9))
        .sort(ORDER, descending=DESCENDING, nulls_last=True)
        .group_by("arxiv_id", maintain_order=True)
        .agg(pl.all().exclude("arxiv_id", "_source_rank", "_row").drop_nulls().first())
    )
    return pl.concat([singles, merged], how="diagonal").select(PAPERS.names)


def earlier_versions(parts: list[Path], duplicated: pl.DataFrame) -> pl.DataFrame:
    """The `paper_versions` rows: the title and abstract of each version older than its
    paper's latest, from the staged records that describe it (an API answer for ``IDv1``
    beside a snapshot record of v3), one per version (the richer source first)."""
    if not duplicated.height:
        return PAPER_VERSIONS.polars.to_frame()
    ids = duplicated.get_column("arxiv_id").implode()
    rows = (pl.scan_parquet(parts).filter(pl.col("arxiv_id").is_in(ids))
            .with_columns(_latest=pl.col("latest_version").max().over("arxiv_id"),
                          _source_rank=pl.col("source").replace_strict(SOURCE_RANK,
                                                                        default=9)))
    older = (rows.filter(pl.col("latest_version") < pl.col("_latest"))
             .sort("arxiv_id", "latest_version", "_source_rank", "raw_sha256")
             .unique(["arxiv_id", "latest_version"], keep="first", maintain_order=True)
             .select("arxiv_id", pl.col("latest_version").alias("version"),
                     pl.col("updated").alias("created"), "title", "abstract", "source",
                     "raw_sha256"))
    return older.collect().cast(PAPER_VERSIONS.polars)  # type: ignore[arg-type]


def build_papers(paths: VaultPaths, stream_snapshots: bool = True) -> PapersReport:
    """Rebuild `papers` and `papers_rejected` from the raw zone, atomically."""
    paths.ensure()
    zone = RawZone(paths)
    report = PapersReport()
    staging = Staging(paths.scratch / f"papers-candidates-{uuid.uuid4().hex}")
    staging.folder.mkdir(parents=True)
    try:
        rejected = stage_candidates(zone, zone.files(METADATA_KINDS), staging, report,
                                    stream_snapshots)
        parts = staging.parts
        duplicated = duplicated_ids(parts) if parts else pl.DataFrame()
        with paths.store.writing(PAPERS) as tmp:
            if not parts:
                pq.write_table(PAPERS.empty(), tmp, **COMPRESSION)
            elif len(parts) == 1 and not duplicated.height:
                os.replace(parts[0], tmp)  # already the table: one row per paper, its format
            else:
                resolved = resolve_duplicates(parts, duplicated).cast(PAPERS.polars)  # type: ignore[arg-type]
                resolved.sink_parquet(tmp, row_group_size=ROW_GROUP, **COMPRESSION)
        report.rows = paths.store.rows(PAPERS)
        earlier = (earlier_versions(parts, duplicated) if parts
                   else PAPER_VERSIONS.polars.to_frame())
        report.earlier_versions = paths.store.write(PAPER_VERSIONS, earlier)
    finally:
        shutil.rmtree(staging.folder, ignore_errors=True)
    report.superseded = report.candidates - report.rows
    report.rejected = paths.store.write(PAPERS_REJECTED, rejected)
    return report


def run_papers(paths: VaultPaths, settings: NoSettings, _context: RunContext
               ) -> StageResult[NoSettings, PapersReport]:
    """`build_papers`, with the summary of the table it wrote (years, categories, sources)."""
    return StageResult(build_papers(paths), settings, papers_quality.summary(paths.store))


def papers_figures(run: StageResult[NoSettings, PapersReport]) -> dict:
    r, summary = run.report, run.read
    return {
        PAPERS.name: {"dagster/row_count": r.rows, "candidates": r.candidates,
                      "superseded_versions": r.superseded, "raw_files_parsed": r.files,
                      "snapshots_streamed": r.streamed_files,
                      "streaming_passes": r.stream_passes,
                      "by_year": Counts("year", summary["by_year"]),
                      "by_year_chart": Chart(list(summary["by_year"].items()),
                                             "Papers by year", by_year=True),
                      "by_primary_category": Counts("category", summary["by_primary_category"]),
                      "by_primary_category_chart": Chart(
                          figures.top(summary["by_primary_category"]),
                          "Papers by primary category"),
                      "by_source": Counts("source", summary["by_source"])},
        PAPER_VERSIONS.name: {"dagster/row_count": r.earlier_versions},
        PAPERS_REJECTED.name: {"dagster/row_count": r.rejected,
                               "raw_files_failed": r.failed_files}}


