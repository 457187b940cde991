"""Semantic Scholar: batch lookups (at most 500 ids a request) of citation counts and
references, title matches (``/paper/search/match``) for submissions with no id the batch
takes, the paged reference and citation lists of single papers, and the one-hop reference
walk that adds cited papers missing from the vault.

Sent with httpx through the polite client (its own request clock, 1 request/s by default)
rather than the `semanticscholar` package, because that package returns parsed objects and
drops the response bytes the raw zone keeps, and retries on its own schedule without the
shared clock. The key comes from ``S2_API_KEY`` and travels in a header, never in a URL."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import polars as pl

from vault_pipeline.parse.semantic_scholar import is_page, is_title_match
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.schemas import CITATIONS, PAPERS, SUBMISSIONS
from vault_pipeline.sources import arxiv_api
from vault_pipeline.sources.context import HarvestContext
from vault_pipeline.sources.http import HarvestError
from vault_pipeline.sources.settings import secret

MAX_BATCH = 500
PAPER_FIELDS = "paperId,externalIds,title,year,publicationDate,citationCount,referenceCount," \
               "influentialCitationCount"
REFERENCE_FIELDS = "references.paperId,references.externalIds"
CURSOR = "s2-lookups"
MATCH_CURSOR = "s2-title-matches"  # per forum: how its title was matched, or why not
SAVE_EVERY = 25  # title-match cursor writes: every this many titles, and at the end
LISTS = ("references", "citations")
LIST_FIELDS = "paperId,externalIds,title,year,publicationDate"
PAGE_SIZE = 1000  # the most S2 lists in one page


def s2_id(arxiv_id: str) -> str:
    return f"ARXIV:{arxiv_id}"


@dataclass
class LookupReport(Counters, counts=("asked", "skipped_recent", "batches", "found")):
    """Papers asked for in batches, skipped as read within ``refresh_days``, and found."""

    not_found: list[str] = field(default_factory=list)


def plan_lookups(ctx: HarvestContext, ids: Iterable[str], references: bool = True,
                 refresh: bool = False) -> tuple[list[str], int]:
    """Ids not read within ``refresh_days`` (with references, when asked for)."""
    seen = {} if refresh else ctx.cursors.load(CURSOR)
    fresh_after = datetime.now(UTC) - timedelta(days=ctx.config.s2.refresh_days)
    wanted, skipped = [], 0
    for paper in dict.fromkeys(ids):
        record = seen.get(paper)
        if record and datetime.fromisoformat(record["at"]) >= fresh_after and \
                (record.get("references") or not references):
            skipped += 1
        else:
            wanted.append(paper)
    return wanted, skipped


def batch_url(ctx: HarvestContext) -> str:
    return f"{ctx.config.s2.api_url.rstrip('/')}/paper/batch"


def fields(references: bool) -> str:
    return f"{PAPER_FIELDS},{REFERENCE_FIELDS}" if references else PAPER_FIELDS


def lookup(ctx: HarvestContext, ids: Iterable[str], references: bool = True,
           refresh: bool = False) -> LookupReport:
    """Look ids up (``ARXIV:…``, ``DOI:…``, S2 paper ids) in batches; each batch's response is
    stored in the raw zone, then the cursor records which ids were read and when."""
    wanted, skipped = plan_lookups(ctx, ids, references, refresh)
    report = LookupReport(asked=len(wanted), skipped_recent=skipped)
    size = min(MAX_BATCH, ctx.config.s2.batch_size)
    client = ctx.client("s2")
    for offset in range(0, len(wanted), size):
        batch = wanted[offset:offset + size]
        response = client.post(batch_url(ctx), params={"fields": fields(references)},
                               json={"ids": batch})
        ctx.store(response.content, f"s2-batch-{offset // size:05d}.json", str(response.url))
        results = json.loads(response.content)
        if len(results) != len(batch):
            raise HarvestError(f"Semantic Scholar answered {len(results)} results for "
                               f"{len(batch)} ids")
        seen = ctx.cursors.load(CURSOR)
        now = datetime.now(UTC).isoformat()
        for paper, result in zip(batch, results, strict=True):
            seen[paper] = {"at": now, "found": result is not None, "references": references,
                           "s2_id": (result or {}).get("paperId")}
            if result is None:
                report.not_found.append(paper)
        ctx.cursors.save(CURSOR, seen)
        report.batches += 1
        report.found += sum(r is not None for r in results)
        ctx.progress(len(batch), len(wanted), "Semantic Scholar batch")
    return report


@dataclass
class ListReport(Counters, counts=("papers", "pages", "entries")):
    """Papers whose lists were read, pages read, and ``entries``: references or citing
    papers listed, resolved or not."""


def list_url(ctx: HarvestContext, paper: str, kind: str) -> str:
    return f"{ctx.config.s2.api_url.rstrip('/')}/paper/{paper}/{kind}"


def _page_name(paper: str, kind: str, offset: int) -> str:
    return f"s2-{kind}-{re.sub(r'[^A-Za-z0-9._-]+', '_', paper)}-{offset:07d}.json"


def fetch_lists(ctx: HarvestContext, ids: Iterable[str], kind: str = "references",
                page_size: int = PAGE_SIZE) -> ListReport:
    """Every page of each paper's references (or citations) list, through the polite client
    (its clock, its retries on 429 / Retry-After), each page stored as received under its
    URL (the URL is what names the paper a page lists for). Pages are followed by ``next``
    until a page has none; a ``next`` that does not move forward is an error, not a loop.
    Ids are taken as S2 takes them; use S2 paper ids, so that these rows join the batch's."""
    if kind not in LISTS:
        raise ValueError(f"kind must be one of {', '.join(LISTS)}, not {kind!r}")
    client = ctx.client("s2")
    report = ListReport()
    for paper in dict.fromkeys(ids):
        offset: int | None = 0
        while offset is not None:
            response = client.get(list_url(ctx, paper, kind), params={
                "fields": LIST_FIELDS, "offset": offset, "limit": page_size})
            page = json.loads(response.content)
            if not is_page(page):
                raise HarvestError(f"Semantic Scholar's {kind} of {paper} at offset {offset} "
                                   "is not a page ({offset, next?, data})")
            ctx.store(response.content, _page_name(paper, kind, offset), str(response.url))
            report.pages += 1
            report.entries += len(page["data"])
            following = page.get("next")
            if following is not None and (not isinstance(following, int)
                                          or following <= offset):
                raise HarvestError(f"Semantic Scholar's {kind} of {paper}: next {following!r} "
                                   f"does not move past offset {offset}")
            offset = following if page["data"] else None
        report.papers += 1
        ctx.progress(1, None, f"Semantic Scholar {kind}")
    return report


