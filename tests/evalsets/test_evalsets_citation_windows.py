"""Citation counts as seed 001 measured them: DOI, else title similarity >= 0.90 (difflib),
and counts within 12 and 17 months of publication from hand-made citing rows with dates."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl
import pytest

from vault_pipeline.evalsets.citation_windows import (
    best_title_match,
    match_records,
    submission_windows,
    window_counts,
)

RECORDS = pl.DataFrame({
    "s2_id": ["s-doi", "s-arxiv", "s-title", "s-far"],
    "doi": ["10.1/ABC", None, None, None],
    "arxiv_id": [None, "2501.00002", None, None],
    "title": ["Something else entirely", "Another one",
              "Sparse Memory Routing for Long-Context Retrieval",
              "Graph Rewiring Against Over-Smoothing"],
})


def test_doi_first_then_arxiv_id_then_title_similarity() -> None:
    frame = pl.DataFrame({
        "forum_id": ["a", "b", "c", "d", "e"],
        "doi": ["10.1/abc", None, None, None, None],
        "arxiv_id": [None, "2501.00002", None, None, None],
        "title": ["Not the record's title", "x",
                  "Sparse memory routing for long context retrieval tasks",  # ratio 0.94
                  "Sparse Memory Routing",  # too short a match: below 0.90
                  "Graph Rewiring Against Oversmoothing in GNNs"]})
    got = match_records(frame, RECORDS)
    assert got.get_column("s2_id").to_list() == ["s-doi", "s-arxiv", "s-title", None, None]
    assert got.get_column("citation_match").to_list() == ["doi", "arxiv_id", "title", None,
                                                          None]
    assert 0.90 <= got.get_column("citation_title_ratio")[2] < 1


def test_title_ratio_threshold_and_ties() -> None:
    titles = ["deep sets", "deep nets"]
    assert best_title_match("deep sets", titles).index == 0
    assert best_title_match("deep sxts", titles) is None  # 0.889 against both: tie, below
    assert best_title_match("abc", ["abd", "abe"], min_ratio=0.5) is None  # a tie: no match


def test_window_counts_from_citing_dates() -> None:
    published = pl.DataFrame({"cited_s2_id": ["p", "q", "r"],
                              "published": [date(2025, 3, 29), date(2025, 1, 31), None]})
    rows = pl.DataFrame({
        "cited_s2_id": ["p", "p", "p", "p", "p", "q", "q", "r"],
        "citing_s2_id": ["c1", "c2", "c3", "c4", "c2", "c1", "c5", "c1"],
        "citing_date": [date(2025, 6, 1), date(2026, 3, 29),  # on the 12-month day: in
                        date(2026, 3, 30), None, date(2026, 3, 29),  # c2 twice: once
                        date(2026, 6, 30), date(2026, 7, 1), date(2025, 1, 1)]})
    got = {r["cited_s2_id"]: r for r in window_counts(rows, published).iter_rows(named=True)}
    assert got["p"]["citing_papers"] == 4 and got["p"]["citing_undated"] == 1
    assert (got["p"]["citations_12m"], got["p"]["citations_17m"]) == (2, 3)
    # 2025-01-31 + 17 months is 2026-06-30 (the month's last day)
    assert (got["q"]["citations_12m"], got["q"]["citations_17m"]) == (0, 1)
    assert got["r"]["citations_12m"] is None and got["r"]["citing_papers"] == 1


def test_papers_without_citing_rows_count_zero_and_bad_tables_are_errors() -> None:
    published = pl.DataFrame({"cited_s2_id": ["z"], "published": [date(2025, 1, 1)]})
    rows = pl.DataFrame({"cited_s2_id": ["p"], "citing_s2_id": ["c"],
                         "citing_date": [date(2025, 2, 1)]})
    got = window_counts(rows, published).row(0, named=True)
    assert (got["citing_papers"], got["citations_12m"], got["citations_17m"]) == (0, 0, 0)
    with pytest.raises(ValueError, match="citing_date"):
        window_counts(rows.drop("citing_date"), published)


def test_submission_windows_from_recorded_shape_rows() -> None:
    """Rows shaped as the paged S2 /citations harvest writes them: the windows start at the
    OpenReview creation day, an undated citer is counted apart, an unharvested record with
    a positive total gets null windows and says so, an early read is a lower bound."""
    sets = pl.DataFrame({
        "forum_id": ["f1", "f2", "f3", "f4", "f1"],  # f1 twice (population and anchors)
        "venue_id": ["V"] * 5, "title": ["t1", "t2", "t3", "t4", "t1"],
        "s2_id": ["p", "q", "r", None, "p"],
        "citation_match": ["doi", "title", "doi", None, "doi"],
        "citation_count": [5, 3, 0, None, 5],
        "citations_read_at": [date(2026, 8, 1)] * 5})
    submissions = pl.DataFrame({
        "forum_id": ["f1", "f2", "f3", "f4"],
        "created": pl.Series([datetime(2024, 9, 25, 21, 33, tzinfo=UTC)] * 3 + [None],
                             dtype=pl.Datetime("us", "UTC"))})
    citations = pl.DataFrame({
        "citing_s2_id": ["c1", "c2", "c3", "c4", "c4", "c5"],
        "cited_s2_id": ["p", "p", "p", "p", "p", "p"],
        "citing_date": [date(2024, 10, 1), date(2025, 9, 25), date(2025, 9, 26), None,
                        date(2026, 2, 25), None],
        "read_at": [date(2026, 8, 1)] * 6})
    got = {r["forum_id"]: r for r in submission_windows(sets, submissions, citations)
           .iter_rows(named=True)}
    assert set(got) == {"f1", "f2", "f3"}  # f4 has no S2 record
    p = got["f1"]
    assert p["published"] == date(2024, 9, 25)
    # c4 is dated by one row and undated by another: dated; c5 has no date anywhere
    assert (p["citations_12m"], p["citations_17m"]) == (2, 4)
    assert (p["citing_papers"], p["citing_undated"]) == (5, 1)
    assert p["citation_count"] == 5 and p["window_note"] is None
    assert p["citing_read_at"] == date(2026, 8, 1)
    q = got["f2"]  # S2 counts 3 citations, none harvested: unknown, never 0
    assert q["citations_12m"] is None and q["citations_17m"] is None
    assert "3 citation(s)" in q["window_note"] and q["citing_papers"] == 0
    r = got["f3"]  # no citations at all: 0 is the truth
    assert (r["citations_12m"], r["citations_17m"], r["window_note"]) == (0, 0, None)
    early = citations.with_columns(read_at=pl.lit(date(2025, 12, 1)))
    lower = submission_windows(sets, submissions, early).row(0, named=True)
    assert "2025-12-01" in lower["window_note"] and lower["citations_17m"] == 4
    none = submission_windows(sets, submissions, None)
    assert none.filter(pl.col("forum_id") == "f1")["citations_17m"].to_list() == [None]


def test_one_record_goes_to_one_submission() -> None:
    """Titles sharing a long prefix all reach 0.90 against one record: the closest keeps
    it, an id match beats any title, a tie leaves the record to none."""
    records = pl.DataFrame({"s2_id": ["s"], "title": ["RegionTextCoAttention4154: Simple "
                                                      "Methods for Sparse Routing"],
                            "doi": ["10.1/s"]})
    frame = pl.DataFrame({"doi": [None, None, None],
                          "title": ["RegionTextCoAttention4154: Simple Methods for Sparse "
                                    "Routing", "RegionTextCoAttention1490: Simple Methods "
                                    "for Sparse Routing", "Unrelated"]})
    got = match_records(frame, records)
    assert got.get_column("s2_id").to_list() == ["s", None, None]
    assert got.get_column("citation_match").to_list() == ["title", None, None]
    by_doi = match_records(frame.with_columns(doi=pl.Series([None, "10.1/S", None])),
                           records)
    assert by_doi.get_column("s2_id").to_list() == [None, "s", None]
    twins = pl.concat([frame.head(1), frame.head(1)])
    assert match_records(twins, records).get_column("s2_id").to_list() == [None, None]
