"""Fault injection: what a hostile query, a damaged raw zone, concurrent runs or a wrong
path do to a vault. Each test asserts what a user would check: nothing lost, duplicated or
let in, and errors as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_pipeline.cli import app
from vault_pipeline.paths import VaultPaths

from .conftest import SAMPLE

runner = CliRunner()


def vault(*args: str):
    return runner.invoke(app, list(args))


def one_line_error(result, code: int = 1) -> str:
    """The single `error:` line of a failed command (and no traceback)."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    return errors[0]


@pytest.fixture
def sample_vault(vault_paths: VaultPaths) -> VaultPaths:
    """The bundled sample imported and `papers` built (111 papers)."""
    assert vault("import", str(SAMPLE)).exit_code == 0
    built = vault("materialize", "--select", "papers", "-q")
    assert built.exit_code == 0, built.output
    return vault_paths


def papers_count() -> int:
    result = vault("sql", "SELECT count(*) AS n FROM papers", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)[0]["n"]


# 1. `vault sql` is read-only -----------------------------------------------------------------

@pytest.mark.parametrize("statement", [
    "COPY (SELECT 1 AS x) TO '{tables}/papers.parquet'",
    "COPY (SELECT 1 AS x) TO '{tables}/papers.parquet' (FORMAT parquet, USE_TMP_FILE false)",
    "ATTACH '{home}/evil.duckdb' AS evil",
    "CREATE TABLE t AS SELECT 1",
    "SELECT 1; COPY (SELECT 1) TO '{home}/out.csv'",
    "SET enable_external_access = true",
    "INSTALL httpfs",
])
def test_sql_refuses_writes_and_leaves_the_vault_as_it_was(sample_vault: VaultPaths,
                                                            statement: str) -> None:
    before = sorted(p.name for p in sample_vault.home.rglob("*") if p.is_file())
    text = statement.format(tables=sample_vault.tables, home=sample_vault.home)
    assert "read-only" in one_line_error(vault("sql", text))
    assert papers_count() == 111
    assert sorted(p.name for p in sample_vault.home.rglob("*") if p.is_file()) == before


def test_sql_reads_only_the_vault_tables(sample_vault: VaultPaths, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    assert "disabled" in one_line_error(vault("sql", f"SELECT * FROM read_csv('{outside}')"))
    table = sample_vault.table("papers")
    direct = vault("sql", f"SELECT count(*) AS n FROM read_parquet('{table}')", "-f", "json")
    assert json.loads(direct.output) == [{"n": 111}]


# 9. exit codes and one-line errors ------------------------------------------------------------

@pytest.mark.parametrize("command", [("status",), ("sql", "SELECT 1"), ("search", "graphs")])
def test_read_only_commands_never_create_a_vault(tmp_path: Path, command) -> None:
    home = tmp_path / "not-a-vault"
    assert "no vault at" in one_line_error(vault(*command, "--home", str(home)))
    assert not home.exists()


@pytest.mark.parametrize("command", [("status",), ("import", "."), ("materialize",),
                                     ("sql", "SELECT 1")])
def test_home_pointing_at_a_file_is_one_line(tmp_path: Path, command) -> None:
    file = tmp_path / "a-file"
    file.write_text("x")
    one_line_error(vault(*command, "--home", str(file)))
    assert file.read_text() == "x"


def test_a_bad_cutoff_is_one_line(sample_vault: VaultPaths, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("ops: {splits: {config: {cutoff: '2025-13-45'}}}")
    result = vault("materialize", "--select", "splits", "--config", str(config))
    one_line_error(result)
    assert "cutoff '2025-13-45' is not a date" in result.output
    assert len(result.output.splitlines()) < 10, result.output


# 10 and 9. a vault of PDFs only; warning-level checks -----------------------------------------

def test_pdfs_without_metadata_build_empty_splits_and_warnings_exit_0(
        vault_paths: VaultPaths, tmp_path: Path) -> None:
    assert vault("import", str(SAMPLE / "2202.12139v1.pdf")).exit_code == 0
    config = tmp_path / "floor.yaml"  # a success floor no source can reach: a warning
    config.write_text("ops: {documents_documents_success_rate: {config: "
                      "{min_success_rate: 1.5}}}")
    result = vault("materialize", "--select", "documents", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "check WARN documents_success_rate" in result.output
    assert "check FAIL" not in result.output
    strict = vault("materialize", "--select", "documents", "--config", str(config), "--strict")
    assert strict.exit_code == 1
    assert "check WARN documents_success_rate" in strict.output
    built = vault("materialize", "--select", "key:papers or key:splits")
    assert built.exit_code == 0, built.output
    splits = vault("sql", "SELECT count(*) AS n FROM splits", "--format", "json")
    assert json.loads(splits.output) == [{"n": 0}]
