"""`vault`: the command line. It materializes the very assets the Dagster UI shows (same
`Definitions`, same instance under the data root), so CLI and UI runs are interchangeable."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from vault_pipeline.cli.harvest import harvest_app
from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.lazy import lazy_import
from vault_pipeline.pipeline.settings import CONFIG_FILE
from vault_pipeline.sources import HARVEST_GROUP
from vault_pipeline.store.paths import VaultPaths, is_url

# Loaded on first use, so `vault --help` starts in a fraction of a second.
lock = lazy_import("vault_pipeline.store.lock")
raw_zone = lazy_import("vault_pipeline.raw.zone")
sql_module = lazy_import("vault_pipeline.store.sql")
sql_output = lazy_import("vault_pipeline.store.sql_output")
fingerprints = lazy_import("vault_pipeline.freshness.fingerprints")
settings_module = lazy_import("vault_pipeline.pipeline.settings")
preflight = lazy_import("vault_pipeline.cli.preflight")
repair = lazy_import("vault_pipeline.store.repair")

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

HomeOption = Annotated[  # a str: a Path would fold the `//` of an `s3://…` root
    str | None,
    typer.Option("--home", envvar="VAULT_HOME", help="Data root (default ./vault_home)."),
]
AsOfOption = Annotated[str | None, typer.Option(
    "--as-of", metavar="YYYY-MM-DD", help="A session's cutoff: only papers whose held version "
    "was created before this day.")]
TargetOption = Annotated[str | None, typer.Option(
    help="A session's target paper: never shown, nor its near-duplicates.")]


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


# Groups run only when selected: network harvests, and evaluation runs (they need an LLM).
LIVE = (HARVEST_GROUP,)  # groups always due: what a service holds changes without a trace
ON_REQUEST = (HARVEST_GROUP, "evaluation_runs")


def _write_catalog(paths: VaultPaths) -> None:
    """Refresh vault.duckdb; a tool holding it locked only costs a warning."""
    try:
        sql_module.write_catalog(paths)
    except Exception as exc:  # noqa: BLE001 - duckdb and OS errors alike: the run succeeded
        typer.secho(f"  warning: vault.duckdb not refreshed: {exc}", fg=typer.colors.YELLOW,
                    err=True)


def _nothing_to_do(paths: VaultPaths, count: int) -> bool:
    if not (paths.home / sql_module.CATALOG_FILE).exists():
        _write_catalog(paths)
    typer.echo(f"  nothing to do: {count} asset(s) up to date (no input, setting or code "
               "changed since they were built; --force runs them anyway)")
    return True


def _graph_nodes(defs) -> dict[str, fingerprints.Node]:
    """The asset graph as the fingerprint check keeps it (no Dagster needed to read it)."""
    graph = defs.resolve_asset_graph()
    op_of = {k.to_user_string(): a.node_def.name for a in defs.assets for k in a.keys}
    from vault_pipeline.pipeline.stage import DECLARED

    nodes = {}
    for key in graph.get_all_asset_keys():
        name, node = key.to_user_string(), graph.get(key)
        op = op_of.get(name, name)
        stage = DECLARED.get(op)
        nodes[name] = fingerprints.Node(op, tuple(p.to_user_string() for p in node.parent_keys),
                                        node.group_name, stage and stage.sections)
    return nodes


def _config_for(run_config: dict | None, due: set[str],
                nodes: dict[str, fingerprints.Node]) -> dict | None:
    """The run config without the ops of skipped assets (Dagster refuses config for ops
    that are not in the run); their checks' ops are named `<asset>_<check>`."""
    if not run_config or "ops" not in run_config:
        return run_config
    ops = {nodes[a].op for a in due}
    kept = {name: value for name, value in run_config["ops"].items()
            if name in ops or any(name.startswith(f"{a}_") for a in due)}
    return {**run_config, "ops": kept}


