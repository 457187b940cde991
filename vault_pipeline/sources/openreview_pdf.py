"""Submission PDFs from OpenReview into the raw zone: the full text seed 001 converted for
each submission of the evaluation venues (the `documents` stage keys it by forum id).

The current PDF of a forum is ``GET <api>/pdf?id=<forum>`` (API v2, or v1 for venues
configured with ``api = 1``), asked only for submissions whose note carries a ``pdf`` field;
it is stored as ``openreview-<forum>.pdf`` under that URL. With ``revisions``, the earlier
PDFs a venue keeps are fetched too: API v2 lists a note's edits (``/notes/edits?note.id=``)
and each edit that set ``content.pdf`` is one revision, read from
``/references/pdf?id=<edit>``; API v1 lists the note's references
(``/references?referent=<forum>&original=true``), read the same way. A revision is stored as
``openreview-<forum>.rev-<edit>.pdf``.

Requests go through the polite client on OpenReview's shared request clock (429 waits for
``Retry-After``, 5xx retried). A 4xx or an answer that is not a PDF (an HTML error page) is
that forum's failure: recorded with its reason in the ``openreview-pdfs`` cursor and not
asked again until ``retry_failed`` or until the note's ``pdf`` field changes (a new
revision); the `documents` stage then gives the forum its abstract with the reason."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import polars as pl

from vault_pipeline.errors import RawFormatError
from vault_pipeline.schemas import SUBMISSIONS
from vault_pipeline.sources.context import Downloads, HarvestContext
from vault_pipeline.sources.http import HarvestError

CURSOR = "openreview-pdfs"
SAVE_EVERY = 25  # cursor writes: every this many forums, and at the end
_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def pdf_name(forum: str, revision: str | None = None) -> str:
    """The raw-zone file name of a forum's PDF (``documents`` reads the forum id from it)."""
    stem = f"openreview-{_SAFE.sub('_', forum)}"
    return f"{stem}.rev-{_SAFE.sub('_', revision)}.pdf" if revision else f"{stem}.pdf"


@dataclass(frozen=True)
class PdfItem:
    forum_id: str
    venue_id: str
    api: int
    pdf: str  # the note's `pdf` field: a new value means a new revision


@dataclass
class PdfReport(Downloads, counts=("submissions", "without_pdf", "revisions")):
    """The submission PDFs of one harvest (``bytes`` counts the earlier revisions' too):
    submissions of the evaluation venues, those whose note has no public PDF, and earlier
    revisions stored."""


def evaluation_venues(ctx: HarvestContext) -> list[str]:
    """The evaluation sets' review, anchor and idea venues, as resolved for this vault."""
    sets = ctx.uses("evalsets")
    return sorted({sets.review_venue, sets.anchor_venue, *sets.idea_venues})


def plan(ctx: HarvestContext, venues: list[str] | None = None, retry_failed: bool = False,
         refresh: bool = False, limit: int | None = None) -> tuple[list[PdfItem], PdfReport]:
    """Forums of the venues whose current PDF is not yet stored (nor failed for good)."""
    report = PdfReport()
    table = ctx.paths.store.scan_optional(SUBMISSIONS)
    if table is None:
        return [], report
    venues = venues or evaluation_venues(ctx)
    rows = (table.filter(pl.col("venue_id").is_in(venues))
            .select("forum_id", "venue_id", "pdf").unique("forum_id", keep="first")
            .sort("venue_id", "forum_id").collect())
    report.submissions = rows.height
    api_of = {v.id: v.api for v in ctx.config.openreview.venues}
    done = {} if refresh else ctx.cursors.load(CURSOR)
    items = []
    for forum, venue, pdf in rows.iter_rows():
        if not pdf:
            report.without_pdf += 1
            continue
        state = done.get(forum) or {}
        if state.get("pdf") == pdf and (state.get("stored") or not retry_failed):
            continue
        items.append(PdfItem(forum, venue, api_of.get(venue, 2), pdf))
    items = items[:limit] if limit is not None else items
    report.planned = len(items)
    return items, report


def _base(ctx: HarvestContext, api: int) -> str:
    settings = ctx.config.openreview
    return (settings.api_url if api == 2 else settings.api_v1_url).rstrip("/")


def pdf_url(ctx: HarvestContext, item: PdfItem) -> str:
    return f"{_base(ctx, item.api)}/pdf?id={item.forum_id}"


def _not_pdf(data: bytes, content_type: str | None) -> str | None:
    """Why an answer is not a PDF (an HTML error page served with 200), or None."""
    if data[:1024].find(b"%PDF-") >= 0:
        return None
    head = " ".join(data[:80].decode("utf-8", errors="replace").split())
    return f"not a PDF ({content_type or 'no content type'}): {head!r}"


