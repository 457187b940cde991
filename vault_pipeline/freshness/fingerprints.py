"""Fingerprints of what each asset was last built from, so a refresh with nothing new costs
nothing: an asset whose code, settings and inputs are the same as at its last successful
materialization, and whose outputs are still there untouched, is skipped, and so is the run
when every selected asset is.

An asset's inputs are the raw zone (for `raw_files` and the stages that read it: every
file's name, size and mtime), its upstream tables (size and mtime of each file; on an
object-store root the object's URL, size and ETag, asked through the table store) or, for
outputs that are folders (the index, the export), the upstream's own fingerprint; its
settings are every layer of the sections its stage reads (its own and those it ``uses``):
their tables of `vault.toml` (or their own files), the `VAULT_*` variables and its op's run
config (which carries the command's options); its code is a hash of the pipeline's source
files.

What a run read is taken when it starts (:class:`Snapshot`): the raw zone, the settings
files and the environment as they were then, so a file imported or a setting edited while
the run goes is seen by the next run, never counted as built. The asset graph is kept with
the fingerprints, so the check needs no Dagster import. A fingerprint older than a day counts
as stale, so the daily refresh still runs the raw zone's periodic full checks."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import fsspec
from filelock import FileLock
from fsspec import AbstractFileSystem
from fsspec.implementations.local import LocalFileSystem

from vault_pipeline.freshness.code_version import code_version
from vault_pipeline.pipeline.settings import file_layers
from vault_pipeline.store.paths import VaultPaths

if TYPE_CHECKING:
    from vault_pipeline.pipeline.stage import Stage

STATE_FILE = "fingerprints.json"
MAX_AGE_S = 24 * 3600
RAW_ASSET = "raw_files"
FOLDER_OUTPUTS = {"index": "index/views_index.lance", "dataset_export": "exports/latest",
                  "integrity_report": "integrity"}
# On an object-store root: what marks a folder output as there (the export's commit mark is
# its manifest); the integrity report stays in the local cache.
REMOTE_MARKS = {"index": "index/views_index.lance",
                "dataset_export": "exports/latest/manifest.json"}
IGNORED_ENV = {"VAULT_HOME", "VAULT_MODEL_CACHE"}


@dataclass(frozen=True)
class Node:
    """One asset as the check sees it: the op that writes it, its upstream assets, group,
    and the settings sections its run reads (its stage's own and those it ``uses``; None
    when not declared: every section then counts)."""

    op: str
    deps: tuple[str, ...]
    group: str | None
    sections: tuple[str, ...] | None = None

    @classmethod
    def of(cls, stage: Stage) -> Node:
        """The node of each output of a declared stage: the one builder, so that a run
        launched from the UI records the graph a `vault materialize` records."""
        return cls(stage.name, tuple(sorted(stage.inputs)), stage.group, stage.sections)


@dataclass
class State:
    graph: dict[str, Node] = field(default_factory=dict)
    built: dict[str, dict] = field(default_factory=dict)  # asset -> {inputs, stamp, at}
    sections: list[str] = field(default_factory=list)  # every settings section known


@dataclass(frozen=True)
class Snapshot:
    """The inputs that do not come from tables, as a run found them when it started: the
    raw zone's stamp, the digest of the `VAULT_*` variables and of each section's file
    layer."""

    raw: str
    env: str
    sections: dict[str, str]


def snapshot(paths: VaultPaths) -> Snapshot:
    """The raw zone, the environment and the settings files, now (a bad settings file is a
    one-line VaultError)."""
    layers = file_layers(paths.home)
    return Snapshot(_raw_stamp(paths), _env_digest(),
                    {section: _digest(values) for section, values in layers.items()})


def state_file(paths: VaultPaths) -> Path:
    return paths.home / "state" / STATE_FILE


def load(paths: VaultPaths) -> State:
    """The recorded fingerprints; empty when none (a first run, or an unreadable file)."""
    try:
        raw = json.loads(state_file(paths).read_text())
        graph = {k: Node(v["op"], tuple(v["deps"]), v.get("group"),
                         None if v.get("sections") is None else tuple(v["sections"]))
                 for k, v in raw["graph"].items()}
        return State(graph, raw["built"], list(raw.get("sections", [])))
    except (OSError, ValueError, KeyError, TypeError):
        return State()


def save(paths: VaultPaths, state: State) -> None:
    from vault_pipeline.store.atomic import atomic_write_bytes

    target = state_file(paths)
    target.parent.mkdir(parents=True, exist_ok=True)
    body = {"graph": {k: {"op": n.op, "deps": list(n.deps), "group": n.group,
                          "sections": None if n.sections is None else list(n.sections)}
                      for k, n in state.graph.items()}, "built": state.built,
            "sections": sorted(state.sections)}
    atomic_write_bytes(target, json.dumps(body, indent=1, sort_keys=True).encode())


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _raw_stamp(paths: VaultPaths) -> str:
    """The raw zone's files; its bookkeeping (dot files and folders: when each file was last
    verified, imports in progress) is not data, and an import of files already there
    rewrites it."""
    if paths.remote:  # the zone is in the bucket (its local folder is only a cache)
        from vault_pipeline.raw.zone import RawZone

        return RawZone(paths).fingerprint()
    stamps = []
    for folder, dirs, files in os.walk(paths.raw):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            stat = os.stat(os.path.join(folder, name))
            stamps.append((os.path.join(folder, name), stat.st_size, stat.st_mtime_ns))
    return _digest(sorted(stamps))


def _output(paths: VaultPaths, asset: str) -> tuple[AbstractFileSystem, str]:
    """Where ``asset``'s output lives, on the store's filesystem: a table through the table
    store, a folder output under the root (the object store, for those kept there)."""
    folder = FOLDER_OUTPUTS.get(asset)
    if folder is None:
        store = paths.store
        return store.fs, store.path(asset)
    if paths.remote and asset in REMOTE_MARKS:
        return fsspec.core.url_to_fs(f"{paths.remote}/{REMOTE_MARKS[asset]}",
                                     use_listings_cache=False)
    return LocalFileSystem(), str(paths.home / folder)


def _version(info: dict) -> str:
    """An object's version as the store reports it: its ETag and modification time (a
    rewrite of the same bytes counts as a change, as a local file's new mtime does)."""
    keys = ("ETag", "etag", "LastModified", "last_modified", "mtime", "updated", "created")
    return ":".join(str(info[key]) for key in keys if info.get(key) is not None)


