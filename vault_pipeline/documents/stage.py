"""The `documents` stage: every paper's best full text (LaTeX, PDF, else the abstract) as
clean Markdown, and the record of every conversion (`document_attempts`).

Its inputs are the raw zone's full-text files (listed in `raw_files`), `papers` and the
OpenReview `submissions` (whose PDFs are converted and keyed by forum id); the run
also reads its own last outputs and journal, since it converts only what is new or changed
and resumes a crashed run."""

from __future__ import annotations

from vault_pipeline.documents import quality
from vault_pipeline.documents.build import DocumentsReport, build_documents
from vault_pipeline.documents.settings import STAGE as SECTION
from vault_pipeline.documents.settings import DocumentsSettings
from vault_pipeline.executors import make_executor
from vault_pipeline.pipeline import figures
from vault_pipeline.pipeline.stage import Chart, Counts, RunContext, Stage, StageResult
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS
from vault_pipeline.store.paths import VaultPaths

Result = StageResult[DocumentsSettings, DocumentsReport]


def run_documents(paths: VaultPaths, settings: DocumentsSettings, context: RunContext
                  ) -> Result:
    """The build (on the `[compute]` executor), and the success rate of each source over
    the whole table."""
    executor = make_executor(context.uses("compute"))
    report = build_documents(paths, settings.config(), executor=executor,
                             progress=context.progress, cutoff=context.uses("splits").cutoff)
    return StageResult(report, settings, {"success_rates": quality.success_rates(paths.store)})


def _figures(run: Result) -> dict:
    r = run.report
    attempts = sum(sum(v.values()) for v in r.attempts_by_kind_status.values())
    return {
        DOCUMENTS.name: {"dagster/row_count": r.rows, "converted_now": r.converted,
                         "reused": r.reused, "resumed": r.resumed,
                         "by_status": Counts("status", r.by_status),
                         "by_status_chart": Chart(figures.top(r.by_status),
                                                  "Documents by status"),
                         "by_source": Counts("source", r.by_source),
                         "success_rate_by_source": run.read["success_rates"]},
        DOCUMENT_ATTEMPTS.name: {"dagster/row_count": attempts,
                                 "by_kind_and_status": r.attempts_by_kind_status}}


STAGE = Stage(
    "documents", "documents", inputs=("raw_files", "papers", "submissions"),
    outputs=(DOCUMENTS, DOCUMENT_ATTEMPTS), run=run_documents,
    settings=DocumentsSettings, section=SECTION, uses=("splits", "compute"),
    describe=lambda run: (f"documents: {run.report.rows} rows; {run.report.converted} "
                          f"converted, {run.report.reused} reused, {run.report.resumed} "
                          "resumed from a crashed run"),
    figures=_figures)
