"""Turn the library's schemas and counts into Dagster metadata the UI renders."""


from collections.abc import Mapping, Sequence

import dagster as dg

from vault_pipeline.overview import charts
from vault_pipeline.pipeline import figures
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.schemas import TableSchema
from vault_pipeline.store.paths import VaultPaths


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
               kinds: frozenset[str] = frozenset({"polars", "parquet"}),
               code_version: str | None = None) -> dg.AssetSpec:
    """The spec of one output table of a multi-asset, named after its schema."""
    return dg.AssetSpec(schema.name, group_name=group, deps=deps, kinds=set(kinds),
                        code_version=code_version,
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


def bar_chart(items: Sequence[tuple[str, float]], title: str,
              percent: bool = False) -> dg.MetadataValue:
    """Horizontal bars (categories, statuses, rates) the UI shows as a picture."""
    return dg.MetadataValue.md(charts.markdown_image(charts.bars(items, title, percent=percent),
                                                     title))


def year_chart(counts: Mapping[str, int], title: str) -> dg.MetadataValue:
    """Columns by year, every year from the first to the last, as a picture."""
    return dg.MetadataValue.md(charts.markdown_image(charts.columns(figures.years(counts),
                                                                    title), title))


def rates_table(rates: Sequence[tuple[str, float]]) -> dg.MetadataValue:
    schema = dg.TableSchema(columns=[dg.TableColumn("rate", "string"),
                                     dg.TableColumn("value", "float")])
    return dg.MetadataValue.table(
        records=[dg.TableRecord({"rate": k, "value": round(v, 6)}) for k, v in rates],
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
