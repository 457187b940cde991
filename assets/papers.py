"""papers: parsed, normalised, deduplicated arXiv metadata (silver), and its rejects."""


import dagster as dg

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.stages import stage_asset
from vault_pipeline.papers import quality as papers_quality
from vault_pipeline.papers.stage import STAGE
from vault_pipeline.schemas import PAPERS_REJECTED

papers = stage_asset(STAGE, kinds_of={PAPERS_REJECTED.name: frozenset({"parquet"})})


@dg.asset_check(asset="papers", blocking=True, description="Every arxiv_id appears once.")
def papers_ids_unique(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(papers_quality.duplicate_ids(vault.paths().store))


@dg.asset_check(asset="papers", description="Id, title, abstract, authors and dates are set.")
def papers_required_fields(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(papers_quality.empty_required(vault.paths().store))


@dg.asset_check(asset="papers", description="No paper is published after its last update.")
def papers_dates_ordered(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(papers_quality.date_order(vault.paths().store))


papers_checks = [papers_ids_unique, papers_required_fields, papers_dates_ordered]
