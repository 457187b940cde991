"""The five live harvests as stages (group `harvest`): arXiv OAI-PMH by datestamp day, arXiv
full text, the one-hop reference walk, OpenReview venues and Semantic Scholar lookups.

Each writes raw files only (its output is the raw zone, declared as an artifact) and runs in
its service's concurrency pool behind that service's shared request clock. Its settings are
the knobs of one run, resolved like every stage's (defaults < `vault.toml` [<stage>] <
`VAULT_<STAGE>_<FIELD>` < run config < CLI flags); the services' settings (URLs, spacing,
venues, scope) are the harvest config (`harvest.toml`, :mod:`.config`), read when the stage
runs or its partitions are built, for the vault it runs on. `vault harvest` runs these same
declarations (:func:`harvest_context` is the one way both open a harvest)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Generic, TypeVar

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.stage import Artifact, Daily, Keys, RunContext, Stage
from vault_pipeline.raw.zone import raw_location
from vault_pipeline.sources import (
    HARVEST_GROUP,
    fulltext,
    oai_pmh,
    openreview,
    openreview_pdf,
    semantic_scholar,
)
from vault_pipeline.sources.context import HarvestContext
from vault_pipeline.sources.settings import HarvestConfig, VenueSettings, load_config
from vault_pipeline.store.paths import VaultPaths

ARXIV_DAYS_PER_RUN = 31  # a backfill lists up to a month as one window (fewest requests)


@dataclass(frozen=True)
class HarvestRunSettings:
    """What every harvest run may be told."""

    config_file: str | None = None
    """The harvest config (TOML) to read; unset: `$VAULT_HARVEST_CONFIG`, else
    `<data root>/harvest.toml`, else the `[harvest]` table of `vault.toml`."""


@dataclass(frozen=True)
class OaiHarvestSettings(HarvestRunSettings):
    """One OAI-PMH ListRecords listing of a window of datestamp days."""

    metadata_prefix: str | None = None
    """OAI-PMH metadata format (`arXiv`, `arXivRaw`, `oai_dc`); unset: the harvest config's."""
    oai_set: str | None = None
    """OAI set to list (`cs`, `physics:hep-th`); unset: the harvest config's."""
    force: bool = False
    """List the whole window again, even days already harvested completely."""


@dataclass(frozen=True)
class FulltextHarvestSettings(HarvestRunSettings):
    """PDFs and e-prints of the papers in scope; unset scope fields: the harvest config's
    `[arxiv.fulltext]`."""

    max_files: int | None = None
    """Most files fetched in this run; unset: the scope's `max_per_run`."""
    kinds: tuple[str, ...] | None = None
    """What to fetch: `pdf`, `eprint` (the LaTeX source) or both."""
    retry_failed: bool = False
    """Ask again for files whose fetch failed before."""
    categories: tuple[str, ...] | None = None
    """Categories in scope (`cs.LG`)."""
    published_from: date | None = None
    """Papers published on or after this day."""
    published_until: date | None = None
    """Papers published on or before this day."""
    ids: tuple[str, ...] | None = None
    """Only these papers (arXiv ids); unset: every paper in scope."""


@dataclass(frozen=True)
class OpenReviewHarvestSettings(HarvestRunSettings):
    """One OpenReview venue (the run's partition)."""

    refresh: bool = False
    """List a venue already harvested completely again (new or changed decisions)."""


@dataclass(frozen=True)
class S2HarvestSettings(HarvestRunSettings):
    """Semantic Scholar batch lookups."""

    refresh: bool = False
    """Ask again for ids looked up within `refresh_days`."""
    references: bool = True
    """Also fetch each paper's references (not only its citation count)."""
    ids: tuple[str, ...] | None = None
    """Ids as Semantic Scholar takes them (`ARXIV:2106.15928`, `DOI:...`); unset: the vault's
    post-cutoff papers, and with an API key the evaluation population."""
    cited_by: bool = False
    """Also read, page by page, the papers citing each id (with their publication dates)."""


def config_of(paths: VaultPaths, settings: HarvestRunSettings) -> HarvestConfig:
    """The harvest config a run of ``settings`` reads, for the vault it runs on."""
    return load_config(paths, Path(settings.config_file) if settings.config_file else None)


@contextlib.contextmanager
def harvest_context(paths: VaultPaths, settings: HarvestRunSettings, context: RunContext
                    ) -> Iterator[HarvestContext]:
    """The harvest context of one run (its clients closed at the end)."""
    with HarvestContext.open(paths, config_of(paths, settings), context.progress,
                             context.settings) as ctx:
        yield ctx


R = TypeVar("R")


