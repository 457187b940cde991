"""What `vault materialize` refuses before a run (one line, no Dagster run recorded), what a
setting change rebuilds, files imported while a run goes, and a damaged table repaired."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance
from typer.testing import CliRunner

from tests.conftest import DATA, SAMPLE
from tests.store.test_checksums import cut, flip
from vault_pipeline.cli.app import app
from vault_pipeline.freshness import fingerprints
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.store import checksums
from vault_pipeline.store.paths import VaultPaths

runner = CliRunner()


def vault(*args: str):
    return runner.invoke(app, list(args))


def runs(paths: VaultPaths) -> int:
    with DagsterInstance.from_config(str(paths.dagster_home)) as instance:
        return len(instance.get_run_records())


def refused(paths: VaultPaths, *args: str) -> str:
    """The one line of a materialize refused before any Dagster run."""
    before = runs(paths) if paths.dagster_home.joinpath("dagster.yaml").exists() else 0
    result = vault("materialize", *args)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output and "ERROR" not in result.output
    if paths.dagster_home.joinpath("dagster.yaml").exists():
        assert runs(paths) == before
    return lines[0]


@pytest.mark.parametrize(("toml", "expected"), [
    ("[splitz]\ncutoff = 2025-01-01\n", "unknown section [splitz] in vault.toml (did you mean "
                                        "'splits'?)"),
    ("[splits]\ncutof = 2025-01-01\n", "did you mean 'cutoff'?"),
    ('[splits]\ncutoff = "next tuesday"\n', "cutoff 'next tuesday' is not a date"),
    ("[splits\ncutoff = 1\n", "vault.toml"),
])
def test_a_bad_vault_toml_is_one_line_and_starts_no_run(sample_vault: VaultPaths, toml: str,
                                                         expected: str) -> None:
    (sample_vault.home / "vault.toml").write_text(toml)
    assert expected in refused(sample_vault, "--select", "papers")
    assert expected in refused(sample_vault)  # the refresh decided without Dagster too


@pytest.mark.parametrize(("text", "expected"), [
    ("ops: {splits: {config: {cutof: '2025-01-01'}}}", "did you mean 'cutoff'?"),
    ("ops: {splitz: {config: {cutoff: '2025-01-01'}}}", "did you mean 'splits'?"),
    ("ops: {splits: {config: {cutoff: 'next tuesday'}}}", "cutoff 'next tuesday' is not a date"),
    ("ops: {splits: {config: {cutoff: [1, 2}}}", "invalid YAML"),
    ("opz: {}", "did you mean 'ops'?"),
])
def test_a_bad_run_config_is_one_line_and_starts_no_run(sample_vault: VaultPaths,
                                                         tmp_path: Path, text: str,
                                                         expected: str) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(text)
    assert expected in refused(sample_vault, "--select", "papers", "--config", str(config))


def test_a_variable_with_a_bad_value_is_one_line(sample_vault: VaultPaths,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_SPLITS_CUTOFF", "next tuesday")
    assert "in VAULT_SPLITS_CUTOFF" in refused(sample_vault, "--select", "papers")


def test_a_selection_with_nothing_to_read_is_refused(vault_paths: VaultPaths) -> None:
    assert vault("import", str(SAMPLE)).exit_code == 0  # and nothing built
    line = refused(vault_paths, "--select", "+views")
    assert "masked_records has nothing to read: documents, papers were never built" in line
    assert "--select '*masked_records'" in line


def test_editing_vault_toml_rebuilds_what_it_configures(vault_paths: VaultPaths) -> None:
    """A section's table in `vault.toml` is in the fingerprint of the assets whose runs read
    it: the splits and what is downstream rebuild, the papers do not."""
    fingerprints.save(vault_paths, fingerprints.State(graph={
        "papers": fingerprints.Node("papers", ("raw_files",), "metadata", ("papers",)),
        "splits": fingerprints.Node("splits", ("papers",), "splits", ("splits", "ideas")),
        "index": fingerprints.Node("index", ("splits",), "index", ("index", "compute"))}))
    for schema, frame in _tables():
        vault_paths.store.write(schema, frame)
    (vault_paths.home / "index" / "views_index.lance").mkdir(parents=True)
    (vault_paths.home / "vault.toml").write_text("[splits]\ncutoff = 2025-01-01\n")
    graph = fingerprints.load(vault_paths).graph
    fingerprints.record(vault_paths, graph, ["papers", "splits", "index"], None)
    state = fingerprints.load(vault_paths)
    assert fingerprints.stale(vault_paths, state, ["papers", "splits"], None) == set()
    (vault_paths.home / "vault.toml").write_text("[splits]\ncutoff = 2024-06-01\n")
    assert fingerprints.stale(vault_paths, state, ["papers", "splits", "index"], None) == {
        "splits", "index"}
    (vault_paths.home / "vault.toml").write_text("[splits]\ncutoff = 2025-01-01\n"
                                                 "[index]\nbatch_size = 8\n")
    assert fingerprints.stale(vault_paths, state, ["papers", "splits"], None) == set()


def _tables():
    import polars as pl

    from vault_pipeline.schemas import PAPERS, SPLITS

    return [(schema, pl.from_arrow(schema.empty())) for schema in (PAPERS, SPLITS)]


def test_files_imported_during_a_run_are_built_by_the_next(vault_paths: VaultPaths,
                                                           tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir(), later.mkdir()
    shutil.copy(DATA / "atom_old_style.xml", first)  # 2 papers
    shutil.copy(DATA / "oai_arxivraw_listrecords.xml", later)  # 2 more
    assert vault("import", str(first)).exit_code == 0
    listed = RawZone.files

    def files_then_an_import(zone, *args, **kwargs):  # another process imports meanwhile
        found = listed(zone, *args, **kwargs)
        if not getattr(files_then_an_import, "done", False):
            files_then_an_import.done = True
            RawZone(zone.paths).import_paths([later])
        return found

    monkeypatch.setattr(RawZone, "files", files_then_an_import)
    assert vault("materialize", "--select", "papers", "-q").exit_code == 0
    monkeypatch.setattr(RawZone, "files", listed)
    count = vault("sql", "SELECT count(*) AS n FROM papers", "-f", "json")
    assert json.loads(count.output) == [{"n": 2}]  # the run read the zone as it started
    again = vault("materialize", "--select", "papers", "-q")
    assert again.exit_code == 0 and "nothing to do" not in again.output
    count = vault("sql", "SELECT count(*) AS n FROM papers", "-f", "json")
    assert json.loads(count.output) == [{"n": 4}]


@pytest.mark.parametrize("damage", [flip, cut])
def test_a_damaged_table_is_one_line_then_quarantined_and_rebuilt(sample_vault: VaultPaths,
                                                                  damage) -> None:
    papers = sample_vault.table("papers")
    damage(papers)
    checksums._trusted.clear()  # as a new process finds it
    sql = vault("sql", "SELECT count(*) FROM papers")
    assert sql.exit_code == 1 and len(sql.output.strip().splitlines()) == 1, sql.output
    assert str(papers) in sql.output and "vault materialize" in sql.output
    other = vault("sql", "SELECT count(*) AS n FROM papers_rejected", "-f", "json")
    assert other.exit_code == 0 and "papers.parquet" in other.output  # one warning line
    status = vault("status")
    assert status.exit_code == 0 and "papers_rejected" in status.output
    assert [line.split()[0] for line in status.output.splitlines()
            if "is damaged (" in line] == ["papers"]
    assert json.loads(vault("status", "--json").output)["tables"]
    verify = vault("verify")
    assert verify.exit_code == 1 and "tables/papers.parquet: " in verify.output
    assert "derived file(s) damaged: `vault materialize` quarantines them" in verify.output
    repaired = vault("materialize", "--select", "papers", "-q")
    assert repaired.exit_code == 0, repaired.output
    assert "tables/papers.parquet was damaged" in repaired.output
    assert "quarantine/" in repaired.output
    count = vault("sql", "SELECT count(*) AS n FROM papers", "-f", "json")
    assert json.loads(count.output) == [{"n": 221}]
    kept = list((sample_vault.home / "quarantine").rglob("papers.parquet"))
    assert (len(kept) == 1 and kept[0].stat().st_size == papers.stat().st_size) or damage is cut


def test_an_unchanged_refresh_still_reads_no_table_whole(sample_vault: VaultPaths) -> None:
    """The check on read trusts an untouched file by its stat: a refresh with nothing new
    stays a few stat calls."""
    checksums._trusted.clear()
    started = time.perf_counter()
    again = vault("materialize", "--select", "papers")
    assert again.exit_code == 0 and "nothing to do" in again.output
    assert time.perf_counter() - started < 10
    assert os.path.exists(checksums.sidecar(sample_vault.table("papers")))
