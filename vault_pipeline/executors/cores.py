"""How many cores this process may use, and a pool worker's share of them.

A pool of one worker per core whose workers each start a library's full thread pool (ONNX
Runtime sizes its intra-op pool to the machine) runs cores x cores threads: on 2 cores the
extractive ideas stage took 53.5 s for the demo's 221 papers with 2 such workers and 34.4 s
with 2 workers of one thread each (benchmarks/bench_worker_threads.py). So a worker is told
its share at start (:func:`share_cores`, before its warm-up loads any model), and the code
that builds a session or a BLAS pool asks for it (:func:`thread_share`); a process that is
not a pool's worker has no share and keeps the libraries' own defaults."""

from __future__ import annotations

import os

_SHARE: int | None = None  # this process's threads when it is one of a pool's workers
# The variables OpenMP and the BLAS libraries read when they start their pools.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def share_cores(workers: int, threads: int = 0) -> int:
    """Make this process one of ``workers`` sharing the cores: its threads from now on
    (``threads``, else an equal share), for the libraries that read the environment at
    start and for those that ask :func:`thread_share`. Returns the share."""
    global _SHARE
    _SHARE = threads if threads > 0 else max(1, available_cores() // max(1, workers))
    for name in THREAD_VARIABLES:
        os.environ[name] = str(_SHARE)
    try:  # pools already started by an import (numpy's BLAS)
        from threadpoolctl import threadpool_limits

        threadpool_limits(_SHARE)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    return _SHARE


def thread_share() -> int | None:
    """This worker's share of the cores, or None outside a pool (the library's default)."""
    return _SHARE
