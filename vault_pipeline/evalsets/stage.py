"""The `evaluation_sets` stage: the evaluation sets of seeds 000 (InnoEval point-, pair- and
group-wise idea sets) and 001 (review-paradigm population, stratified sample and anchors),
with their six-part ideas, exclusions and data cards; the cards' metrics are also the run's
figures. Idea extraction uses the ideas stage's backends (the settings' `ideas`)."""

from __future__ import annotations

import json

from vault_pipeline.evalsets.build import TABLES, EvalSetsReport, build_evalsets, cards_dir
from vault_pipeline.evalsets.settings import STAGE as SECTION
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.pipeline.stage import Counts, Markdown, RunContext, Stage, StageResult
from vault_pipeline.schemas import (
    EVAL_CARDS,
    EVAL_CITATION_WINDOWS,
    EVAL_EXCLUDED,
    EVAL_IDEA_FAILURES,
    EVAL_IDEAS,
)
from vault_pipeline.store.paths import VaultPaths

Result = StageResult[EvalSetsSettings, EvalSetsReport]


def run_evalsets(paths: VaultPaths, settings: EvalSetsSettings, context: RunContext
                 ) -> Result:
    """The build, and the folder of the sets' Markdown cards it wrote."""
    return StageResult(build_evalsets(paths, settings, log=context.log,
                                      ideas=context.uses("ideas")),
                       settings, {"cards": cards_dir(paths)})


def _figure(value: float | None) -> float | str:
    return round(value, 4) if value is not None else "n/a"


def _set_figures(run: Result, name: str) -> dict:
    metrics = run.report.metrics[name]
    reliability = metrics["reliability"]
    return {"dagster/row_count": run.report.rows[name],
            "icc_1_1": _figure(reliability["icc_1_1"]),
            "icc_1_k": _figure(reliability["icc_1_k"]),
            "spearman_ceiling": _figure(reliability["spearman_ceiling"]),
            "mean_rating": _figure(metrics["scores"]["mean"]),
            "sd_rating": _figure(metrics["scores"]["sd"]),
            "shortfalls": len(metrics["shortfalls"]),
            "metrics": json.loads(json.dumps(metrics, default=str)),
            "card": Markdown((run.read["cards"] / f"{name}.md").read_text(encoding="utf-8"))}


def _figures(run: Result) -> dict:
    extraction = run.report.extraction
    return {
        EVAL_IDEAS.name: {
            "dagster/row_count": extraction.records, "backend": extraction.backend,
            "model": extraction.model, "prompt_version": extraction.prompt_version,
            "submissions_in_scope": extraction.submissions, "extracted": extraction.processed,
            "reused": extraction.reused, "leaky_answers": extraction.leaky_answers,
            "leaks_masked": extraction.masked_findings,
            "by_input_source": Counts("input source", extraction.by_source)},
        EVAL_IDEA_FAILURES.name: {"dagster/row_count": extraction.quarantined},
        **{schema.name: _set_figures(run, name) for name, schema in TABLES.items()},
        EVAL_CITATION_WINDOWS.name: {
            "dagster/row_count": run.report.citation_windows["rows"],
            **{k: v for k, v in run.report.citation_windows.items() if k != "rows"}},
        EVAL_EXCLUDED.name: {"dagster/row_count": run.report.excluded},
        EVAL_CARDS.name: {"dagster/row_count": len(TABLES),
                          "settings_fingerprint": run.settings.fingerprint(),
                          "similarity_method": run.report.similarity_method,
                          "seconds": run.report.seconds, "cards": run.read["cards"]}}


STAGE = Stage(
    "evaluation_sets", "evaluation",
    inputs=("submissions", "reviews", "documents", "citation_counts", "citations"),
    outputs=(EVAL_IDEAS, EVAL_IDEA_FAILURES, *TABLES.values(), EVAL_CITATION_WINDOWS,
             EVAL_EXCLUDED, EVAL_CARDS),
    run=run_evalsets, settings=EvalSetsSettings, section=SECTION, label="evaluation-set",
    uses=("ideas",),
    describe=lambda run: "evaluation sets: " + ", ".join(
        f"{name} {rows}" for name, rows in run.report.rows.items()),
    figures=_figures)
