"""What converting one document yields, and the statuses a row can carry."""

from __future__ import annotations

from dataclasses import dataclass

# Statuses of a conversion (and of a `documents` row).
OK = "ok"
TIMEOUT = "timeout"  # the worker ran past the per-document limit and was killed
CRASHED = "crashed"  # the worker died (segfault, abort, killed by the OS)
ENCRYPTED = "encrypted"  # needs a password
CORRUPT = "corrupt"  # cannot be parsed, even after repair
EMPTY = "empty"  # zero bytes, no pages, or no extractable text
TOO_LARGE = "too_large"  # over a size, page, member or memory limit
UNSUPPORTED = "unsupported"  # an e-print without a LaTeX main file (or not TeX at all)
FAILED = "failed"  # the converter raised an unexpected error (message kept)
# Row-only statuses.
NO_SOURCE = "no_source"  # no PDF or e-print in the raw zone: abstract only
UNIDENTIFIED = "unidentified"  # converted, but no arXiv id in its name or origin

SUCCESS = frozenset({OK, UNIDENTIFIED})
TRANSIENT = frozenset({TIMEOUT, CRASHED, FAILED})
"""Failures that another try may not repeat (a busy machine, a limit since raised, a bug
since fixed): retried within a budget, unlike the verdicts on the file itself."""


class ConversionError(Exception):
    """A document that cannot be converted, with the status that says why."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Converted:
    """Raw converter output, before cleaning."""

    markdown: str
    n_pages: int | None = None
    hidden_chars: int = 0
    notes: tuple[str, ...] = ()
    clues: str | None = None  # what the first page says the paper is (identify.py), as JSON


@dataclass(frozen=True)
class Conversion:
    """One document converted (or not), cleaned and truncated: what a worker sends back."""

    status: str
    error: str | None = None
    text: str | None = None
    references: str | None = None
    appendix: str | None = None
    n_pages: int | None = None
    n_chars: int | None = None
    truncated: bool = False
    hidden_chars: int = 0
    notes: str | None = None
    duration_ms: int = 0
    identifiers: str | None = None  # the converted file's clues (identify.py), as JSON

    @classmethod
    def failure(cls, status: str, error: str, duration_ms: int = 0) -> Conversion:
        return cls(status=status, error=error, duration_ms=duration_ms)
