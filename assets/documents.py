"""documents: every paper's best full text (LaTeX, PDF, else abstract) as clean Markdown,
and the record of every conversion that makes it incremental."""


import dagster as dg
from pydantic import Field

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.stages import stage_asset
from vault_pipeline.documents import quality
from vault_pipeline.documents.stage import STAGE
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS

documents = stage_asset(STAGE, kinds_of={
    DOCUMENTS.name: frozenset({"pymupdf", "parquet"}),
    DOCUMENT_ATTEMPTS.name: frozenset({"parquet"})})


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
