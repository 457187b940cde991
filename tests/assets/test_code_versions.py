"""The UI and the CLI agree on what is stale: every asset carries the pipeline's code
version, the one the CLI's check counts, and a run launched outside the CLI (the UI, a
schedule) records what it built, so the CLI does not rebuild it or anything downstream."""

from __future__ import annotations

import shutil

import dagster as dg
from typer.testing import CliRunner

from tests.conftest import DATA
from vault_pipeline.cli.app import app
from vault_pipeline.definitions import build_defs
from vault_pipeline.freshness import fingerprints
from vault_pipeline.freshness.code_version import code_version
from vault_pipeline.store.paths import VaultPaths

runner = CliRunner()


def test_every_asset_carries_the_code_version_the_cli_counts(vault_paths) -> None:
    graph = build_defs(vault_paths).resolve_asset_graph()
    versions = {key.to_user_string(): graph.get(key).code_version
                for key in graph.get_all_asset_keys()}
    assert set(versions.values()) == {code_version()}, versions
    assert len(code_version()) == 16


def test_a_run_outside_the_cli_leaves_nothing_stale_for_it(vault_paths: VaultPaths,
                                                           tmp_path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(DATA / "atom_old_style.xml", inbox)
    assert runner.invoke(app, ["import", str(inbox)]).exit_code == 0
    defs = build_defs(vault_paths)
    selection = dg.AssetSelection.assets("raw_files", "papers").required_multi_asset_neighbors()
    with dg.DagsterInstance.from_config(str(vault_paths.dagster_home)) as instance:
        launched = dg.materialize([*defs.assets], instance=instance,  # as the UI launches it
                                  resources=defs.resources, selection=selection)
    assert launched.success
    state = fingerprints.load(vault_paths)
    assert {"raw_files", "papers", "papers_rejected"} <= set(state.built)
    assert {"views", "splits", "index"} <= set(state.graph)  # the whole graph, not the step's
    due = fingerprints.stale(vault_paths, state, state.graph, None)
    assert {"views", "splits", "index"} <= due and "papers" not in due  # never built: due
    again = runner.invoke(app, ["materialize", "--select", "papers", "-q"])
    assert again.exit_code == 0, again.output
    assert "nothing to do" in again.output, again.output
