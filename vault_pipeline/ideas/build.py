"""The ideas stage over the vault: `masked_records` + `llm_failures` from `papers` and
`documents`, then `views` from `masked_records`.

Incremental and resumable (`incremental.run_incremental`): a paper whose input hash (paper
text, backend, model, prompt, schema, settings) already has a record, or a quarantined
failure, is not asked again; each finished batch is checkpointed under the scratch folder,
so a crashed run resumes there."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import polars as pl

from vault_pipeline.executors import Executor, make_executor
from vault_pipeline.executors.isolation import IsolatedPool
from vault_pipeline.ideas.backends import Backend, make_backend
from vault_pipeline.ideas.decompose import run_batch
from vault_pipeline.ideas.isolated import (
    WORKER,
    PaperJob,
    Tally,
    isolated_batches,
    limits_of,
    paper_pool,
    retry_under,
)
from vault_pipeline.ideas.requests import build_requests, outcome_rows, worker_failure_row
from vault_pipeline.ideas.views import VIEWS_VERSION, build_all
from vault_pipeline.integrity.gate import PLAIN_TEXT, Gate, mask_plain, paper_gate
from vault_pipeline.integrity.llm_judge import judge_for
from vault_pipeline.llm.backends.base import Request
from vault_pipeline.llm.batches import BatchRows, StageTables, rows_frame, run_incremental
from vault_pipeline.llm.inputs import PaperInput, Withheld, load_inputs
from vault_pipeline.llm.prompting import Prompt, load_prompt
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.papers.versions import read_vault_versions
from vault_pipeline.pipeline.progress import Progress, no_progress
from vault_pipeline.pipeline.settings import CUTOFF
from vault_pipeline.pipeline.stage import RunContext
from vault_pipeline.records.masked import RECORD_FIELDS
from vault_pipeline.schemas import DOCUMENTS, LLM_FAILURES, MASKED_RECORDS, PAPERS, VIEWS
from vault_pipeline.store.paths import VaultPaths


@dataclass(kw_only=True)
class IdeasReport(Tally):
    """The stage's report: the run's tally (every batch's added up) and what it read, kept
    and judged."""

    backend: str
    model: str
    prompt_version: str
    papers: int = 0
    withheld: int = 0  # pre-cutoff papers with no text of the version the vault holds
    reused: int = 0  # records or failures kept from an earlier run (same input hash)
    processed: int = 0  # papers asked this run
    records: int = 0
    quarantined: int = 0  # failures in the table after this run
    judge_calls: int = 0  # LLM judge requests (LLM backends)
    judge_errors: int = 0  # LLM judge answers that could not be read
    judge_flagged: int = 0  # sentences the LLM judge labelled observed outcomes
    seconds: float = 0.0
    by_source: dict[str, int] = field(default_factory=dict)

    @property
    def papers_per_second(self) -> float:
        return self.processed / self.seconds if self.seconds else 0.0

    @property
    def leak_rate(self) -> float:
        """Share of papers processed this run whose answer stated a measured result."""
        return self.leaky_answers / self.processed if self.processed else 0.0


def read_inputs(paths: VaultPaths, cutoff: date, only: Sequence[str] | None = None,
                withheld: list[Withheld] | None = None) -> list[PaperInput]:
    """Every paper's input (``only``: just those ids, e.g. the targets), each in the version
    the vault holds at the split's cutoff; papers with no text of that version are listed in
    ``withheld``."""
    papers = paths.store.read(PAPERS)
    versions = read_vault_versions(paths.store, cutoff)
    documents = paths.store.read_optional(DOCUMENTS)
    if documents is not None:
        documents = documents.filter(pl.col("arxiv_id").is_not_null())
    if only is not None:
        papers = papers.filter(pl.col("arxiv_id").is_in(list(only)))
        if documents is not None:
            documents = documents.filter(pl.col("arxiv_id").is_in(list(only)))
    return load_inputs(papers, documents, versions, withheld)


def _isolated(pool: IsolatedPool, batch: list[Request], backend: Backend, prompt: Prompt,
              max_retries: int, prompt_version: str, tally: Tally) -> BatchRows:
    """One batch, each paper in its own bounded worker; a worker's failure is the paper's
    quarantined row."""
    jobs = [PaperJob(backend, request, prompt, max_retries, prompt_version)
            for request in batch]
    records: list[dict] = []
    failures: list[dict] = []
    limits = limits_of(pool.settings)
    for job, result in isolated_batches(pool, jobs):
        if result.error is not None:
            status, _, message = result.error.partition(": ")
            reason = f"{WORKER}{status} {limits}: {message}"
            failures.append(worker_failure_row(job.request, backend, prompt_version, reason))
            tally.new_failures += 1
            continue
        records.extend(result.records)
        failures.extend(result.failures)
        tally.add(result.tally)
    return records, failures


IDEAS_TABLES = StageTables(MASKED_RECORDS, LLM_FAILURES, key="arxiv_id", scratch="ideas",
                           keep_unrequested=False)


def build_masked_records(paths: VaultPaths, settings: IdeasSettings,
                         backend: Backend | None = None, log=print,
                         executor: Executor | None = None,
                         progress: Progress = no_progress,
                         cutoff: date = CUTOFF) -> IdeasReport:
    """Decompose every paper that has no record (or failure) for its current input hash
    (generating on the executor's actors when it is a distributed one); ``progress`` hears
    of each batch done; ``cutoff`` decides which version of a revised paper is read."""
    started = time.perf_counter()
    own_backend = backend is None
    backend = backend or make_backend(settings)
    if executor is not None and executor.distributed:
        from vault_pipeline.ideas.backends.distributed import DistributedBackend

        backend = DistributedBackend(backend, settings, executor)
    prompt = load_prompt(settings.prompt)
    prompt_version = prompt.version if backend.uses_prompt else "none"
    report = IdeasReport(backend=backend.name, model=backend.model,
                         prompt_version=prompt_version)

    second = judge_for(backend, settings.llm_judge)
    tally: Tally = report  # every batch adds to the report's tally
    pool: IsolatedPool | None = None

    def decompose(batch: list[Request]) -> BatchRows:
        nonlocal pool
        if backend.in_process and second is None:  # each paper in a bounded worker
            pool = pool or paper_pool(settings.pool())
            return _isolated(pool, batch, backend, prompt, settings.max_retries,
                             prompt_version, tally)
        outcome = run_batch(backend, batch, prompt, settings.max_retries,
                            lambda r: paper_gate(r.paper, offline_judge=second is None),
                            second_opinion=second)
        tally.add(Tally.of(outcome))
        return outcome_rows(outcome, backend, prompt_version)

    try:
        withheld: list[Withheld] = []
        requests = build_requests(read_inputs(paths, cutoff, withheld=withheld), backend, prompt,
                                  settings)
        report.papers, report.withheld = len(requests), len(withheld)
        if withheld:
            log(f"ideas: {len(withheld)} pre-cutoff papers withheld, with no text of the "
                f"version the vault holds (e.g. {withheld[0].arxiv_id}: "
                f"{withheld[0].reason})")
        report.by_source = dict(Counter(r.paper.source for r in requests))
        counts = run_incremental(
            paths, IDEAS_TABLES, requests, decompose, batch_size=settings.batch_size,
            retry_failures=settings.retry_failures, log=log, label="ideas", unit="papers",
            progress=progress,
            action=f"decompose with {backend.name} ({backend.model}, prompt {prompt_version})",
            retry=retry_under(settings.pool()) if backend.in_process else None)
        report.reused, report.processed = counts.reused, counts.processed
        report.records, report.quarantined = counts.records, counts.quarantined
    finally:
        if pool is not None:
            pool.close()
        if own_backend:
            backend.close()
    if second is not None:
        report.judge_calls, report.judge_errors = second.calls, second.errors
        report.judge_flagged = second.flagged
    report.seconds = time.perf_counter() - started
    return report


def run_masked_records(paths: VaultPaths, settings: IdeasSettings, context: RunContext
                       ) -> IdeasReport:
    executor = make_executor(context.uses("compute"))
    return build_masked_records(paths, settings, log=context.log, executor=executor,
                                progress=context.progress, cutoff=context.uses("splits").cutoff)


@dataclass
class ViewsReport:
    records: int = 0
    views: int = 0
    masked_findings: int = 0
    method_removed: int = 0  # problem-view sentences dropped for stating the method
    empty_views: int = 0  # views a record had nothing substantive for (no row)
    by_view_chars: dict[str, int] = field(default_factory=dict)


def views_rows(records: pl.DataFrame, gate: Gate | None = None) -> list[dict[str, Any]]:
    """One row per substantive view of each record; what the method check and the gate
    still removed from a view is recorded with it."""
    gate = gate or Gate(PLAIN_TEXT)
    rows = []
    record_fields = [c for c in MASKED_RECORDS.names if c in records.columns]
    provenance = ["backend", "model", "prompt_version", "input_hash", "input_source",
                  "input_note"]
    for row in records.select(record_fields).iter_rows(named=True):
        record = {k: row[k] for k in MASKED_RECORDS.names if k in RECORD_FIELDS}
        for name, view in build_all(record).items():
            text, removed = mask_plain(view.text, gate)
            findings = [*view.removed, *removed]
            rows.append({"arxiv_id": row["arxiv_id"], "version": row.get("version"),
                         "view": name, "text": text,
                         **{k: row[k] for k in provenance}, "views_version": VIEWS_VERSION,
                         "n_chars": len(text or ""),
                         "masked_findings": [{"field": name, "kind": f.kind, "match": f.match,
                                              "layer": f.layer} for f in findings]})
    return rows


def build_views(paths: VaultPaths) -> ViewsReport:
    records = paths.store.read(MASKED_RECORDS)
    rows = views_rows(records)
    kept = [r for r in rows if r["text"]]
    frame = rows_frame(kept, VIEWS)
    report = ViewsReport(records=records.height, empty_views=len(rows) - len(kept))
    report.views = paths.store.write(VIEWS, frame)
    report.masked_findings = sum(len(r["masked_findings"]) for r in rows)
    report.method_removed = sum(1 for r in rows for f in r["masked_findings"]
                                if f["layer"] == "method")
    if kept:
        report.by_view_chars = {name: int(chars) for name, chars in frame.group_by(
            "view").agg(pl.col("n_chars").mean()).iter_rows()}
    return report


