"""`vault`: the command line. It materializes the very assets the Dagster UI shows (same
`Definitions`, same instance under the data root), so CLI and UI runs are interchangeable."""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from .cli_harvest import harvest_app
from .config import CONFIG_FILE
from .errors import VaultError
from .lock import vault_lock
from .paths import VaultPaths
from .raw.zone import RawZone
from .sql import query, table_files

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

HomeOption = Annotated[
    Path | None,
    typer.Option("--home", envvar="VAULT_HOME", help="Data root (default ./vault_home)."),
]


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def _paths(home: Path | None) -> VaultPaths:
    """The vault, created if new (commands that write)."""
    try:
        return VaultPaths.from_env(home).ensure()
    except VaultError as exc:
        raise _fail(str(exc)) from None


def _vault(home: Path | None) -> VaultPaths:
    """An existing vault (read-only commands never create one)."""
    try:
        return VaultPaths.from_env(home).existing()
    except VaultError as exc:
        raise _fail(str(exc)) from None


def _instance(paths: VaultPaths):
    """The Dagster instance inside the data root (created from the packaged template)."""
    from dagster import DagsterInstance

    if "DAGSTER_HOME" not in os.environ:
        os.environ["DAGSTER_HOME"] = str(paths.dagster_home)
    dagster_home = Path(os.environ["DAGSTER_HOME"])
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    if not config.exists():
        template = resources.files("vault_pipeline") / "templates" / "dagster.yaml"
        config.write_text(template.read_text())
    return DagsterInstance.get()


def _import(paths: VaultPaths, sources: list[Path]) -> int:
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise VaultError(f"no such file or folder: {', '.join(missing)}")
    report = RawZone(paths).import_paths(sources)
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


LIVE_GROUP = "harvest"  # network harvests run only when selected by name or group
# Groups run only when selected: network harvests, and evaluation runs (they need an LLM).
ON_REQUEST = (LIVE_GROUP, "evaluation_runs")


def _materialize(paths: VaultPaths, select: str | None, log_level: str = "INFO",
                 run_config: dict | None = None, strict: bool = False,
                 retry_failed: bool = False) -> bool:
    """Run the selection; True when it succeeded and no error-level check failed (with
    ``strict``, no warning-level check either)."""
    import dagster as dg

    # Beta notices about Dagster's own API (partitions, selections) are not the user's to act on.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    from .definitions import build_defs

    instance = _instance(paths)
    os.environ["VAULT_HOME"] = str(paths.home)
    defs = build_defs(paths)
    everything = [*defs.assets, *defs.asset_checks]  # type: ignore[misc]
    try:
        selection = (_resolve_selection(defs, select) if select else
                     dg.AssetSelection.all() - dg.AssetSelection.groups(*ON_REQUEST))
        if retry_failed and dg.AssetKey("documents") in selection.resolve(
                defs.resolve_asset_graph()):
            ops = {**(run_config or {}).get("ops", {})}
            documents = ops.get("documents", {})
            ops["documents"] = {**documents, "config": {**documents.get("config", {}),
                                                        "retry_failed": True}}
            run_config = {**(run_config or {}), "ops": ops}
        with _user_errors_in_one_line():
            result = dg.materialize(
                everything, instance=instance, resources=defs.resources, selection=selection,
                raise_on_error=False,
                run_config={**(run_config or {}),
                            "loggers": {"console": {"config": {"log_level": log_level}}}},
            )
    except dg.DagsterError as exc:
        raise VaultError(f"cannot materialize {select!r}: {exc}") from None
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        rows = materialization.metadata.get("dagster/row_count")
        count = f"{rows.value:,} rows" if rows is not None else ""
        typer.echo(f"  materialized {materialization.asset_key.to_user_string():<22} {count}")
    checks_ok = True
    for evaluation in result.get_asset_check_evaluations():
        warning = evaluation.severity == dg.AssetCheckSeverity.WARN
        mark = "ok  " if evaluation.passed else "WARN" if warning else "FAIL"
        checks_ok &= evaluation.passed or (warning and not strict)
        typer.echo(f"  check {mark} {evaluation.check_name}: {evaluation.description or ''}")
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure and event.step_failure_data:
                message = _failure_line(event.step_failure_data.error)
                typer.secho(f"  step {event.step_key} failed: {message}",
                            fg=typer.colors.RED, err=True)
    return result.success and checks_ok