def _materialize(paths: VaultPaths, select: str | None, log_level: str = "INFO",
                 run_config: dict | None = None, strict: bool = False,
                 retry_failed: bool = False, force: bool = False) -> bool:
    """Run the selection's assets whose inputs changed (all of them with ``force``); True
    when it succeeded and no error-level check failed (with ``strict``, no warning-level
    check either)."""
    force = force or retry_failed or strict  # --strict judges checks: they must run
    for found in repair.quarantine_damaged(paths, fingerprints.FOLDER_OUTPUTS.values()):
        typer.secho(f"  repaired: {found}", fg=typer.colors.YELLOW, err=True)
    if select is None and not force:  # the common refresh: decided without Dagster
        state = fingerprints.load(paths)
        default = [a for a, node in state.graph.items() if node.group not in ON_REQUEST]
        if state.sections:  # known from the last run: a new `[splitz]` is refused here too
            settings_module.check_sections(paths.home, state.sections)
        if default and not fingerprints.stale(paths, state, default, run_config, live=LIVE):
            return _nothing_to_do(paths, len(default))
    import dagster as dg

    # Beta notices about Dagster's own API (partitions, selections) are not the user's to act on.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    from vault_pipeline.definitions import build_defs

    instance = _instance(paths)
    os.environ["VAULT_HOME"] = paths.root  # the object-store URL when the root is one
    defs = build_defs(paths)
    everything = [*defs.assets, *defs.asset_checks]  # type: ignore[misc]
    preflight.check_settings(paths)
    preflight.check_run_config(paths, run_config, _op_configs(everything))
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
        nodes = _graph_nodes(defs)
        wanted = {k.to_user_string() for k in selection.resolve(defs.resolve_asset_graph())}
        state = fingerprints.load(paths)
        state.graph = nodes
        for note in preflight.check_inputs(paths, state, wanted, ON_REQUEST):
            typer.secho(f"  note: {note}", fg=typer.colors.YELLOW, err=True)
        if not force:
            due = fingerprints.stale(paths, state, wanted, run_config, live=LIVE)
            if not due:  # keep the graph and the known sections for next time
                fingerprints.record(paths, nodes, [], run_config,
                                    known=settings_module.SECTIONS)
                return _nothing_to_do(paths, len(wanted))
            if len(due) < len(wanted):
                typer.echo(f"  {len(wanted) - len(due)} asset(s) up to date, skipped")
                selection = dg.AssetSelection.assets(*due)
                run_config = _config_for(run_config, due, nodes)
        from vault_pipeline.cli.progress import stage_bars

        taken = fingerprints.snapshot(paths)  # what the run reads: as it starts
        with _user_errors_in_one_line(), stage_bars():
            result = dg.materialize(
                everything, instance=instance, resources=defs.resources, selection=selection,
                raise_on_error=False,
                run_config={**(run_config or {}),
                            "loggers": {"console": {"config": {"log_level": log_level}}}},
            )
    except dg.DagsterError as exc:
        raise VaultError(f"cannot materialize {select!r}: {_dagster_line(exc)}") from None
    failed_checks = {e.asset_key.to_user_string() for e in result.get_asset_check_evaluations()
                     if not e.passed and e.severity == dg.AssetCheckSeverity.ERROR}
    built = [e.step_materialization_data.materialization.asset_key.to_user_string()
             for e in result.get_asset_materialization_events()]
    # an asset whose error-level check failed is run (and checked) again by the next refresh
    fingerprints.record(paths, nodes, [a for a in built if a not in failed_checks], run_config,
                        taken, known=settings_module.SECTIONS)
    fingerprints.forget(paths, failed_checks)  # its step recorded it when it ended
    _write_catalog(paths)
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


def _op_configs(definitions) -> dict:
    """Each op of the assets and checks, with its config type (for the run config check)."""
    schemas = {}
    for definition in definitions:
        schema = definition.node_def.config_schema
        schemas[definition.node_def.name] = schema.config_type if schema else None
    return schemas


def _dagster_line(exc: Exception) -> str:
    """One line of a Dagster error (a config error without its dump of the expected type)."""
    errors = getattr(exc, "errors", None)
    text = str(errors[0].message) if errors else str(exc)
    return " ".join(text.split(" Expected: ", 1)[0].split())


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


def _no_match(graph, select: str) -> str:
    """Which names of a selection are unknown, with the closest assets or groups."""
    assets, groups, hints = _unknown_names(graph, select)
    detail = "; ".join(hints) or f"known assets: {', '.join(assets)}"
    return f"no asset matches {select!r} ({detail}); groups: {', '.join(groups)}"


def _unknown_names(graph, select: str) -> tuple[list[str], list[str], list[str]]:
    """(assets, groups, a hint per unknown name of the selection)."""
    import difflib

    assets = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    groups = sorted({graph.get(k).group_name for k in graph.get_all_asset_keys()} - {None})
    hints = []
    for token in re.findall(r"(group:)?([A-Za-z_][\w/]*)", select):
        is_group, name = token
        known = groups if is_group else assets
        if name in known or name in {"and", "or", "not", "key", "group", "tag", "kind"}:
            continue
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        what = "group" if is_group else "asset"
        hints.append(f"{what} {name!r}: did you mean {' or '.join(close)}?" if close
                     else f"no {what} {name!r}")
    return assets, groups, hints


