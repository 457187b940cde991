"""Live OpenReview and Semantic Scholar harvesting (group `harvest`), each in its own
concurrency pool and behind its own shared request clock. Responses land in the raw zone; the
`reviews` and `citations` assets parse them from there."""

import dagster as dg
from pydantic import Field

from vault_pipeline.sources import openreview, openreview_pdf, semantic_scholar
from vault_pipeline.sources.config import HarvestConfig
from vault_pipeline.sources.context import HarvestContext

from .harvest_arxiv import HARVEST_GROUP
from .resources import VaultResource


class OpenReviewHarvestConfig(dg.Config):
    refresh: bool = Field(False, description=(
        "List a venue already harvested completely again (new or changed decisions)."))


def openreview_harvest_asset(config: HarvestConfig) -> dg.AssetsDefinition:
    """The venue harvest, one partition per configured venue: read when the definitions are
    built, for the vault they are built for (never at import)."""
    venues = dg.StaticPartitionsDefinition([v.id for v in config.openreview.venues])

    @dg.asset(
        group_name=HARVEST_GROUP, partitions_def=venues, pool="openreview",
        kinds={"openreview"},
        description="Submissions of one OpenReview venue with their reviews, meta-reviews and "
                    "decisions, page by page into the raw zone; resumes an interrupted listing; "
                    "`refresh` lists a completed venue again (the decisions sensor sets it).",
    )
    def openreview_harvest(context: dg.AssetExecutionContext, vault: VaultResource,
                           config: OpenReviewHarvestConfig) -> dg.MaterializeResult:
        with HarvestContext.open(vault.paths()) as ctx:
            venue = next(v for v in ctx.config.openreview.venues if v.id == context.partition_key)
            report = openreview.harvest_venue(ctx, venue, refresh=config.refresh)
        if report.skipped:
            context.log.info(f"{venue.id} already harvested; run with refresh to list it again")
        return dg.MaterializeResult(metadata={
            "venue": report.venue, "skipped": report.skipped, "resumed": report.resumed,
            "pages": report.pages, "notes": report.notes, "requests": report.requests})

    return openreview_harvest


class S2HarvestConfig(dg.Config):
    refresh: bool = Field(False, description=(
        "Ask again for ids looked up within `refresh_days`."))
    references: bool = Field(True, description=(
        "Also fetch each paper's references (not only its citation count)."))


@dg.asset(
    group_name=HARVEST_GROUP, deps=["papers"], pool="s2", kinds={"semanticscholar"},
    description="Semantic Scholar batch lookups (500 ids a request) of the references and "
                "citation counts of the vault's post-cutoff papers, into the raw zone; ids read "
                "within `refresh_days` are not asked again. With an API key, also the "
                "evaluation venues' submissions and their dated citing papers.",
)
def s2_harvest(context: dg.AssetExecutionContext, vault: VaultResource,
               config: S2HarvestConfig) -> dg.MaterializeResult:
    with HarvestContext.open(vault.paths()) as ctx:
        ids = semantic_scholar.post_cutoff_ids(ctx)
        report = semantic_scholar.lookup(ctx, ids, config.references, config.refresh)
        population = semantic_scholar.lookup_population(ctx, config.references, config.refresh)
        requests = ctx.requests_sent().get("s2", 0)
    context.log.info(f"{report.asked} ids asked in {report.batches} batches, "
                     f"{len(report.not_found)} unknown to Semantic Scholar")
    if population is not None:
        context.log.info(semantic_scholar.describe_population(population))
    return dg.MaterializeResult(metadata={
        "in_scope": len(ids), "asked": report.asked, "skipped_recent": report.skipped_recent,
        "found": report.found, "not_found": len(report.not_found), "requests": requests,
        "evaluation_population": population.asked if population else 0,
        "evaluation_population_known": population.resolved if population else 0})


class OpenReviewPdfConfig(dg.Config):
    revisions: bool = Field(False, description=(
        "Also fetch the earlier PDFs the venue keeps (note edits; API v1 references)."))
    retry_failed: bool = Field(False, description=(
        "Ask again for forums whose PDF failed before (a 404, an answer not a PDF)."))
    max_files: int | None = Field(None, description=(
        "Most forums fetched in this run; unset: every planned forum."))


@dg.asset(
    group_name=HARVEST_GROUP, deps=["submissions"], pool="openreview",
    kinds={"openreview", "pdf"},
    description="Submission PDFs of the evaluation venues from OpenReview into the raw zone "
                "(`documents` converts them keyed by forum id); a forum is asked again only "
                "when its note's PDF changed, a failure only with `retry_failed`.",
)
def openreview_pdf_harvest(context: dg.AssetExecutionContext, vault: VaultResource,
                           config: OpenReviewPdfConfig) -> dg.MaterializeResult:
    with HarvestContext.open(vault.paths()) as ctx:
        items, plan = openreview_pdf.plan(ctx, retry_failed=config.retry_failed,
                                          limit=config.max_files)
        report = openreview_pdf.fetch(ctx, items, config.revisions, plan)
        requests = ctx.requests_sent().get("openreview", 0)
    for forum, reason in report.failed:
        context.log.warning(f"{forum}: {reason}")
    context.log.info(openreview_pdf.describe(report))
    return dg.MaterializeResult(metadata={
        "submissions": report.submissions, "without_pdf": report.without_pdf,
        "planned": report.planned, "fetched": report.fetched,
        "already_present": report.already_present, "revisions": report.revisions,
        "failed": len(report.failed), "bytes": report.bytes, "requests": requests})
