"""Citation counts as seed 001 measured them: DOI, else title similarity >= 0.90 (difflib),
and counts within 12 and 17 months of publication from hand-made citing rows with dates."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from vault_pipeline.evalsets.citation_windows import (
    best_title_match,
    match_records,
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
