"""Atomic file and table writes: a reader (or a crash) never sees half a file, because every
file is written under a temporary name in the same directory and renamed into place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock

from .schemas import TableSchema


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success only."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def atomic_write_bytes(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def conform(table: pa.Table | pl.DataFrame, schema: TableSchema) -> pa.Table:
    """Select and cast the schema's columns, in its order, with its field docs."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    missing = set(schema.names) - set(table.column_names)
    if missing:
        raise ValueError(f"table {schema.name} lacks columns {sorted(missing)}")
    return table.select(schema.names).cast(schema.arrow)


def write_table(target: Path, table: pa.Table | pl.DataFrame, schema: TableSchema) -> int:
    """Write one table as Parquet, atomically; return its row count."""
    arrow = conform(table, schema)
    with atomic_path(target) as tmp:
        pq.write_table(arrow, tmp, compression="zstd")
    return arrow.num_rows


def read_table(target: Path, schema: TableSchema) -> pl.DataFrame:
    """Read a table, or an empty frame of its schema when it was never written."""
    if not target.exists():
        return pl.from_arrow(schema.empty())  # type: ignore[return-value]
    return pl.read_parquet(target)


def append_table(target: Path, rows: pl.DataFrame, schema: TableSchema) -> int:
    """Append rows to a table: read, concatenate and write under a lock of that table, so
    that concurrent appenders (two imports at once) never lose each other's rows."""
    with FileLock(target.with_name(f".{target.name}.lock"), thread_local=False):
        return write_table(target, pl.concat([read_table(target, schema), rows]), schema)
