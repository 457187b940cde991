"""`vault materialize --config`, `vault search` and `vault export` end to end on a small
vault: Dagster runs the splits, index and datasets assets with their checks."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from testing.splits_vault import write_vault
from vault_pipeline.cli.app import app
from vault_pipeline.store.paths import VaultPaths

runner = CliRunner()


def vault(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_cutoff_from_config_search_and_export(vault_paths: VaultPaths, tmp_path: Path) -> None:
    write_vault(vault_paths)
    config = tmp_path / "run.yaml"
    config.write_text('ops:\n  splits:\n    config: {cutoff: "2025-01-01", seed: 4}\n')
    done = vault("materialize", "--select", "key:duplicate_pairs or key:splits+", "--config",
                 str(config))
    assert done.exit_code == 0, done.output
    assert "check FAIL" not in done.output and "materialized dataset_export" in done.output
    splits = pl.read_parquet(vault_paths.table("splits"))
    assert splits["cutoff"].unique().cast(pl.String).to_list() == ["2025-01-01"]
    assert splits.filter(pl.col("arxiv_id") == "2405.00005")["split"][0] != "vault"

    found = vault("search", "tokens dropped when experts overflow", "--k", "3")
    hits = [json.loads(line) for line in found.output.splitlines()]
    assert hits and all(h["published"] < "2025-01-01" for h in hits)
    assert "2405.00005" not in {h["arxiv_id"] for h in hits}  # a target now, not in the vault
    early = vault("search", "latency", "--before", "2024-02-01", "--same-field", "cs")
    assert [json.loads(line)["arxiv_id"] for line in early.output.splitlines()] == [
        "2401.00001"] * len(early.output.splitlines())

    moved = vault("materialize", "--select", "splits+")  # back to the default cutoff
    assert moved.exit_code == 0, moved.output
    found = vault("search", "tokens dropped when experts overflow", "--k", "3")
    assert "2405.00005" in {json.loads(line)["arxiv_id"] for line in found.output.splitlines()}

    out = tmp_path / "export"
    exported = vault("export", str(out))
    assert exported.exit_code == 0, exported.output
    assert "gap_finder/train" in exported.output
    assert vault("export", "--check", str(out)).exit_code == 0
    snapshot = tmp_path / "with-index"
    assert vault("export", str(snapshot), "--with-index").exit_code == 0
    import lancedb

    index = lancedb.connect(str(snapshot / "vault" / "index")).open_table("views_index")
    assert index.count_rows() > 0  # retrieval-grounded training needs nothing else
    assert vault("export", "--check", str(snapshot)).exit_code == 0
    (out / "splits.jsonl").write_text("{}\n")
    checked = runner.invoke(app, ["export", "--check", str(out)])
    assert checked.exit_code == 1 and "splits.jsonl: sha256 differs" in checked.output
    latest = vault_paths.home / "exports" / "latest" / "manifest.json"
    assert json.loads(latest.read_text())["cutoff"] == "2026-01-01"


def test_mistakes_are_one_line_errors(vault_paths: VaultPaths, tmp_path: Path) -> None:
    cases = [
        (["search", "x"], "index does not exist"),
        (["search", "x", "--before", "yesterday"], "not a date"),
        (["export", str(tmp_path / "out")], "does not exist yet"),
        (["materialize", "--config", str(tmp_path / "none.yaml")], "cannot read run config"),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 1, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
