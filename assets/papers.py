"""papers: parsed, normalised, deduplicated arXiv metadata (silver), and its rejects."""


import dagster as dg

from vault_pipeline import overview, papers_quality
from vault_pipeline.papers import build_papers
from vault_pipeline.schemas import PAPERS, PAPERS_REJECTED

from .metadata import bar_chart, check_result, counts_table, table_path, table_spec, year_chart
from .resources import VaultResource


@dg.multi_asset(
    specs=[table_spec(PAPERS, "metadata", ["raw_files"]),
           table_spec(PAPERS_REJECTED, "metadata", ["raw_files"], kinds=frozenset({"parquet"}))],
)
def papers(context: dg.AssetExecutionContext, vault: VaultResource):
    paths = vault.paths()
    report = build_papers(paths)
    stats = papers_quality.summary(paths.store)
    context.log.info(
        f"papers: {report.rows} rows from {report.files} files "
        f"({report.superseded} superseded, {report.rejected} rejected)"
    )
    yield dg.MaterializeResult(
        asset_key="papers",
        metadata={
            "dagster/row_count": report.rows,
            "candidates": report.candidates,
            "superseded_versions": report.superseded,
            "raw_files_parsed": report.files,
            "snapshots_streamed": report.streamed_files,
            "streaming_passes": report.stream_passes,
            "by_year": counts_table(stats["by_year"], "year"),
            "by_year_chart": year_chart(stats["by_year"], "Papers by year"),
            "by_primary_category": counts_table(stats["by_primary_category"], "category"),
            "by_primary_category_chart": bar_chart(overview.top(stats["by_primary_category"]),
                                                   "Papers by primary category"),
            "by_source": counts_table(stats["by_source"], "source"),
            "path": table_path(paths, PAPERS),
        },
    )
    yield dg.MaterializeResult(
        asset_key="papers_rejected",
        metadata={
            "dagster/row_count": report.rejected,
            "raw_files_failed": report.failed_files,
            "path": table_path(paths, PAPERS_REJECTED),
        },
    )


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