def _root_cause(error):
    """The innermost error of a step failure (the user's VaultError, not Dagster's wrapper)."""
    while error is not None and error.cause is not None:
        error = error.cause
    return error


USER_ERRORS = {"VaultError", "RawFormatError"}


def _user_error(error) -> str | None:
    """The message of a VaultError at the root of a failure, else None."""
    root = _root_cause(error)
    if root is None or root.cls_name not in USER_ERRORS:
        return None
    return root.message.strip().split(": ", 1)[-1]


def _failure_line(error) -> str:
    """One line for a step failure: a user error's message, else the innermost error."""
    root = _root_cause(error)
    return _user_error(error) or (root.message.strip().splitlines()[0] if root else "")


def _shorten_user_errors(record: logging.LogRecord) -> bool:
    """Cut a step or run failure caused by a VaultError to its first line (no stack)."""
    event = getattr(record, "dagster_meta", {}).get("dagster_event")
    error = getattr(getattr(event, "event_specific_data", None), "error", None)
    if error is not None and _user_error(error) is not None:
        record.msg = str(record.msg).split("\n", 1)[0]
        record.args = ()
    return True


class _OneLineLogger(logging.Logger):
    """Dagster's console logger, without the stack trace of a user error."""

    def __init__(self, name: str, level: int | str = logging.NOTSET) -> None:
        super().__init__(name, level)
        self.addFilter(_shorten_user_errors)


@contextlib.contextmanager
def _user_errors_in_one_line() -> Iterator[None]:
    """Dagster builds its console logger from the logging module's logger class."""
    previous = logging.getLoggerClass()
    logging.setLoggerClass(_OneLineLogger)
    try:
        yield
    finally:
        logging.setLoggerClass(previous)


def _resolve_selection(defs, select: str):
    """Parse a selection and widen it to whole multi-assets (`papers` brings
    `papers_rejected`, which the same step writes)."""
    import dagster as dg

    graph = defs.resolve_asset_graph()
    try:
        keys = dg.AssetSelection.from_string(select).resolve(graph)
    except dg.DagsterInvalidSubsetError:
        known = ", ".join(sorted(k.to_user_string() for k in graph.get_all_asset_keys()))
        raise VaultError(f"no asset matches {select!r}; known assets: {known}") from None
    except Exception as exc:  # noqa: BLE001 - selection syntax errors come in many types
        raise VaultError(f"cannot parse selection {select!r}: {exc}") from None
    if not keys:
        raise VaultError(f"selection {select!r} matches no asset")
    widened = set(keys)
    for definition in defs.assets:
        if set(definition.keys) & keys:
            widened |= set(definition.keys)
    return dg.AssetSelection.assets(*widened)


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
        "--strict", help="Exit 1 when a warning-level check fails too.")] = False,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Convert again every document whose last try timed out, "
        "crashed or failed (they are retried on their own up to `max_tries`).")] = False,
    wait: Annotated[float, typer.Option(
        "--wait", metavar="SECONDS", help="Wait this long for another run on the vault to "
        "finish (default: refuse at once).")] = 0,
) -> None:
    """Materialize assets in-process, recorded in the vault's Dagster instance (one run at a
    time per vault)."""
    try:
        level = "DEBUG" if verbose else "WARNING" if quiet else "INFO"
        paths = _paths(home)
        with vault_lock(paths, wait, "vault materialize"):
            ok = _materialize(paths, select, level, _run_config(config), strict, retry_failed)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    if not ok:
        raise _fail("the run failed or a check did not pass (see above)")


def _run_config(file: Path | None) -> dict | None:
    """A run config file (YAML, of which JSON is a subset); a clear error when unreadable."""
    if file is None:
        return None
    import yaml

    try:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise VaultError(f"cannot read run config {file}: {exc}") from None
    if not isinstance(loaded, dict):
        raise VaultError(f"run config {file} is not a mapping (ops: {{...}})")
    return loaded


