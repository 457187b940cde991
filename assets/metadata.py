"""Turn the library's schemas and counts into Dagster metadata the UI renders."""


from collections.abc import Mapping

import dagster as dg

from vault_pipeline.checks import Outcome
from vault_pipeline.paths import VaultPaths
from vault_pipeline.schemas import TableSchema


def column_schema(schema: TableSchema) -> dg.TableSchema:
    return dg.TableSchema(
        columns=[dg.TableColumn(c.name, str(c.type), description=c.doc) for c in schema.columns]
    )


def table_attrs(schema: TableSchema) -> dict[str, object]:
    """What every table asset shows in the UI: its description and its columns, both taken
    from the one schema definition (for ``@asset(...)`` or ``AssetSpec(...)``)."""
    return {"description": schema.doc,
            "metadata": {"dagster/column_schema": column_schema(schema)}}


def table_spec(schema: TableSchema, group: str, deps: list[str],
               kinds: frozenset[str] = frozenset({"polars", "parquet"})) -> dg.AssetSpec:
    """The spec of one output table of a multi-asset, named after its schema."""
    return dg.AssetSpec(schema.name, group_name=group, deps=deps, kinds=set(kinds),
                        **table_attrs(schema))  # type: ignore[arg-type]


def table_path(paths: VaultPaths, schema: TableSchema) -> dg.MetadataValue:
    """Where the table's Parquet file lies, for a materialization's metadata."""
    return dg.MetadataValue.path(paths.store.path(schema))


ORDERED_LABELS = frozenset({"year", "month", "score", "bin"})  # shown in their own order


def counts_table(counts: Mapping[str, int], label: str) -> dg.MetadataValue:
    """A table the UI renders and sorts (label, rows): years and other ordered labels in
    their order, everything else largest first."""
    if label in ORDERED_LABELS:
        rows = sorted(counts.items(), key=lambda kv: (kv[0] is None, str(kv[0])))
    else:
        rows = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    schema = dg.TableSchema(columns=[dg.TableColumn(label, "string"),
                                     dg.TableColumn("rows", "int")])
    return dg.MetadataValue.table(
        records=[dg.TableRecord({label: str(k), "rows": int(v)}) for k, v in rows],
        schema=schema)


def check_result(outcome: Outcome,
                 severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR
                 ) -> dg.AssetCheckResult:
    """A library check outcome as a Dagster check result (lists and dicts as JSON)."""
    return dg.AssetCheckResult(
        passed=outcome.passed, description=outcome.description, severity=severity,
        metadata={k: dg.MetadataValue.json(v) if isinstance(v, (dict, list)) else v
                  for k, v in outcome.metadata.items()},
    )
