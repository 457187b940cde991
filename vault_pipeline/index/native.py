"""A cold search through LanceDB's own engine without LanceDB's Python package.

``import lancedb`` takes over a second (its namespace client, pandas, pyarrow.dataset),
several times what a one-shot `vault search` may cost. The compiled engine it wraps
(``lancedb._lancedb``) loads in milliseconds: this module opens the index with it and runs
the same queries the package would build for ``table.search(...)`` (same vector and
full-text searches, same prefilter, limits and probes), and fuses hybrid results the way the
package's default reranker does (reciprocal rank fusion, K=60, ties kept in merge order).
The results are the package's, which `tests/index/test_index_search.py` checks; any version of
LanceDB whose engine does not answer these calls makes :func:`available` false, and search
falls back to the package."""

from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

# The engine logs deprecation notices of its own on every search; keep real problems
# (set LANCEDB_LOG to see everything). Read when the engine loads.
os.environ.setdefault("LANCEDB_LOG", "error")

ENGINE = "lancedb._lancedb"
RRF_K = 60  # lancedb.rerankers.RRFReranker's default


class EngineUnavailable(RuntimeError):
    """The engine cannot be loaded alone or does not answer the expected calls."""


def engine() -> ModuleType:
    """The compiled engine, registered under its own name so that a later ``import lancedb``
    in the same process reuses it (an extension module initialises once per process)."""
    if ENGINE in sys.modules:
        return sys.modules[ENGINE]
    spec = importlib.util.find_spec("lancedb")  # finds the folder, runs no package code
    if spec is None or not spec.submodule_search_locations:
        raise EngineUnavailable("lancedb is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        file = folder / f"_lancedb{suffix}"
        if file.exists():
            break
    else:
        raise EngineUnavailable(f"no compiled engine in {folder}")
    loader = importlib.machinery.ExtensionFileLoader(ENGINE, str(file))
    module_spec = importlib.util.spec_from_file_location(ENGINE, file, loader=loader)
    if module_spec is None:
        raise EngineUnavailable(f"cannot load {file}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[ENGINE] = module
    try:
        loader.exec_module(module)
    except ImportError as exc:
        del sys.modules[ENGINE]
        raise EngineUnavailable(str(exc)) from None
    return module


class NativeTable:
    """One open index table: its schema metadata and the queries `search` needs."""

    def __init__(self, folder: Path, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._table, self.schema = self._run(self._open(str(folder), name))
        except (AttributeError, TypeError) as exc:  # another engine version: other calls
            self.close()
            raise EngineUnavailable(f"the LanceDB engine does not answer: {exc}") from None

    def _run(self, coroutine):
        return self._loop.run_until_complete(coroutine)

    @staticmethod
    async def _open(uri: str, name: str):
        """The table and its Arrow schema (the engine's calls need a running loop)."""
        db = await engine().connect(uri, None, None, None, None, None, None, None, None)
        table = await db.open_table(name)
        return table, await table.schema()

    def close(self) -> None:
        self._loop.close()

    def _query(self, columns: list[str], where: str | None, limit: int):
        query = self._table.query()
        query.limit(limit)
        query.select_columns(columns)
        if where:
            query.where(where)
        query.with_row_id()
        return query

    def _vector(self, vector, columns, where, limit, distance, nprobes: int):
        import numpy as np
        import pyarrow as pa

        # float64, as LanceDB passes it (a list of floats); from the buffer, because
        # pa.array() of a list or an ndarray imports pandas (a second at start-up)
        values = np.ascontiguousarray(vector, dtype=np.float64)
        query = self._query(columns, where, limit).nearest_to(
            pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)]))
        query.distance_range(None, None)
        query.distance_type(distance)
        query.nprobes(nprobes)
        query.maximum_nprobes(nprobes)
        return query

    def _text(self, text: str, column: str, columns, where, limit):
        return self._query(columns, where, limit).nearest_to_text(
            {"query": text, "columns": [column]})

    async def _collect(self, query) -> list[dict]:
        stream = await query.execute(max_batch_length=None, timeout=None)
        rows = []
        async for batch in stream:
            rows.extend(batch.to_pylist())
        return rows

    def vector(self, vector, columns: list[str], where: str | None, limit: int,
               distance: str, nprobes: int) -> list[dict]:
        """Nearest rows by ``distance``, best first, with ``_distance``."""
        async def run():
            return await self._collect(
                self._vector(vector, columns, where, limit, distance, nprobes))

        return self._run(run())

    def text(self, text: str, column: str, columns: list[str], where: str | None,
             limit: int) -> list[dict]:
        """BM25 matches of the full-text index of ``column``, best first, with ``_score``."""
        async def run():
            return await self._collect(self._text(text, column, columns, where, limit))

        return self._run(run())

    def hybrid(self, text: str, vector, column: str, columns: list[str], where: str | None,
               limit: int, distance: str, nprobes: int) -> list[dict]:
        """Both searches, fused by reciprocal rank, with ``_relevance_score``."""
        async def both():
            return await asyncio.gather(
                self._collect(self._vector(vector, columns, where, limit, distance, nprobes)),
                self._collect(self._text(text, column, columns, where, limit)))

        vectors, texts = self._run(both())
        return rrf_fuse(vectors, texts)[:limit]


def rrf_fuse(vector_rows: list[dict], text_rows: list[dict], k: int = RRF_K) -> list[dict]:
    """LanceDB's RRFReranker: 1/(rank + k) summed over both lists (ranks from 1); rows in
    merge order (vector hits, then text hits not already there), stably sorted by the
    float32 score, highest first."""
    import numpy as np

    scores: dict[int, float] = {}
    for rows in (vector_rows, text_rows):
        for rank, row in enumerate(rows, 1):
            scores[row["_rowid"]] = scores.get(row["_rowid"], 0.0) + 1 / (rank + k)
    merged, seen = [], set()
    for row in (*vector_rows, *text_rows):
        if row["_rowid"] not in seen:
            seen.add(row["_rowid"])
            fused = {c: v for c, v in row.items() if c not in ("_distance", "_score")}
            fused["_relevance_score"] = float(np.float32(scores[row["_rowid"]]))
            merged.append(fused)
    return sorted(merged, key=lambda row: -row["_relevance_score"])
