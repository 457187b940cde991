"""The ideas stage over the vault: `masked_records` + `llm_failures` from `papers` and
`documents`, then `views` from `masked_records`.

Incremental and resumable: a paper whose input hash (paper text, backend, model, prompt,
schema, settings) already has a record, or a quarantined failure, is not asked again; each
finished batch is checkpointed under the scratch folder, so a crashed run resumes there."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from ..paths import VaultPaths
from ..schemas import DOCUMENTS, LLM_FAILURES, MASKED_RECORDS, PAPERS, VIEWS, TableSchema
from ..storage import read_table, write_table
from .backends import Backend, make_backend
from .backends.base import Request
from .decompose import BatchOutcome, findings_rows, now, run_batch
from .inputs import PaperInput, input_hash, load_inputs
from .leaks import RULESET_VERSION, mask_text
from .prompting import Prompt, load_prompt
from .record import RECORD_FIELDS, SCHEMA_VERSION, record_json_schema
from .settings import IdeasSettings
from .views import VIEWS_VERSION, derive_views


@dataclass
class IdeasReport:
    backend: str
    model: str
    prompt_version: str
    papers: int = 0
    reused: int = 0  # records or failures kept from an earlier run (same input hash)
    processed: int = 0  # papers asked this run
    records: int = 0
    quarantined: int = 0  # failures in the table after this run
    new_failures: int = 0
    retried: int = 0  # papers that needed more than one answer this run
    leaky_answers: int = 0  # papers of this run with at least one leaky answer
    masked_findings: int = 0  # leaks masked out of accepted answers this run
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    by_source: dict[str, int] = field(default_factory=dict)

    @property
    def papers_per_second(self) -> float:
        return self.processed / self.seconds if self.seconds else 0.0

    @property
    def leak_rate(self) -> float:
        """Share of papers processed this run whose answer stated a measured result."""
        return self.leaky_answers / self.processed if self.processed else 0.0


def read_inputs(paths: VaultPaths) -> list[PaperInput]:
    papers = read_table(paths.table(PAPERS.name), PAPERS)
    documents_file = paths.table(DOCUMENTS.name)
    documents = pl.read_parquet(documents_file) if documents_file.exists() else None
    if documents is not None:
        documents = documents.filter(pl.col("arxiv_id").is_not_null())
    return load_inputs(papers, documents)


def build_requests(inputs: Sequence[PaperInput], backend: Backend, prompt: Prompt,
                   settings: IdeasSettings) -> list[Request]:
    prompt_version = prompt.version if backend.uses_prompt else "none"
    schema = record_json_schema()
    settings_key = f"{settings.generation_key()}|{RULESET_VERSION}"
    requests = []
    for paper in inputs:
        key = input_hash(paper, backend=backend.name, model=backend.model,
                         prompt_version=prompt_version, schema_version=SCHEMA_VERSION,
                         settings_key=settings_key)
        messages = (prompt.messages(paper.arxiv_id, paper.markdown(settings.max_input_chars))
                    if backend.uses_prompt else [])
        requests.append(Request(key, paper, tuple(messages), schema))
    return requests


def _provenance(request: Request, backend: Backend, prompt_version: str) -> dict[str, Any]:
    return {"arxiv_id": request.paper.arxiv_id, "backend": backend.name,
            "model": backend.model, "prompt_version": prompt_version,
            "input_hash": request.custom_id, "input_source": request.paper.source,
            "input_note": request.paper.note}


def outcome_rows(outcome: BatchOutcome, backend: Backend,
                 prompt_version: str) -> tuple[list[dict], list[dict]]:
    """Table rows of one batch: records and failures."""
    created = now()
    share = max(1, len(outcome.accepted) + len(outcome.rejected))
    tokens = backend.name != "extractive"
    records = []
    for item in outcome.accepted:
        records.append({
            **_provenance(item.request, backend, prompt_version),
            **item.record.model_dump(),
            "schema_version": SCHEMA_VERSION, "attempts": item.attempts,
            "leaky_answer": item.leaky, "masked_findings": findings_rows(item.removed),
            "tokens_in": outcome.tokens_in // share if tokens else None,
            "tokens_out": outcome.tokens_out // share if tokens else None,
            "created_at": created,
        })
    failures = []
    for item in outcome.rejected:
        failures.append({
            **_provenance(item.request, backend, prompt_version),
            "attempts": item.attempts, "reason": item.reasons[-1], "reasons": item.reasons,
            "raw_answer": item.answer.text, "finish_reason": item.answer.finish_reason,
            "failed_at": created,
        })
    return records, failures


def _frame(rows: list[dict], schema: TableSchema) -> pl.DataFrame:
    """Rows as a frame of exactly the table's Arrow schema (nested structs included)."""
    table = pa.Table.from_pylist(rows, schema=schema.arrow)
    return pl.from_arrow(table)  # type: ignore[return-value]


class _Checkpoints:
    """Finished batches of the running stage, so a crash loses at most one batch."""

    def __init__(self, paths: VaultPaths) -> None:
        self.folder = paths.scratch / "ideas"

    def load(self, table: str) -> pl.DataFrame | None:
        files = sorted(self.folder.glob(f"*.{table}.parquet"))
        frames = [pl.read_parquet(f) for f in files]
        return pl.concat(frames, how="vertical_relaxed") if frames else None

    def save(self, batch_key: str, records: pl.DataFrame, failures: pl.DataFrame) -> None:
        write_table(self.folder / f"{batch_key}.records.parquet", records, MASKED_RECORDS)
        write_table(self.folder / f"{batch_key}.failures.parquet", failures, LLM_FAILURES)

    def clear(self) -> None:
        for file in self.folder.glob("*.parquet"):
            file.unlink(missing_ok=True)