@dataclass
class HarvestRun(Generic[R]):
    """A harvest's run: its client's report and the requests it sent to each service."""

    report: R
    requests: dict[str, int] = field(default_factory=dict)


def harvest_stage(name: str, doc: str, inputs: tuple[str, ...] = (), **declared: Any) -> Stage:
    """A harvest's declaration: group `harvest`, one output, the raw zone (an artifact named as
    the stage and documented by ``doc``); ``declared`` holds the rest of the stage."""
    return Stage(name, HARVEST_GROUP, inputs, (Artifact(name, doc, raw_location),), **declared)


def venue_of(config: HarvestConfig, venue_id: str) -> VenueSettings:
    """A configured venue, or the first configured venue's settings under another id (a venue
    named on the command line only)."""
    configured = {v.id: v for v in config.openreview.venues}
    return configured.get(venue_id) or dataclasses.replace(config.openreview.venues[0],
                                                           id=venue_id)


# --- arXiv OAI-PMH -----------------------------------------------------------------------

@dataclass
class OaiRun:
    """An OAI-PMH run: its listing (None when every day was done), and requests sent."""

    window: str
    report: oai_pmh.OaiReport | None = None
    requests: dict[str, int] = field(default_factory=dict)


def run_oai(paths: VaultPaths, settings: OaiHarvestSettings, context: RunContext) -> OaiRun:
    """List the window's records (days already complete trimmed off, unless ``force``);
    resumes from the stored resumption token after a crash."""
    if context.window is None:
        raise VaultError("the OAI-PMH harvest runs for a window of days (a partition, or "
                         "--from/--until)")
    first, last = context.window
    with harvest_context(paths, settings, context) as ctx:
        planned = (first, last) if settings.force else oai_pmh.plan_window(
            ctx, first, last, settings.metadata_prefix, settings.oai_set)
        if planned is None:
            return OaiRun(f"{first}..{last}")
        report = oai_pmh.harvest_window(ctx, *planned, prefix=settings.metadata_prefix,
                                        oai_set=settings.oai_set, force=settings.force)
    return OaiRun(report.window, report, ctx.requests_sent())


def _describe_oai(run: OaiRun) -> str:
    if run.report is None:
        return f"{run.window} already harvested: nothing requested"
    r = run.report
    return (f"OAI-PMH {r.window}: {r.records} records in {r.pages} pages "
            f"({run.requests.get('arxiv', 0)} requests)")


def _oai_figures(run: OaiRun) -> dict:
    r = run.report
    if r is None:
        return {ARXIV_OAI.name: {"skipped": True, "requests": 0}}
    return {ARXIV_OAI.name: {
        "window": r.window, "pages": r.pages, "records": r.records,
        "new_raw_files": r.new_files, "resumed": r.resumed,
        "token_restarts": r.restarts,
        "requests": run.requests.get("arxiv", 0)}}


def _days(paths: VaultPaths) -> Daily:
    return Daily(load_config(paths).arxiv.first_day, per_run=ARXIV_DAYS_PER_RUN)


OAI_STAGE = harvest_stage(
    "arxiv_oai_harvest",
    "arXiv OAI-PMH ListRecords for the partition's datestamp day(s) into the raw zone; a "
    "backfill run lists up to a month as one window (fewest requests); resumes from the "
    "stored resumption token after a crash.",
    run=run_oai, describe=_describe_oai, figures=_oai_figures, settings=OaiHarvestSettings,
    partitions=_days, pool="arxiv")
ARXIV_OAI = OAI_STAGE.outputs[0]


# --- arXiv full text ---------------------------------------------------------------------

def fulltext_plan(ctx: HarvestContext, settings: FulltextHarvestSettings
                  ) -> list[fulltext.FulltextItem]:
    """What a full-text run of ``settings`` would download (files present or failed before
    left out): the run's plan and `--dry-run`'s."""
    base = ctx.config.arxiv.fulltext
    scope = dataclasses.replace(
        base, categories=settings.categories or base.categories,
        published_from=settings.published_from or base.published_from,
        published_until=settings.published_until or base.published_until)
    return fulltext.plan(ctx, scope, list(settings.ids) if settings.ids else None,
                         settings.kinds, settings.retry_failed, settings.max_files)


def run_fulltext(paths: VaultPaths, settings: FulltextHarvestSettings, context: RunContext
                 ) -> HarvestRun[fulltext.FulltextReport]:
    """Download the planned PDFs and e-prints into the raw zone."""
    with harvest_context(paths, settings, context) as ctx:
        report = fulltext.fetch(ctx, fulltext_plan(ctx, settings))
    return HarvestRun(report, ctx.requests_sent())


