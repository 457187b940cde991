"""The `evaluation_runs` stage: one evaluator model over the evaluation sets (review
paradigms and InnoEval tasks), its calls cached by input hash, its predictions and metrics.
The evaluator is the ideas stage's backend (the settings' `ideas`)."""

from __future__ import annotations

from ..paths import VaultPaths
from ..schemas import EVAL_RUN_CALL_FAILURES, EVAL_RUN_CALLS, EVAL_RUN_METRICS, EVAL_RUN_PREDICTIONS
from ..stages import Markdown, RunContext, Stage, StageResult
from .report import render_report
from .run import RunReport, run_evaluation
from .settings import STAGE as SECTION
from .settings import EvalRunSettings


def run_evalruns(paths: VaultPaths, settings: EvalRunSettings, context: RunContext
                 ) -> StageResult[EvalRunSettings, RunReport]:
    """The run, and its report rendered as Markdown."""
    report = run_evaluation(paths, settings, log=context.log)
    return StageResult(report, settings, {"report": render_report(paths, settings.run_id)})


STAGE = Stage(
    "evaluation_runs", "evaluation_runs",
    inputs=("eval_review_stratified", "eval_review_anchors", "eval_pointwise", "eval_pairwise",
            "eval_groupwise"),
    outputs=(EVAL_RUN_CALLS, EVAL_RUN_CALL_FAILURES, EVAL_RUN_PREDICTIONS, EVAL_RUN_METRICS),
    run=run_evalruns, settings=EvalRunSettings, section=SECTION,
    label="evaluation-run settings",
    describe=lambda run: (f"evaluation run {run.report.run_id}: {run.report.units} calls, "
                          f"{run.report.asked} asked, {run.report.reused} reused"),
    figures=lambda run: {
        EVAL_RUN_CALLS.name: {
            "run_id": run.report.run_id, "calls": run.report.units, "asked": run.report.asked,
            "reused": run.report.reused,
            "tokens_by_task": {t: s.tokens_in + s.tokens_out
                               for t, s in run.report.by_task.items()}},
        EVAL_RUN_METRICS.name: {"run_id": run.report.run_id,
                                "report": Markdown(run.read["report"])}})
