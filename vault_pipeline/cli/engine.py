"""The Dagster run engine of the CLI: it materializes the very assets the UI shows, on the
vault's instance, running only what the plan says is due and recording what was built."""

from __future__ import annotations

import os
import warnings
from importlib import resources
from pathlib import Path

import typer

from vault_pipeline.cli.errors import _failure_line, _user_errors_in_one_line
from vault_pipeline.cli.planning import (
    LIVE,
    ON_REQUEST,
    _config_for,
    _dagster_line,
    _graph_nodes,
    _nothing_to_do,
    _op_configs,
    _resolve_selection,
    _write_catalog,
)
from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.lazy import lazy_import
from vault_pipeline.store.paths import VaultPaths

fingerprints = lazy_import("vault_pipeline.freshness.fingerprints")
preflight = lazy_import("vault_pipeline.cli.preflight")
repair = lazy_import("vault_pipeline.store.repair")
settings_module = lazy_import("vault_pipeline.pipeline.settings")


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
    settings_module.check_home(paths.home)
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
