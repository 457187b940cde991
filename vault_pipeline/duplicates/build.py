"""The duplicates stage's build: exact pairs (recomputed whole, they are hash joins), then
each fuzzy method incrementally: only texts new or changed since the stored signatures are
signed, embedded and compared, against everything stored; the pairs of unchanged texts are
kept. Then the clusters, from every pair. The texts and the stored signatures are read from
the store a batch at a time and the signatures written as they are made (:mod:`.texts`,
:mod:`.incremental`), so the MinHash methods never hold the corpus."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from vault_pipeline.duplicates import incremental, lsh, ngrams, records, semantic, texts
from vault_pipeline.duplicates.clusters import build_clusters
from vault_pipeline.duplicates.exact import exact_pairs
from vault_pipeline.duplicates.incremental import SIGNATURE_COLUMNS, Sink, kept
from vault_pipeline.duplicates.minhash import MinHashParams
from vault_pipeline.duplicates.settings import NO_EMBEDDER, DuplicatesSettings
from vault_pipeline.duplicates.texts import Batches
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.schemas import (
    CITATION_COUNTS,
    DOCUMENTS,
    DUPLICATE_CLUSTERS,
    DUPLICATE_PAIRS,
    DUPLICATE_SIGNATURES,
    PAPERS,
    SUBMISSIONS,
    VIEWS,
)
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.tables import TableStore

ABSTRACT, FULLTEXT, SEMANTIC = "minhash_abstract", "minhash_fulltext", "semantic"
VIEWS_OVERLAP = "views_ngram"
FUZZY = (ABSTRACT, FULLTEXT, SEMANTIC, VIEWS_OVERLAP)
DOCUMENT_BATCH = 500  # full texts read at a time (some 60,000 characters each)
SORT_MEMORY = "128MB"  # DuckDB's sort of the signatures spills past this


@dataclass
class DuplicatesReport(Counters, counts=("records", "clusters", "clustered", "pairs")):
    """Records compared, clusters and the records in them, pairs kept; per method what was
    found, signed this run and compared against."""

    by_source: dict[str, int] = field(default_factory=dict)
    pairs_by_method: dict[str, int] = field(default_factory=dict)
    new_by_method: dict[str, int] = field(default_factory=dict)  # texts signed this run
    stored_by_method: dict[str, int] = field(default_factory=dict)  # compared against
    seconds_by_method: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Texts:
    """The current texts of one held method, split into those stored unchanged and the new."""

    ids: list[str]  # old first, then new: the row numbers of the comparison
    n_old: int
    new_texts: list[str]
    new_sha: list[str]
    old: pl.DataFrame  # stored signature rows of the unchanged texts, in ``ids`` order


def _mine(stored: Batches, method: str, params: str) -> pl.DataFrame:
    """One method's stored signature rows under ``params``, read a batch at a time."""
    return pl.concat([pl.DataFrame(schema=SIGNATURE_COLUMNS), *(
        b.filter((pl.col("method") == method) & (pl.col("params") == params))
        .select(list(SIGNATURE_COLUMNS)).cast(SIGNATURE_COLUMNS) for b in stored())])


def _split(method: str, params: str, ids: list[str], texts: list[str],
           stored: Batches, sink: Sink) -> _Texts:
    """The split of a method that holds every text; the unchanged rows go to ``sink``."""
    current = pl.DataFrame({"id": ids, "text_sha256": incremental.sha(texts), "text": texts},
                           schema={"id": pl.String, "text_sha256": pl.String,
                                   "text": pl.String})
    old = _mine(stored, method, params).join(current.select("id", "text_sha256"),
                                             on=["id", "text_sha256"], how="semi").sort("id")
    new = current.join(old.select("id", "text_sha256"), on=["id", "text_sha256"],
                       how="anti").sort("id")
    sink(old)
    return _Texts(old["id"].to_list() + new["id"].to_list(), old.height,
                  new["text"].to_list(), new["text_sha256"].to_list(), old)


def semantic_method(ids: list[str], abstracts: list[str], stored: Batches,
                    previous: Batches, embedder, threshold: float, sink: Sink
                    ) -> tuple[pl.DataFrame, _Texts]:
    key = f"{embedder.name}:t{threshold}"
    t = _split(SEMANTIC, key, ids, abstracts, stored, sink)
    old = (np.asarray(t.old["vector"].to_list(), dtype=np.float32)
           .reshape(t.n_old, embedder.dimension))
    new = (np.asarray(embedder.embed(t.new_texts), dtype=np.float32) if t.new_texts
           else np.zeros((0, embedder.dimension), dtype=np.float32))
    found = semantic.cosine_pairs(new, old, threshold)
    evidence = pl.format(f"cosine {{}} of title-and-abstract embeddings ({embedder.name})",
                         pl.col("score").round(3))
    sink(incremental.signature_rows(SEMANTIC, key, t.ids[t.n_old:], t.new_sha, vectors=new))
    return pl.concat([kept(previous, SEMANTIC, t.ids[:t.n_old]),
                      incremental.named(found, t.ids, SEMANTIC, evidence)]), t


