"""`vault.duckdb` opens in the DuckDB releases users have, with the schemas' comments;
`vault sql -o` writes every format; files are created as the umask says."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.conftest import SAMPLE
from vault_pipeline.cli.app import app
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import IMPORT_REJECTS, PAPERS
from vault_pipeline.store.atomic import atomic_write_bytes, fresh_dir
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.sql import STORAGE_VERSION, write_catalog

runner = CliRunner()
QUERY = "SELECT 1 AS n, 'a|<b>x</b>' AS text, [1, 2] AS list"


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def tables(vault_paths: VaultPaths) -> VaultPaths:
    vault_paths.store.write(PAPERS, PAPERS.empty())
    vault_paths.store.write(IMPORT_REJECTS, IMPORT_REJECTS.empty())
    return vault_paths


def test_the_catalog_is_written_at_a_storage_version_older_releases_read(tables) -> None:
    catalog = write_catalog(tables)
    with duckdb.connect() as connection:
        connection.execute(f"ATTACH '{catalog}' AS vault (READ_ONLY)")
        (tags,) = connection.execute(
            "SELECT tags FROM duckdb_databases() WHERE database_name = 'vault'").fetchone()
        assert tags["storage_version"].startswith(STORAGE_VERSION)
        views = dict(connection.execute(
            "SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'vault'"
        ).fetchall())
        columns = dict(connection.execute(
            "SELECT column_name, comment FROM duckdb_columns() WHERE database_name = 'vault' "
            "AND table_name = 'papers'").fetchall())
    assert views["papers"] == PAPERS.doc
    assert columns == {c.name: c.doc for c in PAPERS.columns}


def test_the_duckdb_command_users_install_opens_it(tables) -> None:
    pytest.importorskip("duckdb_cli")  # the `duckdb` command of PyPI (dev extra), 1.5
    catalog = write_catalog(tables)
    shown = subprocess.run([sys.executable, "-m", "duckdb_cli", "-readonly", "-csv",
                            str(catalog), "-c",
                            "SELECT version(), count(*) FROM papers"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    version, count = shown.stdout.splitlines()[1].split(",")
    assert version.startswith("v1.") and count == "0"


@pytest.mark.parametrize(("name", "fmt"), [("out.csv", None), ("out.json", None),
                                           ("out.jsonl", None), ("out.md", None),
                                           ("out.parquet", None), ("plain.txt", "jsonl")])
def test_sql_writes_every_format_to_a_file(tables, tmp_path, name, fmt) -> None:
    out = tmp_path / name
    args = ["sql", QUERY, "-o", str(out), *(["--format", fmt] if fmt else [])]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    kind = fmt or out.suffix[1:]
    if kind == "csv":
        assert list(csv.reader(out.open())) == [["n", "text", "list"], ["1", "a|<b>x</b>",
                                                                        "[1, 2]"]]
    elif kind == "json":
        assert json.loads(out.read_text()) == [{"n": 1, "text": "a|<b>x</b>", "list": [1, 2]}]
    elif kind == "jsonl":
        assert [json.loads(line) for line in out.read_text().splitlines()] == [
            {"n": 1, "text": "a|<b>x</b>", "list": [1, 2]}]
    elif kind == "md":
        assert out.read_text().splitlines()[2] == r"| 1 | a\|&lt;b&gt;x&lt;/b&gt; | \[1, 2] |"
    else:
        assert pl.read_parquet(out).to_dicts() == [{"n": 1, "text": "a|<b>x</b>",
                                                    "list": [1, 2]}]


@pytest.mark.parametrize(("args", "reason"), [
    (["-o", "out.xlsx"], "cannot tell the format of out.xlsx"),
    (["-o", "out.csv", "--format", "table"], "the table format is for the terminal"),
    (["--format", "yaml"], "unknown format 'yaml'"),
])
def test_sql_output_mistakes_are_one_line(tables, tmp_path, monkeypatch, args,
                                          reason) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["sql", QUERY, *args])
    assert result.exit_code == 1 and reason in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(("mask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755),
                                                              (0o077, 0o600, 0o700),
                                                              (0o002, 0o664, 0o775)])
def test_files_follow_the_umask(vault_paths, tmp_path, mask, file_mode, dir_mode) -> None:
    with umask(mask):
        atomic_write_bytes(tmp_path / "report.json", b"{}")
        vault_paths.store.write(PAPERS, PAPERS.empty())
        folder = fresh_dir(tmp_path, "export-")
        written = write_catalog(vault_paths)
        (record, _new), = [RawZone(vault_paths).add_file(SAMPLE / "arxiv-single.xml")]
        result = runner.invoke(app, ["sql", QUERY, "-o", str(tmp_path / "q.csv")])
    assert result.exit_code == 0, result.output
    mode = lambda path: Path(path).stat().st_mode & 0o777  # noqa: E731
    assert mode(tmp_path / "report.json") == file_mode
    assert mode(vault_paths.store.path(PAPERS)) == file_mode
    assert mode(written) == file_mode
    assert mode(tmp_path / "q.csv") == file_mode
    assert mode(folder) == dir_mode
    assert mode(vault_paths.raw / record.path) == file_mode & 0o555  # and never writable
