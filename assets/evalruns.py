"""evaluation_runs: one evaluator model over the evaluation sets (review paradigms and
InnoEval tasks), its calls cached by input hash, its predictions and metrics. Never part of
the default selection (it needs an LLM): run it with `--select group:evaluation_runs` and a
config naming the backend and model."""

from pathlib import Path

import dagster as dg
from pydantic import Field

from vault_pipeline.evalruns.report import render_report
from vault_pipeline.evalruns.run import run_evaluation
from vault_pipeline.evalruns.settings import STAGE, EvalRunSettings
from vault_pipeline.schemas import (
    EVAL_RUN_CALL_FAILURES,
    EVAL_RUN_CALLS,
    EVAL_RUN_METRICS,
    EVAL_RUN_PREDICTIONS,
)

from .config import stage_config
from .ideas import IdeasRunConfig
from .metadata import table_path, table_spec
from .resources import VaultResource

GROUP = "evaluation_runs"
DEPS = ["eval_review_stratified", "eval_review_anchors", "eval_pointwise", "eval_pairwise",
        "eval_groupwise"]
SCHEMAS = (EVAL_RUN_CALLS, EVAL_RUN_CALL_FAILURES, EVAL_RUN_PREDICTIONS, EVAL_RUN_METRICS)


class _EvalRunConfigBase(dg.Config):
    def settings(self, home: Path | None = None) -> EvalRunSettings:
        values = self.model_dump()
        values["ideas"] = {k: v for k, v in values.pop("ideas").items() if v is not None}
        return EvalRunSettings.resolve(values, home=home)


EvalRunConfig = stage_config(
    EvalRunSettings, STAGE, "EvalRunConfig",
    "Unset fields fall back to `vault.toml` [evalruns], then `VAULT_EVALRUNS_<FIELD>`, then "
    "the defaults of `vault_pipeline.evalruns.settings.EvalRunSettings`; the backend is "
    "configured as the ideas stage's, under `ideas`.",
    base=_EvalRunConfigBase,
    ideas=(IdeasRunConfig, Field(IdeasRunConfig(), description=(
        "Backend settings, as the ideas stage's (`backend`, `model`, ...)."))))


@dg.multi_asset(specs=[table_spec(s, GROUP, DEPS) for s in SCHEMAS])
def evaluation_runs(context: dg.AssetExecutionContext, config: EvalRunConfig,
                    vault: VaultResource):
    paths = vault.paths()
    settings = config.settings(paths.home)
    report = run_evaluation(paths, settings, log=context.log.info)
    tokens = {t: s.tokens_in + s.tokens_out for t, s in report.by_task.items()}
    yield dg.MaterializeResult(asset_key=EVAL_RUN_CALLS.name, metadata={
        "run_id": settings.run_id, "calls": report.units, "asked": report.asked,
        "reused": report.reused, "tokens_by_task": dg.MetadataValue.json(tokens),
        "path": table_path(paths, EVAL_RUN_CALLS)})
    for schema in SCHEMAS[1:3]:
        yield dg.MaterializeResult(asset_key=schema.name,
                                   metadata={"path": table_path(paths, schema)})
    yield dg.MaterializeResult(asset_key=EVAL_RUN_METRICS.name, metadata={
        "run_id": settings.run_id, "report": dg.MetadataValue.md(
            render_report(paths, settings.run_id)),
        "path": table_path(paths, EVAL_RUN_METRICS)})


evalruns_assets = [evaluation_runs]
