"""The export's retrievable vault carries the held version's day, and cut at a date it
drops what a session may not see, as the tools do."""

from __future__ import annotations

import json

import polars as pl

from tests.access.world_vault import NEAR_DUPLICATE, NO_HISTORY, REVISED, TARGET
from vault_pipeline.access.export_world import session_vault
from vault_pipeline.datasets.export import _vault_tables


def test_export_vault_cut_like_a_session(world_paths, tmp_path) -> None:
    splits = world_paths.store.read_required("splits")
    papers, views = _vault_tables(world_paths, splits, set())
    held = dict(papers.select("arxiv_id", "version_created").iter_rows())
    assert str(held[REVISED]) == "2025-09-01" and held.get(NO_HISTORY) is None
    (tmp_path / "vault").mkdir()
    papers.write_parquet(tmp_path / "vault" / "papers.parquet")
    views.write_parquet(tmp_path / "vault" / "views.parquet")
    (tmp_path / "manifest.json").write_text(json.dumps({"cutoff": "2026-01-01"}))
    (tmp_path / "innovator").mkdir()
    pl.DataFrame({"arxiv_id": [TARGET], "title": ["Adaptive Capacity for Expert Routing"]}
                 ).write_parquet(tmp_path / "innovator" / "train.parquet")
    seen_papers, seen_views = session_vault(tmp_path, "2025-09-01", TARGET)
    ids = set(seen_papers["arxiv_id"])
    assert NEAR_DUPLICATE not in ids and REVISED not in ids and NO_HISTORY not in ids
    assert "2401.00001" in ids and set(seen_views["arxiv_id"]) <= ids
    later, _ = session_vault(tmp_path, "2025-09-02")
    assert {REVISED, NEAR_DUPLICATE} <= set(later["arxiv_id"])
