"""Where the index lives and how it is searched: names and settings shared by the index
build (`lance_index.py`, which imports Polars and LanceDB) and the one-shot search path
(`search.py`, `native.py`), which must start without them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from vault_pipeline.errors import VaultError

if TYPE_CHECKING:
    from vault_pipeline.store.paths import VaultPaths

TABLE = "views_index"  # the name of schemas.VIEWS_INDEX (a test keeps them equal)
KEY = ("arxiv_id", "view")
DISTANCE = "dot"  # vectors are unit length: dot product is cosine similarity
META_EMBEDDER = b"embedder"
META_DIMENSION = b"dimension"
META_SOURCE = b"embedder_source"


@dataclass(frozen=True)
class IndexSettings:
    """``ann_min_rows``: from this many rows on, an IVF_FLAT index is built (full vectors in
    ``sqrt(rows)`` partitions, ``ann_nprobes`` of them searched exactly); below it every
    search is exact. IVF_FLAT beat IVF_PQ and IVF_HNSW_SQ here (benchmarks/README.md): its
    build is several times faster on two cores, and recall is limited only by the partitions
    probed (80 of 1,000 at 1M rows: recall@10 0.945 at 13 ms p50)."""

    ann_min_rows: int = 20_000
    batch_rows: int = 2_048
    ann_partitions: int | None = None  # default: sqrt(rows)
    ann_nprobes: int = 80
    exclude_evaluation: bool = True  # papers an evaluation set uses are not retrievable
    cutoff: date | None = None  # the split's, reported while `splits` is still empty


def sql_literal(value: str) -> str:
    """A string literal of the index's SQL predicates (LanceDB, and DuckDB over the same
    columns): quotes doubled."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    """``column IN ('a', 'b')`` of the index's predicates."""
    return f"{column} IN (" + ", ".join(sql_literal(v) for v in values) + ")"


def index_dir(paths: VaultPaths) -> Path:
    """Where the LanceDB database lives inside a local data root."""
    return paths.home / "index"


def index_uri(paths: VaultPaths) -> str:
    """Where the LanceDB database lives: under the data root, local or an object store."""
    return f"{paths.remote}/index" if paths.remote else str(index_dir(paths))


def index_table_dir(paths: VaultPaths) -> Path:
    """The LanceDB table's folder inside a local data root (what its checksums cover)."""
    return index_dir(paths) / f"{TABLE}.lance"


INDEX_FOLDER = f"index/{TABLE}.lance"  # the table's folder under the root, local or not


def index_problem(paths: VaultPaths) -> str | None:
    """What is wrong with the built index (a file or object missing or altered since it was
    written), or None; local files by their checksums, objects by their listing."""
    from vault_pipeline.store import folder_outputs  # light: a search loads no table code

    return folder_outputs.problem(paths, INDEX_FOLDER)


def check_index(paths: VaultPaths) -> None:
    """A damaged index is a one-line VaultError naming the file and the repair."""
    if (problem := index_problem(paths)) is not None:
        where = f"{paths.remote}/{INDEX_FOLDER}" if paths.remote else index_table_dir(paths)
        raise VaultError(f"the index is damaged ({where}: {problem}); run `vault "
                         "materialize` to quarantine it and rebuild it from the views")


def index_exists(paths: VaultPaths) -> bool:
    """Whether a local index was built; on an object store, LanceDB is asked when opened."""
    return bool(paths.remote) or (index_dir(paths) / f"{TABLE}.lance").exists()


def metadata_of(schema_metadata: dict[bytes, bytes] | None) -> dict[str, str]:
    """What the index was built with: embedder, its model setting, dimension."""
    return {k.decode(): v.decode() for k, v in (schema_metadata or {}).items()
            if k in (META_EMBEDDER, META_SOURCE, META_DIMENSION)}
