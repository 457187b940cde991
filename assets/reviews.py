"""reviews: OpenReview submissions and their reviews, parsed from the raw zone (silver)."""

import dagster as dg

from vault_pipeline.reviews import build_reviews
from vault_pipeline.schemas import REVIEWS, SUBMISSIONS

from .metadata import counts_table, table_path, table_spec
from .resources import VaultResource


@dg.multi_asset(
    specs=[table_spec(SUBMISSIONS, "reviews", ["raw_files", "papers"]),
           table_spec(REVIEWS, "reviews", ["raw_files"])],
)
def reviews(context: dg.AssetExecutionContext, vault: VaultResource):
    paths = vault.paths()
    report = build_reviews(paths)
    context.log.info(f"{report.submissions} submissions, {report.reviews} replies from "
                     f"{report.files} OpenReview pages")
    yield dg.MaterializeResult(asset_key="submissions", metadata={
        "dagster/row_count": report.submissions, "pages_parsed": report.files,
        "matched_arxiv": report.matched_arxiv,
        "by_decision": counts_table(report.by_decision, "decision"),
        "path": table_path(paths, SUBMISSIONS)})
    yield dg.MaterializeResult(asset_key="reviews", metadata={
        "dagster/row_count": report.reviews,
        "replies_not_kept": counts_table(report.ignored_replies, "invitation"),
        "path": table_path(paths, REVIEWS)})
