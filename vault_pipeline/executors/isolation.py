"""The one isolated worker pool: per-item work in separate processes, each item under a hard
timeout and every worker under a memory cap (``RLIMIT_AS``), so one hostile input costs one
failed row, never the stage.

The cap is a budget *above the warmed-up worker*, set after the warm-up: what a worker loads
(ONNX Runtime, Polars, DuckDB, their thread pools and malloc arenas) reserves address space
that depends on the libraries and on how the process was started (a console script's spawn
children re-import the CLI first), so a fixed 2 GB cap failed the judge's model load in
workers of the `vault` console script and passed in those of `python -c`, and OpenBLAS then
spun forever because its buffers could not be mapped.

Pebble's process pool does the bookkeeping: a worker past its timeout is killed and
replaced, a worker that dies (segfault, abort, the OS killer) is replaced, and the item it
held gets a ``timeout`` or ``crashed`` outcome (built by the caller's ``failure``) while the
rest goes on. Workers are started with ``spawn`` (never ``fork`` a process whose threads may
hold locks) and recycled after ``max_tasks`` items to bound slow leaks. Used by the documents
stage (one PDF or e-print per item) and the ideas stage (one paper per item)."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import resource
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from pebble import ProcessExpired, ProcessPool

from vault_pipeline.executors.cores import available_cores, share_cores

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 2048
TIMEOUT = "timeout"  # the worker ran past the per-item limit and was killed
CRASHED = "crashed"  # the worker died (segfault, abort, killed by the OS)
FAILED = "failed"  # the result could not be produced or sent back

T = TypeVar("T")
R = TypeVar("R")
# Builds an item's outcome when its worker failed: (status, message, duration in ms).
Failure = Callable[[str, str, int], R]


def default_workers() -> int:
    """One worker per core this process may use."""
    return available_cores()


@dataclass(frozen=True)
class PoolSettings:
    workers: int = 0  # 0: one per core
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int | None = DEFAULT_MEMORY_MB  # None: no cap
    max_tasks: int = 100  # items per worker before it is replaced
    threads: int = 0  # threads each worker's libraries may use; 0: its share of the cores

    @property
    def n_workers(self) -> int:
        return self.workers if self.workers > 0 else default_workers()


def address_space() -> int:
    """Bytes of address space this process holds now (0 where /proc is not there)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * resource.getpagesize()


def limit_memory(memory_mb: int | None) -> None:
    """Cap the worker's address space at what it holds now plus ``memory_mb``: an item's
    allocation past it fails (MemoryError in Python, an error in MuPDF) instead of taking
    the machine down."""
    if memory_mb:
        cap = address_space() + (memory_mb << 20)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def start_worker(memory_mb: int | None, warm_up: Callable[[], object] | None,
                 workers: int = 1, threads: int = 0) -> None:
    """A worker's start, which no item's timeout counts: its threads (``threads``, or its
    share of the cores as one of ``workers``), then the caller's warm-up (imports, models,
    caches loaded once), then the memory cap for the items."""
    share_cores(workers, threads)
    if warm_up is not None:
        warm_up()
    limit_memory(memory_mb)


def describe_exit(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (killed: out of memory?)" if name == "SIGKILL" else ""
        return f"worker died with {name}{hint}"
    return f"worker exited with code {exitcode}"


def outcome_of(future: concurrent.futures.Future, timeout_s: float,
               failure: Failure) -> R:  # type: ignore[type-var]
    """The result of one scheduled item, whatever happened to its worker."""
    try:
        return future.result()
    except concurrent.futures.TimeoutError:
        return failure(TIMEOUT, f"ran past {timeout_s:g} s; the worker was killed and "
                                "replaced", round(timeout_s * 1000))
    except ProcessExpired as exc:
        return failure(CRASHED, f"{describe_exit(exc.exitcode)}; replaced", 0)
    except Exception as exc:  # noqa: BLE001 - e.g. a result that could not be sent back
        return failure(FAILED, f"{type(exc).__name__}: {exc}".rstrip(": "), 0)


class IsolatedPool(Generic[T, R]):
    """A pool kept open across several batches (``map``); close it with ``with``."""

    def __init__(self, settings: PoolSettings, function: Callable[[T], R],
                 failure: Failure, warm_up: Callable[[], object] | None = None) -> None:
        self.settings = settings
        self.function = function
        self.failure = failure
        self.pool = ProcessPool(
            max_workers=settings.n_workers, max_tasks=settings.max_tasks,
            initializer=start_worker,
            initargs=(settings.memory_mb, warm_up, settings.n_workers, settings.threads),
            context=multiprocessing.get_context("spawn"))
        self.finished = True

    def map(self, tasks: Iterable[T]) -> Iterator[tuple[T, R]]:
        """Run every task; yield (task, outcome) as each one finishes."""
        self.finished = False
        futures = {self.pool.schedule(self.function, args=(task,),
                                      timeout=self.settings.timeout_s): task
                   for task in tasks}
        for future in concurrent.futures.as_completed(futures):
            yield futures[future], outcome_of(future, self.settings.timeout_s, self.failure)
        self.finished = True

    def close(self) -> None:
        if self.finished:
            self.pool.close()
        else:  # the consumer stopped (or failed): do not wait for the rest
            self.pool.stop()
        self.pool.join()

    def __enter__(self) -> IsolatedPool[T, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_isolated(tasks: Iterable[T], settings: PoolSettings, function: Callable[[T], R],
                 failure: Failure, warm_up: Callable[[], object] | None = None
                 ) -> Iterator[tuple[T, R]]:
    """Run every task in a pool of its own; yield (task, outcome) as each one finishes."""
    with IsolatedPool(settings, function, failure, warm_up) as pool:
        yield from pool.map(tasks)