def _print_relation(relation, fmt: str, limit: int) -> None:
    frame = relation.pl()
    if fmt == "table":
        import polars as pl

        with pl.Config(tbl_rows=limit, tbl_cols=-1, fmt_str_lengths=60,
                       tbl_hide_dataframe_shape=False):
            typer.echo(frame)
    elif fmt == "json":
        typer.echo(json.dumps(frame.to_dicts(), default=str, ensure_ascii=False))
    elif fmt == "jsonl":
        for row in frame.iter_rows(named=True):
            typer.echo(json.dumps(row, default=str, ensure_ascii=False))
    else:
        writer = csv.writer(sys.stdout)
        writer.writerow(frame.columns)
        for row in frame.iter_rows():
            writer.writerow([json.dumps(v, default=str) if isinstance(v, list) else v
                             for v in row])


@app.command()
def sql(
    statement: Annotated[str, typer.Argument(help='A DuckDB query, e.g. "SELECT count(*) '
                                             'FROM papers".')],
    fmt: Annotated[str, typer.Option("--format", "-f",
                                     help="table, csv, json (an array) or jsonl.")] = "table",
    limit: Annotated[int, typer.Option(help="Rows shown by the table format.")] = 50,
    home: HomeOption = None,
) -> None:
    """Query every table of the vault with DuckDB (each table is a view by its name)."""
    if fmt not in {"table", "csv", "json", "jsonl"}:
        raise _fail(f"unknown format {fmt!r} (table, csv, json, jsonl)")
    try:
        _print_relation(query(_vault(home), statement), fmt, limit)
    except VaultError as exc:
        raise _fail(str(exc)) from None


def _last_materializations(paths: VaultPaths, names: list[str]) -> dict[str, str]:
    from dagster import AssetKey

    instance = _instance(paths)
    found = {}
    for name in names:
        event = instance.get_latest_materialization_event(AssetKey(name))
        if event is not None:
            when = datetime.fromtimestamp(event.timestamp, UTC)
            found[name] = when.strftime("%Y-%m-%d %H:%M:%S UTC")
    return found


@app.command()
def status(home: HomeOption = None) -> None:
    """List the tables of the vault: rows, size, last materialization."""
    paths = _vault(home)
    files = table_files(paths)
    zone = RawZone(paths).files(check=False)  # `vault verify` checks them
    typer.echo(f"vault at {paths.home}")
    typer.echo(f"raw zone: {len(zone)} file(s), {sum(f.size_bytes for f in zone):,} bytes")
    if not files:
        typer.echo("no tables yet: run `vault demo`, or `vault import` then `vault materialize`")
        return
    last = _last_materializations(paths, list(files))
    typer.echo(f"{'table':<24}{'rows':>12}{'bytes':>14}  last materialization")
    for name, file in files.items():
        rows = paths.store.rows(name)
        when = last.get(name, "(written outside Dagster)")
        typer.echo(f"{name:<24}{rows:>12,}{file.stat().st_size:>14,}  {when}")


@eval_app.command("report")
def eval_report(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Evaluation run id.")],
    home: HomeOption = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Markdown file to write (default "
        "`$VAULT_HOME/evalruns/<RUN>.md`).")] = None,
) -> None:
    """Write the Markdown report of an evaluation run: the studies' tables, the human noise
    ceiling, calls and tokens."""
    from .evalruns.report import write_report

    try:
        target = write_report(_vault(home), run_id, out)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"report of run {run_id} written to {target}")


