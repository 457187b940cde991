"""The isolated pool's memory cap is a budget above the warmed-up worker: a warm-up that maps
more than the budget (a model, a library's thread pools) still loads, and an item that
allocates past the budget still fails alone."""

from __future__ import annotations

import mmap
import sys

import pytest

from vault_pipeline.executors.isolation import IsolatedPool, PoolSettings

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is Linux's")

_HELD: list[mmap.mmap] = []


def _reserve_address_space() -> None:
    """Maps 1.5 GB of address space and keeps it, as loading ONNX Runtime and its peers does."""
    _HELD.append(mmap.mmap(-1, 3 << 29))


def _allocate(megabytes: int) -> str:
    return f"{len(bytearray(megabytes << 20)) >> 20} MB"


def _failed(status: str, message: str, _ms: int) -> str:
    return f"{status}: {message}"


def test_the_cap_counts_from_the_warmed_up_worker() -> None:
    settings = PoolSettings(workers=1, timeout_s=60, memory_mb=512)
    with IsolatedPool(settings, _allocate, _failed, _reserve_address_space) as pool:
        outcomes = dict(pool.map([100, 2048]))
    assert outcomes[100] == "100 MB"  # 1.5 GB warm-up + 100 MB under a 512 MB budget
    assert outcomes[2048].startswith("failed: MemoryError"), outcomes


def _threads(_item: int) -> tuple[int | None, str]:
    import os

    from vault_pipeline.executors.cores import thread_share

    return thread_share(), os.environ["OMP_NUM_THREADS"]


def test_each_worker_is_told_its_share_of_the_cores() -> None:
    from vault_pipeline.executors.cores import available_cores, thread_share

    share = max(1, available_cores() // 2)
    with IsolatedPool(PoolSettings(workers=2, timeout_s=60), _threads, _failed) as pool:
        outcomes = dict(pool.map([1, 2]))
    assert outcomes == {1: (share, str(share)), 2: (share, str(share))}
    assert thread_share() is None  # the parent keeps the libraries' defaults
