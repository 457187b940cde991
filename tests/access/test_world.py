"""The session's world: held versions, unsafe dates, near-duplicates, the cutoff."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from tests.access.world_vault import NEAR_DUPLICATE, NO_HISTORY, REVISED, TARGET
from vault_pipeline.access.world import Catalog, make_world, parse_as_of
from vault_pipeline.errors import VaultError

TITLE = "Adaptive Capacity for Expert Routing"


def test_a_paper_is_seen_once_its_held_version_exists(world_paths) -> None:
    catalog = Catalog.of(world_paths)
    before = make_world(catalog, "2025-09-01")
    after = make_world(catalog, "2025-09-02")
    assert not before.admits(REVISED)  # v1 existed, but the vault holds v2 (2025-09-01)
    assert after.admits(REVISED) and after.admits(f"{REVISED}v1")
    assert not make_world(catalog, "2026-01-01").admits(NO_HISTORY)
    assert not after.admits("2601.00007")  # post-cutoff: never in the vault


def test_as_of_after_the_cutoff_is_the_cutoff(world_paths) -> None:
    catalog = Catalog.of(world_paths)
    assert make_world(catalog, "2030-01-01").as_of == date(2026, 1, 1)


@pytest.mark.parametrize("value", ["2025", "2025-06", "", "June 2025", "2025-13-01"])
def test_as_of_must_be_a_day(value: str) -> None:
    with pytest.raises(VaultError, match="not a day"):
        parse_as_of(value)


def test_target_hides_its_near_duplicate_by_title(world_paths) -> None:
    catalog = Catalog.of(world_paths)
    world = make_world(catalog, "2026-01-01", TARGET, TITLE)
    assert world.hidden == {TARGET, NEAR_DUPLICATE}
    assert not world.admits(NEAR_DUPLICATE)
    assert make_world(catalog, "2026-01-01").admits(NEAR_DUPLICATE)
    assert f"'{NEAR_DUPLICATE}'" in world.where()


def test_clusters_replace_the_title_rule(world_paths) -> None:
    catalog = Catalog.of(world_paths)
    clusters = pl.DataFrame({"cluster_id": ["c1"], "canonical_id": ["2405.00005"],
                             "members": [[TARGET, "2405.00005v2", "openreview:abc"]],
                             "why": ["test"]}).explode("members").rename(
        {"members": "member"}).select("cluster_id", "member").with_columns(
        pl.when(pl.col("member") == "2405.00005v2").then(pl.lit("2405.00005"))
        .otherwise("member").alias("member"))
    world = make_world(catalog, "2026-01-01", TARGET, TITLE, clusters)
    assert world.hidden == {TARGET, "2405.00005", "openreview:abc"}
    assert world.admits(NEAR_DUPLICATE)  # the stage's clusters decide, not the titles


def test_clusters_table_is_read_exploded(world_paths, tmp_path) -> None:
    from vault_pipeline.access.world import clusters_of
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(tmp_path / "v").ensure()
    pl.DataFrame({"cluster_id": ["c1"], "canonical_id": ["2405.00005"],
                  "members": [[TARGET, "arXiv:2405.00005v2"]], "why": ["exact"]}
                 ).write_parquet(paths.table("duplicate_clusters"))
    frame = clusters_of(paths)
    assert sorted(frame["member"].to_list()) == ["2405.00005", TARGET]


def test_similar_titles_agrees_with_difflib(world_paths) -> None:
    from vault_pipeline.evalsets.citation_windows import title_ratio

    catalog = Catalog.of(world_paths)
    title = "Adaptive capacity for expert routing!"
    expected = {r["arxiv_id"] for r in catalog.frame.iter_rows(named=True)
                if title_ratio(r["title"] or "", title) >= 0.8}
    assert set(catalog.similar_titles(title)) == expected == {NEAR_DUPLICATE}


def test_title_rule_where_no_cluster_holds_the_target(world_paths) -> None:
    catalog = Catalog.of(world_paths)
    clusters = pl.DataFrame({"cluster_id": ["c9", "c9"], "member": ["2402.00002", "2401.00001"]})
    world = make_world(catalog, "2026-01-01", TARGET, TITLE, clusters)
    assert world.hidden == {TARGET, NEAR_DUPLICATE}


@pytest.mark.parametrize("as_of", ["2024-03-01", "2025-09-01", "2025-09-02", "2026-01-01"])
def test_the_seen_array_is_position_ofs_rule_row_for_row(world_paths, as_of) -> None:
    """A batch keeps its search rows by `World.seen`: it must agree with `position_of`
    (cutoff, held version, evaluation papers, the target and its near-duplicates)."""
    catalog = Catalog.of(world_paths)
    for world in (make_world(catalog, as_of), make_world(catalog, as_of, TARGET, TITLE)):
        ids = catalog.frame["arxiv_id"].to_list()
        assert world.seen.tolist() == [world.position_of(i) is not None for i in ids]
    near = catalog.position(NEAR_DUPLICATE)
    assert make_world(catalog, "2026-01-01").seen[near]
    assert not make_world(catalog, "2026-01-01", TARGET, TITLE).seen[near]
