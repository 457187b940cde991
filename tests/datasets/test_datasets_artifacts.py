"""The role artifact chain on a vault with a full-text target: three artifacts per target
that validate (or a quarantine row), no solution in the gaps, the reward helpers, and exports
a trainer loads as they are (default config, chat messages, fine-tuning lines, the vault,
files others can read, evaluation papers left out)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from testing.artifacts_vault import SPLITS, TARGET, build_artifacts_vault
from testing.ideas_server import Reply, ScriptedServer, completion
from vault_pipeline.cli.app import app
from vault_pipeline.datasets.artifacts import ARTIFACT_MODELS
from vault_pipeline.datasets.export import export_datasets
from vault_pipeline.datasets.manifest import verify_export
from vault_pipeline.datasets.reconstruct import build_role_artifacts
from vault_pipeline.datasets.rewards import citation_f1, score, validity
from vault_pipeline.datasets.training import ROLES, build_training
from vault_pipeline.ideas.views import VIEW_NAMES
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.store.paths import VaultPaths

VAULT_IDS = {"2401.00001", "2402.00002", "2403.00003", "2404.00004", "2405.00005",
             "2512.00006"}


@pytest.fixture
def vault(vault_paths: VaultPaths) -> VaultPaths:
    return build_artifacts_vault(vault_paths)


def _artifacts(paths: VaultPaths) -> pl.DataFrame:
    return pl.read_parquet(paths.table("role_artifacts"))


def test_every_target_has_three_artifacts_that_validate(vault: VaultPaths) -> None:
    splits = pl.read_parquet(vault.table("splits"))
    targets = splits.filter(pl.col("split").is_in(["train", "validation", "test"]))
    assert targets["arxiv_id"].to_list() == [TARGET]
    artifacts = _artifacts(vault)
    failures = pl.read_parquet(vault.table("role_artifact_failures"))
    for role, model in ARTIFACT_MODELS.items():
        rows = artifacts.filter((pl.col("arxiv_id") == TARGET) & (pl.col("role") == role))
        quarantined = failures.filter((pl.col("arxiv_id") == TARGET) & (pl.col("role") == role))
        assert rows.height + quarantined.height == 1, role
        model.model_validate_json(rows["data"][0])  # the schema the backends are given
    gaps = json.loads(artifacts.filter(pl.col("role") == "gap_finder")["data"][0])
    found = [g for a in gaps["axes"] for g in a["gaps"]]
    assert 1 <= len(found) <= 2 and all(len(a["gaps"]) <= 2 for a in gaps["axes"])
    assert "cannot adapt its depth" in found[0]["unresolved"]
    assert {m["arxiv_id"] for g in found for m in g["near_misses"]} == {"2401.00001",
                                                                        "2405.00005"}
    text = json.dumps(gaps)
    assert "CascadeViT" not in text and "We propose" not in text  # no solution in the gaps
    assert "81.2" not in "".join(artifacts["data"].to_list())  # results stay masked
    candidate = json.loads(artifacts.filter(pl.col("role") == "innovator")["data"][0])
    assert candidate["gap"] == found[0]["unresolved"]
    assert candidate["source_paper_id"] is None and candidate["novelty_type"] is None
    report = artifacts.filter(pl.col("role") == "report_writer").row(0, named=True)
    assert report["citations"] == ["2401.00001", "2405.00005"]
    assert report["backend"] == "extractive" and report["model"] == "extractive/7"


def test_llm_gaps_stating_the_solution_are_masked_and_bad_answers_quarantined(
        vault: VaultPaths) -> None:
    leaky = {"axes": [{"axis": "Compute is spent equally on easy and hard images.",
                       "prior_work": "Cascades filter inputs with a fixed first stage.",
                       "gaps": [
                           {"prior_methods": "Two-stage systems", "via": "a fixed first stage",
                            "unresolved": "The depth cannot adapt to the input.",
                            "near_misses": [{"arxiv_id": "2401.00001", "lacks": "adaptivity"}],
                            "category": "missing mechanism", "why_it_matters": None,
                            "evidence_route": None},
                           {"prior_methods": "Routers", "via": "fixed capacity",
                            "unresolved": "We propose CascadeViT to exit early.",
                            "near_misses": [], "category": None, "why_it_matters": None,
                            "evidence_route": None}]}]}
    with ScriptedServer() as server:
        server.scripts[TARGET] = [Reply(200, completion(json.dumps(leaky)))]
        settings = IdeasSettings(backend="openai", model="test-model", llm_judge=False,
                                 base_url=server.base_url, backoff_s=0.01, max_retries=1)
        report = build_role_artifacts(vault, settings)
        sent = sum(len(v) for v in server.requests.values())
        again = build_role_artifacts(vault, settings)  # same inputs: nothing asked again
        assert sum(len(v) for v in server.requests.values()) == sent
    assert report.asked == 3 and (again.asked, again.reused) == (0, 3)
    assert (again.artifacts, again.quarantined) == (report.artifacts, report.quarantined)
    artifacts = _artifacts(vault)
    gaps = artifacts.filter(pl.col("role") == "gap_finder").row(0, named=True)
    assert "CascadeViT" not in gaps["data"] and "adapt to the input" in gaps["data"]
    assert gaps["leaky_answer"] and gaps["prompt_version"] == "gaps.v1"
    assert any(f["layer"] == "method" for f in gaps["masked_findings"])
    failures = pl.read_parquet(vault.table("role_artifact_failures"))
    row = failures.row(0, named=True)  # the gaps JSON is no candidate
    assert row["role"] == "innovator" and row["attempts"] == 2
    assert "does not match the schema" in row["reason"] and row["raw_answer"]
    assert report.quarantined == 1 and report.by_role["report_writer"] == 1
    build_training(vault)
    examples = pl.read_parquet(vault.table("training_examples"))
    innovator = examples.filter(pl.col("role") == "innovator").row(0, named=True)
    assert innovator["artifact"] is None and innovator["messages"] is None


def test_citation_f1_on_known_sets() -> None:
    assert citation_f1(["a", "b"], ["b", "c"]) == 0.5
    assert citation_f1(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert citation_f1(["a"], ["b"]) == 0.0
    assert citation_f1([], ["b"]) == 0.0
    assert citation_f1([], []) == 1.0
    assert citation_f1(["a", "a", "b"], ["a"]) == pytest.approx(2 / 3)  # sets, not lists


def _gap(arxiv_id: str = "2401.00001") -> dict:
    return {"prior_methods": "p", "via": None, "unresolved": "z", "category": None,
            "near_misses": [{"arxiv_id": arxiv_id, "lacks": None}], "why_it_matters": None,
            "evidence_route": None}


def test_validity_gates_of_each_role() -> None:
    ok = {"axes": [{"axis": "a", "prior_work": None, "gaps": [_gap()]}]}
    assert validity("gap_finder", ok, VAULT_IDS)[1] == []
    three = {"axes": [{"axis": "a", "prior_work": None, "gaps": [_gap()] * 3}]}
    assert "axis 0 has 3 gaps; at most 2" in validity("gap_finder", three)[1]
    unknown = {"axes": [{"axis": "a", "prior_work": None, "gaps": [_gap("2699.00001")]}]}
    assert validity("gap_finder", unknown, VAULT_IDS)[1] == [
        "cited id 2699.00001 is not in the vault"]
    candidate = {"intuition": "i", "gap": "g", "source_paper_id": "2403.00003v2",
                 **dict.fromkeys(("source_inspiration", "borrowed_mechanism", "novelty_type",
                                  "mapping", "why_it_could_work", "key_assumption",
                                  "nearest_difference", "main_risk"))}
    assert validity("innovator", json.dumps(candidate), VAULT_IDS)[1] == []
    assert validity("innovator", [candidate, candidate])[1] == [
        "the innovator must give one candidate, not 2"]
    assert "illegal schema" in validity("innovator", {**candidate, "gap": ""})[1][0]
    result = score("innovator", candidate, ["2403.00003"], VAULT_IDS)
    assert result.valid and result.citation_f1 == 1.0 and result.cited == ["2403.00003"]
    assert not score("innovator", "not json", ["2403.00003"]).valid


def test_export_loads_with_no_config_name_and_every_role_has_messages(
        vault: VaultPaths, tmp_path: Path) -> None:
    out = tmp_path / "export"
    report = export_datasets(vault, out, formats=("jsonl", "openai-jsonl"))
    assert verify_export(out) == []
    from datasets import load_dataset

    default = load_dataset(str(out), cache_dir=str(tmp_path / "hf"))
    assert default["train"].num_rows == report.rows["gap_finder/train"] == 1
    for role in ROLES:
        loaded = load_dataset(str(out), role, cache_dir=str(tmp_path / f"hf-{role}"))
        row = loaded["train"][0]
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        assert row["messages"][2]["content"] == row["completion"] == row["artifact"]
        assert row["prompt"].endswith("JSON object.") and row["problem_setting"] in row["prompt"]
        lines = (out / role / "train.openai.jsonl").read_text().splitlines()
        assert len(lines) == loaded["train"].num_rows  # one line per training example
        assert json.loads(lines[0])["messages"] == row["messages"]
    papers = pl.read_parquet(out / "vault" / "papers.parquet")
    assert set(papers["arxiv_id"]) == VAULT_IDS  # the retrievable vault, pre-cutoff only
    assert set(pl.read_parquet(out / "vault" / "views.parquet")["arxiv_id"]) <= VAULT_IDS
    card = (out / "README.md").read_text()
    for field in ("license_name:", "license_link:", "task_categories:", "size_categories:",
                  "dataset_info:", "default: true", "num_examples: 1", "@misc{"):
        assert field in card, field
    assert "`mapping` 2" in card  # the reference-grounded score's field weights
    mask = os.umask(0)
    os.umask(mask)
    for path in [out, *out.rglob("*")]:  # the umask's permissions (0755 / 0644 under 022)
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o777 if path.is_dir() else 0o666) & ~mask, path


def _use_in_an_evaluation_set(paths: VaultPaths) -> None:
    pl.DataFrame({"forum_id": ["f1"], "arxiv_id": [f"{TARGET}v2"]}).write_parquet(
        paths.table("submissions"))
    pl.DataFrame({"forum_id": ["f1"], "label": ["Oral"]}).write_parquet(
        paths.table("eval_pointwise"))


def test_evaluation_papers_are_left_out_of_training_exports(vault: VaultPaths,
                                                            tmp_path: Path) -> None:
    _use_in_an_evaluation_set(vault)
    build_training(vault)
    examples = pl.read_parquet(vault.table("training_examples"))
    assert examples["evaluation_paper"].all()
    report = export_datasets(vault, tmp_path / "out")
    assert report.evaluation_excluded == [TARGET]
    for role in ROLES:
        assert pl.read_parquet(tmp_path / "out" / role / "train.parquet").is_empty()
    assert f"**left out** of the training files: {TARGET}." in (
        tmp_path / "out" / "README.md").read_text()
    kept = export_datasets(vault, tmp_path / "all", include_evaluation=True)
    assert kept.evaluation_excluded == [] and kept.rows["innovator/train"] == 1


def test_vault_score_cli(vault: VaultPaths, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export_datasets(vault, out)
    reference = pl.read_parquet(out / "gap_finder" / "train.parquet")["artifact"][0]
    file = tmp_path / "generations.jsonl"
    file.write_text("\n".join(json.dumps(x) for x in [
        {"arxiv_id": TARGET, "role": "gap_finder", "generation": reference},
        {"arxiv_id": TARGET, "role": "innovator", "generation": "[]"}]) + "\n")
    result = CliRunner().invoke(app, ["score", str(file), "--export", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert lines[0]["valid"] and lines[0]["citation_f1"] == 1.0
    assert not lines[1]["valid"] and lines[1]["gated_citation_f1"] == 0.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"arxiv_id": "2699.00001", "role": "innovator", "generation": "{}"}\n')
    missing = CliRunner().invoke(app, ["score", str(bad), "--export", str(out)])
    assert missing.exit_code != 0 and "no example for 2699.00001" in missing.output


def test_the_index_leaves_evaluation_papers_out_by_default(vault_paths: VaultPaths) -> None:
    from testing.splits_vault import write_vault
    from vault_pipeline.embeddings.embedders import load_embedder
    from vault_pipeline.index.lance_index import IndexSettings, build_index, open_index
    from vault_pipeline.splits.build import build_splits

    write_vault(vault_paths)
    build_splits(vault_paths, SPLITS)
    pl.DataFrame({"forum_id": ["f1"], "arxiv_id": ["2401.00001"]}).write_parquet(
        vault_paths.table("submissions"))
    pl.DataFrame({"forum_id_a": ["f1"], "forum_id_b": ["f9"]}).write_parquet(
        vault_paths.table("eval_pairwise"))
    embedder = load_embedder()

    def indexed() -> set[str]:
        return set(pl.from_arrow(open_index(vault_paths).to_arrow())["arxiv_id"].to_list())

    report = build_index(vault_paths, embedder)
    assert report.evaluation_excluded == 1 and "2401.00001" not in indexed()
    assert "2402.00002" in indexed()
    build_index(vault_paths, embedder, IndexSettings(exclude_evaluation=False))
    assert "2401.00001" in indexed()


def test_a_target_without_a_record_is_quarantined_for_every_role(vault: VaultPaths) -> None:
    records = pl.read_parquet(vault.table("masked_records"))
    records.filter(pl.col("arxiv_id") != TARGET).write_parquet(vault.table("masked_records"))
    report = build_role_artifacts(vault)
    assert report.without_record == [TARGET] and report.artifacts == 0
    failures = pl.read_parquet(vault.table("role_artifact_failures"))
    assert sorted(failures["role"]) == sorted(ROLES)
    assert set(failures["reason"]) == {"no masked record for this target: materialize "
                                       "masked_records"}


def test_search_by_paper_gives_each_paper_once(vault_paths: VaultPaths) -> None:
    from testing.splits_vault import write_vault
    from vault_pipeline.embeddings.embedders import load_embedder
    from vault_pipeline.index.lance_index import build_index
    from vault_pipeline.index.papers import search_papers
    from vault_pipeline.index.search import SearchFilters, search_vault
    from vault_pipeline.splits.build import build_splits

    write_vault(vault_paths)
    build_splits(vault_paths, SPLITS)
    build_index(vault_paths, load_embedder())
    query = "latency of a cheap first stage before a costly reranker"
    views = search_vault(vault_paths, query, k=6)
    assert len({h.arxiv_id for h in views}) < len(views)  # views repeat papers
    papers = search_papers(vault_paths, query, k=3, other_views=True)
    ids = [p.arxiv_id for p in papers]
    assert len(ids) == 3 == len(set(ids)) and ids[0] == views[0].arxiv_id
    assert papers[0].view == views[0].view and papers[0].other_views
    assert {v["view"] for v in papers[0].other_views} <= set(VIEW_NAMES) - {papers[0].view}
    other = search_papers(vault_paths, query, k=5, filters=SearchFilters(other_fields="cs"))
    assert other and all(not any(c.startswith("cs.") for c in p.categories) for p in other)
    result = CliRunner().invoke(app, ["search", query, "--k", "3", "--by-paper",
                                      "--home", str(vault_paths.home)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert [x["arxiv_id"] for x in lines] == ids and lines[0]["other_views"] == []


def test_a_vault_paper_under_the_targets_title_is_never_a_near_miss(vault: VaultPaths) -> None:
    papers = pl.read_parquet(vault.table("papers"))
    title = papers.filter(pl.col("arxiv_id") == TARGET)["title"][0]
    retitled = papers.with_columns(title=pl.when(pl.col("arxiv_id") == "2401.00001")
                                   .then(pl.lit(f"{title}, Revisited")).otherwise("title"))
    retitled.write_parquet(vault.table("papers"))
    build_role_artifacts(vault, IdeasSettings(backend="extractive"))
    gaps = json.loads(_artifacts(vault).filter(pl.col("role") == "gap_finder")["data"][0])
    near = {m["arxiv_id"] for a in gaps["axes"] for g in a["gaps"] for m in g["near_misses"]}
    assert "2401.00001" not in near and near
