"""The retrieval index: a LanceDB table of vault views (one row per pre-cutoff paper and
view) with unit-length vectors, a full-text index on `text`, and an ANN index once the table
is large enough (below that LanceDB searches every vector, which is exact and fast enough).

Incremental: each row keeps the sha256 of its text, so a rebuild embeds only new or changed
views, deletes rows that left the vault, and writes in bounded batches (a crash loses at most
one batch; the rerun picks up from what was written). A different embedding model rebuilds
the table from scratch, because vectors of two models must never be compared."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

# LanceDB's Rust side logs deprecation notices of its own hybrid query on every search;
# keep warnings for real problems (set LANCEDB_LOG to see everything).
os.environ.setdefault("LANCEDB_LOG", "error")

import numpy as np
import polars as pl
import pyarrow as pa

from vault_pipeline.embeddings.embedders import Embedder
from vault_pipeline.errors import VaultError
from vault_pipeline.executors import Executor
from vault_pipeline.index.layout import (
    DISTANCE,
    KEY,
    META_DIMENSION,
    META_EMBEDDER,
    META_SOURCE,
    TABLE,
    IndexSettings,
    check_index,
    index_dir,
    index_exists,
    index_uri,
    metadata_of,
    sql_literal,
)
from vault_pipeline.papers.versions import text_before, text_dates, vault_versions
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.pipeline.progress import Progress, no_progress
from vault_pipeline.pipeline.settings import CUTOFF
from vault_pipeline.schemas import PAPER_VERSIONS, SPLITS, VIEWS_INDEX
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.contamination import evaluation_papers
from vault_pipeline.splits.inputs import CleanViews, clean_views
from vault_pipeline.store.object_store import storage_options
from vault_pipeline.store.paths import VaultPaths

if TYPE_CHECKING:
    import lancedb

log = logging.getLogger(__name__)


@dataclass
class IndexReport(Counters, counts=("rows", "embedded", "unchanged", "metadata_updated",
                                    "deleted", "evaluation_excluded")):
    """Rows the index holds, and what this build did to them; ``evaluation_excluded``:
    papers an evaluation set uses (none is retrievable)."""

    rebuilt: bool = False
    ann_index: str | None = None
    fts_index: bool = False
    embed_seconds: float = 0.0
    embedder: str = ""
    dimension: int = 0
    cutoff: date | None = None
    skipped_views: dict[str, int] = field(default_factory=dict)

    @property
    def views_per_second(self) -> float | None:
        return self.embedded / self.embed_seconds if self.embed_seconds else None


def connect(paths: VaultPaths, fresh_s: float | None = None) -> lancedb.DBConnection:
    """Imported here, not at module level: lancedb takes 1.6 s to import, and every load of
    the Dagster definitions (each CLI call, each run process) would pay it. ``fresh_s``: a
    long-lived reader sees new versions of the table this long after they are written."""
    from datetime import timedelta

    import lancedb

    interval = timedelta(seconds=fresh_s) if fresh_s is not None else None
    uri = index_uri(paths)
    if not paths.remote:
        index_dir(paths).mkdir(parents=True, exist_ok=True)
    return lancedb.connect(uri, read_consistency_interval=interval,
                           storage_options=storage_options(uri) or None)


def open_index(paths: VaultPaths, fresh_s: float | None = None):
    """The index table; a clear error when it was never built or is damaged."""
    check_index(paths)
    db = connect(paths, fresh_s)
    if TABLE not in db.list_tables().tables:
        raise VaultError("the index does not exist yet: materialize it first "
                         "(vault materialize --select index)")
    return db.open_table(TABLE)


def index_metadata(table) -> dict[str, str]:
    """What the index was built with: embedder, its model setting, dimension."""
    return metadata_of(table.schema.metadata)


def index_metadata_of(paths: VaultPaths) -> dict[str, str]:
    """The index's metadata, with its row count; empty when there is no index."""
    if not index_exists(paths):
        return {}
    check_index(paths)
    db = connect(paths)
    if TABLE not in db.list_tables().tables:
        return {}
    table = db.open_table(TABLE)
    return {**index_metadata(table), "rows": str(table.count_rows())}


