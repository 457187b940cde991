"""The duplicates stage's build: exact pairs (recomputed whole, they are hash joins), then
each fuzzy method incrementally: only texts new or changed since the stored signatures are
signed, embedded and compared, against everything stored; the pairs of unchanged texts are
kept. Then the clusters, from every pair."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from vault_pipeline.duplicates import lsh, minhash, ngrams, records, semantic
from vault_pipeline.duplicates.clusters import build_clusters
from vault_pipeline.duplicates.exact import PAIR_COLUMNS, empty_pairs, exact_pairs
from vault_pipeline.duplicates.settings import NO_EMBEDDER, DuplicatesSettings
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

ABSTRACT, FULLTEXT, SEMANTIC = "minhash_abstract", "minhash_fulltext", "semantic"
VIEWS_OVERLAP = "views_ngram"
FUZZY = (ABSTRACT, FULLTEXT, SEMANTIC, VIEWS_OVERLAP)
SIGNATURE_COLUMNS = {"id": pl.String, "method": pl.String, "params": pl.String,
                     "text_sha256": pl.String, "signature": pl.List(pl.UInt32),
                     "vector": pl.List(pl.Float32)}


@dataclass
class DuplicatesReport:
    records: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    pairs_by_method: dict[str, int] = field(default_factory=dict)
    new_by_method: dict[str, int] = field(default_factory=dict)  # texts signed this run
    stored_by_method: dict[str, int] = field(default_factory=dict)  # compared against
    seconds_by_method: dict[str, float] = field(default_factory=dict)
    clusters: int = 0
    clustered: int = 0
    pairs: int = 0
    warnings: list[str] = field(default_factory=list)


def _sha(texts: list[str]) -> list[str]:
    return [hashlib.sha256(t.encode()).hexdigest() for t in texts]


@dataclass
class _Texts:
    """The current texts of one method, split into those stored unchanged and the new."""

    ids: list[str]  # old first, then new: the row numbers of the comparison
    n_old: int
    new_texts: list[str]
    new_sha: list[str]
    old: pl.DataFrame  # stored signature rows of the unchanged texts, in ``ids`` order


def _split(method: str, params: str, ids: list[str], texts: list[str],
           stored: pl.DataFrame) -> _Texts:
    current = pl.DataFrame({"id": ids, "text_sha256": _sha(texts), "text": texts},
                           schema={"id": pl.String, "text_sha256": pl.String,
                                   "text": pl.String})
    mine = stored.filter((pl.col("method") == method) & (pl.col("params") == params))
    old = mine.join(current.select("id", "text_sha256"), on=["id", "text_sha256"],
                    how="semi").sort("id")
    new = current.join(old.select("id", "text_sha256"), on=["id", "text_sha256"],
                       how="anti").sort("id")
    return _Texts(old["id"].to_list() + new["id"].to_list(), old.height,
                  new["text"].to_list(), new["text_sha256"].to_list(), old)


def _kept(previous: pl.DataFrame | None, method: str, old_ids: list[str]) -> pl.DataFrame:
    """Pairs of a method found before between two texts that are stored unchanged."""
    if previous is None or previous.is_empty():
        return empty_pairs()
    same = previous.filter(pl.col("method") == method)
    keep = pl.Series(old_ids, dtype=pl.String).implode()
    return same.filter(pl.col("a").is_in(keep) & pl.col("b").is_in(keep)).select(
        list(PAIR_COLUMNS))


def _named(rows: pl.DataFrame, ids: list[str], method: str, evidence: pl.Expr
           ) -> pl.DataFrame:
    names = pl.Series(ids, dtype=pl.String)
    return rows.with_columns(a=names.gather(rows["a"]), b=names.gather(rows["b"])).select(
        a=pl.min_horizontal("a", "b"), b=pl.max_horizontal("a", "b"), method=pl.lit(method),
        score=pl.col("score").cast(pl.Float64).round(4), evidence=evidence)


def _signature_rows(method: str, params: str, t: _Texts, signatures=None, vectors=None
                    ) -> pl.DataFrame:
    n_new = len(t.new_sha)
    new = pl.DataFrame({
        "id": t.ids[t.n_old:], "method": [method] * n_new, "params": [params] * n_new,
        "text_sha256": t.new_sha,
        "signature": (pl.Series(signatures).cast(pl.List(pl.UInt32))
                      if signatures is not None else [None] * n_new),
        "vector": list(vectors) if vectors is not None else [None] * n_new},
        schema=SIGNATURE_COLUMNS)
    return pl.concat([t.old.select(list(SIGNATURE_COLUMNS)), new])


def _stored_blocks(old: pl.DataFrame, num_perm: int) -> Iterator[np.ndarray]:
    """The stored signatures, a block of rows at a time, as (rows, num_perm) arrays."""
    for start in range(0, old.height, lsh.BLOCK):
        column = old["signature"].slice(start, lsh.BLOCK)
        yield column.explode().to_numpy().astype(np.uint32).reshape(len(column), num_perm)


def _signed_blocks(texts: list[str], params: minhash.MinHashParams) -> Iterator[np.ndarray]:
    """Signatures of at most :data:`lsh.BLOCK` texts or :data:`lsh.BLOCK_CHARS` characters
    at a time (a full text is some 60 abstracts: its blocks hold fewer texts)."""
    start = 0
    while start < len(texts):
        end, chars = start, 0
        while end < len(texts) and end - start < lsh.BLOCK and (
                end == start or chars + len(texts[end]) <= lsh.BLOCK_CHARS):
            chars += len(texts[end])
            end += 1
        yield minhash.signatures(pl.Series(texts[start:end], dtype=pl.String), params)
        start = end


def minhash_method(method: str, ids: list[str], texts: list[str], stored: pl.DataFrame,
                   previous: pl.DataFrame | None, params: minhash.MinHashParams,
                   threshold: float, work: Path | None = None
                   ) -> tuple[pl.DataFrame, pl.DataFrame, _Texts]:
    """(pairs, signature rows, texts) of one MinHash method, comparing new texts only;
    signing, candidates and verification a block at a time (:mod:`.lsh`)."""
    key = f"{params.name()}:t{threshold}"
    t = _split(method, key, ids, texts, stored)
    signed: list[np.ndarray] = []
    scored, _ = lsh.lsh_pairs(_stored_blocks(t.old, params.num_perm),
                              _signed_blocks(t.new_texts, params), params, threshold, work,
                              on_new=signed.append)
    new_sig = (np.vstack(signed) if signed
               else np.zeros((0, params.num_perm), dtype=np.uint32))
    evidence = pl.format(f"estimated Jaccard {{}} of {params.ngram}-word shingles "
                         f"(LSH {params.bands}x{params.rows})", pl.col("score").round(3))
    pairs = pl.concat([_kept(previous, method, t.ids[:t.n_old]),
                       _named(scored, t.ids, method, evidence)])
    return pairs, _signature_rows(method, key, t, signatures=new_sig), t


def semantic_method(ids: list[str], texts: list[str], stored: pl.DataFrame,
                    previous: pl.DataFrame | None, embedder, threshold: float
                    ) -> tuple[pl.DataFrame, pl.DataFrame, _Texts]:
    key = f"{embedder.name}:t{threshold}"
    t = _split(SEMANTIC, key, ids, texts, stored)
    old = (np.asarray(t.old["vector"].to_list(), dtype=np.float32)
           .reshape(t.n_old, embedder.dimension))
    new = (np.asarray(embedder.embed(t.new_texts), dtype=np.float32) if t.new_texts
           else np.zeros((0, embedder.dimension), dtype=np.float32))
    found = semantic.cosine_pairs(new, old, threshold)
    evidence = pl.format(f"cosine {{}} of title-and-abstract embeddings ({embedder.name})",
                         pl.col("score").round(3))
    pairs = pl.concat([_kept(previous, SEMANTIC, t.ids[:t.n_old]),
                       _named(found, t.ids, SEMANTIC, evidence)])
    return pairs, _signature_rows(SEMANTIC, key, t, vectors=new), t


def overlap_method(ids: list[str], texts: list[str], stored: pl.DataFrame,
                   previous: pl.DataFrame | None, n: int, threshold: float
                   ) -> tuple[pl.DataFrame, pl.DataFrame, _Texts]:
    """Views sharing more than ``threshold`` of the shorter one's ``n``-grams: new views
    against every other paper's."""
    key = f"ngram{n}:t{threshold}"
    t = _split(VIEWS_OVERLAP, key, ids, texts, stored)
    every = dict(zip(ids, texts, strict=True))
    new_ids = t.ids[t.n_old:]
    found = ngrams.overlaps(pl.DataFrame({"id": new_ids, "text": t.new_texts},
                                         schema={"id": pl.String, "text": pl.String}),
                            pl.DataFrame({"id": list(every), "text": list(every.values())},
                                         schema={"id": pl.String, "text": pl.String}),
                            n, threshold, symmetric=True, best=False)
    pairs = pl.concat([
        _kept(previous, VIEWS_OVERLAP, t.ids[:t.n_old]),
        found.select(a=pl.min_horizontal("query", "match"),
                     b=pl.max_horizontal("query", "match"), method=pl.lit(VIEWS_OVERLAP),
                     score=pl.col("overlap").round(4),
                     evidence=pl.format(f"{{}} of the shorter text's {n}-grams shared ({{}} "
                                        "of {})", pl.col("overlap").round(3),
                                        pl.col("shared"), pl.col("grams")))])
    return pairs, _signature_rows(VIEWS_OVERLAP, key, t), t