def output_stamp(paths: VaultPaths, asset: str, state: State) -> str | None:
    """What downstream assets see of ``asset``: its table's size and mtime (on an object
    store: its URL, size and ETag), or for a folder output the fingerprint it was built
    from; None when the output is missing."""
    fs, output = _output(paths, asset)
    if asset in FOLDER_OUTPUTS:
        return state.built.get(asset, {}).get("inputs") if fs.exists(output) else None
    if isinstance(fs, LocalFileSystem):
        try:
            stat = os.stat(output)
        except FileNotFoundError:
            return None
        return f"{stat.st_size}:{stat.st_mtime_ns}"
    try:
        info = fs.info(output)
    except FileNotFoundError:
        return None
    return f"{fs.unstrip_protocol(output)}:{info.get('size')}:{_version(info)}"


def _env_digest() -> str:
    return _digest({k: _digest(v) for k, v in os.environ.items()
                    if k.startswith("VAULT_") and k not in IGNORED_ENV})


class Fingerprinter:
    """Fingerprints of one vault under one run config, each computed once; ``taken``: the
    run's snapshot (default: taken when first needed)."""

    def __init__(self, paths: VaultPaths, state: State, run_config: dict | None,
                 recorded_settings: bool = False, taken: Snapshot | None = None) -> None:
        self.paths, self.state, self.run_config = paths, state, run_config
        self.recorded_settings = recorded_settings  # judge by inputs and code alone
        self._code = code_version()
        self._snapshot = taken

    @property
    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = snapshot(self.paths)
        return self._snapshot

    def inputs(self, asset: str) -> str:
        node = self.state.graph[asset]
        # sorted: Dagster gives the upstream keys as a set, in another order in each process
        upstream: list = [(dep, output_stamp(self.paths, dep, self.state))
                          for dep in sorted(node.deps)]
        if asset == RAW_ASSET or RAW_ASSET in node.deps:  # stages that read the zone itself
            upstream.append(self.snapshot.raw)
        return _digest(self._code, self.settings(asset), upstream)

    def settings(self, asset: str) -> str:
        """Every layer of the sections ``asset``'s run reads (all of them when its node
        declares none): their file layer, the variables and its op's run config."""
        built = self.state.built.get(asset, {})
        if self.recorded_settings and built.get("settings"):
            return built["settings"]
        read = self.state.graph[asset].sections
        files = self.snapshot.sections
        layers = files if read is None else {s: files.get(s) for s in sorted(read)}
        ops = (self.run_config or {}).get("ops", {})
        return _digest(ops.get(self.state.graph[asset].op), self.snapshot.env, layers)

    def fresh(self, asset: str, now: float) -> bool:
        """Built from exactly these inputs less than a day ago, outputs untouched since."""
        built = self.state.built.get(asset)
        return (built is not None and now - built.get("at", 0) < MAX_AGE_S
                and built.get("stamp") == output_stamp(self.paths, asset, self.state)
                and built.get("stamp") is not None and built.get("inputs") == self.inputs(asset))


