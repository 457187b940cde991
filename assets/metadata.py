"""Turn the library's schemas and counts into Dagster metadata the UI renders."""


from collections.abc import Mapping

import dagster as dg

from vault_pipeline.schemas import TableSchema


def column_schema(schema: TableSchema) -> dg.TableSchema:
    return dg.TableSchema(
        columns=[dg.TableColumn(c.name, str(c.type), description=c.doc) for c in schema.columns]
    )


def counts_table(counts: Mapping[str, int], label: str) -> dg.MetadataValue:
    """A small Markdown table (label → count), largest first."""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    lines = [f"| {label} | rows |", "|---|---:|"] + [f"| {k} | {v:,} |" for k, v in rows]
    return dg.MetadataValue.md("\n".join(lines))
