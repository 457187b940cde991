"""Training datasets per role and split, and `export`: files a trainer loads in one line
(`datasets`, Polars), a manifest that verifies, and one that catches tampering."""

from __future__ import annotations

import json

import polars as pl
import pytest

from testing.splits_vault import CUTOFF, NO_VIEWS, write_vault
from vault_pipeline.datasets.card import card_disagreements
from vault_pipeline.datasets.card_facts import read_facts
from vault_pipeline.datasets.export import export_datasets
from vault_pipeline.datasets.manifest import verify_export
from vault_pipeline.datasets.training import ROLES, build_training
from vault_pipeline.errors import VaultError
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings

SETTINGS = SplitSettings(cutoff=CUTOFF, validation=0.25, test=0.25, seed=7)  # one of each


@pytest.fixture
def vault(vault_paths):
    write_vault(vault_paths)
    cited = ["2401.00001v2", "2402.00002", "2403.00003", "2605.00011"]  # 3 of 4 in the vault
    citations = pl.DataFrame({"citing_s2_id": ["a"] * 4, "citing_arxiv_id": ["2604.00010"] * 4,
                              "citing_doi": [None] * 4, "cited_s2_id": ["w", "x", "y", "z"],
                              "cited_arxiv_id": cited, "cited_doi": [None] * 4})
    citations.write_parquet(vault_paths.table("citations"))
    build_splits(vault_paths, SETTINGS)
    build_training(vault_paths)
    return vault_paths


def test_one_row_per_target_and_role_with_inputs_and_reference(vault) -> None:
    examples = pl.read_parquet(vault.table("training_examples"))
    splits = pl.read_parquet(vault.table("splits"))
    targets = splits.filter(pl.col("split").is_in(["train", "validation", "test"]))
    assert examples.height == 3 * targets.height
    assert set(examples["role"]) == set(ROLES)
    partition = examples.select("arxiv_id", "split").unique()
    assert partition.height == targets.height  # one split per paper, whatever the role
    assert partition.join(targets.select("arxiv_id", "split"), on=["arxiv_id", "split"],
                          how="anti").is_empty()
    row = examples.filter((pl.col("arxiv_id") == "2604.00010")
                          & (pl.col("role") == "innovator")).row(0, named=True)
    assert row["reference_view"] == "intuition" and row["reference"].startswith("Idea:")
    assert row["problem_setting"].startswith("Setting:") and row["challenge"]
    assert row["reference_citations"] == ["2401.00001", "2402.00002", "2403.00003",
                                          "2605.00011"]
    assert row["citations_in_vault"] == ["2401.00001", "2402.00002", "2403.00003"]
    assert row["views_backend"] == "extractive" and row["cutoff"] == CUTOFF
    assert NO_VIEWS not in set(examples["arxiv_id"])


def test_export_loads_with_datasets_and_polars_and_verifies(vault, tmp_path) -> None:
    out = tmp_path / "export"
    report = export_datasets(vault, out)
    assert verify_export(out) == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["cutoff"] == str(CUTOFF) and manifest["seed"] == 7
    assert manifest["project_version"] and manifest["provenance"]["views"][0]["views_backend"]
    listed = {f["path"] for f in manifest["files"]}
    assert {"gap_finder/train.parquet", "gap_finder/train.jsonl", "splits.parquet",
            "README.md"} <= listed
    table = next(t for t in manifest["tables"] if t["name"] == "gap_finder/train")
    assert [c["name"] for c in table["schema"]][:3] == ["role", "split", "arxiv_id"]
    train = pl.read_parquet(out / "gap_finder" / "train.parquet")
    assert train.height == report.rows["gap_finder/train"] > 0
    lines = pl.read_ndjson(out / "gap_finder" / "train.jsonl")
    assert lines["arxiv_id"].to_list() == train["arxiv_id"].to_list()

    from datasets import load_dataset

    files = {s: str(out / "gap_finder" / f"{s}.parquet")
             for s in ("train", "validation", "test") if report.rows[f"gap_finder/{s}"]}
    loaded = load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "hf"))
    assert loaded["train"].num_rows == train.height
    assert loaded["train"][0]["reference_view"] == "research_gap"
    by_card = load_dataset(str(out), "innovator", cache_dir=str(tmp_path / "hf2"))
    assert by_card["train"].num_rows == report.rows["innovator/train"]
    card = (out / "README.md").read_text()
    assert "CC0" in card and "recorded per row in `license`" in card
    assert "config_name: gap_finder" in card


