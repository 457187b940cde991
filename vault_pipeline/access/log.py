"""The trajectory log: one row per tool call of every session (arguments, answer, the paper
ids it showed, timing), a table a trainer joins to its rollouts by `session_id` (pass the
rollout's own id when opening the session) and `seq`. The ids a session was shown are what a
citation reward can hold a generation to (`seen_ids`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

import polars as pl

from vault_pipeline.schemas import TOOL_CALLS

if TYPE_CHECKING:
    from vault_pipeline.store.tables import TableStore


@dataclass
class CallRecord:
    """One call of a session as the trajectory log keeps it."""

    session_id: str
    seq: int
    tool: str
    arguments: str
    answer: str
    paper_ids: list[str]
    error: str | None
    started_at: datetime
    ms: float
    as_of: date
    target: str | None


def frame(calls: Iterable[CallRecord]) -> pl.DataFrame:
    """The calls as `tool_calls` rows."""
    rows = [vars(call) for call in calls]
    return pl.DataFrame(rows, schema=TOOL_CALLS.polars) if rows else \
        pl.DataFrame(schema=TOOL_CALLS.polars)


def append(store: TableStore, calls: Iterable[CallRecord]) -> int:
    """Add calls to the vault's `tool_calls` table (under its lock); rows added."""
    rows = frame(calls)
    if rows.is_empty():
        return 0
    store.append(TOOL_CALLS, rows)
    return rows.height


def seen_ids(log: pl.DataFrame, session_id: str) -> set[str]:
    """Every paper id the session's answers showed."""
    mine = log.filter(pl.col("session_id") == session_id)
    return set(mine.select(pl.col("paper_ids").explode()).drop_nulls().to_series().to_list())
