"""Harvest benchmark: requests per 1,000 new papers (daily refresh, a backfill month as 30
daily listings vs one month-long listing, a rerun), search API paging, the cost of the shared
request clock, and parse throughput of stored OAI-PMH pages.

The harvester runs for real (oaipmh-scythe, the polite client, the raw zone, the cursors)
against a local server replaying synthetic `arXivRaw` ListRecords pages of 1,000 records, as
arXiv serves them, with the spacing set to 0 so the figures measure the client, not the wait
(at arXiv's 3 s per request, multiply the request counts by 3 s for wall time).

    python benchmarks/bench_harvest.py [--per-day 2350] [--days 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import httpx  # noqa: E402
from make_feeds import pages  # noqa: E402

from testing.sources_replay import ReplayServer, Reply, harvest_context  # noqa: E402
from vault_pipeline.parse import parse_raw_file  # noqa: E402
from vault_pipeline.raw.detect import detect  # noqa: E402
from vault_pipeline.sources import arxiv_api, oai_pmh  # noqa: E402
from vault_pipeline.store.paths import VaultPaths  # noqa: E402

PAGE = 1000
FIRST = date(2026, 10, 1)


class OaiReplay:
    """Serves a listing per (from, until) window: ``counts`` records per day in the window."""

    def __init__(self, per_day: int):
        self.per_day = per_day
        self.listings: dict[str, list[bytes]] = {}

    def listing(self, first: str, last: str) -> list[bytes]:
        key = f"{first}..{last}"
        if key not in self.listings:
            days = (date.fromisoformat(last) - date.fromisoformat(first)).days + 1
            seed = abs(hash(key)) % 10_000 + 2
            self.listings[key] = [body for _, body in
                                  pages("oai_arXivRaw", days * self.per_day, PAGE, seed)]
            self.listings[key + "#seed"] = [str(seed).encode()]
        return self.listings[key]

    def __call__(self, seen) -> Reply:
        token = seen.query.get("resumptionToken")
        if token is None:
            return Reply(body=self.listing(seen.query["from"], seen.query["until"])[0])
        seed, offset = token.split("|")
        for key, listing in self.listings.items():
            if not key.endswith("#seed") and self.listings[key + "#seed"] == [seed.encode()]:
                return Reply(body=listing[(int(offset) - 1) // PAGE])
        return Reply(404, "unknown token")


def harvest(home: Path, server: ReplayServer, windows: list[tuple[date, date]]
            ) -> tuple[int, int, float]:
    """(records, requests, seconds) of harvesting the windows in order."""
    records, start = 0, time.perf_counter()
    with harvest_context(VaultPaths(home).ensure(), server) as ctx:
        for first, last in windows:
            planned = oai_pmh.plan_window(ctx, first, last)
            if planned:
                records += oai_pmh.harvest_window(ctx, *planned).records
        sent = ctx.requests_sent().get("arxiv", 0)
    return records, sent, time.perf_counter() - start


def per_thousand(requests: int, records: int) -> str:
    return f"{requests / records * 1000:.2f}" if records else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-day", type=int, default=2350)
    parser.add_argument("--days", type=int, default=30)
    args = parser.parse_args()
    days = [FIRST + timedelta(n) for n in range(args.days)]
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as scratch, ReplayServer() as server:
        base = Path(scratch)
        server.add("/oai", OaiReplay(args.per_day))
        rec, req, _secs = harvest(base / "daily", server, [(days[0], days[0])])
        rows.append(("daily refresh (1 day)", f"{rec:,}", f"{req}", per_thousand(req, rec)))
        rec2, req2, _ = harvest(base / "daily", server, [(days[0], days[0])])
        rows.append(("same day again", f"{rec2:,}", f"{req2}", "0 requests"))
        rec, req, secs_daily = harvest(base / "per-day", server, [(d, d) for d in days])
        rows.append((f"backfill {args.days} days, daily listings", f"{rec:,}", f"{req}",
                     per_thousand(req, rec)))
        rec, req, secs_month = harvest(base / "month", server, [(days[0], days[-1])])
        rows.append((f"backfill {args.days} days, one listing", f"{rec:,}", f"{req}",
                     per_thousand(req, rec)))
        rec2, req2, _ = harvest(base / "month", server, [(d, d) for d in days])
        rows.append(("daily runs after that backfill", f"{rec2:,}", f"{req2}", "0 requests"))

        print(f"# Harvest requests ({PAGE:,} records per OAI page, {args.per_day:,} "
              "records per day)\n")
        print("| run | records | requests | requests per 1,000 papers |")
        print("|---|---:|---:|---:|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        print(f"\nclient time, month as one listing: {secs_month:.1f} s "
              f"({rec / secs_month:,.0f} records/s incl. storing and checking each page); "
              f"as daily listings: {secs_daily:.1f} s")

        # search API paging: results per request at the 2,000-entry page limit
        search_pages = [body for _, body in pages("atom", 5000, 2000, 7)]

        def search_reply(seen) -> Reply:
            return Reply(body=search_pages[int(seen.query["start"]) // 2000])

        server.add("/api/query", search_reply)
        with harvest_context(VaultPaths(base / "search").ensure(), server) as ctx:
            report = arxiv_api.ArxivSearch(ctx).run("cat:cs.LG", 5000)
            sent = ctx.requests_sent()["arxiv"]
        print(f"\nsearch API, 5,000 results: {sent} requests ({report.entries:,} entries; "
              f"pages of at most 2,000)")

        # shared clock overhead: polite client (file lock + clock file) vs plain httpx
        server.add("/ping", Reply(body="ok"))
        with harvest_context(VaultPaths(base / "clock").ensure(), server) as ctx:
            client = ctx.client("arxiv")
            start = time.perf_counter()
            for _ in range(300):
                client.get(f"{server.url}/ping")
            polite = (time.perf_counter() - start) / 300 * 1000
        with httpx.Client() as plain:
            start = time.perf_counter()
            for _ in range(300):
                plain.get(f"{server.url}/ping")
            bare = (time.perf_counter() - start) / 300 * 1000
        print(f"per request, local server: polite client {polite:.2f} ms, plain httpx "
              f"{bare:.2f} ms (shared clock and lock: {polite - bare:.2f} ms, next to the "
              "3,000 ms spacing)")

        # parse throughput of the stored OAI pages (the month)
        zone_pages = sorted((base / "month" / "raw" / "oai_pmh").rglob("*.xml"))
        size = sum(p.stat().st_size for p in zone_pages)
        start = time.perf_counter()
        parsed = sum(batch.candidates.height for p in zone_pages
                     for batch in parse_raw_file(p, "oai_pmh"))
        parse_s = time.perf_counter() - start
        start = time.perf_counter()
        for p in zone_pages:
            detect(p)
        detect_s = time.perf_counter() - start
        print(f"\nparse stored OAI pages: {len(zone_pages)} pages, {parsed:,} records, "
              f"{size / 1e6:.1f} MB in {parse_s:.2f} s = {parsed / parse_s:,.0f} records/s, "
              f"{size / 1e6 / parse_s:.1f} MB/s")
        print(f"raw-zone check of the same pages (full parse at the door): {detect_s:.2f} s "
              f"= {parsed / detect_s:,.0f} records/s")


if __name__ == "__main__":
    main()
