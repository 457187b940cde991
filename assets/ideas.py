"""ideas: every paper as a results-masked record (`masked_records`, with rejected answers
quarantined in `llm_failures`) and its five views (`views`)."""


import dagster as dg

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.run_config import stage_config
from assets.stages import stage_asset
from vault_pipeline.ideas import quality
from vault_pipeline.ideas.stage import MASKED_RECORDS_STAGE, VIEWS_STAGE
from vault_pipeline.llm.settings import STAGE, IdeasSettings

IdeasRunConfig = stage_config(
    IdeasSettings, STAGE, "IdeasRunConfig",
    "Unset fields fall back to `vault.toml`, then `VAULT_IDEAS_<FIELD>`, then the defaults "
    "(`vault_pipeline.llm.settings.IdeasSettings`). Switching backend is one value: "
    "`backend: extractive | openai | vllm | batch_file`.")


masked_records = stage_asset(MASKED_RECORDS_STAGE, kinds=frozenset({"parquet"}),
                             config=IdeasRunConfig)
views = stage_asset(VIEWS_STAGE, kinds=frozenset({"parquet"}))


@dg.asset_check(asset="masked_records", blocking=True,
                description="No field of any record states a measured result.")
def masked_records_no_leaks(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.record_leak_findings(vault.paths().store))


@dg.asset_check(asset="masked_records", blocking=True,
                description="Every row is a valid record, with provenance, one per paper.")
def masked_records_valid(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.records_valid(vault.paths().store))


@dg.asset_check(asset="llm_failures",
                description="Share of papers quarantined stays under 5% (warning).")
def llm_failures_rate(vault: VaultResource) -> dg.AssetCheckResult:
    outcome = quality.quarantine_rate(vault.paths().store, limit=0.05)
    return check_result(outcome, dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset="views", blocking=True,
                description="No view states a measured result.")
def views_no_leaks(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.view_leak_findings(vault.paths().store))


@dg.asset_check(asset="views", description="Every record has its five views with "
                "substantive content (warning: a view the record had nothing for is absent, "
                "and its paper is never a target); the placeholder rate.")
def views_complete(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.views_complete(vault.paths().store),
                        dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset="views", blocking=True,
                description="No problem view (problem_setting, challenge) states the solution "
                            "or names the paper's method; the method-leak rate.")
def problem_views_method_free(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.problem_views_method_free(vault.paths().store))


ideas_assets = [masked_records, views]
ideas_checks = [masked_records_no_leaks, masked_records_valid, llm_failures_rate,
                views_no_leaks, views_complete, problem_views_method_free]
