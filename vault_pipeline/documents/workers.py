"""Run conversions in isolated worker processes, in parallel across cores.

PyMuPDF can hang, segfault or balloon on hostile files and is not thread-safe, so every
document is converted in a separate process of the project's isolated pool
(:mod:`vault_pipeline.executors.isolation`) with a hard per-document timeout and a memory cap: a
document whose worker hangs or dies gets a ``timeout`` or ``crashed`` result while the batch
goes on."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from vault_pipeline.documents.convert import PDF, Settings, Task, convert_task
from vault_pipeline.documents.outcome import TIMEOUT, Conversion
from vault_pipeline.executors.isolation import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    PoolSettings,
    default_workers,
    describe_exit,
    limit_memory,
    outcome_of,
)
from vault_pipeline.executors.isolation import run_isolated as run_in_pool

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIMEOUT_S",
    "PoolSettings",
    "convert_batch",
    "default_workers",
    "describe_exit",
    "limit_memory",
    "outcome",
    "run_isolated",
]


def failure(status: str, message: str, duration_ms: int) -> Conversion:
    """The row of a document whose worker timed out, died or could not answer."""
    prefix = "conversion " if status == TIMEOUT else ""
    return Conversion.failure(status, prefix + message, duration_ms)


def outcome(future: concurrent.futures.Future, timeout_s: float) -> Conversion:
    """The result of one scheduled document, whatever happened to its worker."""
    return outcome_of(future, timeout_s, failure)


def warm_up() -> None:
    """Runs once per worker, outside any document's time limit: a one-page PDF through the
    converter loads what the worker's first document would otherwise pay for (PyMuPDF's
    layout module and fonts, about 1-2 s on an idle core, several times that on a loaded
    one). Without it a paper could time out for being first in a fresh worker, and the
    worker that replaces it would pay again."""
    import pymupdf

    with tempfile.TemporaryDirectory(prefix="vault-warm-up-") as scratch:
        document = pymupdf.open()
        document.new_page().insert_text((72, 72), "Warm-up. We propose a method.")
        path = Path(scratch) / "warm-up.pdf"
        document.save(path)
        document.close()
        convert_task(Task("warm-up", PDF, str(path), str(Path(scratch) / "store"), Settings()))


def run_isolated(
    tasks: Iterable[Task],
    settings: PoolSettings | None = None,
    function: Callable[[Task], Conversion] = convert_task,
) -> Iterator[tuple[Task, Conversion]]:
    """Convert every task in the pool; yield (task, result) as each one finishes."""
    return run_in_pool(tasks, settings or PoolSettings(), function, failure, warm_up)


def convert_batch(tasks: list[Task], settings: PoolSettings | None = None,
                  function: Callable[[Task], Conversion] = convert_task) -> list[Conversion]:
    """One batch of a distributed executor: the same function in the same isolated workers
    (timeout, memory cap, crash -> a row), one worker per batch; results in task order."""
    single = dataclasses.replace(settings or PoolSettings(), workers=1)
    done = {id(task): result for task, result in run_isolated(tasks, single, function)}
    return [done[id(task)] for task in tasks]