def _resolve_selection(defs, select: str):
    """Parse a selection and widen it to whole multi-assets (`papers` brings
    `papers_rejected`, which the same step writes)."""
    import dagster as dg

    graph = defs.resolve_asset_graph()
    try:
        keys = dg.AssetSelection.from_string(select).resolve(graph)
    except dg.DagsterInvalidSubsetError:
        raise VaultError(_no_match(graph, select)) from None
    except Exception as exc:  # noqa: BLE001 - selection syntax errors come in many types
        if _unknown_names(graph, select)[2]:
            raise VaultError(_no_match(graph, select)) from None
        raise VaultError(f"cannot parse selection {select!r}: {exc}") from None
    if not keys:
        raise VaultError(_no_match(graph, select))
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


def _run_config(file: Path | None) -> dict | None:
    """A run config file (YAML, of which JSON is a subset); a clear error when unreadable."""
    if file is None:
        return None
    import yaml

    try:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VaultError(f"cannot read run config {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise VaultError(f"cannot read run config {file}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise VaultError(f"cannot read run config {file}: {_yaml_line(exc)}") from None
    if not isinstance(loaded, dict):
        raise VaultError(f"run config {file} is not a mapping (ops: {{...}})")
    return _dates_as_text(loaded)


def _yaml_line(exc: Exception) -> str:
    """PyYAML's error in one line: the problem and where (its excerpt of the file left out)."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"invalid YAML: {problem}{where}"


def _dates_as_text(value):
    """YAML reads `cutoff: 2025-01-01` as a date: settings take dates as text."""
    if isinstance(value, dict):
        return {k: _dates_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(v) for v in value]
    return value.isoformat() if hasattr(value, "isoformat") else value


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


def _check_results(paths: VaultPaths) -> list[dict]:
    """The latest result of every asset check recorded in the vault's instance."""
    import dagster as dg
    from dagster._core.event_api import EventRecordsFilter

    records = _instance(paths).get_event_records(
        EventRecordsFilter(event_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION),
        limit=2000, ascending=False)
    latest: dict[str, dict] = {}
    for record in records:
        data = record.event_log_entry.dagster_event.event_specific_data
        key = f"{data.asset_key.to_user_string()}:{data.check_name}"
        latest.setdefault(key, {
            "asset": data.asset_key.to_user_string(), "check": data.check_name,
            "passed": data.passed, "severity": data.severity.value,
            "description": data.description,
            "at": datetime.fromtimestamp(record.timestamp, UTC).isoformat()})
    return sorted(latest.values(), key=lambda c: (c["asset"], c["check"]))


def _status_json(paths: VaultPaths, files: list[str], zone_files: list) -> dict:
    """Everything `vault status` knows, for scripts and dashboards."""
    from vault_pipeline.index.lance_index import index_metadata_of

    def table(name: str) -> dict:
        try:
            rows = paths.store.rows(name)
        except VaultError as exc:
            return {"name": name, "damaged": str(exc)}
        return {"name": name, "rows": rows, "bytes": paths.store.size(name),
                "last_materialization": last.get(name)}

    def index() -> dict | None:
        try:
            return index_metadata_of(paths) or None
        except VaultError as exc:
            return {"damaged": str(exc)}

    last = _last_materializations(paths, list(files))
    state = fingerprints.load(paths)
    default = [a for a, node in state.graph.items() if node.group != HARVEST_GROUP]
    exports = sorted((paths.home / "exports").glob("*/manifest.json"))
    return {
        "home": str(paths.home),
        "raw_zone": {"files": len(zone_files), "bytes": sum(f.size_bytes for f in zone_files)},
        "tables": [table(name) for name in files],
        "index": index(),
        "exports": [{"path": str(m.parent), "manifest": str(m)} for m in exports],
        "stale_assets": sorted(fingerprints.stale(paths, state, default, None,
                                                  recorded_settings=True, live=LIVE))
        if default else None,
        "checks": _check_results(paths),
        "duckdb": str(paths.home / sql_module.CATALOG_FILE)
        if (paths.home / sql_module.CATALOG_FILE).exists() else None,
    }


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
    if problems:
        raise _fail(f"{len(problems)} of {len(records)} raw file(s) damaged: restore them "
                    "with `vault import` of the original files")
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
    home: HomeOption = None,
) -> None:
    """Serve the vault: a JSON API (/api/search, /api/papers, /api/tables, /api/sql), the
    agent tools (/api/tools/...: sessions, calls, batches) and a web page to search and
    browse papers and their views; `vault search` uses it. With --as-of (and --target)
    every answer is cut there (requests may narrow it, never widen it)."""
    from vault_pipeline.access.serve import run

    try:
        run(_vault(home).home, host, port, as_of, target)
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
        session = Toolbox(paths).session(as_of, target, session_id)
    except VaultError as exc:
        raise _fail(str(exc)) from None
    serve_stdio(session, on_close=lambda: log.append(paths.store, session.calls))
