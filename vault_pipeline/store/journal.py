"""One crash-resume journal for the stages that work in batches (documents, the ideas and
evaluation-set extractions): finished work goes to small Parquet parts in the scratch
folder, each written atomically and cast to its schema, so a crash loses at most one part;
the next run reads them back, and they are cleared once the stage's tables are written. Each
part's checksum is recorded when it is written and checked when it is read back: a damaged
part is set aside (renamed `.damaged`) and its work done again, never built upon."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from vault_pipeline.schemas import TableSchema
from vault_pipeline.store import checksums
from vault_pipeline.store.tables import readable, write_parquet


class Journal:
    """Parts of one or more kinds (``records``, ``failures``; one kind by default), each of
    its schema; rows given one by one are written every ``flush_every``."""

    def __init__(self, folder: Path, schemas: Mapping[str, TableSchema],
                 flush_every: int = 1) -> None:
        self.folder = folder
        self.schemas = dict(schemas)
        self.flush_every = flush_every
        self.pending: dict[str, list[dict]] = {}

    @property
    def _default_kind(self) -> str:
        return next(iter(self.schemas))

    def add(self, row: dict, kind: str | None = None) -> None:
        """Buffer one finished row; a part is written once ``flush_every`` are waiting."""
        rows = self.pending.setdefault(kind or self._default_kind, [])
        rows.append(row)
        if len(rows) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        frames = {kind: pl.DataFrame(rows, schema=self.schemas[kind].polars)
                  for kind, rows in self.pending.items() if rows}
        if frames:
            self.save(frames)
        self.pending = {}

    def save(self, frames: Mapping[str, pl.DataFrame], key: str | None = None) -> None:
        """One part per kind, under one key (a batch's; default a fresh one)."""
        key = key or uuid.uuid4().hex
        for kind, frame in frames.items():
            part = self.folder / f"{key}.{kind}.parquet"
            write_parquet(part, frame, self.schemas[kind])
            checksums.record(part)

    def parts(self, kind: str | None = None) -> list[Path]:
        """The intact parts of a kind (a damaged one is renamed aside)."""
        pattern = f"*.{kind or self._default_kind}.parquet"
        found = sorted(self.folder.glob(pattern)) if self.folder.exists() else []
        intact = []
        for part in found:
            if checksums.check(part, readable) is None:
                intact.append(part)
            else:
                checksums.forget(part)
                part.rename(part.with_name(f"{part.name}.damaged"))
        return intact

    def _part(self, part: Path, kind: str | None) -> pl.LazyFrame:
        """One part in the current schema: a part an older version wrote, without the
        columns added since, is read with those columns null (they are all nullable in a
        journal's use: a missing count or key means "unknown"), never refused."""
        schema = self.schemas[kind or self._default_kind]
        frame = pl.scan_parquet(part)
        have = set(frame.collect_schema().names())
        added = [pl.lit(None, dtype=schema.polars[name]).alias(name)
                 for name in schema.names if name not in have]
        return frame.with_columns(added).select(schema.names)

    def load(self, kind: str | None = None) -> list[pl.DataFrame]:
        return [self._part(part, kind).collect() for part in self.parts(kind)]

    def scan(self, kind: str | None = None) -> pl.LazyFrame:
        """Every part of a kind, lazily (an empty frame of its schema when none)."""
        parts = self.parts(kind)
        if not parts:
            return pl.LazyFrame(schema=self.schemas[kind or self._default_kind].polars)
        return pl.concat([self._part(part, kind) for part in parts], how="vertical_relaxed")

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
