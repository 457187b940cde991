"""What an evaluation run spent: requests, tokens and seconds per task and per input (the
benchmark, the asset metadata and the logs read these; the tables keep tokens, cost and
seconds per call, a quarantined one's included)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from vault_pipeline.ideas.backends import Answer, Backend, Request
from vault_pipeline.pipeline.counters import Counters

Cell = tuple[str, str]  # (task, input): `("direct", "vanilla")`, `("summary", "objective")`


@dataclass
class TaskStats(Counters, counts=("calls", "tokens_in", "tokens_out")):
    """Requests sent to the backend (re-asks included), their tokens and seconds."""

    seconds: float = 0.0


@dataclass
class RunReport(Counters, counts=("units", "reused", "asked", "summaries_made",
                                  "summaries_reused", "summaries_missing")):
    """One evaluation run: ``units``, the calls it consists of (all tasks, inputs and
    repeats), reused from the cache, asked (a quarantined call is in the call-failures
    table); summaries written this run (the rest came from the cache), reused, and missing
    (quarantined: that paper's summary inputs are left out)."""

    run_id: str
    by_task: dict[str, TaskStats] = field(default_factory=lambda: defaultdict(TaskStats))
    by_cell: dict[Cell, TaskStats] = field(default_factory=lambda: defaultdict(TaskStats))
    similarity_method: str | None = None
    # per idea task, items of its set left out for want of an idea (see `idea_note`)
    without_idea: dict[str, int] = field(default_factory=dict)

    def timed(self, cell: Cell, seconds: float) -> None:
        self.by_task[cell[0]].seconds += seconds
        self.by_cell[cell].seconds += seconds


class Metered(Backend):
    """A backend that counts what went through it, per task and input, and per request:
    tokens and seconds of every attempt (accepted, re-asked or quarantined alike), and when
    its last answer came back."""

    name = "metered"

    def __init__(self, inner: Backend, cell_of: dict[str, Cell], report: RunReport) -> None:
        super().__init__(inner.model)
        self.inner, self.cell_of, self.report = inner, cell_of, report
        self.deterministic = inner.deterministic  # a batch file cannot be asked again
        self.tokens: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.seconds: dict[str, float] = defaultdict(float)
        self.returned: dict[str, float] = {}

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        started = time.perf_counter()
        answers = self.inner.generate(requests)
        # a backend that does not time each request (a batch engine): its share of the batch
        share = (time.perf_counter() - started) / max(len(answers), 1)
        back = time.time()
        for answer in answers:
            cell = self.cell_of[answer.custom_id]
            for stats in (self.report.by_task[cell[0]], self.report.by_cell[cell]):
                stats.calls += 1
                stats.tokens_in += answer.tokens_in or 0
                stats.tokens_out += answer.tokens_out or 0
            self.tokens[answer.custom_id][0] += answer.tokens_in or 0
            self.tokens[answer.custom_id][1] += answer.tokens_out or 0
            self.seconds[answer.custom_id] += answer.seconds if answer.seconds is not None \
                else share
            self.returned[answer.custom_id] = answer.received_at or back
        return answers

    def spent(self, key: str, price: Callable[[int, int], float | None]) -> dict[str, object]:
        """The metering columns of one request's row: tokens, their cost at ``price``, and
        seconds, over every attempt."""
        tokens_in, tokens_out = self.tokens[key]
        return {"tokens_in": tokens_in, "tokens_out": tokens_out,
                "cost": price(tokens_in, tokens_out), "seconds": self.seconds[key]}

    def answered_at(self, key: str) -> datetime | None:
        """When the request's last answer came back (UTC)."""
        back = self.returned.get(key)
        return datetime.fromtimestamp(back, UTC) if back is not None else None
