"""Assets generated from stage declarations: each output table is an asset depending on
exactly the inputs its stage declares, with the figures of its report."""

from __future__ import annotations

import dagster as dg

from vault_pipeline import citations, reviews
from vault_pipeline.definitions import build_defs
from vault_pipeline.ideas.build import VIEWS_STAGE
from vault_pipeline.paths import VaultPaths

STAGES = (reviews.STAGE, citations.STAGE, VIEWS_STAGE)


def test_assets_follow_the_declarations() -> None:
    graph = build_defs().resolve_asset_graph()
    for stage in STAGES:
        for table in stage.outputs:
            parents = graph.get(dg.AssetKey(table.name)).parent_keys
            assert {k.to_user_string() for k in parents} == set(stage.inputs), table.name


def test_a_generated_asset_reports_each_output(vault_paths: VaultPaths) -> None:
    vault_paths.ensure()
    from assets import VaultResource
    from assets.citations import citations as asset

    result = dg.materialize([asset], resources={"vault": VaultResource()})
    assert result.success
    metadata = {e.asset_key.to_user_string(): e.step_materialization_data.materialization
                .metadata for e in result.get_asset_materialization_events()}
    assert metadata["citations"]["dagster/row_count"].value == 0
    assert metadata["citation_counts"]["path"].value.endswith("citation_counts.parquet")
