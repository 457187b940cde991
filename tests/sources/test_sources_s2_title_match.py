"""Semantic Scholar's title match for the evaluation submissions without an arXiv id,
against a local server answering as `/paper/search/match` does: `{data: [{paperId, title,
matchScore, ...}]}` for S2's closest title, a 404 `{"error": "Title match not found"}`. S2
always answers with its closest title, so the ratio floor (0.90) decides; a near miss is
refused and says why."""

from __future__ import annotations

import json

import pyarrow as pa

from testing.sources_replay import ReplayServer, Reply, harvest_context
from vault_pipeline.citations.build import build_citations
from vault_pipeline.evalsets.inputs import attach_citations
from vault_pipeline.schemas import CITATION_COUNTS, SUBMISSIONS
from vault_pipeline.sources import semantic_scholar

JSON = "application/json"
MATCH = "/graph/v1/paper/search/match"
VENUE = "ICLR.cc/2025/Conference"
EXACT = "Sparse Memory Routing for Long-Context Retrieval in Language Models"
NEAR = "Graph Neural Networks for Molecule Generation"
MISSING = "A Title Semantic Scholar Has Never Seen"
S1, S2, S3 = "1" * 40, "2" * 40, "3" * 40


def _answer(paper_id: str, title: str, score: float, count: int) -> Reply:
    return Reply(body=json.dumps({"data": [{
        "paperId": paper_id, "title": title, "matchScore": score,
        "externalIds": {"DBLP": "conf/iclr/X25"}, "year": 2025,
        "publicationDate": "2025-01-22", "citationCount": count, "referenceCount": 40,
        "influentialCitationCount": 1}]}), content_type=JSON)


def _submissions(paths) -> None:
    rows = [("fExact", EXACT, None), ("fNear", NEAR, None), ("fMissing", MISSING, None),
            ("fArxiv", "Has an arXiv id", "2501.00009")]
    paths.store.write(SUBMISSIONS, pa.Table.from_pylist([
        {"forum_id": f, "venue_id": VENUE, "title": t, "arxiv_id": a, "review_count": 3,
         "raw_sha256": "0" * 64} for f, t, a in rows], schema=SUBMISSIONS.arrow))


def test_titles_without_an_arxiv_id_are_matched_at_the_floor(vault_paths, monkeypatch) -> None:
    _submissions(vault_paths)
    monkeypatch.setenv("S2_API_KEY", "s2-secret-key")
    with ReplayServer() as server:
        server.add("/graph/v1/paper/batch", Reply(body=json.dumps([None]), content_type=JSON),
                   method="POST")
        # S2's own spelling of the same title: equal once normalised
        server.add(MATCH, _answer(S1, EXACT.lower() + ".", 183.2, 12), query=EXACT)
        # S2's closest title is another paper: a near miss (ratio < 0.90)
        server.add(MATCH, _answer(S2, "Graph Neural Networks for Molecular Property "
                                      "Prediction", 95.1, 300), query=NEAR)
        server.add(MATCH, Reply(404, json.dumps({"error": "Title match not found"}),
                                content_type=JSON), query=MISSING)
        server.add(f"/graph/v1/paper/{S1}/citations", Reply(body=json.dumps(
            {"offset": 0, "data": [{"citingPaper": {"paperId": S3,
                                                    "publicationDate": "2025-06-01"}}]}),
            content_type=JSON))
        with harvest_context(vault_paths, server) as ctx:
            report = semantic_scholar.lookup_population(ctx, references=False)
            again = semantic_scholar.match_titles(ctx, semantic_scholar.population_titles(ctx))
        asked = [s.query["query"] for s in server.requests(MATCH)]
        assert sorted(asked) == sorted([EXACT, NEAR, MISSING])  # not the arXiv-matched one
        assert {s.headers["x-api-key"] for s in server.requests(MATCH)} == {"s2-secret-key"}
        assert all("matchScore" not in s.query.get("fields", "") for s in server.log)
        listed = [s.path for s in server.log if s.path.endswith("/citations")]
        assert listed == [f"/graph/v1/paper/{S1}/citations"]  # the near miss is not read
    titles = report.titles
    assert (titles.asked, titles.matched, titles.not_found) == (3, 1, 1)
    assert [(f, r < 0.9) for f, _, r in titles.near_misses] == [("fNear", True)]
    assert report.resolved == 1 and "1 matched at ratio >= 0.90" in \
        semantic_scholar.describe_population(report)
    assert (again.asked, again.skipped_recent) == (0, 3)  # read recently: not asked again

    cursor = json.loads((vault_paths.home / "harvest" / "cursors" /
                         f"{semantic_scholar.MATCH_CURSOR}.json").read_text())
    assert (cursor["fExact"]["method"], cursor["fExact"]["s2_id"]) == ("title_match", S1)
    assert cursor["fExact"]["ratio"] == 1.0 and cursor["fExact"]["match_score"] == 183.2
    assert cursor["fNear"]["method"] is None and "under 0.90" in cursor["fNear"]["reason"]
    assert cursor["fMissing"]["method"] is None and "not found" in cursor["fMissing"]["reason"]

    # both answers are in the raw zone; the evaluation's own match keeps the floor too
    build_citations(vault_paths)
    counts = vault_paths.store.read(CITATION_COUNTS)
    assert {S1, S2, S3} == set(counts["s2_id"])  # S3 from the citing page
    frame = vault_paths.store.read(SUBMISSIONS).select("forum_id", "title", "arxiv_id")
    matched = {r["forum_id"]: r for r in attach_citations(frame, counts)
               .iter_rows(named=True)}
    assert (matched["fExact"]["s2_id"], matched["fExact"]["citation_count"]) == (S1, 12)
    assert matched["fExact"]["citation_match"] == "title"
    assert matched["fNear"]["s2_id"] is None and matched["fNear"]["citation_count"] is None


def test_without_a_key_no_title_is_asked(vault_paths, monkeypatch) -> None:
    _submissions(vault_paths)
    monkeypatch.delenv("S2_API_KEY", raising=False)
    with ReplayServer() as server, harvest_context(vault_paths, server) as ctx:
        assert semantic_scholar.lookup_population(ctx) is None
        assert server.log == []


def test_an_answer_that_is_not_a_title_match_stops_the_harvest(vault_paths) -> None:
    import pytest

    from vault_pipeline.sources.http import HarvestError

    with ReplayServer() as server:
        server.add(MATCH, Reply(body=json.dumps({"total": 0, "data": []}), content_type=JSON))
        with harvest_context(vault_paths, server) as ctx, \
                pytest.raises(HarvestError, match="is not"):
            semantic_scholar.match_titles(ctx, [("f1", "Some title")])


def test_the_ratio_is_the_evaluations_measure() -> None:
    from vault_pipeline.evalsets.citation_windows import best_title_match, title_ratio

    near = title_ratio("Graph Neural Networks for Molecular Property Prediction", NEAR)
    assert 0.5 < near < 0.9
    assert title_ratio("SPARSE memory routing: for long-context retrieval in language "
                       "models!", EXACT) == 1.0
    hit = best_title_match("deep residual learning for image recognitio",
                           ["deep residual learning for image recognition"])
    assert hit is not None and title_ratio("Deep residual learning for image recognition",
                                           "Deep residual learning for image recognitio") \
        == hit.ratio
