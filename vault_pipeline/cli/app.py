"""`vault`: the command line. It materializes the very assets the Dagster UI shows (same
`Definitions`, same instance under the data root), so CLI and UI runs are interchangeable."""

from __future__ import annotations

import json
import os
import signal
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from vault_pipeline.cli.engine import _instance, _materialize
from vault_pipeline.cli.harvest import harvest_app
from vault_pipeline.cli.modules import (  # loaded on first use: `vault --help` stays fast
    fingerprints,
    lock,
    raw_zone,
    repair,
    sql_module,
    sql_output,
)
from vault_pipeline.cli.options import HomeOption
from vault_pipeline.cli.planning import _run_config
from vault_pipeline.cli.status import _last_materializations, _status_json
from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.settings import CONFIG_FILE
from vault_pipeline.store.paths import VaultPaths, is_url

app = typer.Typer(
    help="Research Idea Vault: harvest, parse and query a results-masked idea vault.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(harvest_app, name="harvest")
eval_app = typer.Typer(help="Evaluation runs: reports of their results.",
                       no_args_is_help=True)
app.add_typer(eval_app, name="eval")


def _show_version(value: bool) -> None:
    if value:
        from vault_pipeline import __version__

        typer.echo(f"vault {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option(
        "--version", callback=_show_version, is_eager=True,
        help="Print the version and exit.")] = False) -> None:
    """Research Idea Vault: harvest, parse and query a results-masked idea vault."""


AsOfOption = Annotated[str | None, typer.Option(
    "--as-of", metavar="YYYY-MM-DD", help="A session's cutoff: only papers whose held version "
    "was created before this day.")]
TargetOption = Annotated[str | None, typer.Option(
    help="A session's target paper: never shown, nor its near-duplicates.")]
QueryEncoderOption = Annotated[str, typer.Option(
    help="What embeds the agent tools' search texts: model (the index's own) or static "
         "(distilled from it: ~70x cheaper a query, slightly less accurate; for rollouts "
         "bound by the model).")]


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def _paths(home: str | Path | None) -> VaultPaths:
    """The vault, created if new (commands that write)."""
    try:
        return VaultPaths.from_env(home).ensure()
    except VaultError as exc:
        raise _fail(str(exc)) from None


def _vault(home: str | Path | None) -> VaultPaths:
    """An existing vault (read-only commands never create one)."""
    try:
        return VaultPaths.from_env(home).existing()
    except VaultError as exc:
        raise _fail(str(exc)) from None


def _import(paths: VaultPaths, sources: list[Path]) -> int:
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise VaultError(f"no such file or folder: {', '.join(missing)}")
    report = raw_zone.RawZone(paths).import_paths(sources)
    typer.echo(
        f"imported {len(report.added)} new file(s), {len(report.already_present)} already "
        f"present, {len(report.rejected)} rejected"
    )
    for record in report.added:
        counted = f", {record.records} records" if record.records is not None else ""
        typer.echo(f"  + {record.original_name} → {record.kind}{counted}")
    for record in report.restored:
        typer.echo(f"  ~ {record.original_name} → {record.kind}: restored (was missing or "
                   "damaged in the raw zone)")
    for path, reason in report.rejected:
        typer.secho(f"  ! {path}: {reason}", fg=typer.colors.YELLOW, err=True)
    return len(report.rejected)


@app.command("import")
def import_(
    sources: Annotated[list[Path], typer.Argument(help="Files or folders of raw responses.")],
    home: HomeOption = None,
    strict: Annotated[bool, typer.Option(help="Exit with status 3 if any file was rejected.")]
    = False,
) -> None:
    """Copy raw responses (arXiv API pages, OAI-PMH pages, snapshots, PDFs) into the raw zone.

    Each file is recognised by its content and checked; unrecognised or malformed files are
    reported with a reason (and logged in the `import_rejects` table) and kept out."""
    try:
        rejected = _import(_paths(home), sources)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    if strict and rejected:
        raise typer.Exit(3)


