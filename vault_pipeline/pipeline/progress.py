"""Progress of long work, reported through a callback so that the library holds no UI code:
a harvest or a stage calls ``progress(done, total, note)``; whoever runs it (the CLI's bars,
nothing in the Dagster UI) decides what to show.

Stages run inside Dagster, which the CLI calls: the CLI installs one sink for the process
(:func:`reporting`), and an asset hands its stage :func:`for_stage`'s callback."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

Progress = Callable[[int, int | None, str], None]
"""Called with (units just done, total units if known, a short note) as work advances."""

Sink = Callable[[str, int, int | None, str], None]
"""Receives (stage, units just done, total if known, note) from every stage."""

_sink: Sink | None = None


def no_progress(_done: int, _total: int | None, _note: str) -> None:
    return None


@contextlib.contextmanager
def reporting(sink: Sink) -> Iterator[None]:
    """Send the progress of every stage run in this process to ``sink`` meanwhile."""
    global _sink
    previous, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = previous


def for_stage(stage: str) -> Progress:
    """The callback a stage reports through: to the sink installed when it is called, or
    nowhere."""
    def report(done: int, total: int | None, note: str) -> None:
        if _sink is not None:
            _sink(stage, done, total, note)
    return report
