"""Checksums of the derived files (each table's Parquet file, the files of a folder output
such as the LanceDB index), recorded when they are written and checked when they are read, so
a damaged file is found before it is served or built upon.

A file's record is a sidecar beside it (``.<name>.sum.json``): its sha256 and the stat it had
when last hashed (size, mtime, ctime, inode). A read compares the stat first: a file whose
stat is unchanged and whose last full hash is recent is trusted without reading it (the raw
zone checks its files' sizes on every read and hashes them weekly; this is at least that,
and the ctime catches a rewrite that kept the size and the mtime). Otherwise it is hashed:

- the recorded sha256 (or, while a write is being committed, the previous one): intact;
- another sha256 with the recorded size and mtime: damaged (bytes changed in place);
- another sha256 after a rewrite (size or mtime changed: a file written by another tool):
  adopted if it is a whole, readable file (``valid``), else damaged.

A folder's record lists every file it held when written; a folder without a record (written
before checksums, or by a write that did not finish) is not judged. Only the standard library
is used here: `vault sql` and `vault status` check tables without loading Polars or Arrow."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from vault_pipeline.store.atomic import atomic_path

SUFFIX = ".sum.json"
FULL_CHECK_S = 7 * 24 * 3600
"""A trusted file is hashed again when its last full check is older than this (the raw
zone's period)."""
MAGIC = b"PAR1"

Validator = Callable[[Path], str | None]
"""A file's problem when it is not a whole, readable file of its kind; None when it is."""

_trusted: dict[str, tuple[int, int, int, int]] = {}  # path -> stat last found intact here


def sidecar(path: Path) -> Path:
    """Where a file's (or a folder's) record lies: a dot file beside it."""
    return path.with_name(f".{path.name}{SUFFIX}")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stat(path: Path) -> dict[str, int]:
    info = path.stat()
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "ctime_ns": info.st_ctime_ns,
            "ino": info.st_ino}


def _key(stat: dict[str, int]) -> tuple[int, int, int, int]:
    return stat["size"], stat["mtime_ns"], stat["ctime_ns"], stat["ino"]


def _load(file: Path) -> dict | None:
    try:
        loaded = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _save(file: Path, record: dict) -> None:
    """Written atomically (a temporary file renamed over the record)."""
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
        os.replace(tmp, file)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only vault: the record is refreshed next time


def parquet_shape(path: Path) -> str | None:
    """A Parquet file's frame: the magic at both ends and a footer that fits (a cut file
    fails this; it reads 12 bytes)."""
    size = path.stat().st_size
    if size < 12:
        return f"{size} bytes, too short for Parquet"
    with path.open("rb") as handle:
        head = handle.read(4)
        handle.seek(size - 8)
        tail = handle.read(8)
    footer = int.from_bytes(tail[:4], "little")
    if head != MAGIC or tail[4:] != MAGIC or footer > size - 12:
        return f"not a whole Parquet file ({size:,} bytes: truncated or overwritten)"
    return None


def begin(path: Path, new: Path) -> str:
    """Before ``new`` is renamed onto ``path``: record its sha256 beside the previous one, so
    a crash between the two leaves a record that accepts whichever file is there."""
    sha = sha256_file(new)
    old = _load(sidecar(path)) or {}
    accept = [sha, *[s for s in old.get("accept", [old.get("sha256")]) if s and s != sha][:1]]
    _save(sidecar(path), {"sha256": sha, "accept": accept})
    return sha


def commit(path: Path, sha: str) -> None:
    """After the rename: the record of the file now at ``path``."""
    stat = _stat(path)
    _save(sidecar(path), {"sha256": sha, "accept": [sha], **stat, "verified_at": time.time()})
    _trusted[str(path)] = _key(stat)


@contextlib.contextmanager
def recorded_path(target: Path) -> Iterator[Path]:
    """:func:`~vault_pipeline.store.atomic.atomic_path` with the file's checksum recorded
    (:func:`begin` before the rename, :func:`commit` after)."""
    with atomic_path(target) as tmp:
        yield tmp
        sha = begin(target, tmp)
    commit(target, sha)


def record(path: Path) -> None:
    """Record a file written in place (hashed now)."""
    commit(path, sha256_file(path))


def check(path: Path, valid: Validator = parquet_shape, full: bool = False,
          adopt: bool = True) -> str | None:
    """The problem of a recorded file, or None when it is intact or absent (see the module
    docstring); ``full`` hashes it whatever its stat; ``adopt`` records a valid rewrite (a
    reader that cannot judge a rewrite fully passes False and lets the store decide)."""
    try:
        stat = _stat(path)
    except FileNotFoundError:
        return None
    if not full and _trusted.get(str(path)) == _key(stat):
        return None
    saved = _load(sidecar(path))
    if saved is None or "sha256" not in saved:  # never recorded: judged by its frame
        problem = valid(path)
        if problem is None and adopt:
            record(path)
        return problem
    recent = time.time() - saved.get("verified_at", 0) < FULL_CHECK_S
    if not full and recent and all(saved.get(k) == v for k, v in stat.items()):
        _trusted[str(path)] = _key(stat)
        return None
    sha = sha256_file(path)
    if sha in saved.get("accept", [saved["sha256"]]):
        commit(path, sha)
        return None
    if (saved.get("size"), saved.get("mtime_ns")) == (stat["size"], stat["mtime_ns"]):
        return "content altered: its sha256 differs from the one recorded when it was written"
    problem = valid(path)
    if problem is None and adopt:
        commit(path, sha)  # rewritten whole by another tool: a new version, not damage
    return problem


def forget(path: Path) -> None:
    """Drop a file's record (the file was moved away)."""
    _trusted.pop(str(path), None)
    sidecar(path).unlink(missing_ok=True)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def commit_folder(folder: Path) -> None:
    """Record every file of a folder output just written (a file whose stat is the one
    recorded before is not hashed again: LanceDB never rewrites a data file)."""
    before = (_load(sidecar(folder)) or {}).get("files") or {}
    files = {}
    for path in _files(folder):
        name, stat = str(path.relative_to(folder)), _stat(path)
        old = before.get(name) or {}
        same = old.get("sha256") and all(old.get(k) == v for k, v in stat.items())
        files[name] = {"sha256": old["sha256"] if same else sha256_file(path), **stat}
    _save(sidecar(folder), {"files": files, "verified_at": time.time()})


def open_folder(folder: Path) -> None:
    """Before a folder output is changed in place: its record is marked open, so a write
    that does not finish leaves the folder unjudged, never wrongly damaged."""
    saved = _load(sidecar(folder))
    if saved is not None:
        _save(sidecar(folder), {**saved, "open": True})


def check_folder(folder: Path, full: bool = False) -> str | None:
    """The first problem of a recorded folder (a file missing or altered), or None."""
    saved = _load(sidecar(folder))
    if (saved is None or saved.get("open") or not folder.is_dir()
            or not isinstance(saved.get("files"), dict)):
        return None
    due = full or time.time() - saved.get("verified_at", 0) >= FULL_CHECK_S
    changed = False
    for name, expected in saved["files"].items():
        file = folder / name
        try:
            stat = _stat(file)
        except FileNotFoundError:
            return f"{name} is missing"
        if not due and all(expected.get(k) == v for k, v in stat.items()):
            continue
        if sha256_file(file) != expected.get("sha256"):
            return f"{name} altered: its sha256 differs from the one recorded when written"
        expected.update(stat)
        changed = True
    if changed or due:
        _save(sidecar(folder), {**saved, "verified_at": time.time()})
    return None
