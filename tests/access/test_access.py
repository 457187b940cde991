"""Access without the pipeline: the Python API, the IO manager, `vault serve` and the CLI's
quick paths, on a small vault with a real index (the embedded model, ONNX at query time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from testing.splits_vault import CUTOFF, write_vault
from vault_pipeline import Vault
from vault_pipeline.cli.app import app
from vault_pipeline.embeddings.embedders import load_embedder
from vault_pipeline.errors import VaultError
from vault_pipeline.index.lance_index import build_index
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings

runner = CliRunner()
QUERY = "candidate set filtered cheaply then a shortlist scored finely"


@pytest.fixture
def indexed(vault_paths):
    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    build_index(vault_paths, load_embedder())
    return vault_paths


def test_python_api_tables_sql_papers(indexed) -> None:
    vault = Vault(indexed.home)
    assert {"papers", "views", "splits"} <= set(vault.tables())
    assert vault.table("papers").equals(pl.read_parquet(indexed.table("papers")))
    assert vault.sql("SELECT count(*) AS n FROM papers")["n"][0] == vault.table("papers").height
    found = vault.papers(["2402.00002v3", "arXiv:2401.00001", "9999.99999"])
    assert found["arxiv_id"].to_list() == ["2402.00002", "2401.00001"]
    with pytest.raises(VaultError, match="did you mean 'papers'"):
        vault.table("paper")
    with pytest.raises(VaultError, match="no vault"):
        Vault(indexed.home / "elsewhere")


def test_python_api_search_keeps_model_and_index(indexed) -> None:
    vault = Vault(indexed.home)
    hits = vault.search(QUERY, k=3, view="intuition")
    assert set(hits["arxiv_id"][:2]) == {"2401.00001", "2402.00002"}
    assert hits["view"].to_list() == ["intuition"] * 3 and hits["rank"].to_list() == [1, 2, 3]
    model, table = vault._embedder, vault._index
    again = vault.search("olfactory receptor odour", k=1, mode="text")
    vault.search("black hole horizon entropy", k=1)
    assert vault._embedder is model and vault._index is table
    assert again["arxiv_id"].to_list() == ["2403.00003"]
    assert type(model).__name__ == "OnnxEmbedder"  # no torch at query time


def test_load_asset_value_returns_the_table(indexed) -> None:
    from dagster import DagsterInstance

    from vault_pipeline.definitions import build_defs

    defs = build_defs(indexed)
    with DagsterInstance.ephemeral() as instance:
        papers = defs.load_asset_value("papers", instance=instance)
        index = defs.load_asset_value("index", instance=instance)
    assert isinstance(papers, pl.DataFrame)
    assert papers.equals(pl.read_parquet(indexed.table("papers")))
    assert index.count_rows() > 0


def test_serve_api(indexed) -> None:
    from starlette.testclient import TestClient

    from vault_pipeline.access.serve import create_app

    with TestClient(create_app(indexed.home)) as client:
        hits = client.get("/api/search", params={"q": QUERY, "k": 2, "view": "intuition"})
        assert hits.status_code == 200
        assert {h["arxiv_id"] for h in hits.json()["hits"]} == {"2401.00001", "2402.00002"}
        paper = client.get("/api/papers/2401.00001v2").json()
        assert paper["paper"]["arxiv_id"] == "2401.00001"
        assert {v["view"] for v in paper["views"]} >= {"challenge", "proposal"}
        bad = client.get("/api/search", params={"q": "x", "view": "nope"})
        assert bad.status_code == 400 and "unknown view" in bad.json()["error"]
        assert client.get("/api/papers/1234.56789").status_code == 400
        written = client.get("/api/sql", params={"q": "COPY papers TO 'x.csv'"})
        assert written.status_code == 400 and "read-only" in written.json()["error"]
        assert "papers" in {t["name"] for t in client.get("/api/tables").json()["tables"]}
        assert "<title>Research Idea Vault</title>" in client.get("/").text


def _serve(home: Path, port: int) -> subprocess.Popen:
    vault = Path(sys.executable).with_name("vault")
    process = subprocess.Popen([str(vault), "serve", "--home", str(home), "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not (home / "serve.json").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"vault serve did not start: {process.stdout.read()}")
        time.sleep(0.2)
    return process


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def served(indexed):
    process = _serve(indexed.home, _free_port())
    yield indexed, json.loads((indexed.home / "serve.json").read_text())["url"]
    process.terminate()
    process.wait(timeout=30)


def test_cli_search_asks_a_running_server(served) -> None:
    paths, _ = served
    args = ["search", QUERY, "--k", "3", "--home", str(paths.home)]
    through_server = runner.invoke(app, args)
    alone = runner.invoke(app, [*args, "--local"])
    assert through_server.exit_code == 0 and through_server.output == alone.output
    assert len(through_server.output.splitlines()) == 3
    wrong = runner.invoke(app, ["search", "x", "--view", "nope", "--home", str(paths.home)])
    assert wrong.exit_code == 1 and wrong.output.startswith("error: unknown view")


def _chromium() -> str | None:
    import shutil

    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium on this machine")
def test_page_in_headless_chromium(served, tmp_path) -> None:
    """The page, as a browser runs it: a search from the address bar lists the hits, and a
    paper's page shows its views."""
    _, url = served

    def dom(address: str) -> str:
        result = subprocess.run(
            [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=20000",
             "--dump-dom", address], capture_output=True, text=True, timeout=120,
            env={**os.environ, "HOME": str(tmp_path)})
        assert result.stdout, result.stderr[-1500:]
        return result.stdout

    page = dom(f"{url}/?q=olfactory+receptor+odour&mode=text")
    assert 'class="hit" data-id="2403.00003"' in page
    assert "result(s) in" in page
    paper = dom(f"{url}/?paper=2401.00001")
    assert "challenge" in paper and "2401.00001" in paper


