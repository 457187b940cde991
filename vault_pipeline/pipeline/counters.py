"""A stage's counters: the one stats object a run updates as it goes (files read, rows
written, requests made) and reports at its end, as the run's figures and the CLI's line read
it. A report names what it counts once, and each count is an attribute that starts at 0::

    @dataclass
    class CitationsReport(Counters, counts=("files", "papers", "citations")):
        '''What one build read and wrote.'''

        unresolved: list[str] = field(default_factory=list)  # what is not a count stays a field

A report deriving from another adds its own counts to those it inherits. Counts take no
place in a positional constructor (they are keyword-only), so a report's other fields keep
theirs."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar


class Counters:
    """The base of a stage's report: the counts its subclass names in ``counts``, as
    keyword-only `int` fields of 0 (the subclass is a dataclass)."""

    COUNTS: ClassVar[tuple[str, ...]] = ()
    """Every count of the report, its bases' first."""

    def __init_subclass__(cls, counts: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if len({*counts, *cls.COUNTS}) < len(counts) + len(cls.COUNTS):
            raise TypeError(f"{cls.__name__} names a count twice: {counts}")
        own = inspect.get_annotations(cls)
        cls.__annotations__ = {**dict.fromkeys(counts, "int"), **own}
        for name in counts:
            setattr(cls, name, dataclasses.field(default=0, kw_only=True))
        cls.COUNTS = (*cls.COUNTS, *counts)

    def counted(self) -> dict[str, int]:
        """The counts by name, in the order the report declares them."""
        return {name: getattr(self, name) for name in self.COUNTS}

    def add(self, other: Counters) -> None:
        """Add ``other``'s counts to these (what one part of the run counted, to the whole's)."""
        for name in other.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    if TYPE_CHECKING:  # the counts are set per subclass, so a checker reads them as ints
        def __getattr__(self, name: str) -> int: ...
