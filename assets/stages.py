"""Assets generated from the library's stage declarations (`vault_pipeline.pipeline.stage`): the
dependencies come from the stage's inputs, the specs from its outputs, the Dagster config
from its settings class, the metadata from its report. An asset module keeps only what is
particular to Dagster (kinds, config documentation, checks)."""

from collections.abc import Callable, Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import dagster as dg

from assets.metadata import (
    bar_chart,
    column_schema,
    counts_table,
    table_path,
    table_spec,
    year_chart,
)
from assets.ray_jobs import launched_as_ray_job, run_as_ray_job
from assets.resources import VaultResource
from assets.run_config import stage_config
from vault_pipeline.freshness import fingerprints
from vault_pipeline.freshness.code_version import code_version
from vault_pipeline.pipeline.progress import for_stage
from vault_pipeline.pipeline.stage import (
    DECLARED,
    Artifact,
    Chart,
    Counts,
    Daily,
    Markdown,
    Output,
    Partitions,
    Rows,
    RunContext,
    Stage,
)
from vault_pipeline.store.paths import VaultPaths

PARQUET = frozenset({"polars", "parquet"})


def _metadata(figures: Mapping[str, object]) -> dict[str, object]:
    def value(v: object) -> object:
        if isinstance(v, Counts):
            return counts_table(v.counts, v.label)
        if isinstance(v, Markdown):
            return dg.MetadataValue.md(v)
        if isinstance(v, Chart):
            return (year_chart(dict(v.items), v.title) if v.by_year
                    else bar_chart(v.items, v.title, percent=v.percent))
        if isinstance(v, Rows):
            schema = dg.TableSchema(columns=[dg.TableColumn(c, t) for c, t in v.columns.items()])
            return dg.MetadataValue.table(records=[dg.TableRecord(dict(r)) for r in v.records],
                                          schema=schema)
        if isinstance(v, Path):
            return dg.MetadataValue.path(str(v))
        return dg.MetadataValue.json(v) if isinstance(v, (dict, list)) else v

    return {k: value(v) for k, v in figures.items()}


def _spec(output: Output, stage: Stage, kinds: frozenset[str]) -> dg.AssetSpec:
    """An output's spec; its code version is the pipeline's, the one the CLI's no-op check
    counts, so the UI and the CLI call the same assets stale."""
    if not isinstance(output, Artifact):
        return table_spec(output, stage.group, list(stage.inputs), kinds,
                          code_version=code_version())
    metadata = {"dagster/column_schema": column_schema(output.schema)} if output.schema else {}
    return dg.AssetSpec(output.name, group_name=stage.group, deps=list(stage.inputs),
                        kinds=set(kinds), description=output.doc, metadata=metadata,
                        code_version=code_version())


def _record(paths: VaultPaths, stage: Stage, run_config: Mapping[str, Any]) -> None:
    """What the stage's outputs were built from, recorded as the CLI records it, whichever
    face launched the run."""
    fingerprints.record_step(paths, fingerprints.graph_of(DECLARED.values()),
                             [o.name for o in stage.outputs], dict(run_config or {}))


def _path(paths: Any, output: Output) -> dg.MetadataValue:
    if isinstance(output, Artifact):
        return dg.MetadataValue.path(str(output.path(paths)))
    return table_path(paths, output)


def set_values(config: dg.Config) -> dict[str, Any]:
    """A run config as settings values: a nested config (another stage's settings) without
    its unset fields, so that they fall back to that stage's lower layers."""
    return {k: {kk: vv for kk, vv in v.items() if vv is not None} if isinstance(v, dict) else v
            for k, v in config.model_dump().items()}