def post_cutoff_ids(ctx: HarvestContext, cutoff: date | None = None) -> list[str]:
    """``ARXIV:`` ids of the vault's papers published on or after the cutoff (the split's,
    resolved for this vault: `vault.toml` [splits], `VAULT_SPLITS_CUTOFF`, the default)."""
    table = ctx.paths.store.scan_optional(PAPERS)
    if table is None:
        return []
    cutoff = cutoff or ctx.uses("splits").cutoff
    ids = (table.filter(pl.col("published") >= cutoff)
           .select("arxiv_id").sort("arxiv_id").collect().get_column("arxiv_id"))
    return [s2_id(i) for i in ids]


def missing_cited(ctx: HarvestContext) -> tuple[list[str], int]:
    """arXiv ids cited by the vault's papers but absent from it; and how many cited papers
    have no arXiv id (they cannot join an arXiv vault)."""
    store = ctx.paths.store
    citations = store.scan_optional(CITATIONS)
    if citations is None:
        return [], 0
    cited = citations.select("cited_arxiv_id", "cited_s2_id").unique()
    no_arxiv = cited.filter(pl.col("cited_arxiv_id").is_null()).select(pl.len()).collect().item()
    known = (store.scan(PAPERS) if store.exists(PAPERS)
             else store.read(PAPERS).lazy()).select("arxiv_id")
    missing = (cited.filter(pl.col("cited_arxiv_id").is_not_null())
               .join(known, left_on="cited_arxiv_id", right_on="arxiv_id", how="anti")
               .select("cited_arxiv_id").unique().sort("cited_arxiv_id").collect())
    return missing.get_column("cited_arxiv_id").to_list(), no_arxiv


