"""The issue's check: held-out planted duplicates of post-cutoff targets, placed before the
cutoff in several forms (the same text under a new id, a retitled version with an edited
abstract, an OpenReview submission, a journal version with the DOI), beside same-topic papers
that are other works: no duplicated target remains a target, the clean targets stay, the
hard negatives stay retrievable, and the checks pass on the result and fail when a stage
writes past the policy."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from testing.splits_vault import CUTOFF, PAPERS_LIST, Paper, papers_frame, views_frame
from vault_pipeline.duplicates import quality, records
from vault_pipeline.duplicates.build import compute_duplicates
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.schemas import DUPLICATE_CLUSTERS, DUPLICATE_PAIRS, PAPERS, SPLITS
from vault_pipeline.splits import leakage
from vault_pipeline.splits.build import compute_splits
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths

LONG = {  # the targets' abstracts, long enough to be versions of one another
    "2604.00010": "We propose a cascade architecture for vision transformers that exits early "
                  "on easy images: a small classifier after every block decides whether the "
                  "prediction is confident enough, so most images use only a few layers while "
                  "hard images use all of them, and the whole cascade is trained jointly.",
    "2605.00011": "We introduce a token merging algorithm that speeds up diffusion models by "
                  "merging redundant image tokens before every attention layer and unmerging "
                  "them after it, so the cost of sampling falls with the number of merged "
                  "tokens while the generated images keep their detail and composition.",
    "2601.00007": "We propose a novel method that adapts expert capacity per batch from the "
                  "observed routing load, so that tokens are not dropped when the load across "
                  "experts is uneven, and we train the capacity predictor with the router.",
}
PLANTED = [  # (id, published, of target, title, abstract, doi)
    ("2509.00101", date(2025, 9, 1), "2604.00010", "Cascade Inference for Vision Transformers",
     LONG["2604.00010"], None),  # the same text posted again under a new id
    ("2510.00102", date(2025, 10, 2), "2605.00011", "Fast Diffusion by Merging Tokens",
     LONG["2605.00011"].replace("keep their detail and composition",
                                "stay as detailed as before"), None),  # retitled
]
TARGET_DOI = "10.5555/cascade.2026"
HARD_NEGATIVE = "2405.00005"  # expert routing with learned capacity: same topic as 2601.00007


def vault_papers() -> tuple[pl.DataFrame, pl.DataFrame]:
    papers = [Paper(p.arxiv_id, p.published, p.categories, p.title, LONG.get(p.arxiv_id,
                    p.abstract), p.topic) for p in PAPERS_LIST]
    planted = [Paper(pid, day, ("cs.LG",), title, abstract,
                     next(p.topic for p in PAPERS_LIST if p.arxiv_id == of))
               for pid, day, of, title, abstract, _ in PLANTED]
    frame = papers_frame(papers + planted)
    frame = frame.with_columns(authors=pl.when(pl.col("arxiv_id") == "2510.00102")
                               .then(pl.lit(["B. Other"])).otherwise(pl.col("authors")))
    views = views_frame(papers).with_columns(
        text=pl.when(pl.col("arxiv_id") == "2604.00010").then(pl.col("text") + " (v2)")
        .otherwise(pl.col("text")))
    return frame, views


SUBMISSIONS = pl.DataFrame({  # the OpenReview submission of a target, created before it
    "forum_id": ["FORUM11"], "title": ["Token merging for fast diffusion"],
    "abstract": [LONG["2605.00011"]], "authors": [None], "arxiv_id": ["2605.00011"],
    "arxiv_match": ["title+author"], "created": [datetime(2025, 5, 1, tzinfo=UTC)]},
    schema_overrides={"authors": pl.List(pl.String)})


def build(papers: pl.DataFrame, views: pl.DataFrame, **split_settings):
    settings = SplitSettings(cutoff=CUTOFF, **split_settings)
    pairs, clusters, _, _ = compute_duplicates(
        records.gather(papers, SUBMISSIONS, None), None, views, DuplicatesSettings(), None,
        None)
    verdicts = leakage.verdicts(clusters, pairs, leakage.member_dates(papers, SUBMISSIONS),
                                settings.cutoff)
    splits, report = compute_splits(papers, views, None, None, None, settings,
                                    duplicates=verdicts)
    return pairs, clusters, splits, report


def test_planted_duplicates_are_no_targets_and_clean_targets_stay() -> None:
    papers, views = vault_papers()
    pairs, clusters, splits, report = build(papers, views)
    rows = {r["arxiv_id"]: r for r in splits.iter_rows(named=True)}
    for target, match in (("2604.00010", "2509.00101"), ("2605.00011", "2510.00102")):
        assert rows[target]["split"] == "excluded", rows[target]["reason"]
        assert "pre-cutoff duplicate" in rows[target]["reason"]
        assert rows[target]["duplicate_of"] == match
        assert rows[match]["split"] == "vault"  # the earliest member stays retrievable
    assert rows["2601.00007"]["split"] in {"train", "validation", "test"}  # clean target
    assert rows[HARD_NEGATIVE]["split"] == "vault" and rows[HARD_NEGATIVE]["duplicate_of"] is None
    assert not {HARD_NEGATIVE, "2601.00007"} & (set(pairs["a"]) | set(pairs["b"]))
    assert report.excluded_by_reason[leakage.PRE_CUTOFF_DUPLICATE] == 2
    forum = clusters.filter(pl.col("members").list.contains("openreview:FORUM11"))
    assert set(forum["members"][0]) == {"2510.00102", "2605.00011", "openreview:FORUM11"}


def test_an_openreview_submission_before_the_cutoff_is_enough() -> None:
    papers, views = vault_papers()
    papers = papers.filter(pl.col("arxiv_id") != "2510.00102")
    _, _, splits, _ = build(papers, views)
    row = splits.filter(pl.col("arxiv_id") == "2605.00011").row(0, named=True)
    assert row["split"] == "excluded" and row["duplicate_of"] == "openreview:FORUM11"


def test_two_pre_cutoff_records_of_one_work_leave_one_in_the_vault() -> None:
    papers, views = vault_papers()
    doi = papers.with_columns(doi=pl.when(pl.col("arxiv_id").is_in(["2401.00001",
                                                                   "2402.00002"]))
                              .then(pl.lit(TARGET_DOI)).otherwise(pl.col("doi")))
    _, _, splits, _ = build(doi, views)
    rows = {r["arxiv_id"]: r for r in splits.iter_rows(named=True)}
    assert rows["2401.00001"]["split"] == "vault"
    assert rows["2402.00002"]["split"] == "excluded"
    assert rows["2402.00002"]["duplicate_of"] == "2401.00001"
    assert "alias of 2401.00001" in rows["2402.00002"]["reason"]


@pytest.fixture
def planted_vault(vault_paths: VaultPaths) -> VaultPaths:
    papers, views = vault_papers()
    pairs, clusters, splits, _ = build(papers, views, validation=0.0, test=0.0)
    store = vault_paths.store
    store.write(PAPERS, papers)
    store.write(DUPLICATE_PAIRS, pairs)
    store.write(DUPLICATE_CLUSTERS, clusters)
    store.write(SPLITS, splits)
    SUBMISSIONS.write_parquet(vault_paths.table("submissions"))
    return vault_paths


def test_checks_pass_on_the_policy_and_fail_past_it(planted_vault: VaultPaths) -> None:
    store = planted_vault.store
    assert quality.clusters_consistent(store).passed
    assert quality.no_target_with_early_duplicate(store).passed
    splits = store.read_required(SPLITS.name)
    leaked = splits.with_columns(split=pl.when(pl.col("arxiv_id") == "2604.00010")
                                 .then(pl.lit("test")).otherwise(pl.col("split")))
    store.write(SPLITS, leaked)  # a target with a pre-cutoff duplicate
    outcome = quality.no_target_with_early_duplicate(store)
    assert not outcome.passed and "2604.00010" in str(outcome.metadata)
    alias = splits.with_columns(split=pl.when(pl.col("arxiv_id") == "2605.00011")
                                .then(pl.lit("vault")).otherwise(pl.col("split")))
    store.write(SPLITS, alias)  # two members of one cluster retrievable
    assert not quality.no_target_with_early_duplicate(store).passed


def test_targets_never_compared_fail_the_check_and_no_targets_pass_it(
        planted_vault: VaultPaths) -> None:
    store = planted_vault.store
    Path(planted_vault.table(DUPLICATE_PAIRS.name)).unlink()  # the duplicates never built
    unchecked = quality.no_target_with_early_duplicate(store)
    assert not unchecked.passed and "never checked for duplicates" in unchecked.description
    splits = store.read_required(SPLITS.name)
    store.write(SPLITS, splits.with_columns(split=pl.lit("vault")))  # no target to guard
    assert quality.no_target_with_early_duplicate(store).passed


def test_cluster_check_fails_on_split_or_headless_clusters(planted_vault: VaultPaths) -> None:
    store = planted_vault.store
    clusters = store.read_required(DUPLICATE_CLUSTERS.name)
    first = clusters.row(0, named=True)
    cut = clusters.with_columns(members=pl.when(pl.col("cluster_id") == first["cluster_id"])
                                .then(pl.lit([first["canonical_id"]]))
                                .otherwise(pl.col("members")))
    store.write(DUPLICATE_CLUSTERS, cut)
    outcome = quality.clusters_consistent(store)
    assert not outcome.passed
    assert "pairs_across_clusters" in outcome.metadata
    assert "clusters_without_canonical_member" in outcome.metadata