FULLTEXT_STAGE = harvest_stage(
    "arxiv_fulltext_harvest",
    "PDFs and e-prints (LaTeX source) of papers in the configured scope into the raw zone, "
    "skipping files already there and papers that failed before.",
    inputs=("papers",), uses=("splits",), run=run_fulltext, settings=FulltextHarvestSettings,
    pool="arxiv",
    describe=lambda run: (f"{run.report.fetched} new file(s), {run.report.bytes:,} bytes; "
                          f"{len(run.report.failed)} failed"),
    warnings=lambda run: [f"{stem}: {reason}" for stem, reason in run.report.failed],
    figures=lambda run: {ARXIV_FULLTEXT.name: {
        "planned": run.report.planned, "fetched": run.report.fetched,
        "bytes": run.report.bytes, "already_present": run.report.already_present,
        "failed": len(run.report.failed), "requests": run.requests.get("arxiv", 0)}})
ARXIV_FULLTEXT = FULLTEXT_STAGE.outputs[0]


# --- the reference walk ------------------------------------------------------------------

def run_walk(paths: VaultPaths, settings: HarvestRunSettings, context: RunContext
             ) -> HarvestRun[semantic_scholar.WalkReport]:
    """Fetch the arXiv metadata of cited papers missing from the vault (one hop)."""
    with harvest_context(paths, settings, context) as ctx:
        report = semantic_scholar.walk(ctx)
    return HarvestRun(report, ctx.requests_sent())


def _walk_figures(run: HarvestRun[semantic_scholar.WalkReport]) -> dict:
    r = run.report
    fetched = r.fetched
    return {REFERENCE_WALK.name: {
        "missing_from_vault": r.missing, "cited_without_arxiv_id": r.without_arxiv_id,
        "requested": fetched.requested if fetched else 0,
        "entries": fetched.entries if fetched else 0,
        "invalid_ids": len(fetched.invalid) if fetched else 0}}


WALK_STAGE = harvest_stage(
    "arxiv_reference_walk",
    "The one-hop reference walk: arXiv metadata of papers cited by the vault's papers (per "
    "Semantic Scholar) but missing from it, into the raw zone.",
    inputs=("citations",), run=run_walk, settings=HarvestRunSettings, pool="arxiv",
    describe=lambda run: (f"{run.report.missing} cited arXiv papers missing; "
                          f"{run.report.without_arxiv_id} cited papers have no arXiv id"),
    figures=_walk_figures)
REFERENCE_WALK = WALK_STAGE.outputs[0]


# --- OpenReview --------------------------------------------------------------------------

def run_openreview(paths: VaultPaths, settings: OpenReviewHarvestSettings,
                   context: RunContext) -> openreview.VenueReport:
    """List one venue (the run's partition) page by page; resumes an interrupted listing;
    a completed venue is listed again only with ``refresh``."""
    if context.partition is None:
        raise VaultError("the OpenReview harvest runs for one venue (a partition, or --venue)")
    with harvest_context(paths, settings, context) as ctx:
        return openreview.harvest_venue(ctx, venue_of(ctx.config, context.partition),
                                        refresh=settings.refresh)


def _describe_venue(report: openreview.VenueReport) -> str:
    if report.skipped:
        return f"{report.venue} already harvested; run with refresh to list it again"
    return (f"{report.venue}: {report.notes} submissions in {report.pages} pages, "
            f"{report.requests} requests")


OPENREVIEW_STAGE = harvest_stage(
    "openreview_harvest",
    "Submissions of one OpenReview venue with their reviews, meta-reviews and decisions, page "
    "by page into the raw zone; resumes an interrupted listing; `refresh` lists a completed "
    "venue again (the decisions sensor sets it).",
    run=run_openreview, settings=OpenReviewHarvestSettings, pool="openreview",
    describe=_describe_venue,
    partitions=lambda paths: Keys(tuple(v.id for v in load_config(paths).openreview.venues)),
    figures=lambda r: {OPENREVIEW.name: {
        "venue": r.venue, "skipped": r.skipped, "resumed": r.resumed, **r.counted()}})
OPENREVIEW = OPENREVIEW_STAGE.outputs[0]


# --- Semantic Scholar --------------------------------------------------------------------

@dataclass
class S2Run:
    in_scope: int
    lookup: semantic_scholar.LookupReport
    citing: semantic_scholar.ListReport | None = None  # with ``cited_by``
    population: semantic_scholar.PopulationReport | None = None  # with a key
    requests: dict[str, int] = field(default_factory=dict)


