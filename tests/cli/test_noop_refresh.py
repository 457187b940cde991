"""A refresh with nothing new does no stage work (no Dagster run at all), and anything new
still flows through: new raw files, a table changed under the pipeline, a new setting."""

from __future__ import annotations

import json
import shutil
import time

import duckdb
from dagster import DagsterInstance
from typer.testing import CliRunner

from tests.conftest import DATA
from vault_pipeline.cli.app import app
from vault_pipeline.store.paths import VaultPaths

runner = CliRunner()


def vault(*args: str):
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result


def runs(paths: VaultPaths) -> int:
    with DagsterInstance.from_config(str(paths.dagster_home)) as instance:
        return len(instance.get_run_records())


def test_second_materialize_does_no_stage_work(vault_paths: VaultPaths, tmp_path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(DATA / "atom_old_style.xml", inbox)
    assert vault("import", str(inbox)).exit_code == 0
    first = vault("materialize", "-q")
    assert first.exit_code == 0, first.output
    before = runs(vault_paths)
    table = vault_paths.table("papers").stat().st_mtime_ns

    started = time.perf_counter()
    again = vault("materialize")
    took = time.perf_counter() - started
    assert again.exit_code == 0 and "nothing to do" in again.output
    assert took < 3, took
    assert runs(vault_paths) == before  # no Dagster run was even started
    assert vault_paths.table("papers").stat().st_mtime_ns == table
    with duckdb.connect(str(vault_paths.home / "vault.duckdb"), read_only=True) as catalog:
        assert catalog.execute("SELECT count(*) FROM papers").fetchall() == [(2,)]

    shutil.copy(DATA / "oai_arxivraw_listrecords.xml", inbox)  # new raw data flows through
    assert vault("import", str(inbox)).exit_code == 0
    fresh = vault("materialize", "-q")
    assert fresh.exit_code == 0 and "nothing to do" not in fresh.output
    count = vault("sql", "SELECT count(*) AS n FROM papers", "-f", "csv")
    assert count.output.splitlines()[1] == "4"

    # A table rewritten under the pipeline: only what depends on it runs again.
    views = vault_paths.table("views")
    views.write_bytes(views.read_bytes())
    status = json.loads(vault("status", "--json").output)
    assert "splits" in status["stale_assets"] and "papers" not in status["stale_assets"]
    assert {c["check"] for c in status["checks"]} >= {"papers_ids_unique"}
    assert status["index"]["rows"] and status["tables"]
    partial = vault("materialize")
    assert "up to date, skipped" in partial.output and "materialized papers " not in partial.output
    assert "materialized splits" in partial.output
    forced = vault("materialize", "--force", "--select", "papers")
    assert "materialized papers" in forced.output


def test_fingerprints_do_not_depend_on_the_order_of_upstream_keys(vault_paths: VaultPaths
                                                                    ) -> None:
    """Dagster gives an asset's upstream keys as a set, ordered differently in each process:
    the fingerprint must be the same in any order, or a refresh in a new process rebuilds."""
    from vault_pipeline.freshness import fingerprints

    vault_paths.table("papers").write_bytes(b"a")
    vault_paths.table("views").write_bytes(b"bb")
    one, other = (fingerprints.State(graph={
        "papers": fingerprints.Node("papers", (), None),
        "views": fingerprints.Node("views", (), None),
        "splits": fingerprints.Node("splits", deps, None)})
        for deps in (("papers", "views"), ("views", "papers")))
    assert (fingerprints.Fingerprinter(vault_paths, one, None).inputs("splits")
            == fingerprints.Fingerprinter(vault_paths, other, None).inputs("splits"))
