"""The ideas stage's declarations: `masked_records` (and `llm_failures`) from papers and
documents, then `views` from the records."""

from __future__ import annotations

from vault_pipeline.ideas.build import build_views, run_masked_records
from vault_pipeline.llm.settings import STAGE as SECTION
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.pipeline.stage import Counts, Stage, plain
from vault_pipeline.schemas import LLM_FAILURES, MASKED_RECORDS, VIEWS

MASKED_RECORDS_STAGE = Stage(
    "masked_records", "ideas", inputs=("papers", "documents"),
    outputs=(MASKED_RECORDS, LLM_FAILURES), run=run_masked_records,
    settings=IdeasSettings, section=SECTION, uses=("splits", "compute"),
    describe=lambda r: (f"ideas: {r.records} records, {r.quarantined} quarantined; "
                        f"{r.processed} asked, {r.reused} reused"),
    figures=lambda r: {
        MASKED_RECORDS.name: {
            "dagster/row_count": r.records, "backend": r.backend, "model": r.model,
            "prompt_version": r.prompt_version, "papers": r.papers,
            "withheld_no_pre_cutoff_text": r.withheld,
            "processed": r.processed, "reused": r.reused, "retried": r.retried,
            "leak_rate": round(r.leak_rate, 4), "leaks_masked": r.masked_findings,
            "judge_calls": r.judge_calls, "judge_errors": r.judge_errors,
            "judge_flagged": r.judge_flagged, "tokens_in": r.tokens_in,
            "tokens_out": r.tokens_out, "papers_per_second": round(r.papers_per_second, 2),
            "seconds": round(r.seconds, 2),
            "by_input_source": Counts("input source", r.by_source)},
        LLM_FAILURES.name: {"dagster/row_count": r.quarantined,
                            "new_this_run": r.new_failures}})


VIEWS_STAGE = Stage(
    "views", "ideas", inputs=("masked_records",), outputs=(VIEWS,), run=plain(build_views),
    describe=lambda r: f"views: {r.views} views of {r.records} records",
    figures=lambda r: {VIEWS.name: {
        "dagster/row_count": r.views, "records": r.records,
        "leaks_masked": r.masked_findings, "method_sentences_removed": r.method_removed,
        "empty_views": r.empty_views, "mean_chars_by_view": Counts("view", r.by_view_chars)}})