@app.command()
def materialize(
    select: Annotated[str | None, typer.Option(
        "--select", "-s",
        help="Asset selection (Dagster syntax: `papers`, `raw_files+`, `group:metadata`); "
             "default everything.")] = None,
    home: HomeOption = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Show Dagster's whole log (default: one line per stage).")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only warnings and errors.")]
    = False,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="Run config, YAML or JSON, as Dagster takes it (e.g. "
        "`ops: {splits: {config: {cutoff: '2025-01-01'}}}`).")] = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Exit 1 when a warning-level check fails too (runs every selected "
                         "asset, so that every check runs).")] = False,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Convert again every document whose last try timed out, "
        "crashed or failed (they are retried on their own up to `max_tries`).")] = False,
    wait: Annotated[float, typer.Option(
        "--wait", metavar="SECONDS", help="Wait this long for another run on the vault to "
        "finish (default: refuse at once).")] = 0,
    force: Annotated[bool, typer.Option(
        "--force", help="Run every selected asset, even those whose inputs, settings and "
        "code did not change since they were built.")] = False,
) -> None:
    """Materialize assets in-process, recorded in the vault's Dagster instance (one run at a
    time per vault)."""
    try:
        level = "DEBUG" if verbose else "WARNING" if quiet else "INFO"
        paths = _paths(home)
        with lock.vault_lock(paths, wait, "vault materialize"):
            ok = _materialize(paths, select, level, _run_config(config), strict, retry_failed,
                              force)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    if not ok:
        raise _fail("the run failed or a check did not pass (see above)")


@app.command()
def sql(
    statement: Annotated[str, typer.Argument(help='A DuckDB query, e.g. "SELECT count(*) '
                                             'FROM papers".')],
    fmt: Annotated[str | None, typer.Option(
        "--format", "-f", help="table, csv, json (an array), jsonl, markdown or parquet "
                               "(default: the --output file's by its extension, else "
                               "table).")] = None,
    limit: Annotated[int, typer.Option(help="Rows shown by the table format.")] = 50,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write the result to this file (.csv, .json, .jsonl, .md, "
                               ".parquet; parquet also to a redirected stdout).")] = None,
    home: HomeOption = None,
) -> None:
    """Query every table of the vault with DuckDB (each table is a view by its name)."""
    try:
        paths = _vault(home)
        relation = sql_module.query(paths, statement)
        for line in sql_module.damaged_tables(paths).values():
            typer.secho(f"warning: {line}", fg=typer.colors.YELLOW, err=True)
        chosen = sql_output.chosen_format(fmt, output, sys.stdout.isatty())
        sql_output.write_result(relation, chosen, limit, output)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None


@app.command()
def status(home: HomeOption = None, as_json: Annotated[bool, typer.Option(
        "--json", help="One JSON object: tables, index, exports, stale assets (their inputs "
                       "or code changed since they were built; null before the first run) and "
                       "the last result of every check.")] = False) -> None:
    """List the tables of the vault: rows, size, last materialization."""

    paths = _vault(home)
    files = paths.store.names()
    zone = raw_zone.RawZone(paths).files(check=False)  # `vault verify` checks them
    if as_json:
        typer.echo(json.dumps(_status_json(paths, files, zone), indent=1, default=str))
        return
    typer.echo(f"vault at {paths.root}")
    typer.echo(f"raw zone: {len(zone)} file(s), {sum(f.size_bytes for f in zone):,} bytes")
    if not files:
        typer.echo("no tables yet: run `vault demo`, or `vault import` then `vault materialize`")
        return
    last = _last_materializations(paths, list(files))
    typer.echo(f"{'table':<24}{'rows':>12}{'bytes':>14}  last materialization")
    for name in files:
        try:
            rows = paths.store.rows(name)
        except VaultError as exc:  # damaged: its one line, and the other tables
            typer.secho(f"{name:<24}  {exc}", fg=typer.colors.YELLOW)
            continue
        when = last.get(name, "(written outside Dagster)")
        typer.echo(f"{name:<24}{rows:>12,}{paths.store.size(name):>14,}  {when}")


