"""A re-cut of the sample at 2007-04-02: the 41 papers published before it and revised after
it stay in the vault, each in its last pre-cutoff version, and no text of a later version
reaches the records, views or index. Full text is fetched by versioned id from a local
server (a missing version is a 404, recorded)."""

from __future__ import annotations

import hashlib
import shutil
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pymupdf
import pytest

from testing.sources_replay import ReplayServer, Reply, harvest_context
from tests.conftest import DATA, SAMPLE
from vault_pipeline.datasets.export import _vault_tables
from vault_pipeline.documents.build import DocumentsConfig, build_documents
from vault_pipeline.documents.workers import PoolSettings
from vault_pipeline.ideas.build import build_masked_records, build_views
from vault_pipeline.index import quality
from vault_pipeline.index.lance_index import build_index, open_index
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENTS, MASKED_RECORDS, PAPERS, VIEWS
from vault_pipeline.sources import fulltext
from vault_pipeline.sources.settings import FulltextScope
from vault_pipeline.splits.build import REVISED, build_splits
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths

CUTOFF = date(2007, 4, 2)


class HashEmbedder:
    """Vectors from word hashes: enough for the index's checks, no model to load."""

    name = source = "test-hash"
    dimension = 32

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                out[row, hashlib.sha256(word.encode()).digest()[0] % self.dimension] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def _pdf(title: str, body: str) -> bytes:
    """A one-page paper: the title, then each ``Heading\ntext`` block of ``body``."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), title, fontsize=18)
    top = 110
    for block in body.split("\n\n"):
        heading, _, text = block.partition("\n")
        page.insert_text((72, top), heading, fontsize=14, fontname="hebo")
        page.insert_textbox(pymupdf.Rect(72, top + 8, 520, top + 200), text, fontsize=10)
        top += 210
    return doc.tobytes()


V1_BODY = (
    "Abstract\nIon channels switch between open and closed states, and the rate of this "
    "gating controls how neurons fire. Existing kinetic models cannot explain the slow "
    "gating seen in recordings, because they treat each channel as independent. We propose "
    "a lattice model of coupled ion channels in which neighbouring channels interact. The "
    "key idea is that local coupling creates long-lived clusters of open channels. We "
    "derive the gating rates of the model and compare them with recordings.\n\n"
    "1 Introduction\nSlow gating of ion channels is a long-standing problem in biophysics. "
    "Prior work models channels one at a time and leaves the origin of slow gating open.")
V2_BODY = "Abstract\n" + "A LATER REVISION rewrites the whole paper. " * 12


def test_recut_keeps_revised_papers_in_their_pre_cutoff_version(
        vault_paths: VaultPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_SPLITS_CUTOFF", CUTOFF.isoformat())
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    shutil.copy(SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl", incoming)
    shutil.copy(DATA / "atom_versioned_0704.0008v1.xml", incoming)
    # 0704.0013: v1 of 2007-03-31, v2 of 2008: both files here, only v1 may be read
    (incoming / "0704.0013v1.pdf").write_bytes(_pdf("Version one", V1_BODY))
    (incoming / "0704.0013v2.pdf").write_bytes(_pdf("Version two", V2_BODY))
    RawZone(vault_paths).import_paths([incoming])
    build_papers(vault_paths)
    papers = vault_paths.store.read(PAPERS)
    revised = papers.filter((pl.col("published") < CUTOFF) & (pl.col("updated") >= CUTOFF))
    assert revised.height == 41

    build_documents(vault_paths, DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)),
                    cutoff=CUTOFF)
    docs = {r["arxiv_id"]: r for r in vault_paths.store.read(DOCUMENTS).iter_rows(named=True)}
    assert docs["0704.0013"]["version"] == 1 and "0704.0013v2.pdf (v2;" in \
        docs["0704.0013"]["notes"]
    ideas = build_masked_records(vault_paths, IdeasSettings(), log=lambda _: None, cutoff=CUTOFF)
    assert ideas.withheld == 39  # 41 revised, two with text of their pre-cutoff version
    build_views(vault_paths)
    report = build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    assert REVISED not in report.excluded_by_reason
    splits = vault_paths.store.read("splits").join(
        revised.select("arxiv_id", "latest_version"), on="arxiv_id", how="inner")
    assert splits.height == 41 and set(splits["split"]) == {"vault"}
    assert (splits["version"] < splits["latest_version"]).all()
    assert splits.filter(pl.col("arxiv_id") == "0704.0026")["reason"][0].endswith(
        "no views yet, so not in the index")

    records = vault_paths.store.read(MASKED_RECORDS)
    views = vault_paths.store.read(VIEWS)
    for table in (records, views):
        held = table.filter(pl.col("arxiv_id").is_in(revised["arxiv_id"].implode()))
        assert set(held["arxiv_id"]) == {"0704.0008", "0704.0013"}
        assert set(held["version"]) == {1}
    latest = dict(revised.select("arxiv_id", "abstract").iter_rows())
    for arxiv_id, text in views.select("arxiv_id", "text").iter_rows():
        if arxiv_id in latest:  # no sentence of the later abstract or version
            assert "LATER REVISION" not in text
            assert not any(s.strip() and s.strip() in text
                           for s in latest[arxiv_id].split(". ")[:3])

    exported, _views = _vault_tables(vault_paths, vault_paths.store.read("splits"), set())
    titles = {r["arxiv_id"]: r for r in exported.iter_rows(named=True)}
    assert titles["0704.0008"]["title"].endswith("(first version)")  # v1's own, from the API
    assert titles["0704.0026"]["title"] is None  # only the later title is known: withheld
    assert (titles["0704.0026"]["version"], titles["0704.0004"]["version"]) == (1, 1)
    assert titles["0704.0004"]["title"].startswith("A determinant of Stirling")  # unrevised

    build_index(vault_paths, HashEmbedder())
    index = pl.from_arrow(open_index(vault_paths).to_arrow())
    assert {"0704.0008", "0704.0013"} <= set(index["arxiv_id"])
    assert set(index.filter(pl.col("arxiv_id").is_in(["0704.0008", "0704.0013"]))
               ["version"]) == {1}
    assert quality.no_post_cutoff_rows(vault_paths).passed
    # the same row claiming the later version is caught
    table = open_index(vault_paths)
    late = table.search().where("arxiv_id = '0704.0013'").limit(1).to_arrow().to_pylist()
    table.delete("arxiv_id = '0704.0013'")
    table.add([late[0] | {"version": 2}])
    outcome = quality.no_post_cutoff_rows(vault_paths)
    assert not outcome.passed and outcome.metadata["examples"] == ["0704.0013"]


def test_full_text_is_fetched_by_versioned_id(vault_paths: VaultPaths,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """At a 2022-05-01 cutoff 2204.08348 (v1 of 2022-04-18, v3 of 2022-07-06) is fetched as
    v1; its e-print of v1 is missing (404) and recorded as failed."""
    monkeypatch.setenv("VAULT_SPLITS_CUTOFF", "2022-05-01")
    RawZone(vault_paths).import_paths([SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json"])
    build_papers(vault_paths)
    scope = FulltextScope(categories=(), published_from=None, max_per_run=100)
    with ReplayServer() as server:
        server.add("/pdf/2204.08348v1", Reply(body=_pdf("Version one", V1_BODY),
                                              content_type="application/pdf"))
        with harvest_context(vault_paths, server) as ctx:
            items = fulltext.plan(ctx, scope, ids=["2204.08348"])
            assert [i.url.removeprefix(server.url) for i in items] == [
                "/pdf/2204.08348v1", "/e-print/2204.08348v1"]
            report = fulltext.fetch(ctx, items)
        assert [s.path for s in server.log] == ["/pdf/2204.08348v1", "/e-print/2204.08348v1"]
    assert report.fetched == 1 and report.failed[0][0] == "arXiv-2204.08348v1"
    assert "404" in report.failed[0][1]
    build_documents(vault_paths, DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)),
                    cutoff=CUTOFF)
    row = vault_paths.store.read(DOCUMENTS).filter(pl.col("arxiv_id") == "2204.08348").row(
        0, named=True)
    assert (row["version"], row["status"], row["input_name"]) == (1, "ok", "2204.08348v1.pdf")
    monkeypatch.setenv("VAULT_SPLITS_CUTOFF", "2026-01-01")  # not revised after it: latest
    with ReplayServer() as server, harvest_context(vault_paths, server) as ctx:
        assert [i.stem for i in fulltext.plan(ctx, scope, ids=["2204.08348"])] == [
            "2204.08348v3", "arXiv-2204.08348v3"]
