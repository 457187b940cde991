"""Assets generated from the library's stage declarations (`vault_pipeline.stages`): the
dependencies come from the stage's inputs, the specs from its output schemas, the metadata
from its report. An asset module keeps only what is particular to Dagster."""

from collections.abc import Mapping

import dagster as dg

from vault_pipeline.stages import Counts, Stage

from .metadata import counts_table, table_path, table_spec
from .resources import VaultResource


def _metadata(figures: Mapping[str, object]) -> dict[str, object]:
    return {k: counts_table(v.counts, v.label) if isinstance(v, Counts) else
            dg.MetadataValue.json(v) if isinstance(v, (dict, list)) else v
            for k, v in figures.items()}


def stage_asset(stage: Stage, kinds: frozenset[str] = frozenset({"polars", "parquet"})
                ) -> dg.AssetsDefinition:
    """One multi-asset: an output table each, every one depending on the stage's inputs."""

    @dg.multi_asset(name=stage.name,
                    specs=[table_spec(t, stage.group, list(stage.inputs), kinds)
                           for t in stage.outputs])
    def _asset(context: dg.AssetExecutionContext, vault: VaultResource):
        paths = vault.paths()
        report = stage.run(paths)
        context.log.info(stage.describe(report))
        figures = stage.figures(report)
        for table in stage.outputs:
            yield dg.MaterializeResult(asset_key=table.name, metadata={
                **_metadata(figures[table.name]), "path": table_path(paths, table)})

    return _asset
