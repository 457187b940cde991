"""The agent tools' vector search: an HNSW graph (faiss) over the index's rows, held in
memory, each session's filter applied as a bitmap during the graph walk.

Why not LanceDB's own query here: a filtered IVF_FLAT query of a 1M-row index reads the full
vectors of every probed partition, 10-13 ms of one core per vector at recall@10 0.95
(benchmarks/README.md), so the search alone would take both cores of a 2-core server at 100
calls/s. An HNSW graph answers the same filtered query in about a millisecond at recall@10
0.99. LanceDB's IVF_HNSW_SQ was measured earlier and took several minutes longer to build
on two cores, and a LanceDB query also pays its planning cost on every call. LanceDB stays the
store and the engine of `vault search`'s hybrid search; this graph is derived from it.

- **Derived, versioned:** built from the index table's rows the first time a table version
  is searched, saved under ``index/graph/`` named by that version and row count (written to a
  temporary name, then renamed), and read back on the next start. A new version of the table
  gets a new graph; a damaged file is built again.
- **Filters:** a session's predicate (`World.where` and the view and field clauses, LanceDB
  SQL) is evaluated once per distinct predicate by DuckDB over the rows' filter columns held
  in memory, and cached as a bitmap. The walk skips rows outside it (faiss's `IDSelector`).
- **Only the views searched:** the tools search the problem setting and the challenge views
  (two of five), so the graph holds those rows alone (``views``): 40 % of the index to build
  and hold, and a walk that no longer skips the other views' nodes (at 1M index rows,
  recall@28 0.96 took efSearch 328 on the whole index's graph and 192 on this one). A filter
  naming another view finds none of its rows.
- **Exact where it is cheap:** a table of fewer than ``exact_rows`` rows (the sample vault), or
  a filter passing fewer rows than that, is searched exactly over the passing rows, so small
  vaults answer what LanceDB's exact prefiltered query answers. A filter that passes few of a
  large table's rows widens the walk (``efSearch`` grows as the pass rate falls), since a graph
  walk that has to skip most nodes finds fewer of the true neighbours.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from vault_pipeline.index.layout import in_list

log = logging.getLogger(__name__)

FILTER_COLUMNS = ["arxiv_id", "view", "version_created", "published", "primary_category",
                  "categories", "archives"]
ROW_COLUMNS = ["arxiv_id", "view", "text"]
LINKS = 32  # HNSW neighbours per node (M)
BUILD_DEPTH = 64  # efConstruction: build cost against graph quality
SEARCH_DEPTH = 192  # efSearch, filters passing half the rows or more: recall@28 0.96 at 1M
MAX_SEARCH_DEPTH = 2_048
EXACT_ROWS = 20_000  # fewer passing rows than this: exact search over them (a few ms)
CACHED_FILTERS = 64


class VectorGraph:
    """One index table version's rows, their vectors, their HNSW graph and filter bitmaps."""

    def __init__(self, rows: pa.Table, vectors: np.ndarray, graph: Any | None,
                 exact_rows: int = EXACT_ROWS, name: str = "") -> None:
        self.name = name  # the table version it was made of: v<version>-<rows>
        # one chunk each: a take from a table of many chunks costs ~100 ms at 1M rows
        self.rows = rows.select(ROW_COLUMNS).combine_chunks()
        self.vectors = vectors
        self.graph = graph
        self.exact_rows = exact_rows
        self._filters = rows.select([c for c in FILTER_COLUMNS
                                     if c in rows.column_names]).combine_chunks()
        self._masks: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def of_table(cls, table: Any, folder: Path | None, min_rows: int = EXACT_ROWS,
                 views: Sequence[str] | None = None) -> VectorGraph:
        """The graph of ``table``'s current version (its rows of ``views``, or all): read
        from ``folder`` when saved there, else built (and saved when ``folder`` is given).
        Fewer than ``min_rows`` rows get no graph: every search of them is exact."""
        data = _rows_in_order(table, views)
        vectors = _vectors(data)
        graph, name = None, f"v{table.version}-{len(vectors)}"
        if views is not None:
            name += "-" + hashlib.sha256(",".join(sorted(views)).encode()).hexdigest()[:8]
        if len(vectors) >= min_rows:
            graph = _load_or_build(vectors, folder, name)
        return cls(data, vectors, graph, exact_rows=min_rows, name=name)

    def __len__(self) -> int:
        return len(self.vectors)

    def passing(self, where: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows passing ``where`` as positions and as faiss's packed bitmap (cached)."""
        with self._lock:
            found = self._masks.get(where)
            if found is not None:
                self._masks.move_to_end(where)
                return found
        connection = duckdb.connect()
        connection.register("index_rows", self._filters.append_column(
            "position", pa.array(np.arange(len(self), dtype=np.int64))))
        positions = connection.execute(
            f"SELECT position FROM index_rows WHERE {where} ORDER BY position"
        ).fetchnumpy()["position"]
        connection.close()
        mask = np.zeros(len(self), bool)
        mask[positions] = True
        found = (positions, np.packbits(mask, bitorder="little"))
        with self._lock:
            self._masks[where] = found
            while len(self._masks) > CACHED_FILTERS:
                self._masks.popitem(last=False)
        return found

    def search(self, queries: np.ndarray, where: str, depth: int) -> list[list[dict]]:
        """The ``depth`` nearest rows passing ``where`` for each query (a 2-D array), best
        first, each as arxiv_id, view, text and score (the dot product: cosine)."""
        positions, bitmap = self.passing(where)
        if not len(positions) or depth <= 0 or not len(queries):
            return [[] for _ in queries]
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if self.graph is None or len(positions) < self.exact_rows:
            found, scores = _exact(self.vectors, positions, queries, depth)
        else:
            found, scores = self._walk(queries, bitmap, len(positions), depth)
            short = [i for i, row in enumerate(found) if (row < 0).any()
                     and (row >= 0).sum() < min(depth, len(positions))]
            for i in short:  # the walk ran out of passing nodes: answer it exactly
                found[i], scores[i] = (a[0] for a in _exact(
                    self.vectors, positions, queries[i:i + 1], depth, pad=depth))
        return self._hits(found, scores)

    def _walk(self, queries: np.ndarray, bitmap: np.ndarray, passing: int, depth: int
              ) -> tuple[np.ndarray, np.ndarray]:
        import faiss

        rate = passing / len(self)
        width = int(min(MAX_SEARCH_DEPTH, max(SEARCH_DEPTH, depth) * max(1.0, 0.5 / rate)))
        selector = faiss.IDSelectorBitmap(bitmap)  # holds a pointer: keep bitmap alive
        params = faiss.SearchParametersHNSW(efSearch=width, sel=selector)
        scores, found = self.graph.search(queries, depth, params=params)
        return found, scores

    def _hits(self, found: np.ndarray, scores: np.ndarray) -> list[list[dict]]:
        """Each query's rows, read in one take for the whole batch."""
        keep = found >= 0
        rows = self.rows.take(pa.array(found[keep], pa.int64())).to_pylist()
        dots = scores[keep].tolist()
        out, start = [], 0
        for count in keep.sum(axis=1).tolist():
            mine = rows[start:start + count]
            for row, dot in zip(mine, dots[start:start + count], strict=True):
                row["score"] = round(dot, 6)
            out.append(mine)
            start += count
        return out


def _rows_in_order(table: Any, views: Sequence[str] | None = None) -> pa.Table:
    """The columns the graph needs of the rows of ``views`` (or all), in row-id order (a
    graph's ids are these positions)."""
    names = set(table.schema.names)
    columns = [c for c in dict.fromkeys([*ROW_COLUMNS, *FILTER_COLUMNS, "vector"]) if c in names]
    query = table.search().with_row_id(True).select(columns).limit(None)
    if views is not None:
        query = query.where(in_list("view", views))
    data = query.to_arrow()
    ids = data.column("_rowid").to_numpy()
    if len(ids) > 1 and not (np.diff(ids.astype(np.int64)) > 0).all():
        data = data.take(pa.array(np.argsort(ids, kind="stable")))
    return data.drop_columns(["_rowid"])


def _vectors(data: pa.Table) -> np.ndarray:
    column = data.column("vector").combine_chunks()
    if not len(column):
        return np.zeros((0, column.type.list_size), np.float32)
    flat = column.values.to_numpy(zero_copy_only=False)
    return np.ascontiguousarray(flat.reshape(len(column), column.type.list_size), np.float32)


def _exact(vectors: np.ndarray, positions: np.ndarray, queries: np.ndarray, depth: int,
           pad: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Exact top ``depth`` over ``positions`` (ids padded with -1 to ``pad`` columns)."""
    scores = queries @ vectors[positions].T
    take = min(depth, len(positions))
    best = np.argpartition(-scores, take - 1, axis=1)[:, :take]
    order = np.argsort(-np.take_along_axis(scores, best, 1), axis=1, kind="stable")
    best = np.take_along_axis(best, order, 1)
    ids, dots = positions[best], np.take_along_axis(scores, best, 1)
    if pad > take:
        ids = np.pad(ids, ((0, 0), (0, pad - take)), constant_values=-1)
        dots = np.pad(dots, ((0, 0), (0, pad - take)), constant_values=-np.inf)
    return ids, dots


def _load_or_build(vectors: np.ndarray, folder: Path | None, name: str) -> Any:
    import faiss

    path = folder / f"{name}.faiss" if folder is not None else None
    if path is not None and path.exists():
        try:
            graph = faiss.read_index(str(path))
            if graph.ntotal == len(vectors) and graph.d == vectors.shape[1]:
                return graph
            log.warning("search graph %s does not match its table: building it again", path)
        except RuntimeError as exc:
            log.warning("search graph %s unreadable (%s): building it again", path, exc)
    graph = faiss_hnsw(vectors)
    if path is not None:
        _save(graph, path)
    return graph


def faiss_hnsw(vectors: np.ndarray) -> Any:
    """A new HNSW graph of ``vectors`` (inner product: the vectors are unit length)."""
    import faiss

    log.info("building the search graph of %d rows (once per index version)", len(vectors))
    graph = faiss.IndexHNSWFlat(vectors.shape[1], LINKS, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = BUILD_DEPTH
    graph.add(vectors)
    return graph


def _save(graph: Any, path: Path) -> None:
    """Write atomically and drop the graphs of older versions; a failed write (read-only or
    full disk) only costs the next start a rebuild."""
    import faiss

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
        faiss.write_index(graph, str(partial))
        os.replace(partial, path)
        for old in path.parent.glob("*.faiss"):
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, RuntimeError) as exc:
        log.warning("search graph not saved (%s): it is built again on the next start", exc)
