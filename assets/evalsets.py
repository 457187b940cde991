"""evaluation: the evaluation sets of seeds 000 (InnoEval point-, pair- and group-wise idea
sets) and 001 (review-paradigm population, stratified sample and anchors), with their six-part
ideas, exclusions and data cards; the cards' metrics are also this step's asset metadata."""

import json

import dagster as dg
import polars as pl
from pydantic import Field

from vault_pipeline.evalsets import quality
from vault_pipeline.evalsets.build import TABLES, build_evalsets, cards_dir
from vault_pipeline.evalsets.settings import STAGE, EvalSetsSettings
from vault_pipeline.schemas import (
    EVAL_CARDS,
    EVAL_EXCLUDED,
    EVAL_GROUPWISE,
    EVAL_IDEA_FAILURES,
    EVAL_IDEAS,
    EVAL_PAIRWISE,
    EVAL_REVIEW_STRATIFIED,
)

from .config import stage_config
from .ideas import IdeasRunConfig
from .metadata import check_result, counts_table, table_path, table_spec
from .resources import VaultResource

GROUP = "evaluation"
DEPS = ["submissions", "reviews", "documents", "citation_counts"]


EvalSetsConfig = stage_config(
    EvalSetsSettings, STAGE, "EvalSetsConfig",
    "Unset fields fall back to `vault.toml`, then `VAULT_EVALSETS_<FIELD>`, then the defaults "
    "of `vault_pipeline.evalsets.settings.EvalSetsSettings` (the seeds' choices). Idea "
    "extraction uses the ideas stage's backends, configured as there under `ideas` "
    "(`backend`, `model`, ...), else `VAULT_IDEAS_<FIELD>`, else the offline extractive "
    "default; `prompt` names the idea prompt file.",
    ideas=(IdeasRunConfig, Field(IdeasRunConfig(), description=(
        "Backend of idea extraction, as the ideas stage's (`backend`, `model`, ...)."))))


def _settings(config: dg.Config, home) -> EvalSetsSettings:
    values = config.model_dump()
    ideas = values.pop("ideas")
    ideas.pop("prompt", None)  # the idea prompt is `prompt` above, not the decomposer's
    values["ideas"] = {k: v for k, v in ideas.items() if v is not None}
    return EvalSetsSettings.resolve(values, home=home)


def _figure(value) -> dg.MetadataValue:
    return dg.MetadataValue.float(round(value, 4)) if value is not None else \
        dg.MetadataValue.text("n/a")


@dg.multi_asset(specs=[table_spec(s, GROUP, DEPS) for s in (
    EVAL_IDEAS, EVAL_IDEA_FAILURES, *TABLES.values(), EVAL_EXCLUDED, EVAL_CARDS)])
def evaluation_sets(context: dg.AssetExecutionContext, config: EvalSetsConfig,
                    vault: VaultResource):
    paths = vault.paths()
    settings = _settings(config, paths.home)
    report = build_evalsets(paths, settings, log=context.log.info)
    extraction = report.extraction
    yield dg.MaterializeResult(asset_key=EVAL_IDEAS.name, metadata={
        "dagster/row_count": extraction.records, "backend": extraction.backend,
        "model": extraction.model, "prompt_version": extraction.prompt_version,
        "submissions_in_scope": extraction.submissions, "extracted": extraction.processed,
        "reused": extraction.reused, "leaky_answers": extraction.leaky_answers,
        "leaks_masked": extraction.masked_findings,
        "by_input_source": counts_table(extraction.by_source, "input source")})
    yield dg.MaterializeResult(asset_key=EVAL_IDEA_FAILURES.name,
                               metadata={"dagster/row_count": extraction.quarantined})
    for name, schema in TABLES.items():
        metrics = report.metrics[name]
        reliability = metrics["reliability"]
        card = (cards_dir(paths) / f"{name}.md").read_text(encoding="utf-8")
        yield dg.MaterializeResult(asset_key=schema.name, metadata={
            "dagster/row_count": report.rows[name],
            "icc_1_1": _figure(reliability["icc_1_1"]),
            "icc_1_k": _figure(reliability["icc_1_k"]),
            "spearman_ceiling": _figure(reliability["spearman_ceiling"]),
            "mean_rating": _figure(metrics["scores"]["mean"]),
            "sd_rating": _figure(metrics["scores"]["sd"]),
            "shortfalls": len(metrics["shortfalls"]),
            "metrics": dg.MetadataValue.json(json.loads(json.dumps(metrics, default=str))),
            "card": dg.MetadataValue.md(card),
            "path": table_path(paths, schema)})
    yield dg.MaterializeResult(asset_key=EVAL_EXCLUDED.name,
                               metadata={"dagster/row_count": report.excluded})
    yield dg.MaterializeResult(asset_key=EVAL_CARDS.name, metadata={
        "dagster/row_count": len(TABLES), "settings_fingerprint": settings.fingerprint(),
        "similarity_method": report.similarity_method,
        "seconds": dg.MetadataValue.json(report.seconds),
        "cards": dg.MetadataValue.path(str(cards_dir(paths)))})


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
            settings = EvalSetsSettings.resolve(json.loads(built["settings"][0]))
    return check_result(quality.strata_within_quota(store, settings.per_bin,
                                                    settings.dense_bins))


evalsets_assets = [evaluation_sets]
evalsets_checks = [eval_ideas_without_results, eval_pairs_valid, eval_groups_valid,
                   eval_strata_within_quota]
