"""The incremental, checkpointed loop of an LLM stage that writes a records table and a
failures table: the ideas stage (`masked_records`, `llm_failures`) and the evaluation sets'
idea extraction (`eval_ideas`, `eval_idea_failures`).

Both key their work by input hash, reuse a hash that already has a record, skip a
quarantined one unless asked to retry, checkpoint each finished batch so a crashed run
resumes there, and merge the new rows with the old ones. One implementation keeps these
resume and no-loss rules the same for both; a stage supplies only its tables and how it
turns a batch of requests into rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from vault_pipeline.llm.backends.base import Request
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.pipeline.progress import Progress, no_progress
from vault_pipeline.schemas import TableSchema
from vault_pipeline.store.journal import Journal
from vault_pipeline.store.paths import VaultPaths

# Records and failures rows of one batch, each a dict of its table's columns.
BatchRows = tuple[list[dict], list[dict]]


@dataclass(frozen=True)
class StageTables:
    """Where an incremental stage keeps its rows."""

    records: TableSchema
    failures: TableSchema
    key: str  # the column naming one unit of work, e.g. `arxiv_id` or `forum_id`
    scratch: str  # checkpoint folder under the vault's scratch
    keep_unrequested: bool  # a key not requested this run keeps its newest row (else dropped)


@dataclass
class IncrementalCounts(Counters, counts=("reused", "processed", "records", "quarantined")):
    """Requests with a record or quarantined failure of the same input hash (``reused``),
    requests asked this run (``processed``), and the rows of the records and the failures
    tables after this run."""


def rows_frame(rows: list[dict], schema: TableSchema) -> pl.DataFrame:
    """Rows as a frame of exactly the table's Arrow schema (nested structs included)."""
    return pl.from_arrow(pa.Table.from_pylist(rows, schema=schema.arrow))  # type: ignore


def _current(frame: pl.DataFrame, schema: TableSchema) -> pl.DataFrame:
    """A table an older version wrote, with the nullable columns added since as nulls (its
    rows are kept or replaced by their input hash as any other)."""
    added = [pl.lit(None, dtype=schema.polars[c.name]).alias(c.name) for c in schema.columns
             if c.name not in frame.columns and c.nullable]
    return frame.with_columns(added).select(schema.names)


def _previous(paths: VaultPaths, schema: TableSchema, saved: list[pl.DataFrame]
              ) -> pl.DataFrame:
    """The table with the checkpoints of an interrupted run, one row per input hash."""
    frames = [paths.store.read(schema), *saved]
    frame = pl.concat([_current(f, schema) for f in frames], how="vertical_relaxed")
    return frame.unique("input_hash", keep="last", maintain_order=True)


def _in_scope(frame: pl.DataFrame, tables: StageTables, current: set[str],
              requested: set[str]) -> pl.DataFrame:
    """Rows of a current input hash, plus (if the stage keeps them) the newest row of each
    key not requested this run."""
    hashes, keys = pl.col("input_hash"), pl.col(tables.key)
    kept = frame.filter(hashes.is_in(list(current)))
    if not tables.keep_unrequested:
        return kept
    others = (frame.filter(~keys.is_in(list(requested)))
              .unique(tables.key, keep="last", maintain_order=True))
    return pl.concat([kept, others], how="vertical_relaxed")


def run_incremental(paths: VaultPaths, tables: StageTables, requests: Sequence[Request],
                    decompose: Callable[[list[Request]], BatchRows], *, batch_size: int,
                    retry_failures: bool, log: Callable[[str], object], label: str,
                    unit: str, action: str,
                    retry: Callable[[str], bool] | None = None,
                    progress: Progress = no_progress) -> IncrementalCounts:
    """Ask ``decompose`` for every request without a record (or, unless ``retry_failures``,
    a failure) of its input hash, ``batch_size`` at a time (a failure whose reason
    ``retry`` accepts is asked again too), and write both tables: one row
    per requested key, of its current input hash. ``label``, ``unit`` and ``action`` word
    the log lines, e.g. "ideas: 40 papers, 38 unchanged, 2 to decompose with ...";
    ``progress`` hears of each batch done."""
    counts = IncrementalCounts()
    checkpoints = Journal(paths.scratch / tables.scratch,
                          {"records": tables.records, "failures": tables.failures})
    old_records = _previous(paths, tables.records, checkpoints.load("records"))
    old_failures = _previous(paths, tables.failures, checkpoints.load("failures"))
    skip = set(old_records.get_column("input_hash").to_list())
    if not retry_failures:
        kept = old_failures if retry is None else old_failures.filter(
            ~pl.col("reason").map_elements(retry, return_dtype=pl.Boolean))
        skip |= set(kept.get_column("input_hash").to_list())
    todo = [r for r in requests if r.custom_id not in skip]
    counts.reused = len(requests) - len(todo)
    log(f"{label}: {len(requests)} {unit}, {counts.reused} unchanged, {len(todo)} to {action}")
    new_records: list[pl.DataFrame] = []
    new_failures: list[pl.DataFrame] = []
    step = max(1, batch_size)
    for start in range(0, len(todo), step):
        batch = todo[start:start + step]
        records, failures = decompose(batch)
        frames = {"records": rows_frame(records, tables.records),
                  "failures": rows_frame(failures, tables.failures)}
        checkpoints.save(frames, batch[0].custom_id[:16])
        new_records.append(frames["records"])
        new_failures.append(frames["failures"])
        counts.processed += len(batch)
        progress(len(batch), len(todo), f"{label}: {unit}")
        log(f"{label}: {counts.processed}/{len(todo)} done "
            f"({len(failures)} quarantined in this batch)")
    current = {r.custom_id for r in requests}
    requested = {r.paper.arxiv_id for r in requests}
    all_records = _in_scope(pl.concat([old_records, *new_records], how="vertical_relaxed")
                            .unique("input_hash", keep="last", maintain_order=True),
                            tables, current, requested)
    # a key's record wins over any failure of it, current or old
    all_failures = _in_scope(pl.concat([old_failures, *new_failures], how="vertical_relaxed")
                             .unique("input_hash", keep="last", maintain_order=True),
                             tables, current, requested).filter(
        ~pl.col(tables.key).is_in(all_records.get_column(tables.key).to_list()))
    counts.records = paths.store.write(tables.records, all_records.sort(tables.key))
    counts.quarantined = paths.store.write(tables.failures, all_failures.sort(tables.key))
    checkpoints.clear()
    return counts