def _existing(paths: VaultPaths, table: TableSchema, checkpoints: _Checkpoints,
              kind: str) -> pl.DataFrame:
    frames = [read_table(paths.table(table.name), table)]
    saved = checkpoints.load(kind)
    if saved is not None:
        frames.append(saved)
    frame = pl.concat([f.select(table.names) for f in frames], how="vertical_relaxed")
    return frame.unique("input_hash", keep="last", maintain_order=True)


def build_masked_records(paths: VaultPaths, settings: IdeasSettings,
                         backend: Backend | None = None, log=print) -> IdeasReport:
    """Decompose every paper that has no record (or failure) for its current input hash."""
    started = time.perf_counter()
    own_backend = backend is None
    backend = backend or make_backend(settings)
    prompt = load_prompt(settings.prompt)
    prompt_version = prompt.version if backend.uses_prompt else "none"
    report = IdeasReport(backend.name, backend.model, prompt_version)
    try:
        inputs = read_inputs(paths)
        requests = build_requests(inputs, backend, prompt, settings)
        report.papers = len(requests)
        report.by_source = dict(Counter(r.paper.source for r in requests))
        current = {r.custom_id for r in requests}
        checkpoints = _Checkpoints(paths)
        old_records = _existing(paths, MASKED_RECORDS, checkpoints, "records")
        old_failures = _existing(paths, LLM_FAILURES, checkpoints, "failures")
        kept_records = old_records.filter(pl.col("input_hash").is_in(list(current)))
        done = set(kept_records.get_column("input_hash").to_list())
        kept_failures = old_failures.filter(pl.col("input_hash").is_in(list(current))
                                            & ~pl.col("input_hash").is_in(list(done)))
        if settings.retry_failures:
            kept_failures = kept_failures.clear()
        skip = done | set(kept_failures.get_column("input_hash").to_list())
        todo = [r for r in requests if r.custom_id not in skip]
        report.reused = len(requests) - len(todo)
        log(f"ideas: {len(requests)} papers, {report.reused} unchanged, {len(todo)} to "
            f"decompose with {backend.name} ({backend.model}, prompt {prompt_version})")
        new_records: list[pl.DataFrame] = []
        new_failures: list[pl.DataFrame] = []
        for start in range(0, len(todo), max(1, settings.batch_size)):
            batch = todo[start:start + settings.batch_size]
            outcome = run_batch(backend, batch, prompt, settings.max_retries)
            records, failures = outcome_rows(outcome, backend, prompt_version)
            records_frame = _frame(records, MASKED_RECORDS)
            failures_frame = _frame(failures, LLM_FAILURES)
            checkpoints.save(batch[0].custom_id[:16], records_frame, failures_frame)
            new_records.append(records_frame)
            new_failures.append(failures_frame)
            report.processed += len(batch)
            report.retried += sum(1 for a in outcome.accepted if a.attempts > 1) + sum(
                1 for r in outcome.rejected if r.attempts > 1)
            report.leaky_answers += sum(1 for a in outcome.accepted if a.leaky) + sum(
                1 for r in outcome.rejected if any("measured results" in x for x in r.reasons))
            report.masked_findings += sum(len(a.removed) for a in outcome.accepted)
            report.tokens_in += outcome.tokens_in
            report.tokens_out += outcome.tokens_out
            report.new_failures += len(outcome.rejected)
            log(f"ideas: {report.processed}/{len(todo)} decomposed "
                f"({len(outcome.rejected)} quarantined in this batch)")
        all_records = pl.concat([kept_records, *new_records], how="vertical_relaxed")
        all_records = all_records.sort("arxiv_id")
        failed = pl.concat([kept_failures, *new_failures], how="vertical_relaxed")
        report.records = write_table(paths.table(MASKED_RECORDS.name), all_records,
                                     MASKED_RECORDS)
        report.quarantined = write_table(paths.table(LLM_FAILURES.name), failed.sort(
            "arxiv_id"), LLM_FAILURES)
        checkpoints.clear()
    finally:
        if own_backend:
            backend.close()
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class ViewsReport:
    records: int = 0
    views: int = 0
    masked_findings: int = 0
    by_view_chars: dict[str, int] = field(default_factory=dict)


def views_rows(records: pl.DataFrame) -> list[dict[str, Any]]:
    """Five rows per record; any leak a view still has is masked and recorded."""
    rows = []
    record_fields = [c for c in MASKED_RECORDS.names if c in records.columns]
    provenance = ["backend", "model", "prompt_version", "input_hash", "input_source",
                  "input_note"]
    for row in records.select(record_fields).iter_rows(named=True):
        record = {k: row[k] for k in MASKED_RECORDS.names
                  if k in RECORD_FIELDS}
        for name, text in derive_views(record).items():
            masked = mask_text(text)
            rows.append({"arxiv_id": row["arxiv_id"], "view": name, "text": masked.text,
                         **{k: row[k] for k in provenance}, "views_version": VIEWS_VERSION,
                         "n_chars": len(masked.text),
                         "masked_findings": [{"field": name, "kind": f.kind,
                                              "match": f.match} for f in masked.findings]})
    return rows


def build_views(paths: VaultPaths) -> ViewsReport:
    records = read_table(paths.table(MASKED_RECORDS.name), MASKED_RECORDS)
    rows = views_rows(records)
    frame = _frame(rows, VIEWS)
    report = ViewsReport(records=records.height)
    report.views = write_table(paths.table(VIEWS.name), frame, VIEWS)
    report.masked_findings = sum(len(r["masked_findings"]) for r in rows)
    if rows:
        report.by_view_chars = {name: int(chars) for name, chars in frame.group_by(
            "view").agg(pl.col("n_chars").mean()).iter_rows()}
    return report


