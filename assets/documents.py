"""documents: every paper's best full text (LaTeX, PDF, else abstract) as clean Markdown,
and the record of every conversion that makes it incremental."""


import dagster as dg
from pydantic import Field

from vault_pipeline import overview
from vault_pipeline.documents import quality
from vault_pipeline.documents.build import build_documents
from vault_pipeline.documents.settings import STAGE, DocumentsSettings
from vault_pipeline.progress import for_stage
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS

from .config import stage_config
from .metadata import bar_chart, check_result, counts_table, table_path, table_spec
from .resources import VaultResource

DocumentsRunConfig = stage_config(
    DocumentsSettings, STAGE, "DocumentsRunConfig",
    "Limits of a run (unset: `vault.toml`, then `VAULT_DOCUMENTS_<FIELD>`, then the defaults "
    "of `vault_pipeline.documents.settings.DocumentsSettings`); the truncation limit, the PDF "
    "converter and its switches are part of the converter version, so changing them converts "
    "every document again.")


@dg.multi_asset(
    specs=[table_spec(DOCUMENTS, "documents", ["raw_files", "papers"],
                      kinds=frozenset({"pymupdf", "parquet"})),
           table_spec(DOCUMENT_ATTEMPTS, "documents", ["raw_files", "papers"],
                      kinds=frozenset({"parquet"}))],
)
def documents(context: dg.AssetExecutionContext, config: DocumentsRunConfig,
              vault: VaultResource):
    paths = vault.paths()
    settings = DocumentsSettings.resolve(paths.home, config.model_dump())
    report = build_documents(paths, settings.config(), progress=for_stage("documents"))
    context.log.info(f"documents: {report.rows} rows; {report.converted} converted, "
                     f"{report.reused} reused, {report.resumed} resumed from a crashed run")
    rates = quality.success_rates(paths.store)
    yield dg.MaterializeResult(
        asset_key="documents",
        metadata={
            "dagster/row_count": report.rows,
            "converted_now": report.converted,
            "reused": report.reused,
            "resumed": report.resumed,
            "by_status": counts_table(report.by_status, "status"),
            "by_status_chart": bar_chart(overview.top(report.by_status), "Documents by status"),
            "by_source": counts_table(report.by_source, "source"),
            "success_rate_by_source": dg.MetadataValue.json(rates),
            "path": table_path(paths, DOCUMENTS),
        },
    )
    attempts = sum(sum(v.values()) for v in report.attempts_by_kind_status.values())
    yield dg.MaterializeResult(
        asset_key="document_attempts",
        metadata={
            "dagster/row_count": attempts,
            "by_kind_and_status": dg.MetadataValue.json(report.attempts_by_kind_status),
            "path": table_path(paths, DOCUMENT_ATTEMPTS),
        },
    )


class SuccessFloorConfig(dg.Config):
    min_success_rate: float = Field(
        quality.DEFAULT_MIN_SUCCESS_RATE,
        description="Least share of each source's inputs (LaTeX, PDF) that must convert.")


@dg.asset_check(asset="documents", description="Each source (LaTeX, PDF) converts at least "
                "the configured share of its inputs; rates by source in the metadata.")
def documents_success_rate(config: SuccessFloorConfig,
                           vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.success_floor(vault.paths().store, config.min_success_rate),
                   dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset="documents", blocking=True,
                description="No row marked successful has empty text.")
def documents_ok_rows_have_text(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.ok_rows_have_text(vault.paths().store))


@dg.asset_check(asset="documents", description="One row per arXiv id.")
def documents_one_row_per_paper(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.one_row_per_paper(vault.paths().store))


documents_checks = [documents_success_rate, documents_ok_rows_have_text,
                    documents_one_row_per_paper]