def fulltexts(documents: pl.DataFrame | None, chars: int) -> tuple[list[str], list[str]]:
    """(ids, texts) of every converted full text (not an abstract fallback)."""
    if documents is None or documents.is_empty():
        return [], []
    done = documents.filter((pl.col("status") == "ok") & (pl.col("source") != "abstract_only")
                            & pl.col("text").is_not_null())
    done = done.with_columns(id=pl.coalesce(
        pl.col("arxiv_id"), pl.lit(f"{records.OPENREVIEW}:") + pl.col("forum_id")))
    done = done.filter(pl.col("id").is_not_null()).unique("id", keep="first").sort("id")
    return done["id"].to_list(), done["text"].str.slice(0, chars).to_list()


def view_texts(views: pl.DataFrame | None) -> tuple[list[str], list[str]]:
    """(ids, texts): each paper's views joined, in view order."""
    if views is None or views.is_empty():
        return [], []
    joined = (views.filter(pl.col("text").is_not_null() & pl.col("arxiv_id").is_not_null())
              .sort("arxiv_id", "view").group_by("arxiv_id", maintain_order=True)
              .agg(pl.col("text").str.join("\n")))
    return joined["arxiv_id"].to_list(), joined["text"].to_list()


def compute_duplicates(recs: pl.DataFrame, documents: pl.DataFrame | None,
                       views: pl.DataFrame | None, settings: DuplicatesSettings,
                       stored: pl.DataFrame | None, previous: pl.DataFrame | None,
                       embedder=None, clock: Callable[[], float] = time.perf_counter,
                       work: Path | None = None
                       ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, DuplicatesReport]:
    """(pairs, clusters, signatures, report): a pure function of the records and what the
    last run stored (``work``: where the MinHash methods' block files go meanwhile)."""
    report = DuplicatesReport(records=recs.height,
                              by_source=dict(recs.group_by("source").len().sort("source")
                                             .iter_rows()))
    stored = stored if stored is not None else pl.DataFrame(schema=SIGNATURE_COLUMNS)
    start = clock()
    found = [exact_pairs(recs)]
    report.seconds_by_method["exact"] = clock() - start
    sig_frames = []
    params = minhash.MinHashParams(settings.ngram, settings.bands, settings.rows)
    texts = records.compared_text(recs)
    have = recs.with_columns(text=texts).filter(pl.col("text").is_not_null())
    ids, abstracts = have["id"].to_list(), have["text"].to_list()
    doc_ids, doc_texts = fulltexts(documents, settings.fulltext_chars)
    view_ids, view_text = view_texts(views)
    runs = [(ABSTRACT, lambda: minhash_method(ABSTRACT, ids, abstracts, stored, previous,
                                              params, settings.abstract_threshold, work)),
            (FULLTEXT, lambda: minhash_method(FULLTEXT, doc_ids, doc_texts, stored, previous,
                                              params, settings.fulltext_threshold, work)),
            (VIEWS_OVERLAP, lambda: overlap_method(view_ids, view_text, stored, previous,
                                                   settings.overlap_n,
                                                   settings.overlap_threshold))]
    if embedder is not None:
        runs.append((SEMANTIC, lambda: semantic_method(ids, abstracts, stored, previous,
                                                       embedder,
                                                       settings.semantic_threshold)))
    for method, run in runs:
        start = clock()
        pairs, sigs, t = run()
        report.seconds_by_method[method] = clock() - start
        report.new_by_method[method] = len(t.new_sha)
        report.stored_by_method[method] = t.n_old
        found.append(pairs)
        sig_frames.append(sigs)
    pairs = (pl.concat(found).unique(["a", "b", "method"], keep="first")
             .sort("a", "b", "method"))
    clusters = build_clusters(pairs, recs)
    report.pairs = pairs.height
    report.pairs_by_method = {m: int((pairs["method"] == m).sum())
                              for m in sorted(set(pairs["method"].to_list()))}
    report.clusters = clusters.height
    report.clustered = int(clusters["members"].list.len().sum() or 0)
    sigs = (pl.concat(sig_frames) if sig_frames else pl.DataFrame(schema=SIGNATURE_COLUMNS))
    return pairs, clusters, sigs.sort("method", "id"), report


