"""Checks on `documents` and `document_attempts`: what a user looks at before trusting the
full texts (success rate per source, ok rows that carry text, one row per paper)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ..checks import Outcome
from .outcome import SUCCESS

DEFAULT_MIN_SUCCESS_RATE = 0.95  # the review-paradigm study reached 94.4%


def success_rates(attempts_path: Path) -> dict[str, dict[str, float | int]]:
    """Per input kind (``latex``, ``pdf``, ``all``): attempts, successes and their rate."""
    if not attempts_path.exists():
        return {}
    attempts = pl.read_parquet(attempts_path, columns=["kind", "status"])
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


def success_floor(attempts_path: Path, floor: float = DEFAULT_MIN_SUCCESS_RATE) -> Outcome:
    """Passes when every input kind converts at least ``floor`` of its inputs."""
    rates = success_rates(attempts_path)
    low = {kind: r["rate"] for kind, r in rates.items() if kind != "all" and r["rate"] < floor}
    statuses: dict[str, int] = {}
    if attempts_path.exists():
        frame = pl.read_parquet(attempts_path, columns=["kind", "status"])
        statuses = {f"{k}:{s}": n for k, s, n in
                    frame.group_by("kind", "status").len().sort("kind", "status").iter_rows()}
    description = (f"below the floor of {floor:.0%}: " + ", ".join(
        f"{k} {v:.1%}" for k, v in sorted(low.items()))) if low else \
        f"every source converts at least {floor:.0%} of its inputs" if rates else \
        "no PDF or e-print converted yet"
    return Outcome(not low, description, {"rates": rates, "floor": floor,
                                          "by_kind_and_status": statuses})


def ok_rows_have_text(documents_path: Path) -> Outcome:
    """No row claims success without text."""
    if not documents_path.exists():
        return Outcome(True, "no documents table yet")
    frame = pl.scan_parquet(documents_path)
    bad = (frame.filter(pl.col("status").is_in(list(SUCCESS))
                        & (pl.col("text").is_null() | (pl.col("text").str.strip_chars() == "")))
           .select("arxiv_id", "sha256").collect())
    return Outcome(bad.height == 0, f"{bad.height} successful row(s) with empty text",
                   {"examples": bad.head(10).to_dicts()})


def one_row_per_paper(documents_path: Path) -> Outcome:
    if not documents_path.exists():
        return Outcome(True, "no documents table yet")
    dupes = (pl.scan_parquet(documents_path).filter(pl.col("arxiv_id").is_not_null())
             .group_by("arxiv_id").len().filter(pl.col("len") > 1).collect())
    return Outcome(dupes.height == 0, f"{dupes.height} arXiv id(s) with more than one row",
                   {"examples": dupes.head(10).to_dicts()})
