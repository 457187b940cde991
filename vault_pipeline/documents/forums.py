"""OpenReview submissions in `documents`: which forum a raw PDF belongs to, and the abstract
a submission falls back to when its PDF failed to convert or was never fetched.

A PDF fetched by the OpenReview harvest is stored as ``openreview-<forum>.pdf`` (the current
PDF, origin ``<api>/pdf?id=<forum>``) or ``openreview-<forum>.rev-<edit>.pdf`` (an earlier
revision, origin ``<api>/references/pdf?id=<edit>``). The current PDF is the forum's
candidate; earlier revisions stay in the raw zone, unconverted."""

from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

import polars as pl

from vault_pipeline.documents.outcome import NO_SOURCE
from vault_pipeline.schemas import DOCUMENTS

_NAME = re.compile(r"^openreview-(?P<forum>[A-Za-z0-9_-]+)(?:\.rev-(?P<rev>[A-Za-z0-9_-]+))?"
                   r"\.pdf$")
FORUM_KEY = "openreview:"


def forum_of(name: str | None, origin: str | None) -> tuple[str | None, bool]:
    """(forum id, whether the file is an earlier revision) of a raw PDF; (None, False) for
    a file the OpenReview harvest did not fetch."""
    found = _NAME.match(name or "")
    if found is None:
        return None, False
    if found["rev"] is not None:
        return found["forum"], True
    parts = urlsplit(origin or "")
    if parts.path.endswith("/references/pdf"):
        return found["forum"], True
    asked = (parse_qs(parts.query).get("id") or [None])[-1]
    return asked if parts.path.endswith("/pdf") and asked else found["forum"], False


def with_submissions(converted: pl.LazyFrame, submissions: pl.LazyFrame, version: str,
                     now: datetime) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(converted rows with each forum's `title` and `abstract` filled in from
    `submissions`, one ``no_source`` row per submission without a PDF in the raw zone)."""
    subs = submissions.select("forum_id", _title="title", _abstract="abstract", _pdf="pdf")
    filled = (converted.join(subs, on="forum_id", how="left")
              .with_columns(title=pl.coalesce("title", "_title"),
                            abstract=pl.coalesce("abstract", "_abstract"))
              .drop("_title", "_abstract", "_pdf"))
    reason = (pl.when(pl.col("_pdf").is_null())
              .then(pl.lit("the OpenReview submission has no public PDF"))
              .otherwise(pl.lit("no OpenReview PDF of this submission in the raw zone "
                                "(not fetched yet, or its fetch failed: see the "
                                "openreview-pdfs harvest cursor)")))
    missing = (subs.join(converted.select("forum_id").drop_nulls().unique(), on="forum_id",
                         how="anti")
               .with_columns(
                   text=pl.format("# {}\n\n## Abstract\n\n{}", pl.col("_title"),
                                  pl.col("_abstract")),
                   source=pl.lit("abstract_only"), status=pl.lit(NO_SOURCE), error=reason,
                   converter=pl.lit("abstract"), converter_version=pl.lit(version),
                   converted_at=pl.lit(now, dtype=DOCUMENTS.polars["converted_at"]))
               .drop("_title", "_abstract", "_pdf"))
    return filled, missing
