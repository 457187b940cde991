"""Semantic Scholar batch lookups against a local replay server, the citation tables, and the
one-hop reference walk into the arXiv API."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from testing.sources_replay import ReplayServer, Reply, data, harvest_context
from tests.conftest import DATA
from vault_pipeline.citations.build import build_citations
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.sources import semantic_scholar
from vault_pipeline.sources.http import HarvestError

JSON = "application/json"
BATCH = "/graph/v1/paper/batch"
IDS = ["ARXIV:2611.00001", "ARXIV:2611.00002", "ARXIV:2611.00003"]
SAMPLE = Path(__file__).parents[2] / "vault_pipeline" / "sample" / "raw"


def _nulls(seen) -> Reply:
    return Reply(body=json.dumps([None] * len(json.loads(seen.body)["ids"])),
                 content_type=JSON)


def test_batches_hold_at_most_500_ids(vault_paths) -> None:
    ids = [f"ARXIV:2611.{n:05d}" for n in range(1200)]
    with ReplayServer() as server:
        server.add(BATCH, _nulls, method="POST")
        with harvest_context(vault_paths, server) as ctx:
            report = semantic_scholar.lookup(ctx, ids)
        sizes = [len(json.loads(s.body)["ids"]) for s in server.log]
        assert sizes == [500, 500, 200]
        assert "references.externalIds" in server.log[0].query["fields"]
    assert report.batches == 3 and len(report.not_found) == 1200


def test_counts_and_citations_from_a_batch(vault_paths) -> None:
    with ReplayServer() as server:
        server.add(BATCH, Reply(body=data("s2_batch.json"), content_type=JSON), method="POST")
        with harvest_context(vault_paths, server) as ctx:
            report = semantic_scholar.lookup(ctx, IDS)
            again = semantic_scholar.lookup(ctx, IDS)
        assert len(server.log) == 1  # ids read today are not asked again
    assert (report.found, report.not_found) == (2, ["ARXIV:2611.00002"])
    assert again.skipped_recent == 3 and again.batches == 0
    build_citations(vault_paths)
    counts = pl.read_parquet(vault_paths.table("citation_counts")).sort("arxiv_id")
    assert counts.get_column("arxiv_id").to_list() == ["2611.00001", "2611.00003"]
    assert counts.get_column("citation_count").to_list() == [12, 0]
    assert set(counts.get_column("read_at")) == {datetime.now(UTC).date()}
    cites = pl.read_parquet(vault_paths.table("citations"))
    assert cites.height == 4
    assert sorted(cites.get_column("cited_arxiv_id").drop_nulls()) == [
        "2202.12139", "hep-th/9901001"]
    assert cites.filter(pl.col("cited_s2_id").is_null()).height == 1  # unresolved reference


def test_the_newest_read_wins(vault_paths) -> None:
    zone = RawZone(vault_paths)
    old = json.loads(data("s2_batch.json"))
    new = json.loads(data("s2_batch.json"))
    new[0]["citationCount"] = 40
    new[0]["references"] = new[0]["references"][:1]
    zone.add_bytes(json.dumps(old).encode(), "old.json", "https://s2/old")
    zone.add_bytes(json.dumps(new).encode(), "new.json", "https://s2/new")
    build_citations(vault_paths)
    counts = pl.read_parquet(vault_paths.table("citation_counts"))
    assert counts.filter(pl.col("arxiv_id") == "2611.00001").get_column(
        "citation_count").item() == 40
    assert pl.read_parquet(vault_paths.table("citations")).height == 1


def test_api_key_is_sent_in_a_header_and_stored_nowhere(vault_paths, monkeypatch) -> None:
    monkeypatch.setenv("S2_API_KEY", "s2-secret-key")
    with ReplayServer() as server:
        server.add(BATCH, _nulls, method="POST")
        with harvest_context(vault_paths, server) as ctx:
            semantic_scholar.lookup(ctx, IDS)
        assert server.log[0].headers["x-api-key"] == "s2-secret-key"
        assert "s2-secret-key" not in str(server.log[0].query)
    assert not [p for p in vault_paths.home.rglob("*")
                if p.is_file() and b"s2-secret-key" in p.read_bytes()]


def test_429_then_success(vault_paths) -> None:
    with ReplayServer() as server:
        server.add(BATCH, Reply(429, data("s2_429.json"), content_type=JSON), _nulls,
                   method="POST")
        with harvest_context(vault_paths, server) as ctx:
            report = semantic_scholar.lookup(ctx, IDS)
        assert len(server.log) == 2 and report.batches == 1


def test_an_error_envelope_fails_clearly_and_records_nothing(vault_paths) -> None:
    with ReplayServer() as server:
        server.add(BATCH, Reply(400, data("s2_error.json"), content_type=JSON), method="POST")
        with harvest_context(vault_paths, server) as ctx:
            with pytest.raises(HarvestError, match=r"HTTP 400.*Unrecognized"):
                semantic_scholar.lookup(ctx, IDS)
            assert ctx.cursors.load(semantic_scholar.CURSOR) == {}


def test_the_walk_fetches_cited_papers_missing_from_the_vault(vault_paths) -> None:
    RawZone(vault_paths).import_paths([SAMPLE])  # holds 2202.12139, not hep-th/9901001
    build_papers(vault_paths)
    with ReplayServer() as server:
        server.add(BATCH, Reply(body=data("s2_batch.json"), content_type=JSON), method="POST")
        server.add("/api/query", Reply(body=(Path(__file__).parents[1] / "data" /
                                             "atom_old_style.xml").read_bytes()))
        with harvest_context(vault_paths, server) as ctx:
            semantic_scholar.lookup(ctx, IDS)
            build_citations(vault_paths)
            report = semantic_scholar.walk(ctx)
            again = semantic_scholar.walk(ctx)
        asked = server.requests("/api/query")
        assert [s.query["id_list"] for s in asked] == ["hep-th/9901001"]
    assert (report.missing, report.without_arxiv_id) == (1, 2)
    assert again.fetched.requested == 0  # asked once, ever
    build_papers(vault_paths)
    ids = pl.read_parquet(vault_paths.table("papers")).get_column("arxiv_id")
    assert "hep-th/9901001" in ids.to_list()


def test_a_single_paper_keeps_one_row_per_reference(vault_paths) -> None:
    """`GET /paper/{id}` with nested references: 5 references, 3 unresolved, 5 rows."""
    report = RawZone(vault_paths).import_paths([DATA / "s2_paper_single.json"])
    assert report.rejected == [] and report.added[0].kind == "s2_papers"
    build_citations(vault_paths)
    cites = pl.read_parquet(vault_paths.table("citations"))
    assert cites.select("cited_position", "cited_s2_id", "cited_title").rows() == [
        (0, "a" * 40, "Test generation"),
        (1, None, "An unpublished report on crawling"),
        (2, "b" * 40, "A journal paper"),
        (3, None, "Personal communication"),
        (4, None, None),
    ]
    assert set(cites["citing_arxiv_id"]) == {"2501.00001"}
    counts = pl.read_parquet(vault_paths.table("citation_counts"))
    assert counts.select("arxiv_id", "citation_count").rows() == [("2501.00001", 3)]


def test_a_references_page_is_recognised_and_gives_counts(vault_paths) -> None:
    report = RawZone(vault_paths).import_paths([DATA / "s2_references_page.json"])
    assert report.rejected == [] and report.added[0].records == 2
    build_citations(vault_paths)
    counts = pl.read_parquet(vault_paths.table("citation_counts")).sort("s2_id")
    assert counts.select("s2_id", "citation_count").rows() == [("a" * 40, 40), ("e" * 40, 2)]


def test_on_one_day_the_read_with_a_citation_count_wins(vault_paths) -> None:
    zone = RawZone(vault_paths)
    full = json.loads(data("s2_batch.json"))[:1]
    full[0]["citationCount"] = 12
    lacking = json.loads(json.dumps(full))
    del lacking[0]["citationCount"]
    full_bytes = json.dumps(full).encode()
    pad = 0  # the read without the field sorts first by checksum: the old order picked it
    while hashlib.sha256(json.dumps(lacking).encode() + b" " * pad).hexdigest() > \
            hashlib.sha256(full_bytes).hexdigest():
        pad += 1
    zone.add_bytes(full_bytes, "full.json", "https://s2/full")
    zone.add_bytes(json.dumps(lacking).encode() + b" " * pad, "lacking.json", "https://s2/lean")
    build_citations(vault_paths)
    counts = pl.read_parquet(vault_paths.table("citation_counts"))
    assert counts["citation_count"].to_list() == [12]


C, D, E = "c" * 40, "d" * 40, "e" * 40
REFERENCES, CITATIONS = f"/graph/v1/paper/{C}/references", f"/graph/v1/paper/{C}/citations"


def _page(offset: int, items: list, following: int | None = None) -> Reply:
    page = {"offset": offset, "data": items}
    if following is not None:
        page["next"] = following
    return Reply(body=json.dumps(page), content_type=JSON)


def _serve_lists(server: ReplayServer) -> None:
    """Two pages of references (the second after a 429 with Retry-After) and two pages of
    citations, with the odd entries S2 gives: no cited paper, no ids, no date."""
    server.add(REFERENCES, _page(0, [
        {"citedPaper": {"paperId": "a" * 40, "externalIds": {"ArXiv": "2101.00001"},
                        "title": "A"}},
        {"citedPaper": {"paperId": None, "title": "An unresolved report"}}], 2), offset="0")
    server.add(REFERENCES, Reply(429, data("s2_429.json"), {"Retry-After": "1"},
                                 content_type=JSON),
               _page(2, [{"citedPaper": None},
                         {"citedPaper": {"paperId": "b" * 40, "externalIds": None,
                                         "title": "B"}}]), offset="2")
    server.add(CITATIONS, _page(0, [
        {"citingPaper": {"paperId": D, "externalIds": {"ArXiv": "2301.00002"},
                         "title": "D", "publicationDate": "2023-05-04"}}], 1), offset="0")
    server.add(CITATIONS, _page(1, [
        {"citingPaper": {"paperId": None, "title": "A citing paper S2 could not resolve"}},
        {"citingPaper": {"paperId": E, "externalIds": {}, "publicationDate": None,
                         "year": 2024}},
        {"citingPaper": {"paperId": "a" * 40, "publicationDate": "not a date"}}]),
        offset="1")


def test_paged_references_and_citations_give_one_row_each(vault_paths) -> None:
    with ReplayServer() as server:
        _serve_lists(server)
        with harvest_context(vault_paths, server) as ctx:
            refs = semantic_scholar.fetch_lists(ctx, [C], "references", page_size=2)
            cites = semantic_scholar.fetch_lists(ctx, [C], "citations", page_size=2)
        asked = [(s.path.rsplit("/", 1)[-1], s.query["offset"]) for s in server.log]
        assert asked == [("references", "0"), ("references", "2"), ("references", "2"),
                         ("citations", "0"), ("citations", "1")]  # the 429, then its retry
        assert server.log[2].at - server.log[1].at >= 1  # Retry-After was honoured
    assert (refs.pages, refs.entries, cites.pages, cites.entries) == (2, 4, 2, 4)
    report = build_citations(vault_paths)
    rows = pl.read_parquet(vault_paths.table("citations"))
    references = rows.filter(pl.col("citing_s2_id") == C)
    assert references.select("cited_position", "cited_s2_id", "cited_arxiv_id",
                             "cited_title").rows() == [
        (0, "a" * 40, "2101.00001", "A"), (1, None, None, "An unresolved report"),
        (2, None, None, None), (3, "b" * 40, None, "B")]
    citing = rows.filter(pl.col("cited_s2_id") == C).sort("citing_s2_id")
    assert citing.select("citing_s2_id", "citing_arxiv_id", "citing_date").rows() == [
        ("a" * 40, None, None), (D, "2301.00002", date(2023, 5, 4)), (E, None, None)]
    assert report.citations == 7 and report.unresolved_citing == 1


def _age(paths, keep: str) -> None:
    """Date every raw file but ``keep`` a day earlier (its sidecar's `received_at`)."""
    for sidecar in (paths.home / "raw").rglob("*.json"):
        payload = json.loads(sidecar.read_text())
        if not isinstance(payload, dict) or "received_at" not in payload \
                or payload["sha256"] == keep:
            continue
        payload["received_at"] = (datetime.fromisoformat(payload["received_at"])
                                  - timedelta(days=1)).isoformat()
        sidecar.write_text(json.dumps(payload))


def test_a_page_re_read_later_keeps_the_list_whole(vault_paths) -> None:
    """A second read whose first page is unchanged (the raw zone keeps it once, under its
    first day) and whose last page changed: the list is the first page and the new end."""
    with ReplayServer() as server:
        _serve_lists(server)
        with harvest_context(vault_paths, server) as ctx:
            semantic_scholar.fetch_lists(ctx, [C], "references", page_size=2)
    zone = RawZone(vault_paths)
    [second] = [f for f in zone.files(["s2_papers"]) if f.origin.endswith("offset=2&limit=2")]
    changed = {"offset": 2, "data": [{"citedPaper": {"paperId": E, "title": "E"}}]}
    later = vault_paths.home / "later.json"
    later.write_text(json.dumps(changed))
    new, _ = zone.add_file(later, origin=second.origin)
    _age(vault_paths, keep=new.sha256)  # everything read yesterday, but the new page
    build_citations(vault_paths)
    rows = pl.read_parquet(vault_paths.table("citations"))
    assert rows.select("cited_position", "cited_s2_id").rows() == [
        (0, "a" * 40), (1, None), (2, E)]


def test_a_listing_page_that_does_not_advance_is_refused(vault_paths) -> None:
    with ReplayServer() as server:
        server.add(REFERENCES, _page(0, [{"citedPaper": {"paperId": "a" * 40}}], 0))
        with harvest_context(vault_paths, server) as ctx, \
                pytest.raises(HarvestError, match="does not move past offset 0"):
            semantic_scholar.fetch_lists(ctx, [C], "references")


def test_with_a_key_the_evaluation_population_is_looked_up(vault_paths, monkeypatch) -> None:
    """With `S2_API_KEY` set, the evaluation venues' submissions matched to arXiv are looked
    up in a batch and the dated citing papers of those S2 knows are read page by page; the
    rows feed the citation windows. Without the key nothing is asked."""
    from vault_pipeline.schemas import SUBMISSIONS

    paths = vault_paths
    venues = ["ICLR.cc/2025/Conference", "ICLR.cc/2025/Conference",
              "ICLR.cc/2024/Conference", "Other.cc/2025/Workshop"]
    arxiv = ["2501.00001", None, "2401.00003", "2501.00004"]
    paths.store.write(SUBMISSIONS, pa.Table.from_pylist([
        {"forum_id": f"f{i}", "venue_id": v, "arxiv_id": a, "review_count": 3,
         "raw_sha256": "0" * 64} for i, (v, a) in enumerate(zip(venues, arxiv, strict=True))],
        schema=SUBMISSIONS.arrow))
    found = {"paperId": C, "externalIds": {"ArXiv": "2501.00001"}, "title": "Found",
             "citationCount": 2}
    with ReplayServer() as server:
        server.add(BATCH, Reply(body=json.dumps([found, None]), content_type=JSON),
                   method="POST")
        server.add(CITATIONS, _page(0, [
            {"citingPaper": {"paperId": D, "publicationDate": "2025-06-01"}},
            {"citingPaper": {"paperId": E, "publicationDate": None}}]), offset="0")
        with harvest_context(paths, server) as ctx:
            assert semantic_scholar.lookup_population(ctx) is None  # no key: nothing asked
            assert server.log == []
            monkeypatch.setenv("S2_API_KEY", "s2-secret-key")
            report = semantic_scholar.lookup_population(ctx, references=False)
        asked = json.loads(server.log[0].body)["ids"]
        assert asked == ["ARXIV:2401.00003", "ARXIV:2501.00001"]  # not the other venue's
        assert [s.path for s in server.log[1:]] == [CITATIONS]
        assert {s.headers["x-api-key"] for s in server.log} == {"s2-secret-key"}
    assert (report.submissions, report.asked, report.without_id, report.resolved) == (
        3, 2, 1, 1)
    assert report.citing.entries == 2
    build_citations(paths)
    rows = pl.read_parquet(paths.table("citations")).filter(pl.col("cited_s2_id") == C)
    assert sorted(rows.select("citing_s2_id", "citing_date").rows()) == [
        (D, date(2025, 6, 1)), (E, None)]
