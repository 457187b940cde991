"""The evaluation sets as a user meets them: built by `vault demo` from the bundled sample
(every set non-empty, every check passing), queried with `vault sql`, shipped in the export
with their cards and manifest entries, and materialized alone through Dagster."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import dagster as dg
import polars as pl
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from tests.conftest import DemoRun
from vault_pipeline.cli.app import app
from vault_pipeline.datasets.evaluation import add_evaluation_sets
from vault_pipeline.datasets.manifest import FORMAT, verify_export, write_manifest
from vault_pipeline.evalsets.build import build_evalsets
from vault_pipeline.evalsets.constructed import constructed_venue, write_pages
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.schemas import CITATION_COUNTS, CITATIONS, EVAL_CITATION_WINDOWS, SUBMISSIONS
from vault_pipeline.store.paths import VaultPaths

runner = CliRunner()
SETS = ("pointwise", "pairwise", "groupwise", "review_population", "review_stratified",
        "review_anchors")


def sql(query: str) -> list[dict]:
    result = runner.invoke(app, ["sql", query, "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.xdist_group("demo")
def test_demo_builds_every_set_and_exports_it(demo_vault: DemoRun) -> None:
    result, vault_paths = demo_vault, demo_vault.paths
    assert result.exit_code == 0, result.output
    assert "check FAIL" not in result.output
    for check in ("eval_ideas_without_results", "eval_pairs_valid", "eval_groups_valid",
                  "eval_strata_within_quota"):
        assert f"check ok   {check}" in result.output
    cards = {r["set_name"]: r for r in sql("SELECT set_name, rows, metrics FROM eval_cards")}
    assert set(cards) == set(SETS)
    assert all(cards[s]["rows"] > 0 for s in SETS), {s: cards[s]["rows"] for s in SETS}
    methods = sql("SELECT DISTINCT similarity_method AS m FROM eval_pairwise")
    assert [r["m"].split("@")[0] for r in methods] == [
        "embedding:sentence-transformers/all-MiniLM-L6-v2"]  # the index's embedded model
    labels = sql("SELECT label, count(*) AS n FROM eval_pointwise GROUP BY 1 ORDER BY 1")
    assert {r["label"] for r in labels} == {"Reject", "Poster", "Spotlight", "Oral"}
    linked = sql("SELECT full_text_source FROM eval_review_stratified "
                 "WHERE arxiv_id IS NOT NULL")
    assert {r["full_text_source"] for r in linked} <= {"pdf", "latex"} and linked
    cited = sql("SELECT count(*) AS n FROM eval_review_population WHERE citation_count "
                "IS NOT NULL AND citations_read_at IS NOT NULL")
    assert cited[0]["n"] > 0
    worded = sql("SELECT reason FROM eval_excluded WHERE note_id IS NOT NULL")
    assert {"reason": "rating 'very promising!' is not a number"} in worded
    export = vault_paths.home / "exports" / "latest"
    manifest = json.loads((export / "manifest.json").read_text())
    assert set(manifest["evaluation"]) == set(SETS)
    population = manifest["evaluation"]["review_population"]["metrics"]["reliability"]
    assert population["icc_1_1"] is not None and population["spearman_ceiling"] is not None
    for name in SETS:
        data = pl.read_parquet(export / "evaluation" / name / "data.parquet")
        assert data.height == cards[name]["rows"]
        card = (export / "evaluation" / name / "README.md").read_text()
        assert card.startswith("---\n") and "ICC(1,1)" in card
    assert verify_export(export) == []


def test_export_lists_every_file_and_verifies(vault_paths: VaultPaths, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    write_pages(constructed_venue("ICLR.cc/2025/Conference", 120, seed=3), inbox, "v")
    RawZone(vault_paths).import_paths([inbox])
    build_reviews(vault_paths)
    build_evalsets(vault_paths, EvalSetsSettings(embedder="lexical"), log=lambda *_: None)
    staging = tmp_path / "export"
    manifest = {"format": FORMAT, "tables": [], "files": []}
    assert add_evaluation_sets(vault_paths, staging, manifest) == len(SETS)
    write_manifest(staging, manifest)
    assert verify_export(staging) == []
    rows = {t["name"]: t["rows"] for t in manifest["tables"]}
    assert rows["evaluation/ideas"] > 0 and rows["evaluation/review_anchors"] == 0
    jsonl = (staging / "evaluation" / "pointwise" / "data.jsonl").read_text().splitlines()
    first = json.loads(jsonl[0])
    assert set(first["idea"]) == {"tldr", "motivation", "research_question", "method",
                                  "experimental_setting", "expected_results"}
    empty_card = (staging / "evaluation" / "review_anchors" / "README.md").read_text()
    assert "configs:" not in empty_card and "This set is empty" in empty_card


def test_materialized_alone_through_dagster(vault_paths: VaultPaths, tmp_path: Path) -> None:
    from vault_pipeline.definitions import build_defs

    inbox = tmp_path / "inbox"
    write_pages(constructed_venue("ICLR.cc/2025/Conference", 90, seed=8), inbox, "v")
    RawZone(vault_paths).import_paths([inbox])
    build_reviews(vault_paths)
    store = vault_paths.store  # one scored submission known to S2, with two dated citers
    scored = store.read(SUBMISSIONS).filter(pl.col("mean_rating").is_not_null()).row(
        0, named=True)
    read = date(2026, 8, 1)
    store.write(CITATION_COUNTS, pa.Table.from_pylist([{
        "s2_id": "s2x", "title": scored["title"], "citation_count": 2, "read_at": read,
        "raw_sha256": "2" * 64}], schema=CITATION_COUNTS.arrow))
    store.write(CITATIONS, pa.Table.from_pylist([
        {"citing_s2_id": c, "cited_s2_id": "s2x", "citing_date": d, "read_at": read,
         "raw_sha256": "3" * 64} for c, d in (("c1", None), ("c2", date(2024, 12, 1)))],
        schema=CITATIONS.arrow))
    defs = build_defs(vault_paths)
    result = dg.materialize(
        [*defs.assets, *defs.asset_checks], resources=defs.resources,  # type: ignore[misc]
        selection=dg.AssetSelection.groups("evaluation"),
        run_config={"ops": {"evaluation_sets": {"config": {
            "embedder": "lexical", "pointwise_quota": {"Reject": 7, "Oral": 1}, "seed": 4}}}})
    assert result.success
    metadata = {e.asset_key.to_user_string(): e.step_materialization_data.materialization
                .metadata for e in result.get_asset_materialization_events()}
    assert metadata["eval_pointwise"]["dagster/row_count"].value == 8
    assert "ICC(1,1)" in metadata["eval_pointwise"]["card"].value
    assert metadata["eval_review_population"]["icc_1_1"].value > 0
    assert metadata["eval_citation_windows"]["dagster/row_count"].value == 1
    assert metadata["eval_citation_windows"]["citing_undated"].value == 1
    windows = store.read(EVAL_CITATION_WINDOWS).row(0, named=True)
    assert (windows["forum_id"], windows["citations_12m"]) == (scored["forum_id"], 1)
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks == {"eval_ideas_without_results": True, "eval_pairs_valid": True,
                      "eval_groups_valid": True, "eval_strata_within_quota": True}