@eval_app.command("report")
def eval_report(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Evaluation run id.")],
    home: HomeOption = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="File to write (default `$VAULT_HOME/evalruns/<RUN>.html`, or "
        "`.md` with `--format md`).")] = None,
    fmt: Annotated[str | None, typer.Option(
        "--format", "-f", help="`html` (one self-contained page, figures inside) or `md` "
        "(Markdown, figures as PNG files beside it); default: from the suffix of `--out`, "
        "else html.")] = None,
) -> None:
    """Write the report of an evaluation run: the studies' tables per paradigm and input,
    the human noise ceiling, the figures (predicted against human, calibration, error per
    bin), calls and tokens."""
    from vault_pipeline.evalruns.report import write_report

    try:
        target = write_report(_vault(home), run_id, out, fmt)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"report of run {run_id} written to {target}")


@app.command()
def report(
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Where to write the page (default: report.html in the vault).")
    ] = None,
    home: HomeOption = None,
) -> None:
    """Write a self-contained HTML page of the vault's state: papers by year and category,
    split sizes, document statuses, leak and quarantine rates (charts and figures)."""
    from vault_pipeline.overview.html import write
    from vault_pipeline.overview.summary import collect

    paths = _vault(home)
    try:
        written = write(collect(paths), out or paths.home / "report.html")
    except VaultError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write the report: {exc.strerror or exc}") from None
    typer.echo(f"report written to {written}")


@app.command()
def verify(home: HomeOption = None) -> None:
    """Check every raw file against its sha256 (missing, truncated or altered files are
    listed: restore them with `vault import` of the originals), then every table file and
    the index against the checksums recorded when they were written (`vault materialize`
    rebuilds a damaged one); exit 1 if any."""
    paths = _vault(home)
    zone = raw_zone.RawZone(paths)
    records = zone.files(check=False)
    problems = zone.verify(records, full=True)
    for problem in problems:
        typer.secho(f"  ! {problem}", fg=typer.colors.YELLOW, err=True)
    derived = repair.damaged(paths, fingerprints.FOLDER_OUTPUTS.values(), full=True)
    for target, problem in derived:
        typer.secho(f"  ! {target.relative_to(paths.home)}: {problem}",
                    fg=typer.colors.YELLOW, err=True)
    set_aside = repair.set_aside_damaged_objects(paths, fingerprints.FOLDER_OUTPUTS.values())
    for line in set_aside:
        typer.secho(f"  ! {line}", fg=typer.colors.YELLOW, err=True)
    if problems:
        raise _fail(f"{len(problems)} of {len(records)} raw file(s) damaged: restore them "
                    "with `vault import` of the original files")
    if set_aside:
        raise _fail(f"{len(set_aside)} table(s) or folder(s) damaged on the object store, "
                    "set aside: `vault materialize` builds them again from the raw zone")
    if derived:
        raise _fail(f"{len(derived)} derived file(s) damaged: `vault materialize` "
                    "quarantines them and rebuilds them from the raw zone")
    typer.echo(f"raw zone: all {len(records)} file(s) match their sha256; tables and index "
               "match their checksums")


