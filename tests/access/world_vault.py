"""A vault for the access tests: the splits test papers plus the cases a session's world must
get right - a paper revised before the cutoff (its held version is the later one), one
revised after it with no version history (no known day: never seen), a near-duplicate of a
target under another id, full text with sections, and citations to and from post-cutoff
papers - with splits and a real index (the embedded model)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import polars as pl

from testing.splits_vault import CUTOFF, PAPERS_LIST, Paper, papers_frame, views_frame
from vault_pipeline.embeddings.embedders import load_embedder
from vault_pipeline.index.lance_index import build_index
from vault_pipeline.schemas import CITATIONS, DOCUMENTS, PAPERS
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths

TARGET = "2601.00007"  # "Adaptive Capacity for Expert Routing", post-cutoff
NEAR_DUPLICATE = "2503.00021"  # the same work under another id, before the cutoff
REVISED = "2406.00022"  # v1 2024-06-01, v2 2025-09-01: held as v2
NO_HISTORY = "2407.00023"  # revised after the cutoff, no versions listed: no known day
EXTRA = [
    Paper(NEAR_DUPLICATE, date(2025, 3, 1), ("cs.LG",),
          "Adaptive Capacity for Expert Routing Networks",
          "We propose a method that adapts expert capacity per batch.",
          "expert routing drops tokens when load is uneven across experts"),
    Paper(REVISED, date(2024, 6, 1), ("stat.ML",), "Calibrated Conformal Sets",
          "We propose conformal prediction sets that stay calibrated.",
          "uncertainty sets of classifiers are miscalibrated under shift"),
    Paper(NO_HISTORY, date(2024, 7, 1), ("math.OC",), "Proximal Methods for Sparse Problems",
          "We develop proximal algorithms.", "sparse optimisation with non-smooth penalties"),
]
ALL = [*PAPERS_LIST, *EXTRA]
BODY = ("# Introduction\n\nRetrieval systems face a latency budget.\n\n"
        "# Method\n\n" + "A cheap filter first. " * 400 + "\n\n# Discussion\n\nLimits.\n")


def paper_dates() -> dict[str, tuple[date, date | None]]:
    """(published, day of the held version) per vault paper, written out by hand: what the
    tests hold the world to."""
    out = {p.arxiv_id: (p.published, p.published) for p in ALL if p.published < CUTOFF}
    out[REVISED] = (date(2024, 6, 1), date(2025, 9, 1))
    out[NO_HISTORY] = (date(2024, 7, 1), None)
    return out


def write(paths: VaultPaths) -> None:
    papers = papers_frame(ALL).with_columns(
        latest_version=pl.when(pl.col("arxiv_id").is_in([REVISED, NO_HISTORY])).then(2)
        .otherwise(1).cast(pl.Int32),
        updated=pl.when(pl.col("arxiv_id") == REVISED).then(date(2025, 9, 1))
        .when(pl.col("arxiv_id") == NO_HISTORY).then(date(2026, 2, 1))
        .otherwise(pl.col("updated")))
    versions = [[{"version": 1, "created": r["published"]},
                 {"version": 2, "created": date(2025, 9, 1)}] if r["arxiv_id"] == REVISED
                else None if r["arxiv_id"] == NO_HISTORY
                else [{"version": 1, "created": r["published"]}]
                for r in papers.iter_rows(named=True)]
    papers = papers.with_columns(pl.Series("versions", versions, PAPERS.polars["versions"]))
    paths.store.write(PAPERS, papers)
    views_frame(ALL).write_parquet(paths.table("views"))
    documents = pl.DataFrame([
        {"arxiv_id": "2401.00001", "version": 1, "text": BODY},
        {"arxiv_id": REVISED, "version": 2, "text": "# Only\n\nThe v2 text."},
        {"arxiv_id": TARGET, "version": 1, "text": "# Target\n\nThe answer."},
        {"arxiv_id": NEAR_DUPLICATE, "version": 1, "text": "# Dup\n\nThe answer again."},
    ]).with_columns(status=pl.lit("ok"), source=pl.lit("latex"), sha256=pl.lit("0" * 64))
    for column in DOCUMENTS.names:
        if column not in documents.columns:
            documents = documents.with_columns(pl.lit(None).alias(column))
    paths.store.write(DOCUMENTS, documents)
    edges = [("2401.00001", "2402.00002"), ("2401.00001", NEAR_DUPLICATE),
             ("2401.00001", TARGET), ("2604.00010", "2401.00001"),
             ("2405.00005", "2602.00008"), ("2512.00006", "2401.00001"),
             (REVISED, "2401.00001")]
    citations = pl.DataFrame([{"citing_s2_id": f"s2-{a}", "citing_arxiv_id": a,
                               "cited_s2_id": f"s2-{b}", "cited_arxiv_id": b,
                               "cited_position": i, "read_at": date(2026, 6, 1),
                               "raw_sha256": "0" * 64}
                              for i, (a, b) in enumerate(edges)])
    for column in CITATIONS.names:
        if column not in citations.columns:
            citations = citations.with_columns(pl.lit(None).alias(column))
    paths.store.write(CITATIONS, citations)
    build_splits(paths, SplitSettings(cutoff=CUTOFF))
    build_index(paths, load_embedder())


def with_target_title(paper: Paper, title: str) -> Paper:
    return replace(paper, title=title)
