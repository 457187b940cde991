"""What a `vault materialize` must run: the asset graph as the fingerprints keep it, the
selection resolved (with suggestions for unknown names), the run config of the assets due, and
the no-op answer when nothing changed."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.lazy import lazy_import
from vault_pipeline.sources import HARVEST_GROUP
from vault_pipeline.store.paths import VaultPaths

fingerprints = lazy_import("vault_pipeline.freshness.fingerprints")
sql_module = lazy_import("vault_pipeline.store.sql")


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
    """The asset graph as the fingerprint check keeps it (no Dagster needed to read it): a
    declared stage's outputs as the stage declares them, any other asset as Dagster has it."""
    graph = defs.resolve_asset_graph()
    op_of = {k.to_user_string(): a.node_def.name for a in defs.assets for k in a.keys}
    from vault_pipeline.pipeline.stage import DECLARED

    nodes = {}
    for key in graph.get_all_asset_keys():
        name, node = key.to_user_string(), graph.get(key)
        op = op_of.get(name, name)
        stage = DECLARED.get(op)
        nodes[name] = fingerprints.Node.of(stage) if stage else fingerprints.Node(
            op, tuple(sorted(p.to_user_string() for p in node.parent_keys)), node.group_name)
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
