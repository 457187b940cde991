"""Atomic file writes: a reader (or a crash) never sees half a file, because every file is
written under a temporary name in the same directory and renamed into place. Tables go
through :mod:`.tables`, which builds on this.

Temporary files and folders are created with the permissions the umask gives (0644 and 0755
under the usual 022), not `tempfile`'s private 0600 and 0700: once renamed into place they
are the tables, exports and reports themselves, which a trainer in another account may need
to read; a user who wants them private sets a stricter umask."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

_ATTEMPTS = 100


def _fresh(parent: Path, prefix: str, suffix: str, make) -> Path:
    for _ in range(_ATTEMPTS):
        candidate = parent / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            make(candidate)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no free temporary name in {parent}")


def fresh_file(parent: Path, prefix: str, suffix: str = "") -> Path:
    """A new, empty file of a unique name in ``parent``, with the umask's permissions."""
    def make(path: Path) -> None:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))

    return _fresh(parent, prefix, suffix, make)


def fresh_dir(parent: Path, prefix: str) -> Path:
    """A new folder of a unique name in ``parent``, with the umask's permissions."""
    return _fresh(parent, prefix, "", lambda path: path.mkdir(0o777))


def read_only(path: Path) -> None:
    """Take the write bits away, keep whatever the umask let others read."""
    path.chmod(path.stat().st_mode & 0o555)


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success only."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = fresh_file(target.parent, f".{target.name}.", ".tmp")
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def atomic_write_bytes(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
