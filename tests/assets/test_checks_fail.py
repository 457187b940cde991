"""Every asset check fails on bad data: each library check function is given a table that
breaks its rule (written as a stage would never write it) and must say so. A check stubbed
to always pass turns one of these red."""

from __future__ import annotations

import json
from datetime import date

import polars as pl
import pytest

from vault_pipeline.audit.report import clean_outcome
from vault_pipeline.datasets.manifest import FORMAT, MANIFEST, verify_export
from vault_pipeline.documents import quality as documents_quality
from vault_pipeline.evalsets import quality as evalsets_quality
from vault_pipeline.ideas import quality as ideas_quality
from vault_pipeline.papers import quality as papers_quality
from vault_pipeline.records.idea import IDEA_FIELDS
from vault_pipeline.records.masked import RECORD_FIELDS
from vault_pipeline.schemas import (
    DOCUMENT_ATTEMPTS,
    DOCUMENTS,
    EVAL_GROUPWISE,
    EVAL_IDEAS,
    EVAL_PAIRWISE,
    EVAL_REVIEW_STRATIFIED,
    LLM_FAILURES,
    MASKED_RECORDS,
    PAPERS,
    VIEWS,
    TableSchema,
)
from vault_pipeline.splits import quality as splits_quality
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.tables import TableStore

LEAK = "Our method improves accuracy by 12.3% over the strongest baseline."
DAY = date(2025, 1, 1)


@pytest.fixture
def store(vault_paths: VaultPaths) -> TableStore:
    return vault_paths.ensure().store


def put(store: TableStore, schema: TableSchema, rows: list[dict]) -> None:
    """A bad table as it might lie on disk: only the columns the check reads."""
    pl.DataFrame(rows).write_parquet(store.path(schema))


def _papers(**changes) -> dict:
    row = {"arxiv_id": "2401.00001", "title": "T", "abstract": "A", "authors": ["X"],
           "published": DAY, "updated": DAY, "primary_category": "cs.LG", "source": "oai"}
    return row | changes


def _record(arxiv_id: str = "2401.00001", **fields) -> dict:
    row = dict.fromkeys(RECORD_FIELDS) | {"arxiv_id": arxiv_id, "input_hash": "h",
                                           "backend": "extractive", "model": "m",
                                           "prompt_version": "none", "input_source": "pdf"}
    return row | fields


def test_papers_checks_fail(store: TableStore) -> None:
    put(store, PAPERS, [_papers(), _papers()])
    assert not papers_quality.duplicate_ids(store).passed
    put(store, PAPERS, [_papers(title="  ")])
    assert not papers_quality.empty_required(store).passed
    put(store, PAPERS, [_papers(published=date(2025, 2, 1))])
    assert not papers_quality.date_order(store).passed


def test_documents_checks_fail(store: TableStore) -> None:
    put(store, DOCUMENT_ATTEMPTS, [{"kind": "pdf", "status": "ok"},
                                   {"kind": "pdf", "status": "failed"}])
    assert not documents_quality.success_floor(store, 0.95).passed
    put(store, DOCUMENTS, [{"arxiv_id": "2401.00001", "sha256": "a", "status": "ok",
                            "text": " "}])
    assert not documents_quality.ok_rows_have_text(store).passed
    put(store, DOCUMENTS, [{"arxiv_id": "2401.00001", "sha256": s, "status": "ok",
                            "text": "t"} for s in "ab"])
    assert not documents_quality.one_row_per_paper(store).passed
    put(store, DOCUMENTS, [{"arxiv_id": None, "forum_id": "f1", "sha256": s, "text": "t"}
                           for s in "ab"])  # one OpenReview submission, two rows
    assert not documents_quality.one_row_per_paper(store).passed


