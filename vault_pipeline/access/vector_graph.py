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
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from vault_pipeline.index.layout import in_list
from vault_pipeline.store.atomic import atomic_path, atomic_write_bytes

log = logging.getLogger(__name__)

FILTER_COLUMNS = ["arxiv_id", "view", "version_created", "published", "primary_category",
                  "categories", "archives"]
ROW_COLUMNS = ["arxiv_id", "view", "text"]
LINKS = 32  # HNSW neighbours per node (M)
BUILD_DEPTH = 64  # efConstruction: build cost against graph quality
SEARCH_DEPTH = 192  # efSearch until tuned (recall@28 0.96 at 1M rows, model queries)
MAX_SEARCH_DEPTH = 2_048
TARGET_RECALL = 0.96  # recall@28 rows that `tune` picks the smallest efSearch for
TUNING_DEPTHS = (48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 512)
TUNING_QUERIES = 64
TUNING_ROWS = 28  # a prior-art search asks for 28 rows (10 papers, two views, 8 spare)
EXACT_ROWS = 20_000  # fewer passing rows than this: exact search over them (a few ms)
CACHED_FILTERS = 64


class VectorGraph:
    """One index table version's rows, their vectors, their HNSW graph and filter bitmaps."""

    def __init__(self, rows: pa.Table, vectors: np.ndarray, graph: Any | None,
                 exact_rows: int = EXACT_ROWS, name: str = "") -> None:
        self.name = name  # the table version it was made of: v<version>-<rows>
        # one chunk each: a take from a table of many chunks costs ~100 ms at 1M rows
        self.rows = rows.select(ROW_COLUMNS).combine_chunks()
        # ids and views as Python lists (made once): a hit's row is two list lookups, and
        # its text, the costly column, is read only for the rows an answer shows (`texts`)
        self.ids: list[str] = self.rows.column("arxiv_id").to_pylist()
        self.views: list[str] = self.rows.column("view").to_pylist()
        self.vectors = vectors
        self.graph = graph
        self.exact_rows = exact_rows
        self.search_depth = SEARCH_DEPTH
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

    def tune(self, encoder: Any, folder: Path | None, target: float = TARGET_RECALL
             ) -> dict[str, Any]:
        """Set ``search_depth`` to the smallest efSearch whose recall@28 reaches ``target``
        for ``encoder``'s queries, measured against exact search on prior-art queries made
        of the graph's own papers (their views joined, as an agent sends a target's).

        Why per encoder: the same graph needs efSearch 112 for the static encoder's queries
        and 256 for the model's at 1M index rows (benchmarks/README.md); a fixed depth is
        either slow for one or short of the recall for the other. Measured once per graph and
        encoder (a few seconds) and kept beside the graph file."""
        if self.graph is None:
            return {}
        path = folder / f"{self.name}.depth.json" if folder is not None else None
        key = getattr(encoder, "name", type(encoder).__name__)
        saved = _read_json(path)
        found = saved.get(key)
        if not isinstance(found, dict) or found.get("target") != target or found.get(
                "ladder") != list(TUNING_DEPTHS):
            found = self._measure_depth(encoder, target)
            saved[key] = found
            _write_json(path, saved, keep=f"{self.name}.depth.json")
        self.search_depth = int(found["depth"])
        return found

    def _measure_depth(self, encoder: Any, target: float) -> dict[str, Any]:
        import faiss

        queries = np.ascontiguousarray(encoder.embed(self.tuning_texts()), np.float32)
        everything = np.arange(len(self))
        truth, _ = _exact(self.vectors, everything, queries, TUNING_ROWS)
        selector = faiss.IDSelectorBitmap(np.packbits(np.ones(len(self), bool),
                                                      bitorder="little"))
        recalls: dict[int, float] = {}
        for depth in TUNING_DEPTHS:
            params = faiss.SearchParametersHNSW(efSearch=depth, sel=selector)
            _, found = self.graph.search(queries, TUNING_ROWS, params=params)
            recalls[depth] = float(np.mean([len(set(a) & set(b)) / len(b) for a, b in
                                            zip(found.tolist(), truth.tolist(), strict=True)]))
            if recalls[depth] >= target:
                break
        depth = max(recalls)  # the first to reach the target, or the deepest tried
        log.info("search graph %s: efSearch %d for recall@%d %.3f (target %.2f, %d queries)",
                 self.name, depth, TUNING_ROWS, recalls[depth], target, len(queries))
        return {"depth": depth, "recall": round(recalls[depth], 4), "target": target,
                "ladder": list(TUNING_DEPTHS),
                "queries": len(queries), "measured": {str(d): round(r, 4)
                                                      for d, r in recalls.items()}}

    def tuning_texts(self, count: int = TUNING_QUERIES, seed: int = 0) -> list[str]:
        """``count`` seeded papers' rows joined (their views in row order)."""
        by_paper: dict[str, list[int]] = {}
        for position, arxiv_id in enumerate(self.ids):
            by_paper.setdefault(arxiv_id, []).append(position)
        papers = sorted(by_paper)
        picked = np.random.default_rng(seed).choice(len(papers), min(count, len(papers)),
                                                    replace=False)
        chosen = [by_paper[papers[i]] for i in sorted(picked)]
        texts = iter(self.texts([p for rows in chosen for p in rows]))
        return ["\n".join(next(texts) for _ in rows) for rows in chosen]

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
        found, scores = self.nearest(queries, where, depth)
        kept = [[(p, round(d, 6)) for p, d in zip(positions, dots, strict=True) if p >= 0]
                for positions, dots in zip(found.tolist(), scores.tolist(), strict=True)]
        read = iter(self.texts([p for query in kept for p, _ in query]))
        return [[{"arxiv_id": self.ids[p], "view": self.views[p], "text": next(read),
                  "score": d} for p, d in query] for query in kept]

    def nearest(self, queries: np.ndarray, where: str, depth: int
                ) -> tuple[np.ndarray, np.ndarray]:
        """`search` as arrays, one row per query: the rows' positions (-1 past the last
        passing row) and their scores, for callers that keep a few rows of many."""
        positions, bitmap = self.passing(where)
        if not len(positions) or depth <= 0 or not len(queries):
            return np.full((len(queries), 0), -1, np.int64), np.zeros((len(queries), 0),
                                                                     np.float32)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if self.graph is None or len(positions) < self.exact_rows:
            return _exact(self.vectors, positions, queries, depth)
        found, scores = self._walk(queries, bitmap, len(positions), depth)
        short = [i for i, row in enumerate(found) if (row < 0).any()
                 and (row >= 0).sum() < min(depth, len(positions))]
        for i in short:  # the walk ran out of passing nodes: answer it exactly
            found[i], scores[i] = (a[0] for a in _exact(
                self.vectors, positions, queries[i:i + 1], depth, pad=depth))
        return found, scores

    def _walk(self, queries: np.ndarray, bitmap: np.ndarray, passing: int, depth: int
              ) -> tuple[np.ndarray, np.ndarray]:
        import faiss

        rate = passing / len(self)
        width = int(min(MAX_SEARCH_DEPTH, max(self.search_depth, depth) * max(1.0, 0.5 / rate)))
        selector = faiss.IDSelectorBitmap(bitmap)  # holds a pointer: keep bitmap alive
        params = faiss.SearchParametersHNSW(efSearch=width, sel=selector)
        scores, found = self.graph.search(queries, depth, params=params)
        return found, scores

    def texts(self, positions: Sequence[int]) -> list[str]:
        """The texts of the rows at ``positions``, in one take."""
        if not positions:
            return []
        return self.rows.column("text").take(pa.array(positions, pa.int64())).to_pylist()


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


def _read_json(path: Path | None) -> dict[str, Any]:
    """A saved JSON object, or an empty one when missing or unreadable (measured again)."""
    if path is None or not path.exists():
        return {}
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write_json(path: Path | None, value: dict[str, Any], keep: str) -> None:
    """Write atomically, dropping older graphs' files of the same kind; a failed write
    only costs the next start the measurement."""
    if path is None:
        return
    try:
        atomic_write_bytes(path, json.dumps(value, indent=1, sort_keys=True).encode())
        for old in path.parent.glob("*.depth.json"):
            if old.name != keep:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("search depth not saved (%s): it is measured again on the next start", exc)


def _save(graph: Any, path: Path) -> None:
    """Write atomically and drop the graphs of older versions; a failed write (read-only or
    full disk) only costs the next start a rebuild."""
    import faiss

    try:
        with atomic_path(path) as partial:
            faiss.write_index(graph, str(partial))
        for old in path.parent.glob("*.faiss"):
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, RuntimeError) as exc:
        log.warning("search graph not saved (%s): it is built again on the next start", exc)