@app.command("search")
def search_(
    text: Annotated[str, typer.Argument(help="What to look for (a problem, a challenge...).")],
    k: Annotated[int, typer.Option("--k", "-k", help="How many results.")] = 10,
    view: Annotated[str | None, typer.Option(
        help="Only this view: problem_setting, challenge, research_gap, intuition, "
             "proposal.")] = None,
    before: Annotated[str | None, typer.Option(
        help="Only papers published before this date (YYYY-MM-DD).")] = None,
    same_field: Annotated[str | None, typer.Option(
        "--same-field", metavar="CATEGORY",
        help="Only papers in this arXiv category (cs.LG) or archive (cs); comma-separated "
             "for several: the gap finder's same-domain search.")] = None,
    other_fields: Annotated[str | None, typer.Option(
        "--other-fields", metavar="CATEGORY",
        help="Only papers outside this category or archive: the innovator's cross-domain "
             "search.")] = None,
    mode: Annotated[str, typer.Option(help="hybrid (vectors and full text, fused), vector "
                                           "or text.")] = "hybrid",
    by_paper: Annotated[bool, typer.Option(
        "--by-paper", help="One result per paper (its best view).")] = False,
    other_views: Annotated[bool, typer.Option(
        "--other-views", help="With --by-paper: each paper's other matching views too.")
    ] = False,
    local: Annotated[bool, typer.Option(
        "--local", help="Search in this process even when a `vault serve` runs.")] = False,
    as_of: AsOfOption = None,
    target: TargetOption = None,
    home: HomeOption = None,
) -> None:
    """Search the vault's index; one JSON object per result line, best first. A `vault serve`
    running on the same vault answers it (milliseconds); else it searches itself. With
    --as-of (and --target) it answers as a session cut there would: only papers whose held
    version predates the day, never the target or its near-duplicates."""
    from vault_pipeline.access.client import ask_running

    try:
        paths = _vault(home)
        params = {"q": text, "k": k, "view": view, "before": before, "same_field": same_field,
                  "other_fields": other_fields, "mode": mode, "as_of": as_of, "target": target}
        hits = None if local or by_paper else ask_running(paths.home, params)
        if hits is None:
            from vault_pipeline.index.search import SearchFilters, parse_date, search_vault

            within = None
            if as_of is not None or target is not None:
                from vault_pipeline.access.tools import Toolbox

                within = Toolbox(paths).world(as_of, target).where()
            filters = SearchFilters(view=view, before=parse_date(before, "--before"),
                                    same_field=same_field, other_fields=other_fields,
                                    within=within)
            if by_paper:
                from vault_pipeline.index.papers import search_papers

                found = search_papers(paths, text, k=k, filters=filters, mode=mode,
                                      other_views=other_views)
            else:
                found = search_vault(paths, text, k=k, filters=filters, mode=mode)
            hits = [hit.as_dict() for hit in found]
    except VaultError as exc:
        raise _fail(str(exc)) from None
    for hit in hits:
        typer.echo(json.dumps(hit, default=str, ensure_ascii=False))
    if not hits:
        typer.secho("no result: nothing in the index matches these filters", err=True)
    _done_now()


def _done_now() -> None:
    """End a one-shot command that has printed everything without the interpreter's teardown
    (freeing the model and the engine's threads takes half a second); only as the `vault`
    program itself, never inside a caller's process (tests, notebooks)."""
    if Path(sys.argv[0]).name == "vault" and sys.stdout is sys.__stdout__:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="Port.")] = 8765,
    as_of: AsOfOption = None,
    target: TargetOption = None,
    query_encoder: QueryEncoderOption = "model",
    home: HomeOption = None,
) -> None:
    """Serve the vault: a JSON API (/api/search, /api/papers, /api/tables, /api/sql), the
    agent tools (/api/tools/...: sessions, calls, batches) and a web page to search and
    browse papers and their views; `vault search` uses it. With --as-of (and --target)
    every answer is cut there (requests may narrow it, never widen it)."""
    from vault_pipeline.access.serve import run

    try:
        run(_vault(home).home, host, port, as_of, target, query_encoder)
    except VaultError as exc:
        raise _fail(str(exc)) from None


def _verify_export_at(out_dir: str) -> list[str]:
    """The problems of an export in a folder or at an object-store URL (fetched first)."""
    from vault_pipeline.datasets.manifest import verify_export

    if not is_url(out_dir):
        return verify_export(Path(out_dir))
    from vault_pipeline.datasets.publish import fetched

    with fetched(out_dir) as folder:
        return verify_export(folder)