def load_embedder_for(settings: DuplicatesSettings):
    """The semantic method's embedder, or None when it is switched off."""
    if settings.model == NO_EMBEDDER:
        return None
    from vault_pipeline.embeddings.embedders import EmbedderSettings, load_embedder

    return load_embedder(EmbedderSettings(model=settings.model, backend=settings.backend))


def build_duplicates(paths: VaultPaths, settings: DuplicatesSettings, embedder=None
                     ) -> DuplicatesReport:
    """Read the records and what the last run stored; write pairs, clusters, signatures."""
    store = paths.store
    recs = records.gather(store.read_optional(PAPERS), store.read_optional(SUBMISSIONS),
                          store.read_optional(CITATION_COUNTS))
    paths.scratch.mkdir(parents=True, exist_ok=True)
    pairs, clusters, sigs, report = compute_duplicates(
        recs, store.read_optional(DOCUMENTS), store.read_optional(VIEWS), settings,
        store.read_optional(DUPLICATE_SIGNATURES), store.read_optional(DUPLICATE_PAIRS),
        embedder, work=paths.scratch)
    if recs.is_empty():
        report.warnings.append("no records (no papers, submissions or S2 papers): nothing "
                               "to compare")
    store.write(DUPLICATE_PAIRS, pairs)
    store.write(DUPLICATE_CLUSTERS, clusters)
    store.write(DUPLICATE_SIGNATURES, sigs)
    return report
