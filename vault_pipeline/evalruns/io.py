"""Reading and writing the run's tables in one place, so a change of table storage touches
these two functions only."""

from __future__ import annotations

import polars as pl

from ..paths import VaultPaths
from ..schemas import TableSchema
from ..storage import read_table, write_table


def load(paths: VaultPaths, schema: TableSchema) -> pl.DataFrame:
    """The table, empty (with its columns) when it was never written."""
    return read_table(paths.table(schema.name), schema)


def save(paths: VaultPaths, schema: TableSchema, frame: pl.DataFrame) -> int:
    return write_table(paths.table(schema.name), frame, schema)


def exists(paths: VaultPaths, schema: TableSchema) -> bool:
    return paths.table(schema.name).exists()
