"""Checks on `documents` and `document_attempts`: what a user looks at before trusting the
full texts (success rate per source, ok rows that carry text, one row per paper)."""

from __future__ import annotations

import polars as pl

from vault_pipeline.documents.outcome import SUCCESS
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS
from vault_pipeline.store.tables import TableStore

DEFAULT_MIN_SUCCESS_RATE = 0.95  # the review-paradigm study reached 94.4%


def success_rates(store: TableStore) -> dict[str, dict[str, float | int]]:
    """Per input kind (``latex``, ``pdf``, ``all``): attempts, successes and their rate."""
    attempts = store.read_optional(DOCUMENT_ATTEMPTS, ["kind", "status"])
    if attempts is None:
        return {}
    ok = pl.col("status").is_in(list(SUCCESS))
    by_kind = attempts.group_by("kind").agg(pl.len().alias("attempts"), ok.sum().alias("ok"))
    rates: dict[str, dict[str, float | int]] = {}
    for kind, total, good in by_kind.sort("kind").iter_rows():
        rates[kind] = {"attempts": total, "ok": good, "rate": round(good / total, 4)}
    if attempts.height:
        good = int(attempts.select(ok.sum()).item())
        rates["all"] = {"attempts": attempts.height, "ok": good,
                        "rate": round(good / attempts.height, 4)}
    return rates


def success_floor(store: TableStore, floor: float = DEFAULT_MIN_SUCCESS_RATE) -> Outcome:
    """Passes when every input kind converts at least ``floor`` of its inputs."""
    rates = success_rates(store)
    low = {kind: r["rate"] for kind, r in rates.items() if kind != "all" and r["rate"] < floor}
    statuses: dict[str, int] = {}
    frame = store.read_optional(DOCUMENT_ATTEMPTS, ["kind", "status"])
    if frame is not None:
        statuses = {f"{k}:{s}": n for k, s, n in
                    frame.group_by("kind", "status").len().sort("kind", "status").iter_rows()}
    description = (f"below the floor of {floor:.0%}: " + ", ".join(
        f"{k} {v:.1%}" for k, v in sorted(low.items()))) if low else \
        f"every source converts at least {floor:.0%} of its inputs" if rates else \
        "no PDF or e-print converted yet"
    return Outcome(not low, description, {"rates": rates, "floor": floor,
                                          "by_kind_and_status": statuses})


def ok_rows_have_text(store: TableStore) -> Outcome:
    """No row claims success without text."""
    frame = store.scan_optional(DOCUMENTS)
    if frame is None:
        return Outcome(True, "no documents table yet")
    bad = (frame.filter(pl.col("status").is_in(list(SUCCESS))
                        & (pl.col("text").is_null() | (pl.col("text").str.strip_chars() == "")))
           .select("arxiv_id", "sha256").collect())
    return Outcome(bad.height == 0, f"{bad.height} successful row(s) with empty text",
                   {"examples": bad.head(10).to_dicts()})


def one_row_per_paper(store: TableStore) -> Outcome:
    frame = store.scan_optional(DOCUMENTS)
    if frame is None:
        return Outcome(True, "no documents table yet")
    dupes = (frame.filter(pl.col("arxiv_id").is_not_null())
             .group_by("arxiv_id").len().filter(pl.col("len") > 1).collect())
    forums = pl.DataFrame(schema={"forum_id": pl.String, "len": pl.UInt32})
    if "forum_id" in frame.collect_schema().names():  # tables written before forum rows
        forums = (frame.filter(pl.col("forum_id").is_not_null())
                  .group_by("forum_id").len().filter(pl.col("len") > 1).collect())
    return Outcome(dupes.height + forums.height == 0,
                   f"{dupes.height} arXiv id(s) and {forums.height} OpenReview forum(s) with "
                   "more than one row",
                   {"examples": dupes.head(10).to_dicts() + forums.head(10).to_dicts()})