def config_class(stage: Stage) -> type[dg.Config]:
    """The run config of a stage, one optional field per field of its settings class."""
    settings, section = stage.settings, stage.section or stage.name
    written = settings.__doc__ and not settings.__doc__.startswith(f"{settings.__name__}(")
    doc = (f"{' '.join(settings.__doc__.split())} " if written else "") + (
        f"Unset fields fall back to `vault.toml` [{section}], then "
        f"`VAULT_{section.upper()}_<FIELD>`, then the defaults of "
        f"`{settings.__module__}.{settings.__qualname__}`.")
    name = "".join(w.title() for w in stage.name.split("_")) + "Config"
    return stage_config(settings, section, name, doc)


def _partitions(declared: Partitions | None
                ) -> tuple[dg.PartitionsDefinition | None, dg.BackfillPolicy | None]:
    """Dagster's partitions (and backfill policy) of a stage's declared partitions."""
    if declared is None:
        return None, None
    if isinstance(declared, Daily):
        days = dg.DailyPartitionsDefinition(start_date=declared.first.isoformat(),
                                            end_offset=0)
        policy = (dg.BackfillPolicy.multi_run(max_partitions_per_run=declared.per_run)
                  if declared.per_run > 1 else None)
        return days, policy
    return dg.StaticPartitionsDefinition(list(declared.keys)), None


def _where(context: dg.AssetExecutionContext, declared: Partitions | None
           ) -> tuple[str | None, tuple[date, date] | None]:
    """The run's partition key and, for days, its window (first and last day, inclusive)."""
    if declared is None:
        return None, None
    if isinstance(declared, Daily):
        window = context.partition_time_window
        first, last = window.start.date(), (window.end - timedelta(days=1)).date()
        return first.isoformat(), (first, last)
    return context.partition_key, None


def stage_asset(stage: Stage, kinds: frozenset[str] = PARQUET,
                kinds_of: Mapping[str, frozenset[str]] | None = None,
                config: type[dg.Config] | None = None,
                values: Callable[[Any], Mapping[str, Any]] = set_values,
                paths: VaultPaths | None = None,
                ) -> dg.AssetsDefinition:
    """One multi-asset named after the stage: an output each, every one depending on the
    stage's inputs. ``kinds_of`` gives an output other kinds than ``kinds``; ``config``
    replaces the config generated from the settings class (to document it, or to nest
    another stage's); ``values`` turns the run config into settings values. A partitioned
    stage needs ``paths``, the vault the definitions are built for (its partitions come from
    that vault's settings); its runs go to the stage's ``pool``."""
    config = config or config_class(stage)
    if stage.partitions is not None and paths is None:
        raise ValueError(f"stage {stage.name} is partitioned: build its asset for a vault")
    declared = stage.partitions(paths) if stage.partitions and paths else None
    partitions_def, backfill = _partitions(declared)

    def _asset(context: dg.AssetExecutionContext, config, vault: VaultResource):
        paths = vault.paths()

        def render(output: Output, figures: Mapping[str, object]) -> dict[str, object]:
            return {"path": _path(paths, output), **_metadata(figures)}

        if launched_as_ray_job(stage, paths):
            yield from run_as_ray_job(context, stage, paths, values(config), render)
            _record(paths, stage, context.run.run_config)
            return
        settings = stage.resolve(home=paths.home, run_config=values(config))
        partition, window = _where(context, declared)
        report = stage.run(paths, settings, RunContext(context.run.run_id, context.log.info,
                                                         for_stage(stage.name), partition,
                                                         window, stage.used_settings(paths.home)))
        for warning in stage.warnings(report):
            context.log.warning(warning)
        context.log.info(stage.describe(report))
        figures = stage.figures(report)
        _record(paths, stage, context.run.run_config)
        for output in stage.outputs:
            yield dg.MaterializeResult(asset_key=output.name,
                                       metadata=render(output, figures.get(output.name, {})))

    _asset.__annotations__["config"] = config  # Dagster reads the config class from it
    return dg.multi_asset(name=stage.name,
                          specs=[_spec(o, stage, (kinds_of or {}).get(o.name, kinds))
                                 for o in stage.outputs],
                          partitions_def=partitions_def, backfill_policy=backfill,
                          pool=stage.pool)(_asset)
