"""The CLI's progress bars (rich), shared by the harvests and the long stages of a
materialization (documents, ideas, index), which report through `progress.py`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from vault_pipeline.pipeline import progress


def bars(console: Console | None = None, transient: bool = False) -> Progress:
    """A bar per task: what it does, the bar, done/total, time so far."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=transient)


@contextlib.contextmanager
def stage_bars(console: Console | None = None) -> Iterator[Progress]:
    """A bar for each stage that reports while this block runs (on stderr; gone when the
    block ends, the stages' own summary lines stay); nothing on a non-terminal."""
    with bars(console or Console(stderr=True), transient=True) as shown:
        tasks: dict[str, int] = {}

        def sink(stage: str, done: int, total: int | None, note: str) -> None:
            if stage not in tasks:
                tasks[stage] = shown.add_task(note[:60], total=total)
            shown.update(tasks[stage], advance=done, total=total, description=note[:60])

        with progress.reporting(sink):
            yield shown