@dataclass
class WalkReport(Counters, counts=("missing", "without_arxiv_id")):
    """Cited papers missing from the vault, those S2 gives no arXiv id, and the fetch of the
    others."""

    fetched: arxiv_api.IdsReport | None = None


def walk(ctx: HarvestContext) -> WalkReport:
    """The one-hop walk: fetch the arXiv metadata of cited papers missing from the vault."""
    missing, no_arxiv = missing_cited(ctx)
    report = WalkReport(missing=len(missing), without_arxiv_id=no_arxiv)
    report.fetched = arxiv_api.fetch_ids(ctx, missing)
    return report


@dataclass
class TitleMatchReport(Counters, counts=("asked", "skipped_recent", "matched", "not_found")):
    """Titles sent to /paper/search/match in this run (``asked``), looked up within
    ``refresh_days`` with the same title (``skipped_recent``), whose closest S2 title reaches
    the ratio floor (``matched``), or that S2 answered "Title match not found" for."""

    near_misses: list[tuple[str, str, float]] = field(default_factory=list)  # forum, title, ratio


def match_url(ctx: HarvestContext) -> str:
    return f"{ctx.config.s2.api_url.rstrip('/')}/paper/search/match"


def _fresh(record: dict | None, title: str, fresh_after: datetime) -> bool:
    return bool(record) and record.get("title") == title and \
        datetime.fromisoformat(record["at"]) >= fresh_after


def match_titles(ctx: HarvestContext, titles: Iterable[tuple[str, str]],
                 refresh: bool = False) -> TitleMatchReport:
    """Look (forum id, title) pairs up by title (``/paper/search/match``: S2's one closest
    title, or a 404 "Title match not found"), and accept S2's record only when its title
    reaches seed 001's floor (`difflib` ratio of normalised titles >= 0.90, as
    :func:`~vault_pipeline.evalsets.citation_windows.match_records` measures it): S2 always
    answers with its closest title, however far. Every answer is stored in the raw zone
    (its counts join `citation_counts`); the ``s2-title-matches`` cursor records per forum
    the method (``title_match``, or null), the ratio and S2's title."""
    from vault_pipeline.evalsets.citation_windows import MIN_TITLE_RATIO, title_ratio

    seen = {} if refresh else ctx.cursors.load(MATCH_CURSOR)
    fresh_after = datetime.now(UTC) - timedelta(days=ctx.config.s2.refresh_days)
    report = TitleMatchReport()
    wanted = []
    for forum, title in dict(titles).items():
        if _fresh(seen.get(forum), title, fresh_after):
            report.skipped_recent += 1
        else:
            wanted.append((forum, title))
    client = ctx.client("s2")
    state = ctx.cursors.load(MATCH_CURSOR)
    try:
        for count, (forum, title) in enumerate(wanted, 1):
            report.asked += 1
            entry: dict = {"at": datetime.now(UTC).isoformat(), "title": title,
                           "method": None, "s2_id": None}
            try:
                response = client.get(match_url(ctx), params={"query": title,
                                                             "fields": PAPER_FIELDS})
            except HarvestError as exc:
                if exc.status != 404:
                    raise  # not this title's fault: stop, a rerun resumes
                report.not_found += 1
                state[forum] = entry | {"reason": "Semantic Scholar: title match not found"}
                continue
            payload = json.loads(response.content)
            if not is_title_match(payload):
                raise HarvestError(f"Semantic Scholar's title match for {forum} is not "
                                   "{data: [{paperId, title, ...}]}")
            ctx.store(response.content, f"s2-match-{_safe(forum)}.json", str(response.url))
            best = payload["data"][0]
            ratio = round(title_ratio(best.get("title") or "", title), 4)
            entry.update(ratio=ratio, s2_title=best.get("title"),
                         match_score=best.get("matchScore"))
            if ratio >= MIN_TITLE_RATIO:
                report.matched += 1
                entry.update(method="title_match", s2_id=best["paperId"])
            else:
                report.near_misses.append((forum, best.get("title") or "", ratio))
                entry["reason"] = (f"closest Semantic Scholar title at ratio {ratio:.3f}, "
                                   f"under {MIN_TITLE_RATIO:.2f}")
            state[forum] = entry
            ctx.progress(1, len(wanted), "Semantic Scholar title match")
            if count % SAVE_EVERY == 0:
                ctx.cursors.save(MATCH_CURSOR, state)
    finally:
        ctx.cursors.save(MATCH_CURSOR, state)
    return report


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


