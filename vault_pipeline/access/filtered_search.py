"""Filtered vector search that pays for the filter only where it has to.

A LanceDB prefilter is evaluated over the whole table for every query: on a 1M-row index a
session's cutoff filter costs more than the probed partitions themselves (bench_tools_load).
Most sessions' filters pass a large share of the rows (a cutoff near the vault's, two of five
views), so the search here asks for the unfiltered nearest rows with the filter applied
after the vector search (LanceDB's postfilter), enough of them that the wanted number
survive the filter, and answers from those. The answer is the prefiltered query's own: the
rows that pass the filter among the ``fetch`` nearest of the probed partitions are the
nearest passing rows of those partitions, so whenever ``depth`` of them survive they are
exactly the prefilter's first ``depth``. A query where fewer survive (its filter passes few
rows near it, or the vault holds fewer) is asked again with the prefilter, so no answer is
ever short or different.

How many to fetch comes from each filter's observed pass rate (the share of fetched rows
that passed, kept per filter), so a filter that passes few rows soon goes straight to the
prefilter."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FIRST_RATE = 0.25  # a filter's pass rate before any query has measured it
MAX_FETCH = 2_048  # beyond this many rows a postfilter costs more than the prefilter
HEADROOM = 1.5  # fetch this much more than the rate predicts


@dataclass
class PassRates:
    """The observed share of rows each filter passes (thread-safe)."""

    rates: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fetch(self, where: str, depth: int) -> int | None:
        """Rows to ask for so that ``depth`` pass ``where``; None: use the prefilter."""
        with self._lock:
            rate = self.rates.get(where, FIRST_RATE)
        wanted = math.ceil(depth / max(rate, 1e-6) * HEADROOM)
        return None if wanted > MAX_FETCH else max(wanted, depth)

    def observe(self, where: str, fetched: int, passed: int) -> None:
        if fetched <= 0:
            return
        with self._lock:
            old = self.rates.get(where)
            rate = passed / fetched
            self.rates[where] = rate if old is None else 0.8 * old + 0.2 * rate
            if len(self.rates) > 4_096:  # one entry per distinct filter: bounded
                self.rates.pop(next(iter(self.rates)))


def search(table: Any, vectors: np.ndarray, where: str, depth: int, columns: list[str],
           distance: str, nprobes: int, rates: PassRates) -> list[list[dict]]:
    """The ``depth`` nearest rows passing ``where`` for each of ``vectors`` (a 2-D array),
    best first, each row with its ``_distance``: the prefiltered query's answer."""
    fetch = rates.fetch(where, depth)
    out: list[list[dict] | None] = [None] * len(vectors)
    if fetch is not None:
        fetched = _query(table, vectors, where, fetch, columns, distance, nprobes, False)
        passed = 0
        for i, rows in enumerate(fetched):
            passed += len(rows)
            if len(rows) >= depth:
                out[i] = rows[:depth]
        rates.observe(where, fetch * len(vectors), passed)
    again = [i for i, rows in enumerate(out) if rows is None]
    if again:
        found = _query(table, vectors[again], where, depth, columns, distance, nprobes, True)
        for i, rows in zip(again, found, strict=True):
            out[i] = rows
    return [rows or [] for rows in out]


def _query(table: Any, vectors: np.ndarray, where: str, limit: int, columns: list[str],
           distance: str, nprobes: int, prefilter: bool) -> list[list[dict]]:
    """One LanceDB query of every vector; rows grouped by the vector they answer."""
    query = vectors if len(vectors) > 1 else vectors[0]
    rows = (table.search(query, query_type="vector").distance_type(distance).nprobes(nprobes)
            .where(where, prefilter=prefilter).select(columns).limit(limit)
            .to_arrow().to_pylist())
    grouped: list[list[dict]] = [[] for _ in vectors]
    for row in rows:
        grouped[row.pop("query_index", 0)].append(row)
    return grouped

