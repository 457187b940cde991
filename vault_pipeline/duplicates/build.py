"""The duplicates stage's build: exact pairs (recomputed whole, they are hash joins), then
each fuzzy method incrementally: only texts new or changed since the stored signatures are
signed, embedded and compared, against everything stored; the pairs of unchanged texts are
kept. Then the clusters, from every pair. Every input is read from the store a batch at a
time and the signatures written as they are made; what grows with the corpus (the records'
keys, the texts' ids and hashes, row numbers, n-grams, vectors) goes to scratch files and
is matched there by DuckDB (:mod:`.keys`, :mod:`.split`, :mod:`.incremental`,
:mod:`.streamed`), so the stage never holds the corpus."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa

from vault_pipeline.duplicates import incremental, lsh, records, scratch, streamed, texts
from vault_pipeline.duplicates.clusters import build_clusters
from vault_pipeline.duplicates.incremental import SIGNATURE_COLUMNS, Sink
from vault_pipeline.duplicates.keys import RecordKeys
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
from vault_pipeline.store.tables import BATCH_ROWS, TableStore

ABSTRACT, FULLTEXT = "minhash_abstract", "minhash_fulltext"
SEMANTIC, VIEWS_OVERLAP = streamed.SEMANTIC, streamed.VIEWS_OVERLAP
FUZZY = (ABSTRACT, FULLTEXT, SEMANTIC, VIEWS_OVERLAP)
DOCUMENT_BATCH = 500  # full texts read at a time (some 60,000 characters each)


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
class Inputs:
    """What the stage compares, every part as batches read on demand: the records (frames
    of :data:`records.COLUMNS`, for the exact methods and the clusters), the texts, the
    views' rows and what the last run stored."""

    records: Batches
    abstracts: Batches
    fulltexts: Batches
    views: Batches = texts.none
    stored: Batches = texts.none
    previous: Batches = texts.none


def compare(inputs: Inputs, settings: DuplicatesSettings, sink: Sink, work: Path,
            embedder=None, clock: Callable[[], float] = time.perf_counter
            ) -> tuple[pl.DataFrame, pl.DataFrame, DuplicatesReport]:
    """(pairs, clusters, report); every signature row goes to ``sink``, every scratch
    file (keys, row numbers, signatures, n-grams) to ``work``."""
    recs = RecordKeys(work, inputs.records())
    report = DuplicatesReport(records=recs.height, by_source=recs.by_source)
    start = clock()
    found = [recs.exact_pairs()]
    report.seconds_by_method["exact"] = clock() - start
    params = MinHashParams(settings.ngram, settings.bands, settings.rows)

    def signed(method: str, source: Batches, threshold: float):
        return lambda: incremental.minhash_method(method, source, inputs.stored,
                                                  inputs.previous, params, threshold, sink,
                                                  work)

    runs = [(ABSTRACT, signed(ABSTRACT, inputs.abstracts, settings.abstract_threshold)),
            (FULLTEXT, signed(FULLTEXT, inputs.fulltexts, settings.fulltext_threshold)),
            (VIEWS_OVERLAP, lambda: streamed.overlap_method(
                texts.view_texts(inputs.views, work), inputs.stored, inputs.previous,
                settings.overlap_n, settings.overlap_threshold, sink, work))]
    if embedder is not None:
        runs.append((SEMANTIC, lambda: streamed.semantic_method(
            inputs.abstracts, inputs.stored, inputs.previous, embedder,
            settings.semantic_threshold, sink, work)))
    for method, run in runs:
        start = clock()
        pairs, where = run()
        report.seconds_by_method[method] = clock() - start
        report.new_by_method[method] = where.n_new
        report.stored_by_method[method] = where.n_old
        found.append(pairs)
    pairs = (pl.concat(found).unique(["a", "b", "method"], keep="first")
             .sort("a", "b", "method"))
    clusters = build_clusters(pairs, recs.members(pairs))
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
    inputs = Inputs(texts.frame_batches(recs), texts.record_texts(recs),
                    texts.fulltexts(texts.frame_batches(documents), settings.fulltext_chars),
                    texts.frame_batches(views), texts.frame_batches(stored),
                    texts.frame_batches(previous))
    made: list[pl.DataFrame] = [pl.DataFrame(schema=SIGNATURE_COLUMNS)]
    with tempfile.TemporaryDirectory(dir=work, prefix="duplicates-") as tmp:
        pairs, clusters, report = compare(inputs, settings, made.append, Path(tmp), embedder,
                                          clock)
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
    """The stage's inputs from the store, every one as batches read on demand: records
    without their abstracts (and with their first author only), texts, views, stored rows."""
    def batches(table, columns=None, rows=None) -> Batches:
        extra = {} if rows is None else {"rows": rows}
        return lambda wanted=None: store.batches(table, wanted or columns, **extra)

    def record_frames() -> Iterator[pl.DataFrame]:
        for table, make in ((PAPERS, records.paper_records),
                            (SUBMISSIONS, records.submission_records)):
            for batch in store.batches(table, KEY_COLUMNS[table]):
                yield make(batch.with_columns(pl.col("authors").list.head(1)))
        for batch in store.batches(CITATION_COUNTS, ("s2_id", "arxiv_id", "doi", "title")):
            yield records.s2_records(batch)

    text = ("title", "abstract")
    return Inputs(
        record_frames,
        texts.abstract_texts(batches(PAPERS, ("arxiv_id", *text)),
                             batches(SUBMISSIONS, ("forum_id", *text))),
        texts.fulltexts(batches(DOCUMENTS, ("arxiv_id", "forum_id", "status", "source",
                                            "text"), DOCUMENT_BATCH),
                        settings.fulltext_chars),
        batches(VIEWS, ("arxiv_id", "view", "text")),
        batches(DUPLICATE_SIGNATURES), batches(DUPLICATE_PAIRS))


def sorted_rows(signatures: Path, work: Path) -> Iterator[pa.RecordBatch]:
    """The signature rows of a scratch file, sorted by method and id (DuckDB's sort spills
    to ``work``)."""
    with scratch.connect(work, ordered=True) as db:
        yield from db.sql(f"SELECT * FROM {scratch.scan(signatures)} "
                          "ORDER BY method, id").to_arrow_reader(lsh.BLOCK)


def build_duplicates(paths: VaultPaths, settings: DuplicatesSettings, embedder=None
                     ) -> DuplicatesReport:
    """Read the records and what the last run stored; write pairs, clusters, signatures."""
    store = paths.store
    inputs = store_inputs(store, settings)
    paths.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=paths.scratch, prefix="duplicates-") as tmp:
        work = Path(tmp)
        sink = scratch.Appender(work / "signatures.parquet", SIGNATURE_COLUMNS)
        pairs, clusters, report = compare(inputs, settings, sink, work, embedder)
        if report.records == 0:
            report.warnings.append("no records (no papers, submissions or S2 papers): "
                                   "nothing to compare")
        # Row groups of a batch: the next run reads `duplicate_pairs` back a batch at a time.
        store.write_batches(DUPLICATE_PAIRS, pairs.iter_slices(BATCH_ROWS))
        store.write_batches(DUPLICATE_CLUSTERS, clusters.iter_slices(BATCH_ROWS))
        store.write_batches(DUPLICATE_SIGNATURES, sorted_rows(sink.close(), work))
    return report
