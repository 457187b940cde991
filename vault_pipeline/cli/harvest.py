"""`vault harvest`: live pulls from arXiv, OpenReview and Semantic Scholar into the raw zone,
with progress bars and a ``--dry-run`` that prints what would be requested and sends nothing.

The harvests that are assets run the very stage declarations the assets are generated from
(`vault_pipeline/sources/stage.py`: the same settings resolution, with the options as flags,
the same cursors and the same shared request clocks, so a CLI harvest and a scheduled run
never crowd a service together); `arxiv search` and `arxiv ids` call their clients directly.
Tables are rebuilt afterwards with `vault materialize` (or by the raw-zone sensor)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vault_pipeline.cli.modules import (  # the clients load on first use
    arxiv_api,
    citations_stage,
    harvest_stages,
    httpx,
    oai_pmh,
    openreview,
    openreview_pdf,
    semantic_scholar,
    sources_context,
    stages,
)
from vault_pipeline.cli.options import HomeOption
from vault_pipeline.cli.progress import bars
from vault_pipeline.errors import VaultError
from vault_pipeline.sources.settings import SECRET_ENV, HarvestConfig, load_config, secret
from vault_pipeline.store.paths import VaultPaths

if TYPE_CHECKING:
    from vault_pipeline.pipeline.progress import Progress
    from vault_pipeline.pipeline.stage import Stage
    from vault_pipeline.sources.context import HarvestContext


harvest_app = typer.Typer(help="Harvest live sources into the raw zone (politely, resumably).",
                          no_args_is_help=True)
arxiv_app = typer.Typer(help="arXiv: OAI-PMH by datestamp, search API, ids, full text.",
                        no_args_is_help=True)
harvest_app.add_typer(arxiv_app, name="arxiv")

ConfigOption = Annotated[Path | None, typer.Option(
    "--config", help="Harvest config (TOML); default $VAULT_HARVEST_CONFIG, else "
                     "<data root>/harvest.toml when present.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print what would be requested; "
                                                        "send nothing.")]
IdsFileOption = Annotated[Path | None, typer.Option(help="A file of ids, one a line.")]


def _reporting(command: Callable[..., None]) -> Callable[..., None]:
    """Errors a user can act on print as one line and exit 1."""
    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except VaultError as exc:
            typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
            raise typer.Exit(1) from None
    return run


@contextlib.contextmanager
def _bars() -> Iterator[Progress]:
    """A progress bar for a harvest, as the callback its run reports through."""
    with bars() as bar:
        task = bar.add_task("starting", total=None)

        def advance(done: int, total: int | None, note: str) -> None:
            bar.update(task, advance=done, total=total, description=note[:60])

        yield advance


def _sent(requests: dict[str, int]) -> None:
    sent = ", ".join(f"{k}: {v}" for k, v in requests.items() if v) or "none"
    typer.echo(f"requests sent ({sent}); rebuild tables with `vault materialize`")


@contextlib.contextmanager
def _context(home: str | None, config: Path | None) -> Iterator[HarvestContext]:
    paths = VaultPaths.from_env(home).ensure()
    with sources_context.HarvestContext.open(paths, load_config(paths, config)) as ctx, \
            _bars() as advance:
        ctx.progress = advance
        yield ctx
    _sent(ctx.requests_sent())


def _run_stage(stage: Stage, paths: VaultPaths, flags: dict[str, Any],
               partition: str | None = None,
               window: tuple[date, date] | None = None) -> Any:
    """Run a harvest stage as its asset does, the command's options as its flags (the top
    layer of its settings)."""
    settings = stage.resolve(home=paths.home, flags=flags)
    with _bars() as advance:
        report = stage.run(paths, settings, stages.RunContext(
            log=typer.echo, progress=advance, partition=partition, window=window,
            settings=stage.used_settings(paths.home)))
    return report


def _planning(stage: Stage, paths: VaultPaths, config: HarvestConfig) -> HarvestContext:
    """The context a dry run of ``stage`` plans in: given the sections the stage ``uses``, as
    a run of it is."""
    return sources_context.HarvestContext.open(paths, config,
                                               settings=stage.used_settings(paths.home))


def _file(config: Path | None) -> str | None:
    return str(config) if config else None


def _url(base: str, params: dict[str, Any]) -> str:
    return str(httpx.URL(base, params=params))


@harvest_app.command("config")
@_reporting
def show_config(home: HomeOption = None, config: ConfigOption = None) -> None:
    """Print the effective harvest configuration as TOML (secrets shown only as set /
    unset, in comments); a copy of it is a valid harvest.toml to start from."""
    import tomlkit

    settings: HarvestConfig = load_config(VaultPaths.from_env(home), config)
    document = tomlkit.document()
    document.add(tomlkit.comment(f"from {settings.source}; environment overrides applied"))
    document.add(tomlkit.comment(f"user agent: {settings.user_agent}"))
    for name, env in SECRET_ENV.items():
        document.add(tomlkit.comment(f"{env}: {'set' if secret(name) else 'unset'}"))
    for section in ("arxiv", "openreview", "s2", "retry"):
        document[section] = _toml_value(dataclasses.asdict(getattr(settings, section)))
    typer.echo(tomlkit.dumps(document).rstrip())


def _toml_value(value: Any) -> Any:
    """TOML has no null and no tuple: unset keys are left out, tuples become arrays."""
    if isinstance(value, dict):
        return {k: _toml_value(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_value(v) for v in value]
    return value


@arxiv_app.command("oai")
@_reporting
def arxiv_oai(
    first: Annotated[str | None, typer.Option("--from", help="First datestamp day "
                                                             "(default yesterday, UTC).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Last day (default --from).")]
    = None,
    oai_set: Annotated[str | None, typer.Option("--set", help="OAI set, e.g. cs.")] = None,
    prefix: Annotated[str | None, typer.Option(help="arXivRaw (default) or arXiv.")] = None,
    force: Annotated[bool, typer.Option(help="Harvest days already complete again.")] = False,
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Harvest records whose OAI datestamp lies in a day range (one listing, resumable)."""
    start = date.fromisoformat(first) if first else oai_pmh.yesterday()
    end = date.fromisoformat(until) if until else start
    if end < start:
        raise VaultError("--until is before --from")
    paths = VaultPaths.from_env(home).ensure()
    if dry_run:
        ctx = _planning(harvest_stages.OAI_STAGE, paths, load_config(paths, config))
        window = (start, end) if force else oai_pmh.plan_window(ctx, start, end, prefix, oai_set)
        if window is None:
            typer.echo(f"{start}..{end} already harvested: nothing would be requested")
            return
        query = oai_pmh.first_request(ctx, *window, prefix, oai_set)
        typer.echo(f"would request {_url(ctx.config.arxiv.oai_url, query)}")
        typer.echo("then follow resumption tokens until the list ends "
                   f"(one request per {ctx.config.arxiv.interval_s:g} s)")
        return
    run = _run_stage(harvest_stages.OAI_STAGE, paths, {
        "metadata_prefix": prefix, "oai_set": oai_set, "force": force or None,
        "config_file": _file(config)}, window=(start, end))
    report = run.report
    if report is None:
        typer.echo(f"{start}..{end} already harvested")
        return
    _sent(run.requests)
    typer.echo(f"{report.window}: {report.records} records, {report.pages} pages, "
               f"{report.new_files} new raw files" + (" (resumed)" if report.resumed else ""))


