"""The CLI's one-line errors: a user error (a `VaultError`, a bad raw file) raised inside a Dagster
run is printed as one line naming the cause, without Dagster's traceback and type dumps."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


def _root_cause(error):
    """The innermost error of a step failure (the user's VaultError, not Dagster's wrapper)."""
    while error is not None and error.cause is not None:
        error = error.cause
    return error


USER_ERRORS = {"VaultError", "RawFormatError"}


def _user_error(error) -> str | None:
    """The message of a VaultError at the root of a failure, else None."""
    root = _root_cause(error)
    if root is None or root.cls_name not in USER_ERRORS:
        return None
    return root.message.strip().split(": ", 1)[-1]


def _failure_line(error) -> str:
    """One line for a step failure: a user error's message, else the innermost error."""
    root = _root_cause(error)
    return _user_error(error) or (root.message.strip().splitlines()[0] if root else "")


def _shorten_user_errors(record: logging.LogRecord) -> bool:
    """Cut a step or run failure caused by a VaultError to its first line (no stack)."""
    event = getattr(record, "dagster_meta", {}).get("dagster_event")
    error = getattr(getattr(event, "event_specific_data", None), "error", None)
    if error is not None and _user_error(error) is not None:
        record.msg = str(record.msg).split("\n", 1)[0]
        record.args = ()
    return True


class _OneLineLogger(logging.Logger):
    """Dagster's console logger, without the stack trace of a user error."""

    def __init__(self, name: str, level: int | str = logging.NOTSET) -> None:
        super().__init__(name, level)
        self.addFilter(_shorten_user_errors)


@contextlib.contextmanager
def _user_errors_in_one_line() -> Iterator[None]:
    """Dagster builds its console logger from the logging module's logger class."""
    previous = logging.getLoggerClass()
    logging.setLoggerClass(_OneLineLogger)
    try:
        yield
    finally:
        logging.setLoggerClass(previous)
