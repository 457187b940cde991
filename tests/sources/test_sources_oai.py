"""OAI-PMH harvesting against a local replay server: paging by resumption token, crash and
resume without duplicates or gaps, 503 Retry-After, malformed pages, error envelopes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from testing.sources_replay import ReplayServer, Reply, data, harvest_context
from vault_pipeline.papers.build import build_papers
from vault_pipeline.sources import oai_pmh
from vault_pipeline.sources.http import HarvestError

DAY = date(2026, 11, 10)
TESTS = Path(__file__).parents[1] / "data"
P1, P2, P3 = (data(f"oai_listrecords_p{n}.xml") for n in (1, 2, 3))


def _serve_list(server: ReplayServer, *p2: Reply) -> None:
    server.add("/oai", Reply(body=P1), verb="ListRecords", metadataPrefix="arXivRaw",
               **{"from": "2026-11-10", "until": "2026-11-10"})
    server.add("/oai", *(p2 or (Reply(body=P2),)), resumptionToken="7000001|1001")
    server.add("/oai", Reply(body=P3), resumptionToken="7000001|2001")


def _ids(vault_paths) -> list[str]:
    build_papers(vault_paths)
    return sorted(pl.read_parquet(vault_paths.table("papers")).get_column("arxiv_id"))


EXPECTED = [f"2611.{n:05d}" for n in range(1, 7)]


def test_a_day_is_harvested_page_by_page_into_the_raw_zone(vault_paths) -> None:
    with ReplayServer() as server:
        _serve_list(server)
        with harvest_context(vault_paths, server) as ctx:
            report = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert (report.pages, report.records, report.complete) == (3, 6, True)
        assert server.log[0].query == {"verb": "ListRecords", "metadataPrefix": "arXivRaw",
                                       "from": "2026-11-10", "until": "2026-11-10"}
        assert [s.query.get("resumptionToken") for s in server.log[1:]] == [
            "7000001|1001", "7000001|2001"]
    stored = [f for f in ctx.zone.files(["oai_pmh"])]
    assert len(stored) == 3 and all(f.origin.startswith(server.url) for f in stored)
    assert _ids(vault_paths) == EXPECTED


def test_a_completed_day_is_not_asked_again(vault_paths) -> None:
    with ReplayServer() as server:
        _serve_list(server)
        with harvest_context(vault_paths, server) as ctx:
            oai_pmh.harvest_window(ctx, DAY, DAY)
            again = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert again.skipped and len(server.log) == 3


@pytest.mark.parametrize("crash_after", [1, 2])
def test_crash_after_page_k_resumes_without_duplicate_or_gap(vault_paths, crash_after) -> None:
    class Crash(Exception):
        pass

    pages = []

    def crash(_done: int, _total: int | None, note: str) -> None:
        pages.append(note)
        if len(pages) == crash_after:
            raise Crash(note)

    with ReplayServer() as server:
        _serve_list(server)
        with harvest_context(vault_paths, server) as ctx:
            ctx.progress = crash
            with pytest.raises(Crash):
                oai_pmh.harvest_window(ctx, DAY, DAY)
        with harvest_context(vault_paths, server) as ctx:
            report = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert report.resumed and report.pages == 3 - crash_after
        assert len(server.log) == 3  # every page asked exactly once over both runs
    assert len(ctx.zone.files(["oai_pmh"])) == 3
    assert _ids(vault_paths) == EXPECTED


def test_503_with_retry_after_mid_list(vault_paths) -> None:
    with ReplayServer() as server:
        _serve_list(server, Reply(503, "Retry later", {"Retry-After": "1"},
                                  content_type="text/html"), Reply(body=P2))
        with harvest_context(vault_paths, server) as ctx:
            report = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert report.records == 6
        retried = server.requests("/oai")[1:3]
        assert retried[1].at - retried[0].at >= 1.0
    assert _ids(vault_paths) == EXPECTED


def test_a_truncated_page_is_refused_and_asked_again(vault_paths) -> None:
    with ReplayServer() as server:
        _serve_list(server, Reply(body=P2[: len(P2) // 2]), Reply(body=P2))
        with harvest_context(vault_paths, server) as ctx:
            report = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert report.pages == 3 and len(server.log) == 4
    assert len(ctx.zone.files(["oai_pmh"])) == 3  # the broken page never entered
    assert _ids(vault_paths) == EXPECTED


def test_a_page_that_stays_broken_stops_the_harvest_and_keeps_the_cursor(vault_paths) -> None:
    with ReplayServer() as server:
        _serve_list(server, Reply(body=b"<OAI-PMH xmlns='http://www.openarchives.org/OAI/"))
        with harvest_context(vault_paths, server) as ctx:
            with pytest.raises(HarvestError, match="malformed"):
                oai_pmh.harvest_window(ctx, DAY, DAY)
            state = ctx.cursors.load(oai_pmh.window_key("arXivRaw", None, DAY, DAY))
        assert state["next_token"] == "7000001|1001" and state["pages"] == 1


def test_no_records_match_completes_an_empty_day(vault_paths) -> None:
    with ReplayServer() as server:
        server.add("/oai", Reply(body=(TESTS / "oai_error_norecordsmatch.xml").read_bytes()))
        with harvest_context(vault_paths, server) as ctx:
            report = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert report.complete and report.records == 0
    assert ctx.zone.files(["oai_pmh"]) == []


def test_an_expired_token_restarts_the_window(vault_paths) -> None:
    bad = (TESTS / "oai_error_badresumptiontoken.xml").read_bytes()
    with ReplayServer() as server:
        _serve_list(server)
        with harvest_context(vault_paths, server) as ctx:
            key = oai_pmh.window_key("arXivRaw", None, DAY, DAY)
            ctx.cursors.save(key, {"from": "2026-11-10", "until": "2026-11-10",
                                   "prefix": "arXivRaw", "set": None, "pages": 1,
                                   "records": 2, "next_token": "expired", "complete": False})
            server.routes.insert(0, server.routes[0].__class__(
                "GET", "/oai", {"resumptionToken": "expired"}, [Reply(body=bad)]))
            report = oai_pmh.harvest_window(ctx, DAY, DAY)
        assert report.restarts == 1 and report.complete
    assert _ids(vault_paths) == EXPECTED


def test_a_backfill_range_is_one_listing_and_completes_its_days(vault_paths) -> None:
    with ReplayServer() as server:
        server.add("/oai", Reply(body=P3), **{"from": "2026-11-01", "until": "2026-11-10"})
        with harvest_context(vault_paths, server) as ctx:
            oai_pmh.harvest_window(ctx, date(2026, 11, 1), DAY)
            assert oai_pmh.plan_window(ctx, date(2026, 11, 1), DAY) is None
            assert oai_pmh.plan_window(ctx, date(2026, 10, 30), DAY) == (
                date(2026, 10, 30), date(2026, 10, 31))
            assert oai_pmh.harvest_window(ctx, DAY, DAY).skipped
        assert len(server.log) == 1


def test_dry_run_query_follows_the_cursor(vault_paths) -> None:
    with ReplayServer() as server, harvest_context(vault_paths, server) as ctx:
        assert oai_pmh.first_request(ctx, DAY, DAY, oai_set="cs")["set"] == "cs"
        ctx.cursors.save(oai_pmh.window_key("arXivRaw", None, DAY, DAY), {"next_token": "t1"})
        assert oai_pmh.first_request(ctx, DAY, DAY) == {"verb": "ListRecords",
                                                        "resumptionToken": "t1"}