def revision_ids(ctx: HarvestContext, item: PdfItem) -> list[str]:
    """Ids of the edits (API v2) or references (API v1) that set an earlier PDF, oldest
    first."""
    client = ctx.client("openreview")
    base = _base(ctx, item.api)
    if item.api == 2:
        answer = json.loads(client.get(f"{base}/notes/edits",
                                       params={"note.id": item.forum_id}).content)
        entries = [(e.get("tcdate") or 0, e.get("id"), ((e.get("note") or {}).get("content")
                                                        or {}).get("pdf"))
                   for e in answer.get("edits") or []]
        entries = [(t, i, p.get("value") if isinstance(p, dict) else p) for t, i, p in entries]
    else:
        answer = json.loads(client.get(f"{base}/references", params={
            "referent": item.forum_id, "original": "true"}).content)
        entries = [(r.get("tcdate") or 0, r.get("id"), (r.get("content") or {}).get("pdf"))
                   for r in answer.get("references") or []]
    # the edit that set the current PDF is the PDF just fetched: not asked twice
    return [i for _t, i, pdf in sorted(entries, key=lambda e: e[0])
            if i and pdf and pdf != item.pdf]


def _fetch_one(ctx: HarvestContext, url: str, name: str, params: dict | None = None
               ) -> tuple[str | None, Any]:
    """(failure reason, stored record) of one PDF request; raises if the service is unwell."""
    client = ctx.client("openreview")
    try:
        response = client.get(url, params=params)
    except HarvestError as exc:
        if not exc.item_specific:
            raise  # the service is unwell, not this forum: stop, a rerun resumes
        return str(exc), None
    if (reason := _not_pdf(response.content, response.headers.get("content-type"))):
        return reason, None
    try:
        return None, ctx.store(response.content, name, str(response.url))
    except RawFormatError as exc:
        return f"refused by the raw zone: {exc}", None


def fetch(ctx: HarvestContext, items: list[PdfItem], revisions: bool = False,
          report: PdfReport | None = None) -> PdfReport:
    """Fetch each forum's current PDF (and, with ``revisions``, its earlier ones) into the
    raw zone; the cursor records per forum what was stored or why it failed."""
    report = report or PdfReport(planned=len(items))
    state = ctx.cursors.load(CURSOR)
    try:
        for count, item in enumerate(items, 1):
            reason, stored = _fetch_one(ctx, pdf_url(ctx, item), pdf_name(item.forum_id))
            entry: dict[str, Any] = {"pdf": item.pdf, "venue_id": item.venue_id,
                                     "at": datetime.now(UTC).isoformat()}
            if stored is None:
                report.failed.append((item.forum_id, reason or "unknown"))
                entry.update(stored=False, reason=reason)
            else:
                raw, new = stored
                report.stored(raw, new)
                entry.update(stored=True, sha256=raw.sha256)
                if revisions:
                    entry["revisions"] = _fetch_revisions(ctx, item, report)
            state[item.forum_id] = entry
            ctx.progress(1, len(items), f"OpenReview PDF {item.forum_id}")
            if count % SAVE_EVERY == 0:
                ctx.cursors.save(CURSOR, state)
    finally:
        ctx.cursors.save(CURSOR, state)
    return report


def _fetch_revisions(ctx: HarvestContext, item: PdfItem, report: PdfReport) -> dict:
    """Earlier PDFs of a forum: {edit or reference id: sha256 or the failure reason}."""
    try:
        ids = revision_ids(ctx, item)
    except HarvestError as exc:
        if not exc.item_specific:
            raise
        return {"_listing": str(exc)}
    except (json.JSONDecodeError, AttributeError) as exc:
        return {"_listing": f"unreadable revision list: {exc}"}
    found = {}
    url = f"{_base(ctx, item.api)}/references/pdf"
    for revision in ids:
        reason, stored = _fetch_one(ctx, url, pdf_name(item.forum_id, revision),
                                    {"id": revision})
        if stored is not None:
            report.revisions += 1
            report.bytes += stored[0].size_bytes
        found[revision] = stored[0].sha256 if stored is not None else reason
    return found


def describe(report: PdfReport) -> str:
    return (f"OpenReview PDFs: {report.submissions} submissions of the evaluation venues, "
            f"{report.without_pdf} without a public PDF; {report.planned} asked, "
            f"{report.fetched} stored, {report.already_present} already present, "
            f"{report.revisions} earlier revisions, {len(report.failed)} failed "
            f"({report.bytes:,} bytes)")
