"""citations: references and citation counts from Semantic Scholar, parsed from the raw zone."""

import dagster as dg

from vault_pipeline.citations import build_citations
from vault_pipeline.schemas import CITATION_COUNTS, CITATIONS

from .metadata import table_path, table_spec
from .resources import VaultResource


@dg.multi_asset(
    specs=[table_spec(CITATIONS, "citations", ["raw_files"]),
           table_spec(CITATION_COUNTS, "citations", ["raw_files"])],
)
def citations(context: dg.AssetExecutionContext, vault: VaultResource):
    paths = vault.paths()
    report = build_citations(paths)
    context.log.info(f"{report.citations} references of {report.papers} papers from "
                     f"{report.files} Semantic Scholar responses")
    yield dg.MaterializeResult(asset_key="citations", metadata={
        "dagster/row_count": report.citations, "responses_parsed": report.files,
        "cited_with_arxiv_id": report.cited_with_arxiv_id,
        "path": table_path(paths, CITATIONS)})
    yield dg.MaterializeResult(asset_key="citation_counts", metadata={
        "dagster/row_count": report.papers,
        "path": table_path(paths, CITATION_COUNTS)})