@dataclass
class PopulationReport(Counters, counts=("submissions", "asked", "without_id", "resolved")):
    """Submissions of the evaluation venues; ``asked``: those with an arXiv id, looked up in
    batches; ``without_id``: no id S2's batch takes (looked up by title); ``resolved``: known
    to S2, from this read or an earlier one (their citing papers are read)."""

    lookup: LookupReport | None = None
    titles: TitleMatchReport | None = None
    citing: ListReport | None = None


def _population(ctx: HarvestContext) -> pl.DataFrame | None:
    """The evaluation venues' submissions (the evaluation sets' review, anchor and idea
    venues, as resolved for this vault): `forum_id`, `title`, `arxiv_id`."""
    table = ctx.paths.store.scan_optional(SUBMISSIONS)
    if table is None:
        return None
    sets = ctx.uses("evalsets")
    venues = sorted({sets.review_venue, sets.anchor_venue, *sets.idea_venues})
    return (table.filter(pl.col("venue_id").is_in(venues))
            .select("forum_id", "title", "arxiv_id").sort("forum_id").collect())


def population_ids(ctx: HarvestContext) -> tuple[list[str], PopulationReport]:
    """``ARXIV:`` ids of the evaluation venues' submissions that the reviews stage matched
    to arXiv, and how many have none."""
    report = PopulationReport()
    frame = _population(ctx)
    if frame is None:
        return [], report
    ids = frame.get_column("arxiv_id")
    report.submissions, report.without_id = ids.len(), ids.null_count()
    chosen = [s2_id(i) for i in sorted(set(ids.drop_nulls()))]
    report.asked = len(chosen)
    return chosen, report


def population_titles(ctx: HarvestContext) -> list[tuple[str, str]]:
    """(forum id, title) of the evaluation venues' submissions without an arXiv id: the
    batch cannot take them, so they are looked up by title."""
    frame = _population(ctx)
    if frame is None:
        return []
    rows = frame.filter(pl.col("arxiv_id").is_null() & pl.col("title").is_not_null()
                        & (pl.col("title").str.strip_chars() != ""))
    return list(rows.select("forum_id", "title").iter_rows())


def population_wanted(ctx: HarvestContext) -> bool:
    """Whether a harvest looks the evaluation population up by itself: only with an API key
    (its tens of thousands of requests are no load for the shared pool) and
    `s2.evaluation_population` on."""
    return ctx.config.s2.evaluation_population and secret("s2_api_key") is not None


def lookup_population(ctx: HarvestContext, references: bool = True,
                      refresh: bool = False) -> PopulationReport | None:
    """Citation counts of the whole evaluation population, then, page by page, the dated
    papers citing each one S2 knows (the citation windows of `eval_citation_windows`);
    None, asking nothing, unless :func:`population_wanted`."""
    if not population_wanted(ctx):
        return None
    ids, report = population_ids(ctx)
    report.lookup = lookup(ctx, ids, references, refresh)
    titles = population_titles(ctx)
    report.titles = match_titles(ctx, titles, refresh)
    seen = ctx.cursors.load(CURSOR)
    known = [seen[i]["s2_id"] for i in ids if (seen.get(i) or {}).get("s2_id")]
    matched = ctx.cursors.load(MATCH_CURSOR)
    known += [matched[f]["s2_id"] for f, _ in titles
              if (matched.get(f) or {}).get("method") == "title_match"]
    known = list(dict.fromkeys(known))
    report.resolved = len(known)
    report.citing = fetch_lists(ctx, known, "citations")
    return report


def describe_population(report: PopulationReport) -> str:
    citing = report.citing or ListReport()
    titles = report.titles or TitleMatchReport()
    return (f"evaluation population: {report.submissions} submissions, {report.asked} "
            f"looked up by arXiv id, {report.without_id} without one, looked up by title "
            f"({titles.asked} asked, {titles.skipped_recent} read recently: {titles.matched} "
            f"matched at ratio >= 0.90, {len(titles.near_misses)} near misses refused, "
            f"{titles.not_found} not found); {report.resolved} known to Semantic Scholar; "
            f"citing papers: {citing.entries} in {citing.pages} pages")
