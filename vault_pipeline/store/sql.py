"""DuckDB over the vault: every Parquet table is a view named after it, so
``SELECT count(*) FROM papers`` works with no setup.

The connection is read-only by construction: DuckDB may open the vault's table files and
nothing else (no COPY over a table, no ATTACH, no reading or writing other files), its
configuration is locked so a query cannot lift that, and only queries are accepted.

On an object-store root DuckDB opens no file at all: each table is a PyArrow dataset read
through the table store's fsspec filesystem (no `httpfs` extension to download), registered
as a view, scanned lazily with DuckDB's column and filter pushdown."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from vault_pipeline.errors import VaultError
from vault_pipeline.store import checksums
from vault_pipeline.store.layout import local_tables
from vault_pipeline.store.paths import VaultPaths

QUERY_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})


def table_files(paths: VaultPaths) -> dict[str, Path]:
    """The local file of every intact table (a local data root only: DuckDB opens them
    itself), found by name without loading the table store; damaged ones are left out
    (:func:`damaged_tables`)."""
    if paths.remote:
        raise VaultError(f"the tables of {paths.root} are objects, not local files")
    damaged = damaged_tables(paths)
    return {n: f for n, f in local_tables(paths.tables).items() if n not in damaged}


def damaged_tables(paths: VaultPaths) -> dict[str, str]:
    """The one line of each damaged table of a local root, by name (checked against the
    checksums recorded at write: :mod:`.checksums`)."""
    if paths.remote:
        return {}
    found = {}
    for name, file in local_tables(paths.tables).items():
        problem = checksums.check(file, adopt=False)
        if problem is not None:
            found[name] = (f"table {name!r} is damaged ({file}: {problem}); run `vault "
                           "materialize` to quarantine it and rebuild it from the raw zone")
    return found


def _register_remote(connection: duckdb.DuckDBPyConnection, paths: VaultPaths) -> None:
    """One view per table of an object-store root, over a PyArrow dataset on the store's
    own fsspec filesystem (credentials and endpoint as every stage reads them)."""
    import pyarrow.dataset as ds
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    store = paths.store
    filesystem = PyFileSystem(FSSpecHandler(store.fs))
    for name in store.names():
        connection.register(name, ds.dataset(store.path(name), filesystem=filesystem,
                                             format="parquet"))


def connect(paths: VaultPaths) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table, sealed: only the table files
    may be opened (none, on an object store: the tables come in as Arrow), for reading, and
    the configuration cannot be changed back."""
    connection = duckdb.connect(":memory:")
    if not paths.remote:  # the table store (Polars, PyArrow) is loaded for a bucket only
        literals = {name: _literal(str(file)) for name, file in table_files(paths).items()}
        for name, literal in literals.items():
            connection.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM "
                               f"read_parquet({literal})")
        connection.execute(f"SET allowed_paths = [{', '.join(literals.values())}]")
    else:
        _register_remote(connection, paths)
    connection.execute("SET enable_external_access = false")
    connection.execute("SET autoinstall_known_extensions = false")
    connection.execute("SET autoload_known_extensions = false")
    connection.execute("SET lock_configuration = true")
    return connection


CATALOG_FILE = "vault.duckdb"
STORAGE_VERSION = "v1.0.0"
"""The storage format `vault.duckdb` is written in: DuckDB 1.0 and every later release read
it (the `duckdb` command installed with pip, 1.5, included). This DuckDB's own default
format would be readable by the 2.x releases only."""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def write_catalog(paths: VaultPaths) -> Path | None:
    """``<data root>/vault.duckdb``: a DuckDB database of views over the tables (absolute
    paths), each view and column commented with its schema's text, for BI tools and the
    plain `duckdb` command. Rewritten after each run and swapped in atomically, so a tool
    that has it open keeps a consistent copy."""
    import os

    from vault_pipeline.schemas import ALL_TABLES

    target = paths.home / CATALOG_FILE
    partial = target.with_name(CATALOG_FILE + ".partial")
    partial.unlink(missing_ok=True)
    connection = duckdb.connect(":memory:")
    try:
        connection.execute(f"ATTACH {_literal(str(partial))} AS catalog "
                           f"(STORAGE_VERSION '{STORAGE_VERSION}')")
        connection.execute("USE catalog")
        for name, file in table_files(paths).items():
            connection.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM "
                               f"read_parquet({_literal(str(file))})")
            schema = ALL_TABLES.get(name)
            if schema is None:
                continue
            connection.execute(f"COMMENT ON VIEW \"{name}\" IS {_literal(schema.doc)}")
            present = set(connection.sql(f"SELECT * FROM \"{name}\" LIMIT 0").columns)
            for column in schema.columns:
                if column.name in present:  # a table written before a column was added
                    connection.execute(f"COMMENT ON COLUMN \"{name}\".\"{column.name}\" "
                                       f"IS {_literal(column.doc)}")
        connection.execute("USE memory")
        connection.execute("DETACH catalog")
    finally:
        connection.close()
    os.replace(partial, target)
    return target


def _only_queries(connection: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse anything but queries (COPY, ATTACH, CREATE, INSERT, SET, PRAGMA...)."""
    for statement in connection.extract_statements(sql):
        if statement.type not in QUERY_STATEMENTS:
            kind = statement.type.name.replace("_STATEMENT", "")
            raise VaultError(f"{kind} refused: `vault sql` is read-only and runs queries only")


HINTS = ("Did you mean", "Candidate bindings")


def _one_line(message: str) -> str:
    """DuckDB's first line, with its hint ("Did you mean "papers"?") kept on it."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    hints = [line for line in lines[1:] if line.startswith(HINTS)]
    return " ".join(lines[:1] + hints)


def query(paths: VaultPaths, sql: str) -> duckdb.DuckDBPyRelation:
    """Run one query; a bad query, a write or a missing table is a VaultError with DuckDB's
    message."""
    connection = connect(paths)
    try:
        _only_queries(connection, sql)
        relation = connection.sql(sql)
    except duckdb.Error as exc:
        message = _one_line(str(exc))
        damaged = damaged_tables(paths)
        named = [line for name, line in damaged.items()
                 if re.search(rf"\b{re.escape(name)}\b", sql)]
        if named:
            raise VaultError(named[0]) from None
        if not paths.store.names():
            message += " (the vault has no tables yet: run `vault demo` or `vault materialize`)"
        raise VaultError(message) from None
    if relation is None:
        raise VaultError("the statement returned no rows (only queries are supported)")
    return relation
