"""Live arXiv harvesting (group `harvest`): OAI-PMH metadata by datestamp day, full text for
papers in scope, and the arXiv side of the reference walk. Every step runs in the `arxiv`
concurrency pool (one at a time per instance; the instance template sets pool limits to 1)
and through the vault's shared request clock, which also covers CLI harvests. Results land in
the raw zone; the raw-zone sensor rebuilds the tables from there."""

from datetime import timedelta

import dagster as dg
from pydantic import Field

from vault_pipeline.sources import fulltext, oai_pmh, semantic_scholar
from vault_pipeline.sources.config import HarvestConfig
from vault_pipeline.sources.context import HarvestContext

from .resources import HARVEST_GROUP, VaultResource


class OaiHarvestConfig(dg.Config):
    metadata_prefix: str | None = Field(None, description=(
        "OAI-PMH metadata format (`arXiv`, `arXivRaw`, `oai_dc`); unset: the harvest "
        "config's."))
    oai_set: str | None = Field(None, description=(
        "OAI set to list (`cs`, `physics:hep-th`); unset: the harvest config's."))
    force: bool = Field(False, description=(
        "List the whole window again, even days already harvested completely."))


def arxiv_oai_harvest_asset(config: HarvestConfig) -> dg.AssetsDefinition:
    """The OAI-PMH harvest, one partition per datestamp day from the configured first day:
    read when the definitions are built, for the vault they are built for (never at import)."""
    days = dg.DailyPartitionsDefinition(start_date=config.arxiv.first_day.isoformat(),
                                        end_offset=0)

    @dg.asset(
        group_name=HARVEST_GROUP, partitions_def=days, pool="arxiv", kinds={"arxiv"},
        backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=31),
        description="arXiv OAI-PMH ListRecords for the partition's datestamp day(s) into the raw "
                    "zone; a backfill run lists up to a month as one window (fewest requests); "
                    "resumes from the stored resumption token after a crash.",
    )
    def arxiv_oai_harvest(context: dg.AssetExecutionContext, vault: VaultResource,
                          config: OaiHarvestConfig) -> dg.MaterializeResult:
        window = context.partition_time_window
        first, last = window.start.date(), (window.end - timedelta(days=1)).date()
        with HarvestContext.open(vault.paths()) as ctx:
            planned = (first, last) if config.force else oai_pmh.plan_window(
                ctx, first, last, config.metadata_prefix, config.oai_set)
            if planned is None:
                context.log.info(f"{first}..{last} already harvested: nothing requested")
                return dg.MaterializeResult(metadata={"skipped": True, "requests": 0})
            report = oai_pmh.harvest_window(ctx, *planned, prefix=config.metadata_prefix,
                                            oai_set=config.oai_set, force=config.force)
            requests = ctx.requests_sent().get("arxiv", 0)
        context.log.info(f"OAI-PMH {report.window}: {report.records} records in {report.pages} "
                         f"pages ({requests} requests)")
        return dg.MaterializeResult(metadata={
            "window": report.window, "pages": report.pages, "records": report.records,
            "new_raw_files": report.new_files, "resumed": report.resumed,
            "token_restarts": report.restarts, "requests": requests})

    return arxiv_oai_harvest


class FulltextConfig(dg.Config):
    max_files: int | None = Field(None, description=(
        "Most files fetched in this run; unset: every planned file."))
    kinds: list[str] | None = Field(None, description=(
        "What to fetch: `pdf`, `eprint` (the LaTeX source) or both; unset: the harvest "
        "config's scope."))
    retry_failed: bool = Field(False, description=(
        "Ask again for files whose fetch failed before."))


@dg.asset(
    group_name=HARVEST_GROUP, deps=["papers"], pool="arxiv", kinds={"arxiv", "pdf"},
    description="PDFs and e-prints (LaTeX source) of papers in the configured scope into the "
                "raw zone, skipping files already there and papers that failed before.",
)
def arxiv_fulltext_harvest(context: dg.AssetExecutionContext, vault: VaultResource,
                           config: FulltextConfig) -> dg.MaterializeResult:
    with HarvestContext.open(vault.paths()) as ctx:
        items = fulltext.plan(ctx, kinds=tuple(config.kinds) if config.kinds else None,
                              retry_failed=config.retry_failed, limit=config.max_files)
        report = fulltext.fetch(ctx, items)
        requests = ctx.requests_sent().get("arxiv", 0)
    for stem, reason in report.failed:
        context.log.warning(f"{stem}: {reason}")
    return dg.MaterializeResult(metadata={
        "planned": report.planned, "fetched": report.fetched, "bytes": report.bytes,
        "already_present": report.already_present, "failed": len(report.failed),
        "requests": requests})


@dg.asset(
    group_name=HARVEST_GROUP, deps=["citations"], pool="arxiv", kinds={"arxiv"},
    description="The one-hop reference walk: arXiv metadata of papers cited by the vault's "
                "papers (per Semantic Scholar) but missing from it, into the raw zone.",
)
def arxiv_reference_walk(context: dg.AssetExecutionContext,
                         vault: VaultResource) -> dg.MaterializeResult:
    with HarvestContext.open(vault.paths()) as ctx:
        report = semantic_scholar.walk(ctx)
    fetched = report.fetched
    context.log.info(f"{report.missing} cited arXiv papers missing; "
                     f"{report.without_arxiv_id} cited papers have no arXiv id")
    return dg.MaterializeResult(metadata={
        "missing_from_vault": report.missing, "cited_without_arxiv_id": report.without_arxiv_id,
        "requested": fetched.requested if fetched else 0,
        "entries": fetched.entries if fetched else 0,
        "invalid_ids": len(fetched.invalid) if fetched else 0})