def lance_schema(embedder: Embedder) -> pa.Schema:
    """The `views_index` schema with the vector fixed to the model's dimension."""
    base = VIEWS_INDEX.arrow
    vector = pa.field("vector", pa.list_(pa.float32(), embedder.dimension), nullable=False,
                      metadata=base.field("vector").metadata)
    schema = base.set(base.get_field_index("vector"), vector)
    return schema.with_metadata({**(base.metadata or {}),
                                 META_EMBEDDER: embedder.name.encode(),
                                 META_SOURCE: embedder.source.encode(),
                                 META_DIMENSION: str(embedder.dimension).encode()})


def archives_expr(column: str) -> pl.Expr:
    """The archive of each category: `cs.LG` → `cs`, `hep-th` → `hep-th`."""
    return pl.col(column).list.eval(pl.element().str.split(".").list.first()).list.unique(
        maintain_order=True)


def vault_rows(paths: VaultPaths, exclude_evaluation: bool = True,
               cutoff_if_empty: date = CUTOFF) -> tuple[pl.DataFrame, CleanViews, date]:
    """Every row the index should hold: usable views of papers the splits put in the vault,
    and, as a second guard, published before the cutoff and read from a version written
    before it (:func:`~vault_pipeline.papers.versions.text_before`); without the papers an
    evaluation set uses, unless asked. Empty `splits` (a vault of PDFs alone, or with no
    paper yet) give no row, under ``cutoff_if_empty``: an empty index, not a failed run."""
    splits = paths.store.read_required(SPLITS.name, ("arxiv_id", "split", "cutoff"))
    if splits.is_empty():
        log.warning("the splits table is empty (no paper metadata yet): the index is empty")
    cutoff = splits["cutoff"][0] if splits.height else cutoff_if_empty
    vault_ids = splits.filter(pl.col("split") == VAULT).select("arxiv_id")
    used = sorted(evaluation_papers(paths)) if exclude_evaluation else []
    vault_ids = vault_ids.filter(~pl.col("arxiv_id").is_in(used))
    papers = paths.store.read_required("papers", ("arxiv_id", "published", "updated",
                                                 "categories", "primary_category"))
    views = clean_views(paths.store.read_required("views", ("arxiv_id", "view", "text")))
    chosen = views.views.select("arxiv_id", "version", "view", "text") \
        if "version" in views.views.columns else \
        views.views.select("arxiv_id", pl.lit(None, pl.Int32).alias("version"), "view", "text")
    dated = text_dates(chosen.join(vault_ids, on="arxiv_id", how="semi"), papers)
    late = dated.filter(~text_before(cutoff))
    if late.height:
        log.warning("%d views of %d vault papers left out of the index: read from a version "
                    "written on or after the cutoff %s (rebuild documents and views at this "
                    "cutoff)", late.height, late["arxiv_id"].n_unique(), cutoff)
    held = vault_versions(papers, paths.store.read_optional(PAPER_VERSIONS), cutoff).select(
        "arxiv_id", pl.col("created").alias("version_created"))
    rows = (dated.filter(text_before(cutoff)).select("arxiv_id", "version", "view", "text")
            .join(papers.select("arxiv_id", "published", "primary_category", "categories"),
                  on="arxiv_id", how="inner")
            .join(held, on="arxiv_id", how="left")
            .filter(pl.col("published") < cutoff)
            .with_columns(pl.col("categories").fill_null(pl.lit([], pl.List(pl.String))))
            .with_columns(archives_expr("categories").alias("archives"),
                          pl.col("text").map_elements(_sha256, pl.String).alias("text_sha256"))
            .sort(KEY))
    return rows, views, cutoff


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _existing(table) -> pl.DataFrame:
    """Keys, text hashes and metadata of the rows already indexed (not texts or vectors)."""
    columns = [*KEY, "text_sha256", "published", "primary_category", "categories", "version",
               "version_created"]
    count = table.count_rows()
    if count == 0:
        return pl.from_arrow(VIEWS_INDEX.empty()).select(columns)  # type: ignore[union-attr]
    scan = table.search().select(columns).limit(count).to_arrow()
    return pl.from_arrow(scan).select(columns)  # type: ignore[union-attr]


def _key_filter(keys: pl.DataFrame) -> str:
    return " OR ".join(f"(arxiv_id = {sql_literal(a)} AND view = {sql_literal(v)})"
                       for a, v in keys.select(KEY).iter_rows())


def _chunks(frame: pl.DataFrame, size: int) -> Iterator[pl.DataFrame]:
    for start in range(0, frame.height, size):
        yield frame.slice(start, size)