def overlap_method(ids: list[str], views: list[str], stored: Batches, previous: Batches,
                   n: int, threshold: float, sink: Sink) -> tuple[pl.DataFrame, _Texts]:
    """Views sharing more than ``threshold`` of the shorter one's ``n``-grams: new views
    against every other paper's."""
    key = f"ngram{n}:t{threshold}"
    t = _split(VIEWS_OVERLAP, key, ids, views, stored, sink)
    every = dict(zip(ids, views, strict=True))
    new_ids = t.ids[t.n_old:]
    found = ngrams.overlaps(pl.DataFrame({"id": new_ids, "text": t.new_texts},
                                         schema={"id": pl.String, "text": pl.String}),
                            pl.DataFrame({"id": list(every), "text": list(every.values())},
                                         schema={"id": pl.String, "text": pl.String}),
                            n, threshold, symmetric=True, best=False)
    sink(incremental.signature_rows(VIEWS_OVERLAP, key, new_ids, t.new_sha))
    pairs = pl.concat([
        kept(previous, VIEWS_OVERLAP, t.ids[:t.n_old]),
        found.select(a=pl.min_horizontal("query", "match"),
                     b=pl.max_horizontal("query", "match"), method=pl.lit(VIEWS_OVERLAP),
                     score=pl.col("overlap").round(4),
                     evidence=pl.format(f"{{}} of the shorter text's {n}-grams shared ({{}} "
                                        "of {})", pl.col("overlap").round(3),
                                        pl.col("shared"), pl.col("grams")))])
    return pairs, t


def view_texts(views: pl.DataFrame | None) -> tuple[list[str], list[str]]:
    """(ids, texts): each paper's views joined, in view order."""
    if views is None or views.is_empty():
        return [], []
    joined = (views.filter(pl.col("text").is_not_null() & pl.col("arxiv_id").is_not_null())
              .sort("arxiv_id", "view").group_by("arxiv_id", maintain_order=True)
              .agg(pl.col("text").str.join("\n")))
    return joined["arxiv_id"].to_list(), joined["text"].to_list()


@dataclass
class Inputs:
    """What the stage compares: the records (their keys, for the exact methods and the
    clusters), the texts as batches, the views, and what the last run stored."""

    recs: pl.DataFrame
    abstracts: Batches
    fulltexts: Batches
    views: pl.DataFrame | None
    stored: Batches = texts.none
    previous: Batches = texts.none


def compare(inputs: Inputs, settings: DuplicatesSettings, sink: Sink, embedder=None,
            clock: Callable[[], float] = time.perf_counter, work: Path | None = None
            ) -> tuple[pl.DataFrame, pl.DataFrame, DuplicatesReport]:
    """(pairs, clusters, report); every signature row goes to ``sink`` (``work``: where
    the MinHash methods' block files go meanwhile)."""
    recs = inputs.recs
    report = DuplicatesReport(records=recs.height,
                              by_source=dict(recs.group_by("source").len().sort("source")
                                             .iter_rows()))
    start = clock()
    found = [exact_pairs(recs)]
    report.seconds_by_method["exact"] = clock() - start
    params = MinHashParams(settings.ngram, settings.bands, settings.rows)

    def signed(method: str, source: Batches, threshold: float):
        pairs, counted = incremental.minhash_method(method, source, inputs.stored,
                                                    inputs.previous, params, threshold,
                                                    sink, work)
        return pairs, len(counted.new), len(counted.old)

    def held(run):
        def go():
            pairs, t = run()
            return pairs, len(t.new_sha), t.n_old
        return go

    runs = [(ABSTRACT, lambda: signed(ABSTRACT, inputs.abstracts, settings.abstract_threshold)),
            (FULLTEXT, lambda: signed(FULLTEXT, inputs.fulltexts, settings.fulltext_threshold)),
            (VIEWS_OVERLAP, held(lambda: overlap_method(
                *view_texts(inputs.views), inputs.stored, inputs.previous,
                settings.overlap_n, settings.overlap_threshold, sink)))]
    if embedder is not None:
        runs.append((SEMANTIC, held(lambda: semantic_method(
            *texts.materialise(inputs.abstracts), inputs.stored, inputs.previous, embedder,
            settings.semantic_threshold, sink))))
    for method, run in runs:
        start = clock()
        pairs, n_new, n_old = run()
        report.seconds_by_method[method] = clock() - start
        report.new_by_method[method] = n_new
        report.stored_by_method[method] = n_old
        found.append(pairs)
    pairs = (pl.concat(found).unique(["a", "b", "method"], keep="first")
             .sort("a", "b", "method"))
    clusters = build_clusters(pairs, recs)
    report.pairs = pairs.height
    report.pairs_by_method = {m: int((pairs["method"] == m).sum())
                              for m in sorted(set(pairs["method"].to_list()))}
    report.clusters = clusters.height
    report.clustered = int(clusters["members"].list.len().sum() or 0)
    return pairs, clusters, report


