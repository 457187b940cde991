"""The executor interface the heavy stages run their per-document functions through, and
the local executor (this process). A stage hands over plain functions of a batch of items
(a list in, one result per item out, in order); it never learns where they ran."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from vault_pipeline.errors import VaultError

T = TypeVar("T")
R = TypeVar("R")
BatchFunction = Callable[[list[T]], list[R]]
# Builds a batch function once per worker (a model loaded once, then applied to batches).
ModelFactory = Callable[[], BatchFunction]


class Executor(Protocol):
    name: str
    distributed: bool  # False: the stage keeps its own local path (process pools)
    batch_size: int  # items per batch when the stage does not say

    def map_batches(self, function: BatchFunction, items: Sequence[T],
                    batch_size: int | None = None) -> Iterator[tuple[T, R]]:
        """Apply a batch function to every item; yield (item, result) as batches finish."""
        ...

    def map_model(self, factory: ModelFactory, items: Sequence[T],
                  batch_size: int | None = None) -> Iterator[tuple[T, R]]:
        """Like :meth:`map_batches`, with the function built once per worker (actors)."""
        ...


def checked(function: BatchFunction, batch: list[T]) -> list[R]:
    """A batch's results; a function returning the wrong number of them is a bug named in
    one line, never a silent misalignment."""
    results = list(function(batch))
    if len(results) != len(batch):
        raise VaultError(f"a batch function returned {len(results)} results for "
                         f"{len(batch)} items")
    return results


class LocalExecutor:
    """Batches in this process, one after the other."""

    name = "local"
    distributed = False

    def __init__(self, batch_size: int = 8) -> None:
        self.batch_size = batch_size

    def map_batches(self, function: BatchFunction, items: Sequence[T],
                    batch_size: int | None = None) -> Iterator[tuple[T, R]]:
        size = batch_size or self.batch_size
        for start in range(0, len(items), size):
            batch = list(items[start:start + size])
            yield from zip(batch, checked(function, batch), strict=True)

    def map_model(self, factory: ModelFactory, items: Sequence[T],
                  batch_size: int | None = None) -> Iterator[tuple[T, R]]:
        if not items:
            return iter(())
        return self.map_batches(factory(), items, batch_size=batch_size)
