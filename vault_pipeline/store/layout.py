"""Where a table lies under a tables folder: the one rule, in a module light enough for the
commands that only need to find tables (`vault sql` lists them without loading Polars,
PyArrow or fsspec, which the table store needs to read and write them)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_pipeline.schemas import TableSchema

QUARANTINE = "quarantine"  # beside the tables folder: where damaged files are set aside

SUFFIX = ".parquet"


def table_name(table: str | TableSchema) -> str:
    return table if isinstance(table, str) else table.name


def table_file(folder: str | os.PathLike[str], table: str | TableSchema) -> str:
    """Where a table lives under a tables folder (the only place this rule is written)."""
    return f"{os.fspath(folder).rstrip('/')}/{table_name(table)}{SUFFIX}"


def local_tables(folder: Path) -> dict[str, Path]:
    """Every table written so far under a local tables folder, by name, sorted."""
    if not folder.is_dir():
        return {}
    return {p.name[: -len(SUFFIX)]: p for p in sorted(folder.glob(f"*{SUFFIX}"))}
