"""Assets generated from stage declarations: each output table is an asset depending on
exactly the inputs its stage declares, with the figures of its report."""

from __future__ import annotations

import dagster as dg

from vault_pipeline.audit import stage as integrity
from vault_pipeline.citations import stage as citations
from vault_pipeline.datasets import stage as datasets
from vault_pipeline.definitions import build_defs
from vault_pipeline.documents import stage as documents
from vault_pipeline.duplicates import stage as duplicates
from vault_pipeline.evalruns import stage as evalruns
from vault_pipeline.evalsets import stage as evalsets
from vault_pipeline.ideas.stage import MASKED_RECORDS_STAGE, VIEWS_STAGE
from vault_pipeline.index import stage as index
from vault_pipeline.papers import stage as papers
from vault_pipeline.pipeline.settings import settings_fields
from vault_pipeline.raw import stage as raw
from vault_pipeline.reviews import stage as reviews
from vault_pipeline.splits import stage as splits
from vault_pipeline.store.paths import VaultPaths

STAGES = (raw.STAGE, papers.STAGE, documents.STAGE, reviews.STAGE, citations.STAGE,
          MASKED_RECORDS_STAGE, VIEWS_STAGE, duplicates.STAGE, splits.STAGE, index.STAGE,
          evalsets.STAGE, integrity.STAGE, datasets.ROLE_ARTIFACTS_STAGE, datasets.TRAINING_STAGE,
          datasets.EXPORT_STAGE, evalruns.STAGE)


def test_assets_follow_the_declarations() -> None:
    defs = build_defs()
    graph = defs.resolve_asset_graph()
    for stage in STAGES:
        for table in stage.outputs:
            parents = graph.get(dg.AssetKey(table.name)).parent_keys
            assert {k.to_user_string() for k in parents} == set(stage.inputs), table.name
        op = defs.get_assets_def(stage.outputs[0].name).op
        fields = set(op.config_schema.as_field().config_type.fields) if op.config_schema else set()
        assert set(settings_fields(stage.settings)) - {"ideas", "vllm_engine_args"} <= fields


def test_a_stage_resolves_its_settings_through_every_layer(tmp_path) -> None:
    (tmp_path / "vault.toml").write_text("[index]\nann_min_rows = 5\nbatch_size = 4\n")
    settings = index.STAGE.resolve(home=tmp_path, run_config={"batch_size": 8, "model": None})
    assert (settings.ann_min_rows, settings.batch_size, settings.model) == (5, 8, "embedded")


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
