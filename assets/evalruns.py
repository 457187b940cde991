"""evaluation_runs: one evaluator model over the evaluation sets (review paradigms and
InnoEval tasks), its calls cached by input hash, its predictions and metrics. Never part of
the default selection (it needs an LLM): run it with `--select group:evaluation_runs` and a
config naming the backend and model."""

from pydantic import Field

from assets.ideas import IdeasRunConfig
from assets.run_config import stage_config
from assets.stages import stage_asset
from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.evalruns.stage import STAGE

EvalRunConfig = stage_config(
    EvalRunSettings, STAGE.section, "EvalRunConfig",
    "Unset fields fall back to `vault.toml` [evalruns], then `VAULT_EVALRUNS_<FIELD>`, then "
    "the defaults of `vault_pipeline.evalruns.settings.EvalRunSettings`; the backend is "
    "configured as the ideas stage's, under `ideas`; the summaries' backend under "
    "`summarizer` (unset: the run's own).",
    ideas=(IdeasRunConfig, Field(IdeasRunConfig(), description=(
        "The evaluator's backend, as the ideas stage's (`backend`, `model`, ...)."))),
    summarizer=(IdeasRunConfig, Field(IdeasRunConfig(), description=(
        "The summaries' backend, as the ideas stage's; unset fields: the evaluator's."))))

evaluation_runs = stage_asset(STAGE, config=EvalRunConfig)

evalruns_assets = [evaluation_runs]
