"""The `duplicates` stage: records of the same work across versions and sources, by exact
keys, MinHash-LSH (title and abstract; full text), embeddings and views' n-grams, with
their clusters; incremental (a refresh signs and compares only what is new)."""

from __future__ import annotations

from vault_pipeline.duplicates.build import DuplicatesReport, build_duplicates, load_embedder_for
from vault_pipeline.duplicates.settings import STAGE as SECTION
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.pipeline.stage import Counts, Rows, RunContext, Stage, StageResult
from vault_pipeline.schemas import DUPLICATE_CLUSTERS, DUPLICATE_PAIRS, DUPLICATE_SIGNATURES
from vault_pipeline.store.paths import VaultPaths

Result = StageResult[DuplicatesSettings, DuplicatesReport]


def run_duplicates(paths: VaultPaths, settings: DuplicatesSettings, _context: RunContext
                   ) -> Result:
    embedder = load_embedder_for(settings)
    report = build_duplicates(paths, settings, embedder)
    return StageResult(report, settings, {"embedder": embedder.name if embedder else "none"})


def _by_method(r: DuplicatesReport) -> Rows:
    methods = sorted(set(r.seconds_by_method) | set(r.pairs_by_method))
    return Rows([{"method": m, "pairs": r.pairs_by_method.get(m, 0),
                  "new_texts": r.new_by_method.get(m, 0),
                  "stored_texts": r.stored_by_method.get(m, 0),
                  "seconds": round(r.seconds_by_method.get(m, 0.0), 3)} for m in methods],
                {"method": "string", "pairs": "int", "new_texts": "int",
                 "stored_texts": "int", "seconds": "float"})


def _figures(run: Result) -> dict:
    r, s = run.report, run.settings
    thresholds = {"minhash_abstract": s.abstract_threshold,
                  "minhash_fulltext": s.fulltext_threshold,
                  "semantic": s.semantic_threshold, "views_ngram": s.overlap_threshold}
    return {
        DUPLICATE_PAIRS.name: {"dagster/row_count": r.pairs,
                               "pairs_by_method": Counts("method", r.pairs_by_method),
                               "by_method": _by_method(r), "thresholds": thresholds,
                               "embedder": run.read["embedder"]},
        DUPLICATE_CLUSTERS.name: {"dagster/row_count": r.clusters,
                                  "records_in_clusters": r.clustered,
                                  "records": r.records,
                                  "records_by_source": Counts("source", r.by_source)},
        DUPLICATE_SIGNATURES.name: {"new_by_method": Counts("method", r.new_by_method),
                                    "stored_by_method": Counts("method",
                                                               r.stored_by_method)}}


STAGE = Stage(
    "duplicates", "duplicates",
    inputs=("papers", "submissions", "citation_counts", "documents", "views"),
    outputs=(DUPLICATE_PAIRS, DUPLICATE_CLUSTERS, DUPLICATE_SIGNATURES),
    run=run_duplicates, settings=DuplicatesSettings, section=SECTION,
    describe=lambda run: (f"duplicates: {run.report.clusters} clusters of "
                          f"{run.report.clustered} records, {run.report.pairs} pairs "
                          f"({run.report.pairs_by_method}); new texts "
                          f"{run.report.new_by_method}"),
    warnings=lambda run: run.report.warnings, figures=_figures)