def compute_duplicates(recs: pl.DataFrame, documents: pl.DataFrame | None,
                       views: pl.DataFrame | None, settings: DuplicatesSettings,
                       stored: pl.DataFrame | None, previous: pl.DataFrame | None,
                       embedder=None, clock: Callable[[], float] = time.perf_counter,
                       work: Path | None = None
                       ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, DuplicatesReport]:
    """(pairs, clusters, signatures, report) of frames in memory: a pure function of the
    records and what the last run stored."""
    inputs = Inputs(recs, texts.record_texts(recs),
                    texts.fulltexts(texts.frame_batches(documents), settings.fulltext_chars),
                    views, texts.frame_batches(stored), texts.frame_batches(previous))
    made: list[pl.DataFrame] = [pl.DataFrame(schema=SIGNATURE_COLUMNS)]
    pairs, clusters, report = compare(inputs, settings, made.append, embedder, clock, work)
    return pairs, clusters, pl.concat(made).sort("method", "id"), report


def load_embedder_for(settings: DuplicatesSettings):
    """The semantic method's embedder, or None when it is switched off."""
    if settings.model == NO_EMBEDDER:
        return None
    from vault_pipeline.embeddings.embedders import EmbedderSettings, load_embedder

    return load_embedder(EmbedderSettings(model=settings.model, backend=settings.backend))


KEY_COLUMNS = {PAPERS: ("arxiv_id", "title", "authors", "doi", "published"),
               SUBMISSIONS: ("forum_id", "title", "authors", "arxiv_id", "arxiv_match",
                             "created")}


def store_inputs(store: TableStore, settings: DuplicatesSettings) -> Inputs:
    """The stage's inputs from the store: records without their abstracts (and with their
    first author only), texts and stored rows as batches read on demand."""
    def batches(table, columns=None, rows=None) -> Batches:
        extra = {} if rows is None else {"rows": rows}
        return lambda: store.batches(table, columns, **extra)

    def keys(table) -> pl.DataFrame | None:  # the first author is all the exact keys use
        frames = [b.with_columns(pl.col("authors").list.head(1))
                  for b in store.batches(table, KEY_COLUMNS[table])]
        return pl.concat(frames) if frames else None

    recs = records.gather(keys(PAPERS), keys(SUBMISSIONS),
                          store.read_optional(CITATION_COUNTS))
    text = ("title", "abstract")
    return Inputs(
        recs,
        texts.abstract_texts(batches(PAPERS, ("arxiv_id", *text)),
                             batches(SUBMISSIONS, ("forum_id", *text))),
        texts.fulltexts(batches(DOCUMENTS, ("arxiv_id", "forum_id", "status", "source",
                                            "text"), DOCUMENT_BATCH),
                        settings.fulltext_chars),
        store.read_optional(VIEWS, ("arxiv_id", "view", "text")),
        batches(DUPLICATE_SIGNATURES), batches(DUPLICATE_PAIRS))


class _SignatureFile:
    """Signature rows appended to one Parquet file as they are made (a sink)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schema = pl.DataFrame(schema=SIGNATURE_COLUMNS).to_arrow().schema
        self.writer = pq.ParquetWriter(path, self.schema)

    def __call__(self, rows: pl.DataFrame) -> None:
        if rows.height:
            self.writer.write_table(rows.to_arrow().cast(self.schema))

    def sorted(self, work: Path) -> Iterator[pa.RecordBatch]:
        """The rows, sorted by method and id (DuckDB's sort spills to ``work``)."""
        import duckdb

        self.writer.close()
        with duckdb.connect(config={"memory_limit": SORT_MEMORY, "threads": 1,
                                    "temp_directory": str(work / "spill"),
                                    "preserve_insertion_order": True}) as db:
            yield from db.sql(f"SELECT * FROM read_parquet('{self.path}') "
                              "ORDER BY method, id").to_arrow_reader(lsh.BLOCK)


def build_duplicates(paths: VaultPaths, settings: DuplicatesSettings, embedder=None
                     ) -> DuplicatesReport:
    """Read the records and what the last run stored; write pairs, clusters, signatures."""
    import tempfile

    store = paths.store
    inputs = store_inputs(store, settings)
    paths.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=paths.scratch, prefix="duplicates-") as tmp:
        work = Path(tmp)
        sink = _SignatureFile(work / "signatures.parquet")
        pairs, clusters, report = compare(inputs, settings, sink, embedder, work=work)
        if inputs.recs.is_empty():
            report.warnings.append("no records (no papers, submissions or S2 papers): "
                                   "nothing to compare")
        store.write(DUPLICATE_PAIRS, pairs)
        store.write(DUPLICATE_CLUSTERS, clusters)
        store.write_batches(DUPLICATE_SIGNATURES, sink.sorted(work))
    return report
