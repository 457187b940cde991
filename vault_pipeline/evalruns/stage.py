"""The `evaluation_runs` stage: one evaluator model over the evaluation sets (review
paradigms and InnoEval tasks, on the study's three inputs), its calls cached by input hash,
its predictions, metrics and report. The evaluator is the ideas stage's backend (the
settings' `ideas`); the summaries' the `summarizer`'s."""

from __future__ import annotations

import base64

from vault_pipeline.evalruns.render import Figure, markdown
from vault_pipeline.evalruns.report import (
    HEADLINE,
    default_target,
    headline,
    report_blocks,
    write_blocks,
)
from vault_pipeline.evalruns.run import RunReport, run_evaluation
from vault_pipeline.evalruns.settings import STAGE as SECTION
from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.pipeline.stage import Markdown, Rows, RunContext, Stage, StageResult
from vault_pipeline.schemas import EVAL_RUN_CALLS, EVAL_RUN_METRICS, EVAL_RUN_TABLES, EVAL_SUMMARIES
from vault_pipeline.store.paths import VaultPaths


def _figures_md(figures: list[Figure]) -> str:
    """The run's figures inside Markdown (PNG data URIs: nothing to fetch)."""
    return "\n\n".join(
        f"**{f.caption}**\n\n![{f.name}](data:image/png;base64,"
        f"{base64.b64encode(f.png).decode('ascii')})" for f in figures
    ) or "_no rating predictions to plot_"


def run_evalruns(paths: VaultPaths, settings: EvalRunSettings, context: RunContext
                 ) -> StageResult[EvalRunSettings, RunReport]:
    """The run, then its report: an HTML page under `evalruns/`, and the same blocks as the
    metadata's Markdown, metrics table and figures."""
    report = run_evaluation(paths, settings, log=context.log, ideas=context.uses("ideas"))
    blocks = report_blocks(paths, settings.run_id)
    page = write_blocks(blocks, default_target(paths, settings.run_id), "html",
                        f"Evaluation run {settings.run_id}")
    figures = [b for b in blocks if isinstance(b, Figure)]
    text = markdown([b for b in blocks if not isinstance(b, Figure)], lambda f: f.name)
    return StageResult(report, settings, {
        "report": text, "page": page, "plots": _figures_md(figures),
        "headline": headline(paths, settings.run_id)})


def _figures(run: StageResult[EvalRunSettings, RunReport]) -> dict[str, dict[str, object]]:
    report = run.report
    columns = {"task": "string", "input": "string", "n": "int"} | {m: "float" for m in HEADLINE}
    return {
        EVAL_SUMMARIES.name: {"made": report.summaries_made, "reused": report.summaries_reused,
                              "quarantined": report.summaries_missing},
        EVAL_RUN_CALLS.name: {
            "run_id": report.run_id, "calls": report.units, "asked": report.asked,
            "reused": report.reused,
            "items_without_idea": dict(report.without_idea),
            "tokens_by_task": {t: s.tokens_in + s.tokens_out for t, s in report.by_task.items()},
            "by_task_and_input": {f"{t}/{i}": {"calls": s.calls,
                                               "tokens": s.tokens_in + s.tokens_out}
                                  for (t, i), s in sorted(report.by_cell.items())}},
        EVAL_RUN_METRICS.name: {
            "run_id": report.run_id, "metrics": Rows(run.read["headline"], columns),
            "plots": Markdown(run.read["plots"]), "report": Markdown(run.read["report"]),
            "report_html": run.read["page"]}}


STAGE = Stage(
    "evaluation_runs", "evaluation_runs",
    inputs=("eval_review_stratified", "eval_review_anchors", "eval_pointwise", "eval_pairwise",
            "eval_groupwise"),
    outputs=EVAL_RUN_TABLES,
    run=run_evalruns, settings=EvalRunSettings, section=SECTION,
    label="evaluation-run settings", uses=("ideas",),
    describe=lambda run: (f"evaluation run {run.report.run_id}: {run.report.units} calls, "
                          f"{run.report.asked} asked, {run.report.reused} reused"),
    figures=_figures)
