"""OpenReview submissions with their replies (reviews, meta-reviews, decisions), per venue,
through openreview-py (API v2; API v1 for venues configured with ``api = 1``).

openreview-py keeps the protocol: endpoints, authentication, paging parameters, the Note model.
Its session is made polite: its transport adapters are replaced by the vault's (shared request
clock, 429 ``RateLimitError`` waits until ``details.resetTime``, bounded retries), and a
response hook stores every notes or groups page exactly as received in the raw zone before the
client parses it. Credentials come from the environment (``OPENREVIEW_TOKEN``, or
``OPENREVIEW_USERNAME`` and ``OPENREVIEW_PASSWORD``); without them the public API is read as
a guest."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import openreview
from openreview.api import OpenReviewClient

from vault_pipeline.raw.zone import RawFile
from vault_pipeline.sources.context import HarvestContext, Listing
from vault_pipeline.sources.cursor import cursor_key
from vault_pipeline.sources.http import HarvestError, PoliteAdapter, RequestCounter
from vault_pipeline.sources.settings import VenueSettings, secret

log = logging.getLogger(__name__)

# openreview-py logs in inside its constructor, before its session can be made polite; it is
# built with this unsigned placeholder (decoded locally, found invalid, no request sent), then
# made polite, then given the real credentials.
_PLACEHOLDER = "logged-out"
DEFAULT_NAMES = {"submission": "Submission", "review": "Official_Review",
                 "meta_review": "Meta_Review", "decision": "Decision"}


class PageCapture:
    """A requests response hook: every 200 notes/groups page goes to the raw zone."""

    def __init__(self, ctx: HarvestContext, prefixes: tuple[str, ...]):
        self.ctx = ctx
        self.prefixes = prefixes
        self.name = "openreview-page.json"
        self.stored: list[tuple[RawFile, bool]] = []

    def __call__(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        if response.status_code == 200 and response.url.startswith(self.prefixes):
            self.stored.append(self.ctx.store(response.content, self.name, response.url))
        return response


@dataclass
class VenueClient:
    client: Any
    capture: PageCapture
    counter: RequestCounter
    api: int


def connect(ctx: HarvestContext, api: int = 2) -> VenueClient:
    settings = ctx.config.openreview
    base = (settings.api_url if api == 2 else settings.api_v1_url).rstrip("/")
    factory = OpenReviewClient if api == 2 else openreview.Client
    client = factory(baseurl=base, token=_PLACEHOLDER)
    client.token = None
    client.headers.pop("Authorization", None)
    client.headers["User-Agent"] = ctx.config.user_agent
    counter = ctx.counter("openreview")
    adapter = PoliteAdapter(ctx.limiter("openreview"), ctx.config.retry, counter,
                            ctx.config.limits, ctx.redirect_origins("openreview"))
    client.session.max_redirects = ctx.config.limits.max_redirects
    for prefix in list(client.session.adapters):
        client.session.mount(prefix, adapter)
    capture = PageCapture(ctx, (client.notes_url, client.groups_url))
    client.session.hooks["response"].append(capture)
    if token := secret("openreview_token"):
        client.token = token
        client.headers["Authorization"] = f"Bearer {token}"
    elif (user := secret("openreview_username")) and (password := secret("openreview_password")):
        client.login_user(user, password)
    return VenueClient(client, capture, counter, api)


def _slug(venue_id: str) -> str:
    return cursor_key(venue_id).replace(".", "_")


def invitation_names(connection: VenueClient, venue: VenueSettings) -> dict[str, str]:
    """Invitation names of a venue: the config's, else the venue group's (API v2 venues
    publish ``submission_name``, ``review_name``, ... in their group), else the usual ones."""
    names = dict(DEFAULT_NAMES)
    if connection.api == 2:
        connection.capture.name = f"openreview-{_slug(venue.id)}-group.json"
        try:
            group = connection.client.get_group(venue.id)
            content = group.content or {}
        except (HarvestError, openreview.OpenReviewException) as exc:
            log.warning("OpenReview %s: venue group unreadable (%s); usual names", venue.id, exc)
            content = {}
        for key in names:
            value = (content.get(f"{key}_name") or {}).get("value")
            names[key] = value or names[key]
    for key in names:
        names[key] = getattr(venue, key) or names[key]
    return names


@dataclass
class VenueReport(Listing, counts=("notes", "requests")):
    """One venue's listing: notes and requests; ``total``: the notes the API says the venue
    holds (when it says)."""

    venue: str
    total: int | None = None


def first_request(ctx: HarvestContext, venue: VenueSettings) -> str:
    """What the next notes request of a venue looks like (for ``--dry-run``)."""
    state = ctx.cursors.load(cursor_key("openreview", venue.id))
    if venue.api == 1:
        return (f"{ctx.config.openreview.api_v1_url}/notes?invitation={venue.id}/-/"
                f"{venue.v1_invitations[0]}&details=directReplies&offset=0")
    after = f"&after={state['after']}" if state.get("after") and not state.get("complete") \
        else ""
    name = venue.submission or DEFAULT_NAMES["submission"]
    return (f"{ctx.config.openreview.api_url}/notes?invitation={venue.id}/-/{name}"
            f"&details=replies&sort=id&limit={ctx.config.openreview.page_size}{after}")


def harvest_venue(ctx: HarvestContext, venue: VenueSettings, refresh: bool = False,
                  connection: VenueClient | None = None) -> VenueReport:
    """Every submission of a venue with its replies; resumes an interrupted listing; a
    completed venue is listed again only with ``refresh`` (decisions and reviews change)."""
    key = cursor_key("openreview", venue.id)
    state = ctx.cursors.load(key)
    report = VenueReport(venue.id)
    if state.get("complete") and not refresh:
        report.skipped = True
        return report
    if not state or state.get("complete"):
        state = {"venue": venue.id, "api": venue.api, "after": None, "offset": 0,
                 "invitation": 0, "pages": 0, "notes": 0, "complete": False,
                 "started_at": datetime.now(UTC).isoformat()}
    report.resumed = state["pages"] > 0
    connection = connection or connect(ctx, venue.api)
    before = connection.counter.sent
    page_size = ctx.config.openreview.page_size
    if venue.api == 2:
        names = invitation_names(connection, venue)
        invitation = f"{venue.id}/-/{names['submission']}"
    while not state["complete"]:
        page = state["pages"] + 1
        connection.capture.name = f"openreview-{_slug(venue.id)}-notes-p{page:05d}.json"
        connection.capture.stored.clear()
        if venue.api == 2:
            result = connection.client.get_notes(
                invitation=invitation, details="replies", sort="id", limit=page_size,
                after=state["after"], with_count=state["after"] is None)
            notes, total = result if isinstance(result, tuple) else (result, None)
            report.total = total if total is not None else report.total
            done = len(notes) < page_size
            state.update(after=notes[-1].id if notes else state["after"])
        else:
            names_v1 = venue.v1_invitations
            invitation = f"{venue.id}/-/{names_v1[state['invitation']]}"
            notes = connection.client.get_notes(invitation=invitation, details="directReplies",
                                                offset=state["offset"], limit=page_size)
            last_invitation = state["invitation"] + 1 >= len(names_v1)
            if len(notes) < page_size:
                state.update(invitation=state["invitation"] + 1, offset=0)
                done = last_invitation
            else:
                state.update(offset=state["offset"] + len(notes))
                done = False
        state.update(pages=page, notes=state["notes"] + len(notes), complete=done,
                     updated_at=datetime.now(UTC).isoformat())
        ctx.cursors.save(key, state)
        report.pages += 1
        report.notes += len(notes)
        report.files += [raw.sha256 for raw, _ in connection.capture.stored]
        ctx.progress(len(notes), report.total, f"{venue.id} page {page}")
    report.requests = connection.counter.sent - before
    return report


# Where API v2 venues put their submissions once decisions are out.
def decision_venue_ids(venue_id: str) -> dict[str, str]:
    return {"accepted": venue_id, "rejected": f"{venue_id}/Rejected_Submission",
            "withdrawn": f"{venue_id}/Withdrawn_Submission",
            "desk_rejected": f"{venue_id}/Desk_Rejected_Submission"}


def decision_counts(ctx: HarvestContext, venue: VenueSettings,
                    connection: VenueClient | None = None) -> dict[str, int]:
    """How many submissions sit in each decision bucket now (one small request per bucket):
    the poll a sensor compares with its cursor to notice released or changed decisions."""
    if venue.api != 2:
        raise HarvestError(f"{venue.id}: decisions are polled for API v2 venues only")
    connection = connection or connect(ctx, 2)
    counts = {}
    for bucket, venue_id in decision_venue_ids(venue.id).items():
        connection.capture.name = f"openreview-{_slug(venue.id)}-poll-{bucket}.json"
        result = connection.client.get_notes(content={"venueid": venue_id}, limit=1,
                                             with_count=True)
        counts[bucket] = int(result[1]) if isinstance(result, tuple) else len(result)
    return counts
