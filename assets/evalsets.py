"""evaluation: the evaluation sets of seeds 000 (InnoEval point-, pair- and group-wise idea
sets) and 001 (review-paradigm population, stratified sample and anchors), with their six-part
ideas, exclusions and data cards; the cards' metrics are also this step's asset metadata."""

import json

import dagster as dg
import polars as pl
from pydantic import Field

from assets.ideas import IdeasRunConfig
from assets.metadata import check_result
from assets.resources import VaultResource
from assets.run_config import stage_config
from assets.stages import set_values, stage_asset
from vault_pipeline.evalsets import quality
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.evalsets.stage import STAGE
from vault_pipeline.schemas import (
    EVAL_CARDS,
    EVAL_GROUPWISE,
    EVAL_IDEAS,
    EVAL_PAIRWISE,
    EVAL_REVIEW_STRATIFIED,
)

EvalSetsConfig = stage_config(
    EvalSetsSettings, STAGE.section, "EvalSetsConfig",
    "Unset fields fall back to `vault.toml`, then `VAULT_EVALSETS_<FIELD>`, then the defaults "
    "of `vault_pipeline.evalsets.settings.EvalSetsSettings` (the seeds' choices). Idea "
    "extraction uses the ideas stage's backends, configured as there under `ideas` "
    "(`backend`, `model`, ...), else `VAULT_IDEAS_<FIELD>`, else the offline extractive "
    "default; `prompt` names the idea prompt file.",
    ideas=(IdeasRunConfig, Field(IdeasRunConfig(), description=(
        "Backend of idea extraction, as the ideas stage's (`backend`, `model`, ...)."))))


def _values(config: dg.Config) -> dict:
    values = set_values(config)
    values["ideas"].pop("prompt", None)  # the idea prompt is `prompt` above, not the decomposer's
    return values


evaluation_sets = stage_asset(STAGE, config=EvalSetsConfig, values=_values)


@dg.asset_check(asset=EVAL_IDEAS.name, blocking=True,
                description="No part of any idea states a measured result.")
def eval_ideas_without_results(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.ideas_without_results(vault.paths().store))


@dg.asset_check(asset=EVAL_PAIRWISE.name, blocking=True,
                description="Every pair has its type's labels, the better one is the higher "
                            "label, nobody appears twice within a type.")
def eval_pairs_valid(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.pairs_valid(vault.paths().store))


@dg.asset_check(asset=EVAL_GROUPWISE.name, blocking=True,
                description="Every group: one venue, one member per label, ranked by label, "
                            "the best first.")
def eval_groups_valid(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.groups_valid(vault.paths().store))


@dg.asset_check(asset=EVAL_REVIEW_STRATIFIED.name, blocking=True,
                description="No score bin holds more papers than its quota, none twice.")
def eval_strata_within_quota(vault: VaultResource) -> dg.AssetCheckResult:
    store = vault.paths().store
    settings = EvalSetsSettings()
    cards = store.read_optional(EVAL_CARDS)
    if cards is not None:
        built = cards.filter(pl.col("set_name") == "review_stratified")
        if built.height:
            settings = EvalSetsSettings.resolve(run_config=json.loads(built["settings"][0]))
    return check_result(quality.strata_within_quota(store, settings.per_bin,
                                                    settings.dense_bins))


evalsets_assets = [evaluation_sets]
evalsets_checks = [eval_ideas_without_results, eval_pairs_valid, eval_groups_valid,
                   eval_strata_within_quota]