def stale(paths: VaultPaths, state: State, selected: Iterable[str],
          run_config: dict | None, recorded_settings: bool = False,
          live: Iterable[str] = ()) -> set[str]:
    """The selected assets that must run: those not fresh, everything downstream of them in
    the selection, and the other assets their ops write (``recorded_settings``: whatever
    settings they were built with count as current, as `vault status` judges; ``live``:
    groups that are always due, since what a service holds changes without a trace here)."""
    selected = set(selected)
    if not selected <= set(state.graph):
        return selected  # assets the record does not know: run them all
    prints = Fingerprinter(paths, state, run_config, recorded_settings)
    now = time.time()
    order = _topological(state.graph, selected)
    due: set[str] = set()
    for asset in order:
        node = state.graph[asset]
        if (node.group in live or any(dep in due for dep in node.deps)
                or not prints.fresh(asset, now)):
            due.add(asset)
    ops = {state.graph[a].op for a in due}
    return {a for a in selected if state.graph[a].op in ops} | due


def _topological(graph: dict[str, Node], selected: set[str]) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()

    def visit(asset: str) -> None:
        if asset in seen:
            return
        seen.add(asset)
        for dep in graph[asset].deps:
            if dep in graph:
                visit(dep)
        if asset in selected:
            order.append(asset)

    for asset in sorted(selected):
        visit(asset)
    return order


def _locked(paths: VaultPaths) -> FileLock:
    """One writer of the record at a time (the steps of a UI run are processes of their
    own, each recording its stage)."""
    target = state_file(paths)
    target.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(target.with_name(f".{target.name}.lock"), thread_local=False)


def _remember(paths: VaultPaths, state: State, assets: Iterable[str],
              run_config: dict | None, taken: Snapshot | None = None) -> None:
    prints = Fingerprinter(paths, state, run_config, taken=taken)
    now = time.time()
    for asset in _topological(state.graph, set(assets)):
        inputs = prints.inputs(asset)
        state.built[asset] = {"inputs": inputs, "settings": prints.settings(asset), "at": now}
        state.built[asset]["stamp"] = output_stamp(paths, asset, state)  # folders: inputs


def record(paths: VaultPaths, graph: dict[str, Node], materialized: Iterable[str],
           run_config: dict | None, taken: Snapshot | None = None,
           known: Iterable[str] | None = None) -> None:
    """After a run: remember what each materialized asset was built from (``taken``: the
    snapshot of the run's start; ``known``: every settings section there is)."""
    with _locked(paths):
        state = load(paths)
        state.graph = graph
        if known is not None:
            state.sections = sorted(known)
        _remember(paths, state, materialized, run_config, taken)
        save(paths, state)


def graph_of(stages: Iterable[Stage]) -> dict[str, Node]:
    """The asset graph of declared stages: a node per output."""
    return {output.name: Node.of(stage) for stage in stages for output in stage.outputs}


def record_step(paths: VaultPaths, graph: dict[str, Node], built: Iterable[str],
                run_config: dict | None) -> None:
    """After one stage's step, in whatever run it ran (the UI, a schedule, the CLI): remember
    the asset graph and what the step's assets were built from, so that the CLI does not
    take a UI run's outputs for changes and rebuild everything downstream of them (and,
    after a first run that was stopped, still builds every asset the run never reached)."""
    with _locked(paths):
        state = load(paths)
        state.graph = {**state.graph, **graph}
        _remember(paths, state, built, run_config)
        save(paths, state)


def forget(paths: VaultPaths, assets: Iterable[str]) -> None:
    """Drop what ``assets`` were built from (an error-level check failed on them): the next
    refresh builds and checks them again."""
    assets = set(assets)
    if not assets:
        return
    with _locked(paths):
        state = load(paths)
        state.built = {k: v for k, v in state.built.items() if k not in assets}
        save(paths, state)
