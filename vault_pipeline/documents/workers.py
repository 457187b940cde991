"""Run conversions in isolated worker processes, in parallel across cores.

PyMuPDF can hang, segfault or balloon on hostile files and is not thread-safe, so every
document is converted in a separate process with a hard per-document timeout and a memory
cap (``RLIMIT_AS``). Pebble's process pool does the bookkeeping: a worker past its timeout is
killed and replaced, a worker that dies (segfault, abort, the OS killer) is replaced, and the
document it held gets a ``timeout`` or ``crashed`` result while the batch goes on. Workers are
started with ``spawn`` (never ``fork`` a process whose threads may hold locks) and recycled
after ``max_tasks`` documents to bound slow leaks."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import os
import resource
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pebble import ProcessExpired, ProcessPool

from .convert import Task, convert_task
from .outcome import CRASHED, FAILED, TIMEOUT, Conversion

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 2048


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class PoolSettings:
    workers: int = 0  # 0: one per core
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int | None = DEFAULT_MEMORY_MB  # None: no cap
    max_tasks: int = 100  # documents per worker before it is replaced

    @property
    def n_workers(self) -> int:
        return self.workers if self.workers > 0 else default_workers()


def limit_memory(memory_mb: int | None) -> None:
    """Cap the worker's address space: an allocation past it fails (MemoryError in Python,
    an error in MuPDF) instead of taking the machine down."""
    if memory_mb:
        cap = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def describe_exit(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (killed: out of memory?)" if name == "SIGKILL" else ""
        return f"worker died with {name}{hint}"
    return f"worker exited with code {exitcode}"


def outcome(future: concurrent.futures.Future, timeout_s: float) -> Conversion:
    """The result of one scheduled document, whatever happened to its worker."""
    try:
        return future.result()
    except concurrent.futures.TimeoutError:
        return Conversion.failure(TIMEOUT, f"conversion ran past {timeout_s:g} s; the worker "
                                           "was killed and replaced", round(timeout_s * 1000))
    except ProcessExpired as exc:
        return Conversion.failure(CRASHED, f"{describe_exit(exc.exitcode)}; replaced")
    except Exception as exc:  # noqa: BLE001 - e.g. a result that could not be sent back
        return Conversion.failure(FAILED, f"{type(exc).__name__}: {exc}")


def run_isolated(
    tasks: Iterable[Task],
    settings: PoolSettings = PoolSettings(),
    function: Callable[[Task], Conversion] = convert_task,
) -> Iterator[tuple[Task, Conversion]]:
    """Convert every task in the pool; yield (task, result) as each one finishes."""
    pool = ProcessPool(
        max_workers=settings.n_workers, max_tasks=settings.max_tasks,
        initializer=limit_memory, initargs=(settings.memory_mb,),
        context=multiprocessing.get_context("spawn"),
    )
    finished = False
    try:
        futures = {pool.schedule(function, args=(task,), timeout=settings.timeout_s): task
                   for task in tasks}
        for future in concurrent.futures.as_completed(futures):
            yield futures[future], outcome(future, settings.timeout_s)
        finished = True
    finally:
        if finished:
            pool.close()
        else:  # the consumer stopped (or failed): do not wait for the rest
            pool.stop()
        pool.join()


def convert_batch(tasks: list[Task], settings: PoolSettings = PoolSettings(),
                  function: Callable[[Task], Conversion] = convert_task) -> list[Conversion]:
    """One batch of a distributed executor: the same function in the same isolated workers
    (timeout, memory cap, crash → a row), one worker per batch; results in task order."""
    single = dataclasses.replace(settings, workers=1)
    done = {id(task): result for task, result in run_isolated(tasks, single, function)}
    return [done[id(task)] for task in tasks]