@app.command()
def export(
    out_dir: Annotated[str, typer.Argument(
        help="Folder to write the datasets into, or an object-store URL (s3://…).")],
    overwrite: Annotated[bool, typer.Option(help="Replace an export already there.")] = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Only verify an existing export against its manifest.")] = False,
    formats: Annotated[list[str] | None, typer.Option(
        "--format", help="Files beside Parquet: jsonl (the default), openai-jsonl (chat "
                         "lines for fine-tuning services); repeat for both.")] = None,
    include_evaluation: Annotated[bool, typer.Option(
        "--include-evaluation", help="Keep papers an evaluation set uses in the training "
                                     "files (left out by default).")] = False,
    with_index: Annotated[bool, typer.Option(
        "--with-index", help="Also copy the LanceDB index (vault views with vectors) into "
                             "vault/index/; it can be large.")] = False,
    home: HomeOption = None,
) -> None:
    """Write the training datasets (Parquet and JSON lines per role and split), the
    retrievable vault, a manifest.json and a data card README.md; --check verifies one."""
    from vault_pipeline.datasets.export import export_datasets

    if check:
        problems = _verify_export_at(out_dir)
        for problem in problems:
            typer.secho(f"  ! {problem}", fg=typer.colors.YELLOW, err=True)
        if problems:
            raise _fail(f"{out_dir}: {len(problems)} problem(s) against its manifest")
        typer.echo(f"{out_dir}: every file matches manifest.json")
        return
    target: Path | str = out_dir if is_url(out_dir) else Path(out_dir)
    try:
        report = export_datasets(_paths(home), target, overwrite=overwrite,
                                 formats=tuple(formats or ("jsonl",)),
                                 include_evaluation=include_evaluation,
                                 include_index=with_index)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:  # a folder under a file, no permission, disk full
        raise _fail(f"cannot write the export to {out_dir}: {exc.strerror or exc}") from None
    typer.echo(f"exported {report.files} files to {report.out_dir} "
               f"(cutoff {report.cutoff}, seed {report.seed})")
    for table, rows in report.rows.items():
        typer.echo(f"  {table:<26}{rows:>8,} rows")
    if report.evaluation_excluded:
        typer.echo(f"  left out (used by an evaluation set): "
                   f"{', '.join(report.evaluation_excluded)}")


@app.command()
def score(
    generations: Annotated[Path, typer.Argument(help="JSON lines of {arxiv_id, role, "
                                                     "generation}.")],
    export_dir: Annotated[Path, typer.Option("--export", help="The export the examples "
                                                              "come from.")],
) -> None:
    """Score generations: the role's validity gate and the citation-set F1 against the
    reference artifact; one JSON object per line, then a summary."""
    from vault_pipeline.datasets.rewards import as_dict, score_file

    if not generations.is_file():
        raise _fail(f"{generations}: no such file")
    results = []
    try:
        for result in score_file(generations, export_dir):
            results.append(result)
            typer.echo(json.dumps(as_dict(result), ensure_ascii=False))
    except VaultError as exc:
        raise _fail(str(exc)) from None
    valid = sum(r.valid for r in results)
    mean = sum(r.gated_citation_f1 for r in results) / len(results) if results else 0.0
    typer.secho(f"{len(results)} generations: {valid} pass the validity gate; mean gated "
                f"citation F1 {mean:.3f}", err=True)


# The bundled sample ends in 2025: the demo cuts there rather than at the default 2026-01-01,
# so that it has targets to split, index around and export.
DEMO_CUTOFF = "2025-01-01"
# A fifth of the sample's targets each for validation and test (the default shares, seed 002's
# 200 and 277 of 14,977, would leave a few dozen targets with empty held-out splits).
DEMO_HELD_OUT = 0.2
DEMO_RUN_CONFIG = {"ops": {"splits": {"config": {"cutoff": DEMO_CUTOFF,
                                                 "validation": DEMO_HELD_OUT,
                                                 "test": DEMO_HELD_OUT}}}}


def _record_demo_cutoff(paths: VaultPaths) -> None:
    """A new vault's `vault.toml` keeps the demo's cutoff, so that later runs (a Semantic
    Scholar harvest, a materialization) use the same one."""
    file = paths.home / CONFIG_FILE
    if not file.exists():
        file.write_text(f"[splits]\ncutoff = {DEMO_CUTOFF}  # the bundled sample ends in 2025\n"
                        f"validation = {DEMO_HELD_OUT}\ntest = {DEMO_HELD_OUT}\n")


def sample_dir() -> Path:
    """The bundled sample's raw files (their origins: sample/ATTRIBUTION.md)."""
    return Path(str(resources.files("vault_pipeline") / "sample" / "raw"))


