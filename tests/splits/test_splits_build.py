"""The `splits` table: vault and targets either side of the cutoff, every exclusion with its
reason, the bad inputs of the issue, and the checks that catch a broken partition."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from testing.splits_vault import CUTOFF, NO_VIEWS, PAPERS_LIST, papers_frame, views_frame
from vault_pipeline.errors import VaultError
from vault_pipeline.splits.build import build_splits, compute_splits
from vault_pipeline.splits.quality import disjoint_and_complete
from vault_pipeline.splits.settings import SplitSettings

ALL_TRAIN = {"validation": 0.0, "test": 0.0}


def run(papers=None, views=None, citations=None, documents=None, previous=None, **settings):
    papers = papers if papers is not None else papers_frame()
    views = views if views is not None else views_frame()
    return compute_splits(papers, views, None, citations, documents,
                          SplitSettings(**settings), previous=previous)


def by_id(frame: pl.DataFrame) -> dict[str, dict]:
    return {r["arxiv_id"]: r for r in frame.iter_rows(named=True)}


def test_vault_before_cutoff_targets_after_with_reasons() -> None:
    frame, report = run(cutoff=CUTOFF)
    rows = by_id(frame)
    assert {i for i, r in rows.items() if r["split"] == "vault"} == {
        p.arxiv_id for p in PAPERS_LIST if p.published < CUTOFF}
    assert rows["2601.00007"]["split"] in {"train", "validation", "test"}  # on the cutoff day
    assert rows["2602.00008"]["split"] == "excluded"
    assert rows["2602.00008"]["reason"].startswith("not methodological: survey")
    assert rows["2603.00009"]["paper_kind"] == "dataset_benchmark"
    assert "no views" in rows[NO_VIEWS]["reason"]
    assert all(r["reason"] for r in rows.values())
    assert frame["cutoff"].unique().to_list() == [CUTOFF]
    assert frame["seed"].unique().to_list() == [0]
    assert report.counts["excluded"] == 3 and report.post_cutoff == 6
    target_reason = rows["2604.00010"]["reason"]
    assert "methodological" in target_reason and "threshold not applied" in target_reason
    assert "no citations table" in target_reason
    assert disjoint_and_complete(frame, papers_frame()).passed


def test_cutoff_with_no_post_cutoff_papers_is_all_vault_with_a_warning() -> None:
    frame, report = run(cutoff=date(2030, 1, 1))
    assert set(frame["split"]) == {"vault"}
    assert report.post_cutoff == 0
    assert any("no paper is published on or after the cutoff" in w for w in report.warnings)


def test_moving_the_cutoff_moves_papers_between_vault_and_targets() -> None:
    early, _ = run(cutoff=date(2024, 3, 1))
    late, _ = run(cutoff=CUTOFF)
    early_rows, late_rows = by_id(early), by_id(late)
    moved = [p.arxiv_id for p in PAPERS_LIST if date(2024, 3, 1) <= p.published < CUTOFF]
    assert moved and all(early_rows[i]["split"] != "vault" for i in moved)
    assert all(late_rows[i]["split"] == "vault" for i in moved)
    assert early_rows["2405.00005"]["split"] in {"train", "validation", "test"}


def test_adding_papers_never_moves_an_existing_assignment() -> None:
    base = [p for p in PAPERS_LIST if p.arxiv_id != "2605.00011"]
    before, _ = run(papers=papers_frame(base), views=views_frame(base), cutoff=date(2024, 3, 1),
                    validation=0.3, test=0.3)
    after, _ = run(cutoff=date(2024, 3, 1), validation=0.3, test=0.3)
    old, new = by_id(before), by_id(after)
    assert all(new[i]["split"] == old[i]["split"] for i in old)
    assert "2605.00011" in new


def test_sizes_keep_previous_assignments_and_fill_free_places() -> None:
    base = [p for p in PAPERS_LIST if p.arxiv_id not in {"2605.00011", "2604.00010"}]
    first, _ = run(papers=papers_frame(base), views=views_frame(base),
                   cutoff=date(2024, 3, 1), validation=1, test=1)
    counts = first["split"].value_counts()
    assert dict(counts.iter_rows())["test"] == 1 and dict(counts.iter_rows())["validation"] == 1
    second, _ = run(cutoff=date(2024, 3, 1), validation=1, test=1, previous=first)
    old, new = by_id(first), by_id(second)
    assert all(new[i]["split"] == old[i]["split"] for i in old)
    assert new["2605.00011"]["split"] == "train" and new["2604.00010"]["split"] == "train"


def test_identical_duplicate_views_collapse_conflicting_ones_exclude() -> None:
    views = views_frame()
    same = views.filter(pl.col("arxiv_id") == "2604.00010")
    conflict = views.filter((pl.col("arxiv_id") == "2605.00011") & (pl.col("view") == "challenge")
                            ).with_columns(pl.lit("another text").alias("text"))
    frame, _ = run(views=pl.concat([views, same, conflict]), cutoff=CUTOFF)
    rows = by_id(frame)
    assert rows["2604.00010"]["split"] != "excluded"
    assert rows["2605.00011"]["split"] == "excluded"
    assert "challenge (conflicting duplicate rows)" in rows["2605.00011"]["reason"]


def test_missing_and_empty_views_exclude_a_target_and_say_which() -> None:
    views = views_frame().filter(~((pl.col("arxiv_id") == "2604.00010")
                                   & (pl.col("view") == "intuition")))
    views = views.with_columns(pl.when((pl.col("arxiv_id") == "2601.00007")
                                       & (pl.col("view") == "proposal"))
                               .then(pl.lit("  ")).otherwise(pl.col("text")).alias("text"))
    frame, _ = run(views=views, cutoff=CUTOFF)
    rows = by_id(frame)
    assert rows["2604.00010"]["reason"].startswith("missing views: intuition")
    assert "proposal (empty text)" in rows["2601.00007"]["reason"]


def citations(citing: str, cited: list[str | None]) -> list[dict]:
    return [{"citing_s2_id": "s", "citing_arxiv_id": citing, "citing_doi": None,
             "cited_s2_id": f"c{i}", "cited_arxiv_id": c, "cited_doi": None}
            for i, c in enumerate(cited)]


def test_cited_work_threshold_where_citations_are_known() -> None:
    table = pl.DataFrame(
        citations("2604.00010", ["2401.00001", "2402.00002", "2403.00003", None])  # 3/4
        + citations("2605.00011v2", ["2401.00001", "2699.99999", None, None]),  # 1/4
        infer_schema_length=None)
    frame, report = run(citations=table, cutoff=CUTOFF)
    rows = by_id(frame)
    assert rows["2604.00010"]["split"] != "excluded"
    assert (rows["2604.00010"]["cited_works"], rows["2604.00010"]["cited_in_vault"]) == (4, 3)
    assert "cited work in vault 3/4 (75%" in rows["2604.00010"]["reason"]
    assert rows["2605.00011"]["split"] == "excluded"
    assert "cited work in vault 1/4 (25%" in rows["2605.00011"]["reason"]
    assert "below 70%" in rows["2605.00011"]["reason"]
    assert "no citations rows for the paper" in rows["2601.00007"]["reason"]
    assert report.citations_known == 2
    lenient, _ = run(citations=table, cutoff=CUTOFF, min_cited_in_vault=0.2)
    assert by_id(lenient)["2605.00011"]["split"] != "excluded"


def test_cited_work_counts_only_full_text_when_documents_exist() -> None:
    table = pl.DataFrame(citations("2604.00010", ["2401.00001", "2402.00002"]))
    documents = pl.DataFrame({"arxiv_id": ["2401.00001", "2402.00002"],
                              "source": ["pdf", "abstract_only"], "status": ["ok", "ok"]})
    frame, _ = run(citations=table, documents=documents, cutoff=CUTOFF)
    row = by_id(frame)["2604.00010"]
    assert row["cited_in_vault"] == 1 and row["split"] == "excluded"
    assert "with full text" in row["reason"]


def test_checks_catch_a_broken_partition() -> None:
    frame, _ = run(cutoff=CUTOFF)
    doubled = pl.concat([frame, frame.head(1)])
    assert not disjoint_and_complete(doubled, papers_frame()).passed
    missing = frame.filter(pl.col("arxiv_id") != "2401.00001")
    outcome = disjoint_and_complete(missing, papers_frame())
    assert not outcome.passed and outcome.metadata["papers_missing"] == ["2401.00001"]
    leaked = frame.with_columns(pl.when(pl.col("arxiv_id") == "2604.00010").then(pl.lit("vault"))
                                .otherwise(pl.col("split")).alias("split"))
    outcome = disjoint_and_complete(leaked, papers_frame())
    assert outcome.metadata["wrong_side_of_cutoff"] == ["2604.00010"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"validation": 0.6, "test": 0.5}, "summing below 1"),
    ({"validation": 2.5}, "whole size"),
    ({"validation": 0.1, "test": 5}, "both be sizes"),
    ({"min_cited_in_vault": 1.5}, "min_cited_in_vault"),
    ({"classifier": "magic"}, "unknown classifier"),
])
def test_bad_settings_are_clear_errors(kwargs, message) -> None:
    with pytest.raises(VaultError, match=message):
        SplitSettings(**kwargs)
    with pytest.raises(VaultError, match="not a date"):
        SplitSettings.parse("2026-13-01")


def test_build_writes_the_table_and_needs_papers(vault_paths) -> None:
    with pytest.raises(VaultError, match="papers"):
        build_splits(vault_paths, SplitSettings())
    papers_frame().write_parquet(vault_paths.table("papers"))
    report = build_splits(vault_paths, SplitSettings())
    assert "no views table: no paper can be a target yet" in report.warnings
    written = pl.read_parquet(vault_paths.table("splits"))
    assert written.height == len(PAPERS_LIST)
    assert set(written.filter(pl.col("split") != "vault")["split"]) == {"excluded"}


def test_pre_cutoff_paper_revised_after_the_cutoff_is_neither_indexed_nor_a_target() -> None:
    """The vault keeps a paper's latest text: a 2024 paper whose last version is of 2026 may
    carry post-cutoff content, so it must not reach the index."""
    papers = papers_frame().with_columns(
        updated=pl.when(pl.col("arxiv_id") == "2401.00001").then(pl.lit(date(2026, 3, 2)))
        .otherwise(pl.col("updated")))
    frame, _ = run(papers=papers, cutoff=CUTOFF)
    row = by_id(frame)["2401.00001"]
    assert row["split"] == "excluded"
    assert "latest version is of 2026-03-02" in row["reason"]
    assert by_id(frame)["2402.00002"]["split"] == "vault"
    assert disjoint_and_complete(frame, papers).passed
    moved = frame.with_columns(split=pl.when(pl.col("arxiv_id") == "2604.00010")
                               .then(pl.lit("vault")).otherwise("split"))
    assert not disjoint_and_complete(moved, papers).passed  # a post-cutoff paper in the vault


def test_exclusions_are_counted_by_kind_not_by_date() -> None:
    """Two papers revised on different days are one kind of exclusion, not two buckets."""
    revised = {"2401.00001": date(2026, 3, 2), "2402.00002": date(2026, 4, 9)}
    papers = papers_frame().with_columns(
        updated=pl.col("arxiv_id").replace_strict(revised, default=pl.col("updated"),
                                                  return_dtype=pl.Date))
    _, report = run(papers=papers, cutoff=CUTOFF)
    assert report.excluded_by_reason == {
        "revised after the cutoff": 2, "no views": 1,
        "not methodological: dataset_benchmark": 1, "not methodological: survey": 1,
        "outside the fields": 1}  # the survey is filed under cs.IR alone


def test_fields_and_latex_source_filter_targets() -> None:
    papers = papers_frame()
    documents = pl.DataFrame({"arxiv_id": ["2601.00007", "2604.00010"],
                              "source": ["latex", "pdf"], "status": ["ok", "ok"]})
    frame, report = run(papers=papers, documents=documents, cutoff=CUTOFF,
                        fields=("cs.CL",))
    rows = by_id(frame)
    assert rows["2601.00007"]["split"] == "excluded"  # cs.LG, outside the fields asked for
    assert rows["2601.00007"]["reason"].startswith("outside the fields: categories cs.LG")
    assert "no LaTeX source (full text from pdf)" in rows["2604.00010"]["reason"]
    assert report.excluded_by_reason["outside the fields"] == 5  # all but the cs.CL one
    assert report.excluded_by_reason["no LaTeX source"] == 1
    everywhere, _ = run(papers=papers, documents=documents, cutoff=CUTOFF, fields=(),
                        require_latex=False)
    assert by_id(everywhere)["2604.00010"]["split"] != "excluded"
    assert by_id(everywhere)["2601.00007"]["split"] != "excluded"


def test_unknown_citations_and_source_are_said_and_can_exclude() -> None:
    frame, report = run(cutoff=CUTOFF)
    kept = by_id(frame)["2605.00011"]
    assert kept["split"] != "excluded"
    assert "citations unknown (no citations table)" in kept["reason"]
    assert "LaTeX source unknown (no documents table)" in kept["reason"]
    assert report.unknown_criteria == {"citations unknown": 6, "LaTeX source unknown": 6}
    assert any("kept as targets without that check" in w for w in report.warnings)
    strict, report = run(cutoff=CUTOFF, unknown_evidence="exclude")
    assert by_id(strict)["2605.00011"]["split"] == "excluded"
    assert report.excluded_by_reason["citations unknown"] == 6  # every post-cutoff paper
    with pytest.raises(VaultError, match="unknown_evidence"):
        SplitSettings(unknown_evidence="maybe")
