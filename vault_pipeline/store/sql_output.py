"""`vault sql`'s result in every format, to the terminal, a pipe or a file: a table for
the eye, CSV, JSON (an array), JSON lines, Markdown, Parquet. A file's format follows its
extension unless one is given; a file is written whole or not at all, with the umask's
permissions. Only DuckDB (and PyArrow, for Parquet) is used: no Polars import for the text
formats, so `vault sql` answers in a fraction of a second."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import IO, Any

from vault_pipeline.errors import VaultError

FORMATS = ("table", "csv", "json", "jsonl", "markdown", "parquet")
BY_EXTENSION = {".csv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
                ".md": "markdown", ".parquet": "parquet"}


def chosen_format(fmt: str | None, output: Path | None, terminal: bool) -> str:
    """The format asked for, else the output file's by its extension, else ``table``;
    refused (one line) where it cannot be written there."""
    if fmt is not None and fmt not in FORMATS:
        raise VaultError(f"unknown format {fmt!r} ({', '.join(FORMATS)})")
    if fmt is None and output is not None:
        fmt = BY_EXTENSION.get(output.suffix.lower())
        if fmt is None:
            raise VaultError(f"cannot tell the format of {output.name} by its extension "
                             f"({', '.join(BY_EXTENSION)}): give --format")
    fmt = fmt or "table"
    if fmt == "table" and output is not None:
        raise VaultError("the table format is for the terminal: write --output as csv, json, "
                         "jsonl, markdown or parquet")
    if fmt == "parquet" and output is None and terminal:
        raise VaultError("parquet is binary: give --output FILE, or redirect stdout")
    return fmt


def cell(value: object) -> object:
    """A value for a text cell: lists and structs as JSON, the rest as they print."""
    return json.dumps(value, default=str, ensure_ascii=False) \
        if isinstance(value, list | dict) else value


def markdown(columns: list[str], rows: list[tuple]) -> str:
    """A GitHub-flavoured Markdown table: every cell is data, escaped (no markup)."""
    import vault_pipeline.markdown_text as md

    return md.table(columns, ([cell(v) for v in row] for row in rows))


def _emit(relation: Any, fmt: str, out: IO[Any]) -> None:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(relation.to_arrow_table(), out, compression="zstd")
        return
    columns, rows = relation.columns, relation.fetchall()
    if fmt == "json":
        out.write(json.dumps([dict(zip(columns, row, strict=True)) for row in rows],
                             default=str, ensure_ascii=False) + "\n")
    elif fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(dict(zip(columns, row, strict=True)), default=str,
                                 ensure_ascii=False) + "\n")
    elif fmt == "markdown":
        out.write(markdown(columns, rows) + "\n")
    else:
        writer = csv.writer(out)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([cell(v) for v in row])


def write_result(relation: Any, fmt: str, limit: int, output: Path | None = None) -> None:
    """Print a DuckDB result (``table``: at most ``limit`` rows shown), or write it to
    ``output`` atomically."""
    if fmt == "table":
        relation.show(max_rows=limit)
        return
    if output is None:
        _emit(relation, fmt, sys.stdout.buffer if fmt == "parquet" else sys.stdout)
        return
    from vault_pipeline.store.atomic import atomic_path

    with atomic_path(output) as tmp:
        if fmt == "parquet":
            with tmp.open("wb") as handle:
                _emit(relation, fmt, handle)
        else:
            with tmp.open("w", encoding="utf-8", newline="") as handle:
                _emit(relation, fmt, handle)