@app.command()
def demo(home: HomeOption = None) -> None:
    """Import the bundled sample, materialize the whole asset graph, print a summary."""
    paths = _paths(home)
    typer.echo(f"vault at {paths.root}")
    try:
        _import(paths, [sample_dir()])
        typer.echo(f"cutoff for the sample: {DEMO_CUTOFF} (the default is 2026-01-01)")
        _record_demo_cutoff(paths)
        with lock.vault_lock(paths, 0, "vault demo"):
            ok = _materialize(paths, None, run_config=DEMO_RUN_CONFIG)
        typer.echo("\nlatest papers in the vault:")
        sql_output.write_result(sql_module.query(paths, "SELECT arxiv_id, latest_version AS "
                                                        "v, published, primary_category, "
                                                        "title FROM papers ORDER BY "
                                                        "published DESC LIMIT 5"), "table", 5)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    status(home=paths.root)
    typer.echo('\nnext: vault sql "SELECT primary_category, count(*) FROM papers GROUP BY 1"')
    typer.echo("      vault dev   (the Dagster UI on http://127.0.0.1:3000)")
    typer.echo('      vault search "test generation for web applications" --k 5')
    typer.echo(f"datasets exported to {paths.root}/exports/latest "
               "(manifest.json, README.md data card)")
    if not ok:
        raise _fail("the demo run failed or a check did not pass (see above)")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                               "help_option_names": ["--help"]})
def dev(ctx: typer.Context, home: HomeOption = None) -> None:
    """Start the Dagster UI and daemon (`dagster dev`) on this vault; extra args pass through
    (`-h HOST` is Dagster's host, not help).

    `dagster dev` takes this process's place (exec), so a SIGTERM or Ctrl+C sent to it
    reaches Dagster itself, which stops the webserver, the daemon and the code server it
    started; a parent that died on the signal would leave them running."""
    import importlib.util

    paths = _paths(home)
    _instance(paths)
    if importlib.util.find_spec("dagster") is None:
        raise _fail("Dagster is not installed in this environment")
    env = os.environ | {"VAULT_HOME": paths.root}
    # this interpreter's Dagster, activated or not, whatever the `dagster` script's first line
    command = [sys.executable, "-m", "dagster", "dev", "-m", "vault_pipeline.definitions",
               *ctx.args]
    sys.stdout.flush()
    sys.stderr.flush()
    # Dagster maps SIGTERM to whatever SIGINT does; a shell's background job starts with
    # SIGINT ignored, and an ignored signal stays ignored across exec: SIGTERM would then be
    # ignored too, and the services never stopped
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execve(sys.executable, command, env)


tools_app = typer.Typer(help="Agent tools over the vault: their schemas and an MCP server.",
                        no_args_is_help=True)
app.add_typer(tools_app, name="tools")


@tools_app.command("schema")
def tools_schema(check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 when the shipped schema file differs from the tools.")] = False
                 ) -> None:
    """Print the tools as OpenAI function-calling definitions (the file the package ships,
    `vault_pipeline/access/tools.openai.json`, for a trainer's `tools=`)."""
    from vault_pipeline.access import specs

    if check and specs.shipped() != specs.render():
        raise _fail("the shipped tools.openai.json differs from the tools: regenerate it "
                    "with `vault tools schema`")
    typer.echo(specs.render(), nl=False)


@tools_app.command("mcp")
def tools_mcp(
    as_of: AsOfOption = None,
    target: TargetOption = None,
    session_id: Annotated[str | None, typer.Option(
        "--session-id", help="The session's id in the `tool_calls` log (a rollout's id).")
    ] = None,
    query_encoder: QueryEncoderOption = "model",
    home: HomeOption = None,
) -> None:
    """Serve the agent tools over stdio as a Model Context Protocol server, as one session
    (cut at --as-of, default the vault's cutoff); its calls are written to the `tool_calls`
    table when the client disconnects."""
    from vault_pipeline.access import log
    from vault_pipeline.access.mcp_server import serve_stdio
    from vault_pipeline.access.tools import Toolbox

    try:
        paths = _vault(home)
        session = Toolbox(paths, query_encoder=query_encoder).session(as_of, target, session_id)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    serve_stdio(session, on_close=lambda: log.append(paths.store, session.calls))