@app.command()
def verify(home: HomeOption = None) -> None:
    """Check every raw file against its sha256: missing, truncated or altered files are
    listed (restore them with `vault import` of the originals); exit 1 if any."""
    zone = RawZone(_vault(home))
    records = zone.files(check=False)
    problems = zone.verify(records, full=True)
    for problem in problems:
        typer.secho(f"  ! {problem}", fg=typer.colors.YELLOW, err=True)
    if problems:
        raise _fail(f"{len(problems)} of {len(records)} raw file(s) damaged: restore them "
                    "with `vault import` of the original files")
    typer.echo(f"raw zone: all {len(records)} file(s) match their sha256")


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
    home: HomeOption = None,
) -> None:
    """Search the vault's index; one JSON object per result line, best first."""
    from .index.papers import search_papers
    from .index.search import SearchFilters, parse_date, search_vault

    try:
        filters = SearchFilters(view=view, before=parse_date(before, "--before"),
                                same_field=same_field, other_fields=other_fields)
        hits = (search_papers(_vault(home), text, k=k, filters=filters, mode=mode,
                              other_views=other_views) if by_paper else
                search_vault(_vault(home), text, k=k, filters=filters, mode=mode))
    except VaultError as exc:
        raise _fail(str(exc)) from None
    for hit in hits:
        typer.echo(json.dumps(hit.as_dict(), default=str, ensure_ascii=False))
    if not hits:
        typer.secho("no result: nothing in the index matches these filters", err=True)


@app.command()
def export(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the datasets into.")],
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
    from .datasets.export import export_datasets
    from .datasets.manifest import verify_export

    if check:
        problems = verify_export(out_dir)
        for problem in problems:
            typer.secho(f"  ! {problem}", fg=typer.colors.YELLOW, err=True)
        if problems:
            raise _fail(f"{out_dir}: {len(problems)} problem(s) against its manifest")
        typer.echo(f"{out_dir}: every file matches manifest.json")
        return
    try:
        report = export_datasets(_paths(home), out_dir, overwrite=overwrite,
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
    from .datasets.rewards import as_dict, score_file

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
DEMO_RUN_CONFIG = {"ops": {"splits": {"config": {"cutoff": DEMO_CUTOFF}}}}


def _record_demo_cutoff(paths: VaultPaths) -> None:
    """A new vault's `vault.toml` keeps the demo's cutoff, so that later runs (a Semantic
    Scholar harvest, a materialization) use the same one."""
    file = paths.home / CONFIG_FILE
    if not file.exists():
        file.write_text(f"[splits]\ncutoff = {DEMO_CUTOFF}  # the bundled sample ends in 2025\n")


def sample_dir() -> Path:
    """The bundled sample's raw files (their origins: sample/ATTRIBUTION.md)."""
    return Path(str(resources.files("vault_pipeline") / "sample" / "raw"))


@app.command()
def demo(home: HomeOption = None) -> None:
    """Import the bundled sample, materialize the whole asset graph, print a summary."""
    paths = _paths(home)
    typer.echo(f"vault at {paths.home}")
    try:
        _import(paths, [sample_dir()])
        typer.echo(f"cutoff for the sample: {DEMO_CUTOFF} (the default is 2026-01-01)")
        _record_demo_cutoff(paths)
        with vault_lock(paths, 0, "vault demo"):
            ok = _materialize(paths, None, run_config=DEMO_RUN_CONFIG)
        typer.echo("\nlatest papers in the vault:")
        _print_relation(query(paths, "SELECT arxiv_id, latest_version AS v, published, "
                                     "primary_category, title FROM papers "
                                     "ORDER BY published DESC LIMIT 5"), "table", 5)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    status(home=paths.home)
    typer.echo('\nnext: vault sql "SELECT primary_category, count(*) FROM papers GROUP BY 1"')
    typer.echo("      vault dev   (the Dagster UI on http://127.0.0.1:3000)")
    typer.echo('      vault search "test generation for web applications" --k 5')
    typer.echo(f"datasets exported to {paths.home / 'exports' / 'latest'} "
               "(manifest.json, README.md data card)")
    if not ok:
        raise _fail("the demo run failed or a check did not pass (see above)")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def dev(ctx: typer.Context, home: HomeOption = None) -> None:
    """Start the Dagster UI and daemon (`dagster dev`) on this vault; extra args pass through."""
    paths = _paths(home)
    _instance(paths)
    executable = shutil.which("dagster")
    if executable is None:
        raise _fail("the `dagster` command is not installed in this environment")
    env = os.environ | {"VAULT_HOME": str(paths.home)}
    command = [executable, "dev", "-m", "vault_pipeline.definitions", *ctx.args]
    raise typer.Exit(subprocess.call(command, env=env))