@arxiv_app.command("search")
@_reporting
def arxiv_search(
    query: Annotated[str, typer.Argument(help='arXiv query, e.g. "cat:cs.LG AND ti:graph".')],
    max_results: Annotated[int, typer.Option("--max", help="At most this many results.")] = 100,
    sort: Annotated[str, typer.Option(help="submittedDate, lastUpdatedDate or relevance.")]
    = "submittedDate",
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Pull the results of a search query (pages of up to 2,000; split past 30,000)."""
    if dry_run:
        settings = load_config(VaultPaths.from_env(home), config).arxiv
        size = min(settings.page_size, 2000, max_results)
        typer.echo("would request " + _url(settings.api_url, arxiv_api.page_params(
            query, 0, size, sort, "descending")))
        typer.echo(f"then pages of {size} until {max_results} results")
        if max_results > settings.result_ceiling:
            typer.echo(f"more than {settings.result_ceiling:,} results: a max_results=0 probe, "
                       "then submission-date windows halved until each fits")
        return
    with _context(home, config) as ctx:
        report = arxiv_api.ArxivSearch(ctx, sort_by=sort).run(query, max_results)
    for note in report.notes:
        typer.echo(note)
    typer.echo(f"{report.entries} entries in {report.pages} pages "
               f"(of {report.total_results} results)")


def _read_ids(ids: list[str] | None, file: Path | None) -> list[str]:
    found = list(ids or [])
    if file is not None:
        if not file.is_file():
            raise VaultError(f"no such file: {file}")
        found += [line.strip() for line in file.read_text().splitlines()
                  if line.strip() and not line.startswith("#")]
    if not found:
        raise VaultError("give ids as arguments or with --file")
    return found


@arxiv_app.command("ids")
@_reporting
def arxiv_ids(
    ids: Annotated[list[str] | None, typer.Argument(help="arXiv ids (any form).")] = None,
    file: IdsFileOption = None,
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Fetch the metadata of given arXiv ids (each id asked once, ever)."""
    wanted_ids = _read_ids(ids, file)
    if dry_run:
        paths = VaultPaths.from_env(home).ensure()
        ctx = sources_context.HarvestContext.open(paths, load_config(paths, config))
        wanted, report = arxiv_api.plan_ids(ctx, wanted_ids)
        chunk = ctx.config.arxiv.ids_per_request
        typer.echo(f"would request {len(wanted)} ids in {-(-len(wanted) // chunk)} requests; "
                   f"{report.skipped_known} already fetched; invalid: {report.invalid or 'none'}")
        if wanted:
            typer.echo(_url(ctx.config.arxiv.api_url, {"id_list": ",".join(wanted[:chunk]),
                                                       "max_results": len(wanted[:chunk])}))
        return
    with _context(home, config) as ctx:
        report = arxiv_api.fetch_ids(ctx, wanted_ids)
    typer.echo(f"{report.entries} entries for {report.requested} ids "
               f"({report.skipped_known} skipped as fetched before)")
    for bad in report.invalid:
        typer.secho(f"  ! not an arXiv id: {bad}", fg=typer.colors.YELLOW, err=True)


@arxiv_app.command("fulltext")
@_reporting
def arxiv_fulltext(
    category: Annotated[list[str] | None, typer.Option(help="Categories in scope.")] = None,
    since: Annotated[str | None, typer.Option(help="Published on or after (YYYY-MM-DD).")]
    = None,
    until: Annotated[str | None, typer.Option(help="Published on or before.")] = None,
    kind: Annotated[list[str] | None, typer.Option(help="pdf and/or eprint.")] = None,
    ids: Annotated[list[str] | None, typer.Option("--id", help="Only these papers.")] = None,
    max_files: Annotated[int | None, typer.Option("--max", help="At most this many files.")]
    = None,
    retry_failed: Annotated[bool, typer.Option(help="Ask again for papers that failed.")]
    = False,
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Download PDFs and e-prints of papers in scope (papers table), skipping what is there."""
    paths = VaultPaths.from_env(home).ensure()
    flags = {"categories": category or None, "kinds": kind or None, "ids": ids or None,
             "published_from": since, "published_until": until, "max_files": max_files,
             "retry_failed": retry_failed or None, "config_file": _file(config)}
    if dry_run:
        stage = harvest_stages.FULLTEXT_STAGE
        settings = stage.resolve(home=paths.home, flags=flags)
        ctx = _planning(stage, paths, harvest_stages.config_of(paths, settings))
        items = harvest_stages.fulltext_plan(ctx, settings)
        typer.echo(f"would download {len(items)} file(s)")
        for item in items[:20]:
            typer.echo(f"  {item.url}")
        if len(items) > 20:
            typer.echo(f"  ... and {len(items) - 20} more")
        return
    run = _run_stage(harvest_stages.FULLTEXT_STAGE, paths, flags)
    _sent(run.requests)
    report = run.report
    typer.echo(f"{report.fetched} new file(s), {report.bytes:,} bytes; "
               f"{len(report.failed)} failed")
    for stem, reason in report.failed:
        typer.secho(f"  ! {stem}: {reason}", fg=typer.colors.YELLOW, err=True)


@harvest_app.command("openreview")
@_reporting
def harvest_openreview(
    venue: Annotated[list[str] | None, typer.Option(help="Venue ids (default: configured).")]
    = None,
    refresh: Annotated[bool, typer.Option(help="List completed venues again.")] = False,
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Submissions, reviews, meta-reviews and decisions of OpenReview venues."""
    paths = VaultPaths.from_env(home).ensure()
    settings = load_config(paths, config)
    chosen = list(venue) if venue else [v.id for v in settings.openreview.venues]
    if dry_run:
        ctx = _planning(harvest_stages.OPENREVIEW_STAGE, paths, settings)
        for item in (harvest_stages.venue_of(settings, v) for v in chosen):
            state = ctx.cursors.load(openreview.cursor_key("openreview", item.id))
            if state.get("complete") and not refresh:
                typer.echo(f"{item.id}: complete, nothing requested (use --refresh)")
            else:
                typer.echo(f"{item.id}: would request {openreview.first_request(ctx, item)}")
        return
    flags = {"refresh": refresh or None, "config_file": _file(config)}
    reports = [_run_stage(harvest_stages.OPENREVIEW_STAGE, paths, flags, partition=v)
               for v in chosen]
    _sent({"openreview": sum(r.requests for r in reports)})
    for report in reports:
        status = "already complete (use --refresh)" if report.skipped else \
            f"{report.notes} submissions in {report.pages} pages, {report.requests} requests"
        typer.echo(f"{report.venue}: {status}")


@harvest_app.command("openreview-pdfs")
@_reporting
def harvest_openreview_pdfs(
    venue: Annotated[list[str] | None, typer.Option(
        help="Venue ids (default: the evaluation sets' venues).")] = None,
    revisions: Annotated[bool, typer.Option(help="Also the earlier PDFs the venue keeps "
                                                 "(note edits, API v1 references).")] = False,
    retry_failed: Annotated[bool, typer.Option(help="Ask forums that failed again.")] = False,
    max_files: Annotated[int | None, typer.Option(help="At most this many forums.")] = None,
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Submission PDFs from OpenReview (after `vault harvest openreview` and `reviews`), for
    the `documents` stage to convert keyed by forum id."""
    paths = VaultPaths.from_env(home).ensure()
    settings = load_config(paths, config)
    if dry_run:
        ctx = _planning(harvest_stages.OPENREVIEW_PDF_STAGE, paths, settings)
        items, plan = openreview_pdf.plan(ctx, venue, retry_failed, limit=max_files)
        typer.echo(f"would request {len(items)} PDF(s) of {plan.submissions} submissions "
                   f"({plan.without_pdf} without a public PDF)"
                   + (f", first {openreview_pdf.pdf_url(ctx, items[0])}" if items else ""))
        return
    run = _run_stage(harvest_stages.OPENREVIEW_PDF_STAGE, paths, {
        "venues": tuple(venue) if venue else None, "revisions": revisions or None,
        "retry_failed": retry_failed or None, "max_files": max_files,
        "config_file": _file(config)})
    _sent(run.requests)
    typer.echo(openreview_pdf.describe(run.report))


@harvest_app.command("s2")
@_reporting
def harvest_s2(
    ids: Annotated[list[str] | None, typer.Argument(
        help="Ids as S2 takes them (ARXIV:2106.15928, DOI:..., S2 ids); default: the "
             "vault's post-cutoff papers.")] = None,
    file: IdsFileOption = None,
    references: Annotated[bool, typer.Option(help="Also read references.")] = True,
    refresh: Annotated[bool, typer.Option(help="Ask ids read recently again.")] = False,
    walk: Annotated[bool, typer.Option(help="Then fetch cited arXiv papers missing from "
                                            "the vault (one hop).")] = False,
    cited_by: Annotated[bool, typer.Option(
        "--cited-by", help="Also read, page by page, the papers citing each id "
        "(`/paper/{id}/citations`, with their publication dates).")] = False,
    dry_run: DryRun = False, home: HomeOption = None, config: ConfigOption = None,
) -> None:
    """Citation counts and references from Semantic Scholar (batches of up to 500 ids)."""
    paths = VaultPaths.from_env(home).ensure()
    settings = load_config(paths, config)
    if dry_run:
        ctx = _planning(harvest_stages.S2_STAGE, paths, settings)
        chosen = _read_ids(ids, file) if ids or file else semantic_scholar.post_cutoff_ids(ctx)
        wanted, skipped = semantic_scholar.plan_lookups(ctx, chosen, references, refresh)
        size = min(semantic_scholar.MAX_BATCH, settings.s2.batch_size)
        target = _url(semantic_scholar.batch_url(ctx),
                      {"fields": semantic_scholar.fields(references)})
        typer.echo(f"would POST {-(-len(wanted) // size)} batch(es) of up to {size} ids "
                   f"({len(wanted)} ids, {skipped} read recently) to {target}")
        if cited_by:
            typer.echo(f"then the citing papers of {len(chosen)} ids, page by page, from "
                       f"{semantic_scholar.list_url(ctx, '{id}', 'citations')}")
        if not (ids or file) and semantic_scholar.population_wanted(ctx):
            _ids, plan = semantic_scholar.population_ids(ctx)
            typer.echo(f"then, with the API key, the evaluation population: {plan.asked} "
                       f"submissions by arXiv id, {plan.without_id} without one by title "
                       f"({semantic_scholar.match_url(ctx)}, accepted at a title ratio >= "
                       "0.90), and the citing papers of those Semantic Scholar knows")
        if walk:
            missing, _ = semantic_scholar.missing_cited(ctx)
            typer.echo(f"then the walk: {len(missing)} cited arXiv ids missing from the vault")
        return
    chosen = _read_ids(ids, file) if ids or file else None
    flags = {"ids": chosen, "references": None if references else False,
             "refresh": refresh or None, "cited_by": cited_by or None,
             "config_file": _file(config)}
    run = _run_stage(harvest_stages.S2_STAGE, paths, flags)
    requests = dict(run.requests)
    report = run.lookup
    typer.echo(f"{report.found} found, {len(report.not_found)} unknown, "
               f"{report.skipped_recent} read recently")
    if run.citing is not None:
        typer.echo(f"citing papers: {run.citing.entries} in {run.citing.pages} pages of "
                   f"{run.citing.papers} papers")
    if run.population is not None:
        typer.echo(semantic_scholar.describe_population(run.population))
    if walk:  # the citations the walk reads, rebuilt by their stage, then the walk's stage
        citations_stage.STAGE.run(paths, stages.NoSettings(), stages.RunContext(log=typer.echo))
        walked = _run_stage(harvest_stages.WALK_STAGE, paths, {"config_file": _file(config)})
        for service, sent in walked.requests.items():
            requests[service] = requests.get(service, 0) + sent
        typer.echo(f"walk: {walked.report.missing} cited arXiv papers were missing; "
                   f"{walked.report.fetched.entries if walked.report.fetched else 0} fetched; "
                   f"{walked.report.without_arxiv_id} cited papers have no arXiv id")
    _sent(requests)
