"""Targeted pulls from the arXiv search API: a query (up to N results) or a list of ids.

Requests are built here and sent through the polite arXiv client rather than through the
`arxiv` package, because that package parses each page with feedparser and drops the bytes
(the raw zone needs the page as received), and spaces requests only inside one Python object,
not across the processes of a vault. Pages are parsed later by the vault's Atom parser.

arXiv's rules: pages of at most 2,000 entries, and no query may page past 30,000 results. A
larger query is split into submission-date windows, halved until each holds at most 30,000
results (each split costs one ``max_results=0`` probe, and the report says so)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from lxml import etree

from vault_pipeline.ids import parse_arxiv_id
from vault_pipeline.parse.xml_stream import text_of
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.sources.context import HarvestContext
from vault_pipeline.sources.cursor import cursor_key
from vault_pipeline.sources.http import HarvestError

log = logging.getLogger(__name__)

OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
EPOCH = datetime(1991, 8, 1, tzinfo=UTC)
SORTS = {"relevance", "lastUpdatedDate", "submittedDate"}
EMPTY_PAGE_RETRIES = 3


@dataclass
class SearchReport(Counters, counts=("probes", "pages", "entries", "new_files")):
    """One search: probes (requests for a window's count of results alone), pages and entries
    read, raw files new to the zone; the windows searched, and notes on what was cut short."""

    query: str
    total_results: int | None = None
    windows: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime

    def clause(self) -> str:
        return (f"submittedDate:[{self.start:%Y%m%d%H%M} TO "
                f"{(self.end - timedelta(minutes=1)):%Y%m%d%H%M}]")

    def halves(self) -> tuple[Window, Window]:
        middle = self.start + (self.end - self.start) / 2
        middle = middle.replace(second=0, microsecond=0)
        return Window(self.start, middle), Window(middle, self.end)


def total_results(page: bytes) -> int:
    """``opensearch:totalResults`` of an Atom page."""
    for _event, element in etree.iterparse(io.BytesIO(page), events=("end",),
                                           resolve_entities=False, no_network=True):
        if element.tag == f"{OPENSEARCH}totalResults":
            return int(text_of(element) or 0)
    raise HarvestError("arXiv API page without opensearch:totalResults")


def _windowed(query: str, window: Window | None) -> str:
    return f"({query}) AND {window.clause()}" if window else query


def page_params(query: str, start: int, size: int, sort_by: str, sort_order: str
                ) -> dict[str, str | int]:
    return {"search_query": query, "start": start, "max_results": size, "sortBy": sort_by,
            "sortOrder": sort_order}


class ArxivSearch:
    def __init__(self, ctx: HarvestContext, sort_by: str = "submittedDate",
                 sort_order: str = "descending"):
        if sort_by not in SORTS:
            raise HarvestError(f"sort must be one of {sorted(SORTS)}")
        self.ctx = ctx
        self.settings = ctx.config.arxiv
        self.sort_by = sort_by
        self.sort_order = sort_order
        self.page_size = min(self.settings.page_size, 2000)
        self.ceiling = min(self.settings.result_ceiling, 30000)

    def _get(self, query: str, start: int, size: int, name: str) -> tuple[bytes, int, bool]:
        params = page_params(query, start, size, self.sort_by, self.sort_order)
        response = self.ctx.client("arxiv").get(self.settings.api_url, params=params)
        raw, new = self.ctx.store(response.content, name, str(response.url))
        return response.content, raw.records or 0, new

    def probe(self, query: str, report: SearchReport) -> int:
        content, _, _ = self._get(query, 0, 0, "arxiv-api-probe.xml")
        report.probes += 1
        return total_results(content)

    def windows(self, query: str, report: SearchReport, window: Window, total: int
                ) -> list[tuple[Window, int]]:
        """Split ``window`` until every part holds at most the ceiling."""
        if total <= self.ceiling or window.end - window.start <= timedelta(minutes=2):
            return [(window, total)]
        parts = []
        for half in window.halves():
            count = self.probe(_windowed(query, half), report)
            parts += self.windows(query, report, half, count)
        return parts

    def run(self, query: str, max_results: int) -> SearchReport:
        report = SearchReport(query)
        if max_results <= self.ceiling:
            self._page(query, None, max_results, report)
            return report
        whole = Window(EPOCH, datetime.now(UTC).replace(second=0, microsecond=0)
                       + timedelta(days=1))
        total = self.probe(query, report)
        report.total_results = total
        parts = self.windows(query, report, whole, total)
        if len(parts) > 1:
            report.notes.append(f"{total:,} results exceed arXiv's {self.ceiling:,} ceiling: "
                                f"split into {len(parts)} submission-date windows "
                                f"({report.probes} probe requests)")
        if self.sort_order == "descending":
            parts.reverse()
        remaining = max_results
        for window, count in parts:
            if remaining <= 0:
                break
            if count:
                remaining -= self._page(query, window, min(count, remaining), report)
        return report

    def _page(self, query: str, window: Window | None, wanted: int,
              report: SearchReport) -> int:
        """Page through one query (or window), resuming from its cursor; return entries."""
        full = _windowed(query, window)
        key = cursor_key("arxiv-search", full, self.sort_by, self.sort_order, wanted)
        state = self.ctx.cursors.load(key) or {"next_start": 0, "total": None}
        if window:
            report.windows.append(window.clause())
        empty = 0
        while not state.get("complete"):
            start = state["next_start"]
            size = min(self.page_size, wanted - start)
            content, entries, new = self._get(full, start, size,
                                              f"arxiv-api-{cursor_key(full)[:60]}-{start}.xml")
            total = total_results(content)
            if report.total_results is None:
                report.total_results = total
            limit = min(wanted, total, self.ceiling)
            if entries == 0 and start < limit:
                empty += 1  # arXiv sometimes answers a page with no entries: ask again
                if empty > EMPTY_PAGE_RETRIES:
                    raise HarvestError(f"arXiv API: empty page at start={start} of {total} "
                                       f"for {full!r}; rerun resumes here")
                continue
            report.pages += 1
            report.entries += entries
            report.new_files += int(new)
            state.update(next_start=start + entries, total=total,
                         complete=start + entries >= limit or entries == 0)
            self.ctx.cursors.save(key, state)
            self.ctx.progress(entries, limit, f"arXiv API start={start}")
        return int(state.get("next_start", 0))


@dataclass
class IdsReport(Counters, counts=("requested", "skipped_known", "pages", "entries")):
    """Ids asked for (``requested``), skipped as fetched before or known to the vault, pages
    and entries read; the ids that are no arXiv ids."""

    invalid: list[str] = field(default_factory=list)


def plan_ids(ctx: HarvestContext, ids: Iterable[str], known: set[str] | None = None
             ) -> tuple[list[str], IdsReport]:
    """Normalise ids, drop invalid ones and those already fetched (cursor) or known."""
    report = IdsReport()
    fetched = set(ctx.cursors.load("arxiv-ids").get("fetched", []))
    wanted: list[str] = []
    for raw in ids:
        try:
            parsed = parse_arxiv_id(raw)
        except ValueError:
            report.invalid.append(raw)
            continue
        if parsed.id in fetched or (known and parsed.id in known):
            report.skipped_known += 1
        elif parsed.id not in wanted:
            wanted.append(parsed.id)
    return wanted, report


def fetch_ids(ctx: HarvestContext, ids: Iterable[str], known: set[str] | None = None
              ) -> IdsReport:
    """Metadata for a list of arXiv ids (``id_list``), in chunks, each id asked once."""
    wanted, report = plan_ids(ctx, ids, known)
    report.requested = len(wanted)
    chunk = max(1, ctx.config.arxiv.ids_per_request)
    client = ctx.client("arxiv")
    for offset in range(0, len(wanted), chunk):
        batch = wanted[offset:offset + chunk]
        params = {"id_list": ",".join(batch), "start": 0, "max_results": len(batch)}
        response = client.get(ctx.config.arxiv.api_url, params=params)
        raw, _new = ctx.store(response.content, f"arxiv-api-ids-{offset}.xml",
                              str(response.url))
        report.pages += 1
        report.entries += raw.records or 0
        state = ctx.cursors.load("arxiv-ids")
        state["fetched"] = sorted(set(state.get("fetched", [])) | set(batch))
        ctx.cursors.save("arxiv-ids", state)
        ctx.progress(len(batch), len(wanted), "arXiv API id_list")
    return report