def test_cli_version_and_sql_formats(indexed, tmp_path) -> None:
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.startswith("vault 0.")
    query = "SELECT arxiv_id, categories FROM papers ORDER BY 1 LIMIT 2"
    markdown = runner.invoke(app, ["sql", query, "--format", "markdown"])
    lines = markdown.output.splitlines()
    assert lines[:2] == ["| arxiv_id | categories |", "|---|---|"] and len(lines) == 4
    out = tmp_path / "papers.parquet"
    written = runner.invoke(app, ["sql", "SELECT * FROM papers", "-f", "parquet", "-o", str(out)])
    assert written.exit_code == 0 and pl.read_parquet(out).height == Vault().table("papers").height
    hint = runner.invoke(app, ["sql", "SELECT * FROM paper"])
    assert hint.exit_code == 1 and 'Did you mean "papers"' in hint.output
    assert len(hint.output.splitlines()) == 1


def test_mistyped_selection_suggests_names(vault_paths) -> None:
    typo = runner.invoke(app, ["materialize", "--select", "pappers"])
    assert typo.exit_code == 1 and "did you mean papers" in typo.output
    group = runner.invoke(app, ["materialize", "--select", "group:metdata"])
    assert "group 'metdata': did you mean metadata" in group.output


def test_dev_runs_this_environments_dagster_and_passes_h_through(vault_paths, monkeypatch):
    from vault_pipeline.cli import app as cli

    called = {}
    monkeypatch.setattr(cli.os, "execve",
                        lambda path, command, env: called.update(command=command, env=env))
    monkeypatch.setenv("PATH", "/nonexistent")  # not activated: found next to Python anyway
    result = runner.invoke(app, ["dev", "-h", "0.0.0.0", "-p", "3001"])
    assert result.exit_code == 0, result.output
    assert called["command"][:3] == [sys.executable, "-m", "dagster"]
    assert called["command"][-4:] == ["-h", "0.0.0.0", "-p", "3001"]
    assert called["env"]["VAULT_HOME"] == str(vault_paths.home)


def test_distributions_are_tables_with_years_in_order() -> None:
    from assets.metadata import counts_table

    years = counts_table({2024: 5, 2019: 40, 2021: 1}, "year")
    assert [r.data["year"] for r in years.records] == ["2019", "2021", "2024"]
    sizes = counts_table({"cs.LG": 3, "hep-th": 9}, "category")
    assert [r.data["category"] for r in sizes.records] == ["hep-th", "cs.LG"]
    assert [c.name for c in sizes.schema.columns] == ["category", "rows"]


def test_harvest_config_prints_toml_that_loads_back(vault_paths, tmp_path, monkeypatch) -> None:
    import tomllib

    from vault_pipeline.sources.settings import load_config

    monkeypatch.setenv("S2_API_KEY", "not-printed")
    printed = runner.invoke(app, ["harvest", "config"])
    assert printed.exit_code == 0 and "not-printed" not in printed.output
    assert "# S2_API_KEY: set" in printed.output
    parsed = tomllib.loads(printed.output)
    assert parsed["arxiv"]["fulltext"]["categories"] == ["cs.LG", "cs.CL", "cs.AI"]
    copy = tmp_path / "harvest.toml"
    copy.write_text(printed.output)
    assert load_config(vault_paths, copy).s2.refresh_days == parsed["s2"]["refresh_days"]