def test_record_checks_fail(store: TableStore) -> None:
    put(store, MASKED_RECORDS, [_record(thesis=LEAK)])
    assert not ideas_quality.record_leak_findings(store).passed
    assert not ideas_quality.records_valid(store).passed  # most fields missing
    put(store, LLM_FAILURES, [{"arxiv_id": "2401.00002", "reason": "leak: a result"}])
    assert not ideas_quality.quarantine_rate(store, limit=0.05).passed


def test_view_checks_fail(store: TableStore) -> None:
    put(store, MASKED_RECORDS, [_record(key_novelty={"name": "FooRouter", "explanation": []},
                                        method={"modules": []})])
    put(store, VIEWS, [{"arxiv_id": "2401.00001", "input_hash": "h", "view": "problem_setting",
                        "text": f"FooRouter routes tokens to experts. {LEAK}",
                        "masked_findings": []}])
    assert not ideas_quality.view_leak_findings(store).passed
    assert not ideas_quality.views_complete(store).passed  # four views missing
    assert not ideas_quality.problem_views_method_free(store).passed


def test_evaluation_set_checks_fail(store: TableStore) -> None:
    put(store, EVAL_IDEAS, [dict.fromkeys(IDEA_FIELDS, "A plan.") | {"forum_id": "f",
                                                                     "tldr": LEAK}])
    assert not evalsets_quality.ideas_without_results(store).passed
    put(store, EVAL_PAIRWISE, [{"pair_id": "p", "pair_type": "reject-oral", "venue_id": "v",
                                "forum_id_a": "a", "forum_id_b": "b", "label_a": "Oral",
                                "label_b": "Reject", "better": "b", "difficulty": "easy",
                                "similarity_method": "m"}])
    assert not evalsets_quality.pairs_valid(store).passed  # the better side is the lower
    put(store, EVAL_GROUPWISE, [
        {"group_id": "g", "venue_id": "v", "forum_id": f, "label": "Poster", "rank": r,
         "ranking": ["a", "b"], "is_best": r == 1, "position": r, "is_query": r == 1}
        for f, r in (("a", 1), ("b", 2))])
    assert not evalsets_quality.groups_valid(store).passed  # one label twice
    put(store, EVAL_REVIEW_STRATIFIED, [{"forum_id": f, "score_bin": 5} for f in "abc"])
    assert not evalsets_quality.strata_within_quota(store, per_bin=2, dense_bins=(5,)).passed


def test_splits_check_fails() -> None:
    papers = pl.DataFrame([_papers(), _papers(arxiv_id="2601.00002")])
    splits = pl.DataFrame({"arxiv_id": ["2401.00001", "2401.00001"],
                           "split": ["vault", "test"], "cutoff": [date(2026, 1, 1)] * 2,
                           "seed": [0, 0], "published": [DAY, DAY]})
    outcome = splits_quality.disjoint_and_complete(splits, papers)
    assert not outcome.passed
    assert {"ids_in_two_rows", "papers_missing", "wrong_side_of_cutoff"} <= set(
        outcome.metadata)


def test_export_verification_fails(tmp_path) -> None:
    (tmp_path / "data.jsonl").write_text("{}\n{}\n")
    entry = {"path": "data.jsonl", "table": "t", "format": "jsonl", "rows": 2,
             "bytes": 6, "sha256": "0" * 64}
    (tmp_path / MANIFEST).write_text(json.dumps({"format": FORMAT, "files": [entry]}))
    (tmp_path / "stray.txt").write_text("x")
    problems = verify_export(tmp_path)
    assert any("sha256 differs" in p for p in problems)
    assert any("stray.txt: not in the manifest" in p for p in problems)


def test_integrity_check_fails() -> None:
    assert not clean_outcome(None).passed  # no report: nothing was checked
    assert not clean_outcome({"residual": {"record_leaks": 1, "view_leaks": 0}}).passed
    assert not clean_outcome({"method_leaks": {"remaining": 2}}).passed
    assert clean_outcome({"residual": {"record_leaks": 0}, "method_leaks": {}}).passed
