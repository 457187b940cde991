"""The documents of a paper revised after the cutoff come from the version the vault holds:
a later version's file is left out (and named), the abstract of an unknown version is never
replaced by the latest one."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import polars as pl
import pymupdf

from tests.conftest import SAMPLE
from vault_pipeline.documents.build import DocumentsConfig, build_documents
from vault_pipeline.documents.workers import PoolSettings
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENTS, PAPERS
from vault_pipeline.store.paths import VaultPaths

FILES = ("q_testing_s0_m10_bc5a6c384fe9.json", "arxiv-single.xml", "2204.08348v3.pdf",
         "1401.2122v5.gz")


def _pdf(text: str) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "A first version", fontsize=16)
    page.insert_textbox(pymupdf.Rect(72, 100, 520, 700), text, fontsize=11)
    return doc.tobytes()


def _vault(paths: VaultPaths, tmp_path: Path) -> VaultPaths:
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    for name in FILES:
        shutil.copy(SAMPLE / name, incoming / name)
    body = "Introduction. " + "This is the body of the first version of the paper. " * 20
    (incoming / "2204.08348v1.pdf").write_bytes(_pdf(body))
    RawZone(paths).import_paths([incoming])
    build_papers(paths)
    return paths


def _docs(paths: VaultPaths, cutoff: date) -> dict[str, dict]:
    build_documents(paths, DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)),
                    cutoff=cutoff)
    docs = pl.read_parquet(paths.table(DOCUMENTS.name))
    return {r["arxiv_id"]: r for r in docs.iter_rows(named=True)}


def test_a_revised_paper_is_read_in_its_pre_cutoff_version(vault_paths: VaultPaths,
                                                           tmp_path: Path) -> None:
    paths = _vault(vault_paths, tmp_path)
    latest = _docs(paths, date(2026, 1, 1))  # nothing revised after it: the newest files
    assert latest["2204.08348"]["version"] == 3
    assert latest["1401.2122"]["version"] == 5 and latest["1401.2122"]["status"] == "ok"

    docs = _docs(paths, date(2022, 5, 1))  # 2204.08348: v1 of 2022-04-18, v3 of 2022-07-06
    held = docs["2204.08348"]
    assert (held["version"], held["status"], held["source"]) == (1, "ok", "pdf")
    assert "first version" in held["text"] and held["input_name"] == "2204.08348v1.pdf"
    assert "2204.08348v3.pdf (v3; the vault holds v1" in held["notes"]
    assert "abstract of v1 unknown" in held["notes"]


def test_no_latest_text_where_no_earlier_version_is_known(vault_paths: VaultPaths,
                                                          tmp_path: Path) -> None:
    paths = _vault(vault_paths, tmp_path)
    papers = paths.store.read(PAPERS)
    docs = _docs(paths, date(2016, 1, 1))  # 1401.2122: OAI `arXiv`, revised 2017, no history
    row = docs["1401.2122"]
    abstract = papers.filter(pl.col("arxiv_id") == "1401.2122")["abstract"][0]
    assert row["status"] == "no_source" and row["text"] is None and row["version"] is None
    assert "1401.2122v5.gz (v5; the vault holds no version known before it" in row["notes"]
    assert "no source lists its earlier versions" in row["notes"]
    assert abstract[:40] not in str(row)
    # a paper revised before the cutoff keeps its latest abstract, of its latest version
    plain = docs["1205.1866"]
    assert plain["source"] == "abstract_only" and plain["version"] == 1
    assert plain["text"] and plain["notes"] is None
