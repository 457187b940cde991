"""Live OpenReview and Semantic Scholar harvesting (group `harvest`), each in its own
concurrency pool and behind its own shared request clock. Responses land in the raw zone; the
`reviews` and `citations` assets parse them from there."""

import dagster as dg
from pydantic import Field

from vault_pipeline.sources import openreview, semantic_scholar
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