def run_s2(paths: VaultPaths, settings: S2HarvestSettings, context: RunContext) -> S2Run:
    """Look the ids up in batches (the vault's post-cutoff papers unless ids are given; ids
    read within `refresh_days` are not asked again), then, if asked, their citing papers, and
    with an API key the evaluation venues' submissions and their dated citing papers."""
    with harvest_context(paths, settings, context) as ctx:
        explicit = list(settings.ids) if settings.ids else None
        chosen = explicit or semantic_scholar.post_cutoff_ids(ctx)
        run = S2Run(len(chosen), semantic_scholar.lookup(ctx, chosen, settings.references,
                                                         settings.refresh))
        if settings.cited_by:
            run.citing = semantic_scholar.fetch_lists(ctx, chosen, "citations")
        if explicit is None:
            run.population = semantic_scholar.lookup_population(ctx, settings.references,
                                                                settings.refresh)
    run.requests = ctx.requests_sent()
    return run


def _describe_s2(run: S2Run) -> str:
    r = run.lookup
    text = (f"{r.asked} ids asked in {r.batches} batches, "
            f"{len(r.not_found)} unknown to Semantic Scholar")
    if run.population is not None:
        text += "; " + semantic_scholar.describe_population(run.population)
    return text


def _s2_figures(run: S2Run) -> dict:
    r, population = run.lookup, run.population
    return {S2.name: {
        "in_scope": run.in_scope, "asked": r.asked,
        "skipped_recent": r.skipped_recent, "found": r.found,
        "not_found": len(r.not_found),
        "requests": run.requests.get("s2", 0),
        "evaluation_population": population.asked if population else 0,
        "evaluation_population_known": population.resolved if population else 0}}


S2_STAGE = harvest_stage(
    "s2_harvest",
    "Semantic Scholar batch lookups (500 ids a request) of the references and citation counts "
    "of the vault's post-cutoff papers, into the raw zone; ids read within `refresh_days` are "
    "not asked again. With an API key, also the evaluation venues' submissions and their "
    "dated citing papers.",
    inputs=("papers",), run=run_s2,
    uses=("splits", "evalsets"),
    settings=S2HarvestSettings, pool="s2", describe=_describe_s2, figures=_s2_figures)
S2 = S2_STAGE.outputs[0]


# --- OpenReview submission PDFs ----------------------------------------------------------

@dataclass(frozen=True)
class OpenReviewPdfHarvestSettings(HarvestRunSettings):
    """Submission PDFs of the evaluation venues."""

    venues: tuple[str, ...] | None = None
    """Venue ids; unset: the evaluation sets' venues."""
    revisions: bool = False
    """Also fetch the earlier PDFs the venue keeps (note edits; API v1 references)."""
    retry_failed: bool = False
    """Ask again for forums whose PDF failed before (a 404, an answer not a PDF)."""
    max_files: int | None = None
    """Most forums fetched in this run; unset: every planned forum."""


def run_openreview_pdfs(paths: VaultPaths, settings: OpenReviewPdfHarvestSettings,
                        context: RunContext) -> HarvestRun[openreview_pdf.PdfReport]:
    """Fetch the planned forums' PDFs; a forum is asked again only when its note's PDF
    changed, a failed one only with ``retry_failed``; each failure is logged with its reason."""
    with harvest_context(paths, settings, context) as ctx:
        venues = list(settings.venues) if settings.venues else None
        items, plan = openreview_pdf.plan(ctx, venues, settings.retry_failed,
                                          limit=settings.max_files)
        report = openreview_pdf.fetch(ctx, items, settings.revisions, plan)
    for forum, reason in report.failed:
        context.log(f"{forum}: {reason}")
    return HarvestRun(report, ctx.requests_sent())


OPENREVIEW_PDF_STAGE = harvest_stage(
    "openreview_pdf_harvest",
    "Submission PDFs of the evaluation venues from OpenReview into the raw zone (`documents` "
    "converts them keyed by forum id); a forum is asked again only when its note's PDF "
    "changed, a failure only with `retry_failed`.",
    inputs=("submissions",), uses=("evalsets",), run=run_openreview_pdfs,
    settings=OpenReviewPdfHarvestSettings, pool="openreview",
    describe=lambda run: openreview_pdf.describe(run.report),
    figures=lambda run: {OPENREVIEW_PDFS.name: {
        "submissions": run.report.submissions, "without_pdf": run.report.without_pdf,
        "planned": run.report.planned, "fetched": run.report.fetched,
        "already_present": run.report.already_present, "revisions": run.report.revisions,
        "failed": len(run.report.failed), "bytes": run.report.bytes,
        "requests": run.requests.get("openreview", 0)}})
OPENREVIEW_PDFS = OPENREVIEW_PDF_STAGE.outputs[0]

STAGES = (OAI_STAGE, FULLTEXT_STAGE, WALK_STAGE, OPENREVIEW_STAGE, S2_STAGE,
          OPENREVIEW_PDF_STAGE)
