"""Incremental arXiv metadata over OAI-PMH ``ListRecords`` (``from``/``until`` datestamps,
resumption tokens), with oaipmh-scythe as the protocol client.

Scythe builds the requests, follows resumption tokens and turns ``<error>`` envelopes into
exceptions; its HTTP layer is replaced by the vault's polite arXiv client (shared clock,
Retry-After, bounded retries), so Scythe's own retries are switched off. Each page is stored in
the raw zone (where it is parsed in full: a truncated page is caught there) before the cursor
moves past it. arXiv datestamps are last-modified dates, not submission dates: a day's window
holds new papers and every paper whose metadata changed that day."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from oaipmh_scythe import Scythe
from oaipmh_scythe.config import RetryConfig
from oaipmh_scythe.exceptions import BadResumptionToken, NoRecordsMatch, OAIPMHException
from oaipmh_scythe.iterator import OAIResponseIterator

from vault_pipeline.errors import RawFormatError
from vault_pipeline.sources.context import HarvestContext, Listing
from vault_pipeline.sources.cursor import cursor_key
from vault_pipeline.sources.http import HarvestError, PoliteClient

log = logging.getLogger(__name__)


class PoliteScythe(Scythe):
    """Scythe sending every request through a :class:`PoliteClient`."""

    def __init__(self, endpoint: str, client: PoliteClient):
        super().__init__(endpoint, retry_config=RetryConfig(max_retries=0),
                         iterator=OAIResponseIterator)
        self._polite = client

    def _request(self, query: dict[str, str]) -> Any:
        return self._polite.get(self.endpoint, params=query)


@dataclass
class OaiReport(Listing, counts=("records", "new_files", "restarts")):
    """One window's listing: records read, raw files new to the zone, and restarts of a list
    whose resumption token expired."""

    window: str
    complete: bool = False


def window_key(prefix: str, oai_set: str | None, first: date, last: date) -> str:
    return cursor_key("oai", prefix, oai_set or "all", first.isoformat(), last.isoformat())


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(n) for n in range((last - first).days + 1)]


def yesterday() -> date:
    return datetime.now(UTC).date() - timedelta(days=1)


def plan_window(ctx: HarvestContext, first: date, last: date, prefix: str | None = None,
                oai_set: str | None = None) -> tuple[date, date] | None:
    """Trim days whose harvest is already complete off both ends of a window; None when
    every day is done (so a backfill never asks for a day twice)."""
    prefix = prefix or ctx.config.arxiv.metadata_prefix
    oai_set = oai_set if oai_set is not None else ctx.config.arxiv.oai_set
    pending = [d for d in days(first, last)
               if not ctx.cursors.load(window_key(prefix, oai_set, d, d)).get("complete")]
    return (pending[0], pending[-1]) if pending else None


def first_request(ctx: HarvestContext, first: date, last: date, prefix: str | None = None,
                  oai_set: str | None = None) -> dict[str, str]:
    """The query the next request of this window will send (for ``--dry-run``)."""
    prefix = prefix or ctx.config.arxiv.metadata_prefix
    oai_set = oai_set if oai_set is not None else ctx.config.arxiv.oai_set
    state = ctx.cursors.load(window_key(prefix, oai_set, first, last))
    if state.get("next_token"):
        return {"verb": "ListRecords", "resumptionToken": state["next_token"]}
    query = {"verb": "ListRecords", "metadataPrefix": prefix, "from": first.isoformat(),
             "until": last.isoformat()}
    return query | ({"set": oai_set} if oai_set else {})


def harvest_window(ctx: HarvestContext, first: date, last: date, prefix: str | None = None,
                   oai_set: str | None = None, force: bool = False) -> OaiReport:
    """Harvest every record whose datestamp lies in [first, last], resuming from the cursor."""
    prefix = prefix or ctx.config.arxiv.metadata_prefix
    oai_set = oai_set if oai_set is not None else ctx.config.arxiv.oai_set
    key = window_key(prefix, oai_set, first, last)
    state = ctx.cursors.load(key)
    report = OaiReport(window=f"{first}..{last}")
    if state.get("complete") and not force:
        report.skipped = report.complete = True
        return report
    if state.get("complete") or not state:
        state = {"from": first.isoformat(), "until": last.isoformat(), "prefix": prefix,
                 "set": oai_set, "pages": 0, "records": 0, "next_token": None,
                 "complete": False, "started_at": datetime.now(UTC).isoformat()}
    report.resumed = bool(state.get("next_token"))
    scythe = PoliteScythe(ctx.config.arxiv.oai_url, ctx.client("arxiv"))
    malformed = 0
    while not state["complete"]:
        try:
            _follow(ctx, scythe, key, state, report)
        except NoRecordsMatch:
            state.update(complete=True, next_token=None)
            ctx.cursors.save(key, state)
        except BadResumptionToken as exc:
            # Tokens expire; the window starts over (stored pages are not stored again).
            report.restarts += 1
            if report.restarts > 2:
                raise HarvestError(f"OAI-PMH {report.window}: resumption token refused "
                                   f"again ({exc})") from exc
            log.warning("OAI-PMH %s: resumption token refused, restarting the window",
                        report.window)
            state.update(next_token=None, pages=0, records=0)
            ctx.cursors.save(key, state)
        except RawFormatError as exc:
            malformed += 1
            if malformed >= ctx.config.retry.max_attempts:
                raise HarvestError(f"OAI-PMH {report.window}: page {state['pages'] + 1} "
                                   f"malformed {malformed} times ({exc}); the cursor is kept, "
                                   "rerun to resume") from exc
            log.warning("OAI-PMH %s: malformed page (%s), asking again", report.window, exc)
        except OAIPMHException as exc:
            raise HarvestError(f"OAI-PMH {report.window}: {type(exc).__name__}: {exc}") from exc
    report.complete = True
    if first != last:
        _mark_days(ctx, prefix, oai_set, first, last, key)
    return report


def _follow(ctx: HarvestContext, scythe: PoliteScythe, key: str, state: dict,
            report: OaiReport) -> None:
    token = state.get("next_token")
    query = ({"verb": "ListRecords", "resumptionToken": token} if token else
             first_request(ctx, date.fromisoformat(state["from"]),
                           date.fromisoformat(state["until"]), state["prefix"], state["set"]))
    iterator = OAIResponseIterator(scythe, query)
    for response in iterator:
        page = state["pages"] + 1
        name = f"oai-{state['prefix']}-{state['from']}-{state['until']}-p{page:05d}.xml"
        raw, new = ctx.store(response.http_response.content, name,
                             str(response.http_response.url))
        resumption = iterator.resumption_token
        next_token = resumption.token if resumption and resumption.token else None
        state.update(pages=page, records=state["records"] + (raw.records or 0),
                     next_token=next_token, complete=next_token is None,
                     updated_at=datetime.now(UTC).isoformat())
        ctx.cursors.save(key, state)
        report.pages += 1
        report.records += raw.records or 0
        report.new_files += int(new)
        report.files.append(raw.sha256)
        total = int(resumption.complete_list_size) if resumption and \
            resumption.complete_list_size else None
        ctx.progress(raw.records or 0, total, f"OAI {report.window} page {page}")


def _mark_days(ctx: HarvestContext, prefix: str, oai_set: str | None, first: date,
               last: date, covered_by: str) -> None:
    """A completed multi-day window completes each of its days (the schedule skips them)."""
    for day in days(first, last):
        key = window_key(prefix, oai_set, day, day)
        if not ctx.cursors.load(key).get("complete"):
            ctx.cursors.save(key, {"complete": True, "covered_by": covered_by})
