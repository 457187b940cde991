"""The Ray executor: the same batch functions the local path runs, as Ray Data pipelines
(``from_items`` → ``map_batches``) on a Ray cluster. Plain functions run as Ray tasks;
model-holding ones (embedders, LLM engines) in a pool of actors that load the model once.

Nothing lost, nothing duplicated: a task whose worker dies (the OS killer, a lost node) is
run again by Ray (``max_retries``; an actor is restarted, ``max_restarts``), and its output
block is produced once; the driver still checks that every item came back exactly once
and names the first one that did not. Items and results travel pickled, one row each,
so any picklable task and result (dataclasses, arrays) goes through unchanged."""

from __future__ import annotations

import functools
import math
import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from vault_pipeline.errors import VaultError
from vault_pipeline.executors.base import BatchFunction, ModelFactory, R, T, checked
from vault_pipeline.executors.settings import ExecutorSettings

INSTALL = "pip install 'research-idea-vault[ray]'"


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise VaultError(f"the ray executor needs Ray Data: {INSTALL}") from None
    return ray


def _apply(function: BatchFunction, batch: pa.Table) -> pa.Table:
    items = [pickle.loads(b) for b in batch.column("item").to_pylist()]
    results = checked(function, items)
    blobs = pa.array([pickle.dumps(r) for r in results], pa.large_binary())
    return pa.Table.from_pydict({"i": batch.column("i"), "result": blobs})


class _ModelBatches:
    """A Ray Data actor: builds the batch function once (loads the model), then applies it."""

    def __init__(self, factory: ModelFactory) -> None:
        self.function = factory()

    def __call__(self, batch: pa.Table) -> pa.Table:
        return _apply(self.function, batch)


def collect(items: Sequence[T], batches: Iterable[pa.Table]) -> Iterator[tuple[T, R]]:
    """(item, result) per returned row; a duplicate or a missing item is a VaultError."""
    seen: set[int] = set()
    for batch in batches:
        for i, blob in zip(batch.column("i").to_pylist(), batch.column("result").to_pylist(),
                           strict=True):
            if i in seen:
                raise VaultError(f"item {i} of {len(items)} came back twice from Ray")
            seen.add(i)
            yield items[i], pickle.loads(blob)
    if len(seen) != len(items):
        missing = min(set(range(len(items))) - seen)
        raise VaultError(f"{len(items) - len(seen)} of {len(items)} items never came back "
                         f"from Ray (first: item {missing})")


class RayExecutor:
    """Ray Data on the configured cluster (connected on first use)."""

    name = "ray"
    distributed = True

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings
        self.batch_size = settings.batch_size

    def _dataset(self, items: Sequence[T], batch_size: int) -> Any:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.settings.ray_address, include_dashboard=False,
                     log_to_driver=False)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        rows = [{"i": i, "item": pickle.dumps(item)} for i, item in enumerate(items)]
        return ray.data.from_items(rows, override_num_blocks=max(
            1, math.ceil(len(items) / batch_size)))

    def map_batches(self, function: BatchFunction, items: Sequence[T],
                    batch_size: int | None = None) -> Iterator[tuple[T, R]]:
        if not items:
            return iter(())
        batch_size = batch_size or self.batch_size
        out = self._dataset(items, batch_size).map_batches(
            functools.partial(_apply, function), batch_size=batch_size,
            batch_format="pyarrow", zero_copy_batch=True,
            max_retries=self.settings.max_retries, retry_exceptions=False)
        return collect(items, out.iter_batches(batch_size=None, batch_format="pyarrow"))

    def map_model(self, factory: ModelFactory, items: Sequence[T],
                  batch_size: int | None = None) -> Iterator[tuple[T, R]]:
        if not items:
            return iter(())
        batch_size = batch_size or self.batch_size
        retries = self.settings.max_retries
        out = self._dataset(items, batch_size).map_batches(
            _ModelBatches, fn_constructor_args=(factory,), batch_size=batch_size,
            batch_format="pyarrow", zero_copy_batch=True,
            compute=_ray().data.ActorPoolStrategy(size=min(
                self.settings.actors, max(1, math.ceil(len(items) / batch_size)))),
            num_gpus=self.settings.gpus_per_actor or None,
            max_restarts=retries, max_task_retries=retries)
        return collect(items, out.iter_batches(batch_size=None, batch_format="pyarrow"))
