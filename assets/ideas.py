"""ideas: every paper as a results-masked record (`masked_records`, with rejected answers
quarantined in `llm_failures`) and its five views (`views`)."""


import dagster as dg

from vault_pipeline.ideas import quality
from vault_pipeline.ideas.build import VIEWS_STAGE, build_masked_records
from vault_pipeline.ideas.settings import STAGE, IdeasSettings
from vault_pipeline.progress import for_stage
from vault_pipeline.schemas import LLM_FAILURES, MASKED_RECORDS

from .config import stage_config
from .metadata import check_result, counts_table, table_path, table_spec
from .resources import VaultResource
from .stages import stage_asset

IdeasRunConfig = stage_config(
    IdeasSettings, STAGE, "IdeasRunConfig",
    "Unset fields fall back to `vault.toml`, then `VAULT_IDEAS_<FIELD>`, then the defaults "
    "(`vault_pipeline.ideas.settings.IdeasSettings`). Switching backend is one value: "
    "`backend: extractive | openai | vllm | batch_file`.")


@dg.multi_asset(
    specs=[table_spec(table, "ideas", ["papers", "documents"], kinds=frozenset({"parquet"}))
           for table in (MASKED_RECORDS, LLM_FAILURES)],
)
def masked_records(context: dg.AssetExecutionContext, config: IdeasRunConfig,
                   vault: VaultResource):
    paths = vault.paths()
    settings = IdeasSettings.resolve(config.model_dump(), home=paths.home)
    report = build_masked_records(paths, settings, log=context.log.info,
                                  progress=for_stage("masked_records"))
    yield dg.MaterializeResult(
        asset_key="masked_records",
        metadata={
            "dagster/row_count": report.records,
            "backend": report.backend, "model": report.model,
            "prompt_version": report.prompt_version,
            "papers": report.papers, "processed": report.processed, "reused": report.reused,
            "retried": report.retried,
            "leak_rate": dg.MetadataValue.float(round(report.leak_rate, 4)),
            "leaks_masked": report.masked_findings,
            "judge_calls": report.judge_calls, "judge_errors": report.judge_errors,
            "judge_flagged": report.judge_flagged,
            "tokens_in": report.tokens_in, "tokens_out": report.tokens_out,
            "papers_per_second": dg.MetadataValue.float(round(report.papers_per_second, 2)),
            "seconds": dg.MetadataValue.float(round(report.seconds, 2)),
            "by_input_source": counts_table(report.by_source, "input source"),
            "path": table_path(paths, MASKED_RECORDS),
        },
    )
    yield dg.MaterializeResult(
        asset_key="llm_failures",
        metadata={
            "dagster/row_count": report.quarantined,
            "new_this_run": report.new_failures,
            "path": table_path(paths, LLM_FAILURES),
        },
    )


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
