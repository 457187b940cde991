"""DuckDB over the vault: every Parquet table is a view named after it, so
``SELECT count(*) FROM papers`` works with no setup."""

from __future__ import annotations

from pathlib import Path

import duckdb

from .errors import VaultError
from .paths import VaultPaths


def table_files(paths: VaultPaths) -> dict[str, Path]:
    if not paths.tables.exists():
        return {}
    return {p.stem: p for p in sorted(paths.tables.glob("*.parquet"))}


def connect(paths: VaultPaths) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table."""
    connection = duckdb.connect(":memory:")
    for name, file in table_files(paths).items():
        literal = str(file).replace("'", "''")
        connection.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{literal}')")
    return connection


def query(paths: VaultPaths, sql: str) -> duckdb.DuckDBPyRelation:
    """Run one query; a bad query or a missing table is a VaultError with DuckDB's message."""
    connection = connect(paths)
    try:
        relation = connection.sql(sql)
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0]
        if not table_files(paths):
            message += " (the vault has no tables yet: run `vault demo` or `vault materialize`)"
        raise VaultError(message) from None
    if relation is None:
        raise VaultError("the statement returned no rows (only queries are supported)")
    return relation