def _to_arrow(rows: pl.DataFrame, vectors: np.ndarray, schema: pa.Schema) -> pa.Table:
    columns = {name: rows[name].to_arrow() for name in schema.names if name != "vector"}
    flat = pa.array(vectors.astype(np.float32, copy=False).ravel(), pa.float32())
    columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])
    return pa.Table.from_pydict(columns).cast(schema)


def _upsert(table, batch: pa.Table) -> None:
    (table.merge_insert(list(KEY)).when_matched_update_all().when_not_matched_insert_all()
     .execute(batch))


def _open_or_create(db, schema: pa.Schema, embedder: Embedder, report: IndexReport):
    if TABLE in db.list_tables().tables:
        table = db.open_table(TABLE)
        meta = table.schema.metadata or {}
        same_model = (meta.get(META_EMBEDDER) == embedder.name.encode()
                      and meta.get(META_DIMENSION) == str(embedder.dimension).encode())
        missing = set(schema.names) - set(table.schema.names)
        if same_model and not missing:
            return table
        if same_model:
            log.warning("index lacks columns %s; rebuilding it", sorted(missing))
        else:
            log.warning("index was built with %s; rebuilding it with %s",
                        meta.get(META_EMBEDDER, b"?").decode(), embedder.name)
        report.rebuilt = True
    return db.create_table(TABLE, schema=schema, mode="overwrite")


@dataclass(frozen=True)
class EmbedBatches:
    """What a distributed executor's actor runs: it loads the embedder once (``load``, a
    picklable function such as ``partial(load_embedder, settings)``), then embeds chunks
    of texts with the same ``embed`` the local path calls."""

    load: Callable[[], Embedder]

    def __call__(self) -> Callable[[list[tuple[int, list[str]]]], list[np.ndarray]]:
        embedder = self.load()
        return lambda chunks: [embedder.embed(texts) for _, texts in chunks]


def _embedded(chunks: list[pl.DataFrame], embedder: Embedder, executor: Executor | None,
              load: Callable[[], Embedder] | None) -> Iterator[tuple[pl.DataFrame, np.ndarray]]:
    """Each chunk of rows with its vectors, embedded here or on the executor's actors
    (one chunk per actor call, so a retried call re-embeds one chunk)."""
    if executor is None or not executor.distributed:
        for chunk in chunks:
            yield chunk, embedder.embed(chunk["text"].to_list())
        return
    if load is None:
        raise VaultError(f"the {executor.name} executor loads the embedder on its workers: "
                         "pass how to load it")
    items = [(position, chunk["text"].to_list()) for position, chunk in enumerate(chunks)]
    for (position, _), vectors in executor.map_model(EmbedBatches(load), items, batch_size=1):
        yield chunks[position], vectors