def test_verify_catches_changed_missing_and_unlisted_files(vault, tmp_path) -> None:
    out = tmp_path / "export"
    export_datasets(vault, out)
    (out / "innovator" / "train.jsonl").write_text('{"arxiv_id": "forged"}\n')
    (out / "notes.txt").write_text("extra")
    (out / "report_writer" / "test.parquet").unlink()
    problems = verify_export(out)
    assert "innovator/train.jsonl: sha256 differs from the manifest" in problems
    assert "notes.txt: not in the manifest" in problems
    assert "report_writer/test.parquet: missing" in problems


def test_export_refuses_to_clobber_and_replaces_on_request(vault, tmp_path) -> None:
    out = tmp_path / "export"
    export_datasets(vault, out)
    with pytest.raises(VaultError, match="--overwrite"):
        export_datasets(vault, out)
    export_datasets(vault, out, overwrite=True)
    assert verify_export(out) == []
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"x")
    with pytest.raises(VaultError, match="holds no export"):
        export_datasets(vault, other, overwrite=True)
    assert (other / "cat.jpg").exists()


def test_export_without_targets_is_empty_but_valid(vault_paths, tmp_path) -> None:
    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF.replace(year=2030)))
    build_training(vault_paths)
    out = tmp_path / "export"
    report = export_datasets(vault_paths, out)
    assert verify_export(out) == []
    assert all(rows == 0 for name, rows in report.rows.items()
               if name != "splits" and not name.startswith("vault/"))
    assert report.rows["vault/papers"] == 12  # everything is before a 2030 cutoff
    card = (out / "README.md").read_text()
    assert "This export has no targets" in card
    assert "config_name" not in card and "load_dataset(" not in card  # nothing would load
    assert "nothing for `datasets.load_dataset` to load" in card
    assert pl.read_parquet(out / "gap_finder" / "test.parquet").columns[:2] == ["role", "split"]
    assert card_disagreements(out) == []


def test_export_before_the_datasets_exist_is_a_clear_error(vault_paths, tmp_path) -> None:
    with pytest.raises(VaultError, match="training_examples"):
        export_datasets(vault_paths, tmp_path / "out")


def test_card_shows_loading_code_for_exactly_the_sets_that_load(vault, tmp_path) -> None:
    """Every config and split the card names loads with `load_dataset(path, name)`; an
    empty split is named absent; `messages` ends with the reference as the assistant turn."""
    from datasets import load_dataset

    out = tmp_path / "export"
    export_datasets(vault, out)
    facts = read_facts(out)
    card = (out / "README.md").read_text()
    for n, role in enumerate(ROLES):
        present = facts.present(role)
        assert present, role
        loaded = load_dataset(str(out), role, cache_dir=str(tmp_path / f"hf{n}"))
        assert sorted(loaded) == sorted(present)
        assert f'load_dataset("path/to/this/folder", "{role}")' in card
        for split in present:
            assert loaded[split].num_rows == facts.rows[f"{role}/{split}"]
            for row in loaded[split]:  # chat turns exactly where there is a reference
                turns = row["messages"]
                if row["artifact"] is None:
                    assert turns is None
                    continue
                assert [t["role"] for t in turns] == ["system", "user", "assistant"]
                assert turns[-1]["content"] == row["artifact"]
    empty = pl.read_parquet(out / "gap_finder" / "train.parquet").head(0)
    empty.write_parquet(out / "gap_finder" / "train.parquet")  # a set becomes absent
    lines = card_disagreements(out)
    assert any("Absent" in line and "`gap_finder/train`" in line for line in lines)


def test_card_disagrees_with_an_edited_export(vault, tmp_path) -> None:
    out = tmp_path / "export"
    report = export_datasets(vault, out)
    assert card_disagreements(out) == []
    train = pl.read_parquet(out / "innovator" / "train.parquet")
    pl.concat([train, train.head(1)]).write_parquet(out / "innovator" / "train.parquet")
    lines = card_disagreements(out)
    rows = report.rows["innovator/train"]
    assert any(line.startswith("-") and f"num_examples: {rows}" in line for line in lines)
    assert any(line.startswith("+") and f"num_examples: {rows + 1}" in line for line in lines)
    papers = pl.read_parquet(out / "vault" / "papers.parquet")
    marked = int(papers["evaluation_paper"].sum())
    papers.with_columns(evaluation_paper=pl.lit(True)).write_parquet(
        out / "vault" / "papers.parquet")
    lines = card_disagreements(out)
    assert any(f"({papers.height} marked in" in line for line in lines if line[0] == "+")
    assert any(f"({marked} marked in" in line for line in lines if line[0] == "-")
