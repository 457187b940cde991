"""What every metadata parser yields: batches of candidate rows (one per record, not yet
normalised or validated) and per-record rejects. The candidate layout is internal to parsing;
`finalize` turns candidates into `papers` rows."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from email.utils import parsedate_to_datetime

import polars as pl

CANDIDATE_SCHEMA = pl.Schema(
    {
        "raw_id": pl.String,
        "title": pl.String,
        "abstract": pl.String,
        "authors": pl.List(pl.String),
        "categories": pl.List(pl.String),
        "primary_category": pl.String,
        "published": pl.Date,
        "updated": pl.Date,
        "versions": pl.List(pl.Struct({"version": pl.Int32, "created": pl.Date})),
        "doi": pl.String,
        "journal_ref": pl.String,
        "comments": pl.String,
        "license": pl.String,
        "source": pl.String,
        "position": pl.Int64,
    }
)
"""`raw_id` keeps the id as found (with version or URL prefix); `position` is a line number."""

BATCH_ROWS = 5_000


@dataclass(frozen=True)
class ParseReject:
    """A record a parser could not read, or (``whole_file``) the point where the file itself
    stopped being readable, e.g. a truncated page."""

    position: int | None
    record_id: str | None
    reason: str
    snippet: str | None = None
    whole_file: bool = False


@dataclass
class Batch:
    candidates: pl.DataFrame
    rejects: list[ParseReject] = field(default_factory=list)


def batches_from_rows(items: Iterable[dict | ParseReject]) -> Iterator[Batch]:
    """Group a parser's stream of rows and rejects into DataFrame batches."""
    rows: list[dict] = []
    rejects: list[ParseReject] = []
    for item in items:
        if isinstance(item, ParseReject):
            rejects.append(item)
            continue
        rows.append(item)
        if len(rows) >= BATCH_ROWS:
            yield Batch(pl.DataFrame(rows, schema=CANDIDATE_SCHEMA), rejects)
            rows, rejects = [], []
    if rows or rejects:
        yield Batch(pl.DataFrame(rows, schema=CANDIDATE_SCHEMA), rejects)


def split_author_string(text: str | None) -> list[str] | None:
    """``"A. One, B. Two and C. Three"`` → three names (arXivRaw and snapshot ``authors``)."""
    if not text:
        return None
    names = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", " ".join(text.split()))
    return [n for n in names if n]


def iso_date(text: str | None) -> date | None:
    """``2022-02-24T15:05:19Z`` or ``2022-02-24`` → date; None when absent or unreadable."""
    if not text:
        return None
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def rfc2822_date(text: str | None) -> date | None:
    """``Mon, 2 Apr 2007 19:18:42 GMT`` (arXivRaw and snapshot versions) → date."""
    if not text:
        return None
    try:
        return parsedate_to_datetime(text.strip()).date()
    except (TypeError, ValueError):
        return None


def any_date(text: str | None) -> date | None:
    return iso_date(text) or rfc2822_date(text)


def snippet(text: str | bytes | None, limit: int = 200) -> str | None:
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return text[:limit]