def build_index(paths: VaultPaths, embedder: Embedder,
                settings: IndexSettings | None = None, executor: Executor | None = None,
                load: Callable[[], Embedder] | None = None,
                progress: Progress = no_progress) -> IndexReport:
    """Bring the index in step with the vault: embed new and changed views (on the
    executor's actors when it is distributed: ``load`` rebuilds ``embedder`` there), update
    moved metadata, delete what left, then refresh the full-text and ANN indexes;
    ``progress`` hears of each batch of views embedded."""
    settings = settings or IndexSettings()
    rows, views, cutoff = vault_rows(paths, settings.exclude_evaluation,
                                     settings.cutoff or CUTOFF)
    report = IndexReport(embedder=embedder.name, dimension=embedder.dimension, cutoff=cutoff)
    report.evaluation_excluded = (len(evaluation_papers(paths))
                                  if settings.exclude_evaluation else 0)
    report.skipped_views = dict(views.problems.group_by("problem").len().iter_rows())
    schema = lance_schema(embedder)
    table = _open_or_create(connect(paths), schema, embedder, report)
    existing = _existing(table)

    gone = existing.join(rows, on=list(KEY), how="anti")
    for chunk in _chunks(gone.select(KEY), 500):
        table.delete(_key_filter(chunk))
    report.deleted = gone.height

    joined = rows.join(existing.select(*KEY, pl.col("text_sha256").alias("old_sha"),
                                       pl.col("published").alias("old_published"),
                                       pl.col("categories").alias("old_categories"),
                                       pl.col("primary_category").alias("old_primary"),
                                       pl.col("version").alias("old_version"),
                                       pl.col("version_created").alias("old_created")),
                       on=list(KEY), how="left")
    same_text = pl.col("old_sha") == pl.col("text_sha256")
    same_meta = ((pl.col("old_published") == pl.col("published"))
                 & (pl.col("old_primary").eq_missing(pl.col("primary_category")))
                 & (pl.col("old_categories") == pl.col("categories"))
                 & pl.col("old_version").eq_missing(pl.col("version"))
                 & pl.col("old_created").eq_missing(pl.col("version_created")))
    to_embed = joined.filter(~same_text.fill_null(False)).select(rows.columns)
    moved = joined.filter(same_text.fill_null(False) & ~same_meta.fill_null(False))
    report.unchanged = joined.height - to_embed.height - moved.height

    started = time.perf_counter()
    for chunk, vectors in _embedded(list(_chunks(to_embed, settings.batch_rows)), embedder,
                                    executor, load):
        report.embed_seconds += time.perf_counter() - started
        _upsert(table, _to_arrow(chunk, vectors, schema))
        report.embedded += chunk.height
        progress(chunk.height, to_embed.height, "index: embedding views")
        started = time.perf_counter()
    for chunk in _chunks(moved.select(rows.columns), 500):
        old = table.search().where(_key_filter(chunk)).select([*KEY, "vector"]) \
            .limit(chunk.height).to_arrow()
        vectors = pl.from_arrow(old).join(chunk, on=list(KEY), how="right")  # type: ignore
        matrix = np.stack(vectors["vector"].to_list()).astype(np.float32)
        _upsert(table, _to_arrow(vectors.select(rows.columns), matrix, schema))
        report.metadata_updated += chunk.height

    report.rows = table.count_rows()
    _refresh_indexes(table, report, settings, changed=report.embedded + report.deleted
                     + report.metadata_updated > 0)
    return report


def ann_config(rows: int, settings: IndexSettings):
    """The vector index for ``rows`` rows (shared with the benchmark)."""
    from lancedb.index import IvfFlat

    return IvfFlat(distance_type=DISTANCE, num_partitions=_partitions(rows, settings),
                   max_iterations=15, sample_rate=64)


def _partitions(rows: int, settings: IndexSettings) -> int:
    return settings.ann_partitions or max(1, int(np.sqrt(rows)))


def _trained_for(name: str) -> int | None:
    """Partitions of a vector index, kept in its name (`vector_ivf_flat_p1000`)."""
    head, _, count = name.rpartition("_p")
    return int(count) if head == "vector_ivf_flat" and count.isdigit() else None


def _scalar_indexes(table, names: dict) -> None:
    """Indexes of the columns a session's filter reads (`access.world.World.where`: the held
    version's day, ids left out, the view, the fields), so a prefilter over a large table
    reads indexes, not columns."""
    from lancedb.index import Bitmap, BTree, LabelList

    wanted = {"published": BTree(), "arxiv_id": BTree(), "version_created": BTree(),
              "view": Bitmap(), "archives": LabelList(), "categories": LabelList()}
    for column, config in wanted.items():
        name = f"{column}_{type(config).__name__.lower()}"
        if name not in names:
            table.create_index(column, config=config, name=name)


def _refresh_indexes(table, report: IndexReport, settings: IndexSettings,
                     changed: bool) -> None:
    """Full-text index from the first row; the vector index from ``ann_min_rows``, trained
    again once the table has grown fourfold (its partitions would be twice too few)."""
    from lancedb.index import FTS

    names = {ix.name: ix for ix in table.list_indices()}
    if changed and names:
        table.optimize()  # folds new rows into the existing indexes, compacts files
    if report.rows and not any(ix.columns == ["text"] for ix in names.values()):
        table.create_index("text", config=FTS(), name="text_fts")
    vector_index = next((ix for ix in names.values() if ix.columns == ["vector"]), None)
    wanted = _partitions(report.rows, settings)
    trained = _trained_for(vector_index.name) if vector_index else None
    if report.rows >= settings.ann_min_rows and (trained is None or 2 * trained < wanted):
        if vector_index is not None:
            table.drop_index(vector_index.name)
        table.create_index("vector", name=f"vector_ivf_flat_p{wanted}",
                           config=ann_config(report.rows, settings))
        vector_index = True
    if report.rows >= settings.ann_min_rows:
        _scalar_indexes(table, names)
    report.ann_index = "IVF_FLAT" if vector_index else None
    report.fts_index = report.rows > 0
