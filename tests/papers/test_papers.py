"""The `papers` table: one row per paper, newest version wins, rejects with reasons."""

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import DATA, SAMPLE
from vault_pipeline.errors import VaultError
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import PAPERS
from vault_pipeline.store.paths import VaultPaths


def _build(paths: VaultPaths, *sources: Path) -> pl.DataFrame:
    RawZone(paths).import_paths(list(sources))
    build_papers(paths)
    return pl.read_parquet(paths.table("papers"))


def _row(papers: pl.DataFrame, arxiv_id: str) -> dict:
    (row,) = papers.filter(pl.col("arxiv_id") == arxiv_id).to_dicts()
    return row


def test_sample_and_constructed_sources_merge(vault_paths: VaultPaths) -> None:
    papers = _build(vault_paths, SAMPLE, DATA / "atom_old_style.xml",
                    DATA / "oai_arxivraw_listrecords.xml", DATA / "oai_dc_listrecords.xml")
    assert papers.schema == PAPERS.polars
    assert papers.get_column("arxiv_id").is_unique().all()
    assert papers.height == 221 + 3  # hep-th/9901001, math/0309136, 2401.00001 are new
    # the snapshot's v2 beats the API's v1 of the same paper
    first = _row(papers, "0704.0001")
    assert (first["latest_version"], first["source"]) == (2, "arxiv_snapshot")
    assert first["title"].startswith("Calculation of prompt diphoton production cross sections")
    # arXivRaw's v3 beats the snapshot's v2
    second = _row(papers, "0704.0002")
    assert (second["latest_version"], second["source"]) == (3, "oai_arXivRaw")
    assert second["title"] == "Sparsity-certifying Graph Decompositions (revised)"
    # old-style ids: kept exactly, subject class dropped
    old = _row(papers, "hep-th/9901001")
    assert old["title"] == "Boundary Terms in a Constructed Gauge Theory"
    assert old["abstract"] == "We study boundary terms in a constructed gauge theory."
    assert _row(papers, "math/0309136")["categories"] == ["math.GT"]
    assert _row(papers, "2401.00001")["categories"] is None


def test_newest_version_wins_whatever_the_order(vault_paths: VaultPaths, tmp_path: Path) -> None:
    """The same two versions, with their files swapped in role and order."""
    line = json.loads((SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl")
                      .read_text().splitlines()[2])
    newer = line | {"title": "Newer title", "versions": line["versions"] + [
        {"version": "v9", "created": "Tue, 1 Sep 2026 10:00:00 GMT"}]}
    older = line | {"title": "Older title"}
    for order in ([older, newer], [newer, older]):
        home = VaultPaths(tmp_path / f"v{len(list(tmp_path.iterdir()))}").ensure()
        files = []
        for i, record in enumerate(order):
            path = tmp_path / f"part{i}.jsonl"
            path.write_text(json.dumps(record) + "\n")
            files.append(path)
        row = _row(_build(home, *files), line["id"])
        assert (row["title"], row["latest_version"]) == ("Newer title", 9)
        assert str(row["updated"]) == "2026-09-01"
        for path in files:
            path.unlink()


def test_rejected_rows_keep_their_reason(vault_paths: VaultPaths, tmp_path: Path) -> None:
    lines = (SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_text().splitlines()[:5]
    bad = [json.loads(line) for line in lines[:3]]
    bad[0]["id"] = "not-an-id"
    bad[1]["title"] = "   "
    bad[2]["versions"] = []
    path = tmp_path / "snap.jsonl"
    path.write_text("\n".join([*map(json.dumps, bad), *lines[3:], "{broken"]) + "\n")
    papers = _build(vault_paths, path)
    assert papers.height == 2
    rejected = pl.read_parquet(vault_paths.table("papers_rejected")).sort("position")
    assert rejected.select("position", "reason").rows() == [
        (1, "missing or invalid arXiv id"),
        (2, "empty title"),
        (3, "missing or unreadable v1 date"),
        (6, "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
    ]


def test_a_file_damaged_after_import_stops_the_build(vault_paths: VaultPaths) -> None:
    """A raw file damaged after import (disk, manual edit) no longer matches its record: the
    build stops and names it, rather than silently losing what it held."""
    zone = RawZone(vault_paths)
    zone.import_paths([SAMPLE, DATA / "oai_dc_listrecords.xml"])
    (dc,) = [f for f in zone.files() if f.formats == "dc"]
    target = zone.absolute(dc)
    target.chmod(0o644)
    target.write_bytes(target.read_bytes().replace(
        b"<ListRecords>", b"<error code='badArgument'>damaged</error><ListRecords>", 1))
    with pytest.raises(VaultError, match=r"raw zone damaged, 1 file\(s\): .*recorded"):
        build_papers(vault_paths)
    assert not vault_paths.table("papers").exists()


@pytest.mark.parametrize("rebuilds", [2])
def test_rebuild_is_stable(vault_paths: VaultPaths, rebuilds: int) -> None:
    first = _build(vault_paths, SAMPLE).sort("arxiv_id")
    for _ in range(rebuilds):
        build_papers(vault_paths)
    again = pl.read_parquet(vault_paths.table("papers")).sort("arxiv_id")
    assert again.equals(first)
    assert not list(vault_paths.scratch.iterdir())


def test_empty_vault_builds_empty_tables(vault_paths: VaultPaths) -> None:
    report = build_papers(vault_paths)
    assert report.rows == 0
    assert pl.read_parquet(vault_paths.table("papers")).schema == PAPERS.polars
    shutil.rmtree(vault_paths.raw)
