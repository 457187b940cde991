"""The stage's scratch files: Parquet files appended a frame at a time, and DuckDB
connections held to a memory limit that spill to the scratch folder past it. What grows
with the corpus (ids, keys, n-grams, row numbers) lives in these files, not in memory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

MEMORY_LIMIT = "128MB"  # DuckDB's joins, sorts and group-bys spill past this
ROW_GROUP = 5_000  # rows per row group of a scratch file: a batch read back is one group


@contextmanager
def connect(work: Path, memory_limit: str = MEMORY_LIMIT, threads: int = 1,
            ordered: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection that spills to ``work/spill`` past ``memory_limit``
    (``ordered``: keep insertion order where a query does not sort)."""
    with duckdb.connect(config={"memory_limit": memory_limit, "threads": threads,
                                "temp_directory": str(work / "spill"),
                                "preserve_insertion_order": ordered}) as db:
        yield db


def literal(path: Path) -> str:
    """A path as an SQL string literal (quotes doubled)."""
    return "'{}'".format(str(path).replace("'", "''"))


def scan(path: Path) -> str:
    """SQL that reads one scratch file (or a glob of them)."""
    return f"read_parquet({literal(path)})"


def copy_to(db: duckdb.DuckDBPyConnection, select: str, path: Path) -> Path:
    """Write a query's result to the Parquet file ``path`` (DuckDB streams it, spilling)."""
    db.execute(f"COPY ({select}) TO {literal(path)} (FORMAT parquet)")
    return path


class Appender:
    """Frames appended to one Parquet file under a fixed schema, as they are made."""

    def __init__(self, path: Path, schema: dict[str, pl.DataType] | pa.Schema) -> None:
        self.path = path
        self.schema = (schema if isinstance(schema, pa.Schema)
                       else pl.DataFrame(schema=schema).to_arrow().schema)
        self.writer: pq.ParquetWriter | None = pq.ParquetWriter(path, self.schema)
        self.rows = 0

    def __call__(self, frame: pl.DataFrame) -> None:
        if frame.height:
            assert self.writer is not None, f"{self.path.name} is closed"
            self.writer.write_table(frame.to_arrow().cast(self.schema),
                                    row_group_size=ROW_GROUP)
            self.rows += frame.height

    def close(self) -> Path:
        """The finished file (an empty one has the schema and no rows)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        return self.path


def frame(db: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    """A query's (small) result as a Polars frame."""
    result = pl.from_arrow(db.sql(sql).to_arrow_table())
    assert isinstance(result, pl.DataFrame)
    return result


def batches(db: duckdb.DuckDBPyConnection, sql: str, rows: int = ROW_GROUP
            ) -> Iterator[pl.DataFrame]:
    """A query's result a batch at a time (DuckDB streams it; large results never whole)."""
    for batch in db.sql(sql).to_arrow_reader(rows):
        result = pl.from_arrow(batch)
        assert isinstance(result, pl.DataFrame)
        if result.height:
            yield result
