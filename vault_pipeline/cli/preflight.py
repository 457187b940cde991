"""What `vault materialize` checks before it starts a Dagster run, so that a bad setting or an
impossible selection is one line and no run is recorded: every settings section of the vault
(unknown sections and keys refused with the closest name, every value coerced through the one
resolver, :mod:`vault_pipeline.pipeline.settings`), the run config (its ops and their keys
against the job, its values through the same resolver), and the selection's inputs (an
upstream that was never built would be read as empty and pass every check)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vault_pipeline.errors import VaultError
from vault_pipeline.freshness import fingerprints
from vault_pipeline.pipeline import settings as config
from vault_pipeline.pipeline.stage import DECLARED
from vault_pipeline.store.paths import VaultPaths

RUN_CONFIG_KEYS = {"ops", "resources", "loggers", "execution"}


def _fields(config_type: Any) -> dict[str, Any] | None:
    """A Dagster config type's fields (None: not a fixed shape, anything goes)."""
    fields = getattr(config_type, "fields", None)
    return fields if isinstance(fields, dict) else None


def _keys(values: Mapping[str, Any], config_type: Any, where: str) -> None:
    fields = _fields(config_type)
    if fields is None:
        return
    for key, value in values.items():
        if key not in fields:
            known = ", ".join(sorted(fields)) or "none"
            raise VaultError(f"unknown key {key!r} in the run config at {where}"
                             f"{config.suggest(key, set(fields))} (known: {known})")
        if isinstance(value, Mapping):
            _keys(value, fields[key].config_type, f"{where}.{key}")


def check_run_config(paths: VaultPaths, run_config: Mapping[str, Any] | None,
                     schemas: Mapping[str, Any]) -> None:
    """The run config's ops against the job (``schemas``: each op's config type), each op's
    keys against its config and the values of a stage's settings through the resolver."""
    if not run_config:
        return
    extra = sorted(set(run_config) - RUN_CONFIG_KEYS)
    if extra:
        raise VaultError(f"unknown key {extra[0]!r} in the run config"
                         f"{config.suggest(extra[0], RUN_CONFIG_KEYS)} (known: "
                         f"{', '.join(sorted(RUN_CONFIG_KEYS))})")
    ops = run_config.get("ops") or {}
    if not isinstance(ops, Mapping):
        raise VaultError("the run config's `ops` is not a mapping (ops: {<asset>: {config: "
                         "{...}}})")
    for op, entry in ops.items():
        if op not in schemas:
            raise VaultError(f"the run config names op {op!r}, which is not an asset or a "
                             f"check{config.suggest(op, set(schemas))}")
        if not isinstance(entry, Mapping) or set(entry) - {"config"}:
            raise VaultError(f"the run config of {op!r} must be {{config: {{...}}}}")
        values = entry.get("config") or {}
        if not isinstance(values, Mapping):
            raise VaultError(f"the run config of {op!r}: `config` is not a mapping")
        _keys(values, schemas[op], f"ops.{op}.config")
        stage = DECLARED.get(op)
        if stage is not None:
            fields = config.settings_fields(stage.settings)
            stage.resolve(home=paths.home,
                          run_config={k: v for k, v in values.items() if k in fields})


def check_inputs(paths: VaultPaths, state: fingerprints.State, selected: Iterable[str],
                 on_request: Iterable[str]) -> list[str]:
    """Refuse a selection in which an asset has nothing to read: each of its upstream
    assets outside the selection is missing (never built, or quarantined), and it does not
    read the raw zone itself; it would build empty tables and pass every check. An asset
    missing only some of its inputs runs (stages read an absent table as "not known"): one
    note each, returned, says which."""
    selected = set(selected)
    skipped = set(on_request)
    notes = []
    for asset in sorted(selected):
        deps = state.graph[asset].deps
        if fingerprints.RAW_ASSET in deps:
            continue
        outside = [d for d in sorted(deps) if d not in selected and d in state.graph
                   and state.graph[d].group not in skipped]
        missing = [d for d in outside if fingerprints.output_stamp(paths, d, state) is None]
        if not missing:
            continue
        names, asset = ", ".join(missing), state.graph[asset].op  # the stage, as users know it
        if len(missing) == len(outside) and not set(deps) & selected:
            raise VaultError(
                f"{asset} has nothing to read: {names} {'was' if len(missing) == 1 else 'were'}"
                " never built (or quarantined). Build them too: `vault materialize --select "
                f"'*{asset}'` builds everything upstream, plain `vault materialize` the vault")
        notes.append(f"{asset} runs without {names} (never built)")
    return sorted(set(notes))
