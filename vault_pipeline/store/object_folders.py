"""A folder output on an object-store root (the LanceDB index) checked as a local one is
(:func:`.checksums.check_folder`): after a write, the size and ETag of every object under it
are recorded beside it (``<folder>.objects.json``); before the folder is read or changed, one
listing is compared with that record. An object is never changed in place (LanceDB writes new
files for every version), so an object missing, or one whose size or ETag differs, is damage.

ETags, not hashes: the store computes them as it takes each object, so the check costs one
LIST request and no download, where hashing would read the whole index before every run. A
folder whose write did not finish is marked open and left unjudged, never wrongly damaged."""

from __future__ import annotations

import contextlib
import json
import time
from datetime import UTC, datetime

import fsspec

from vault_pipeline.store.tables import QUARANTINE


def record_path(folder: str) -> str:
    """Where a folder's record lives: beside it (never inside a LanceDB dataset)."""
    return f"{folder.rstrip('/')}.objects.json"


def _listing(fs: fsspec.AbstractFileSystem, folder: str) -> dict[str, dict[str, object]]:
    """Every object under ``folder``: its size and ETag, by its name inside the folder."""
    fs.invalidate_cache(folder)
    found = fs.find(folder, detail=True)
    prefix = folder.rstrip("/") + "/"
    return {key[len(prefix):]: {"size": int(info.get("size") or 0),
                                "etag": str(info.get("ETag") or info.get("etag") or "")}
            for key, info in found.items() if key.startswith(prefix)}


def _saved(fs: fsspec.AbstractFileSystem, folder: str) -> dict | None:
    try:
        saved = json.loads(fs.cat_file(record_path(folder)))
    except (FileNotFoundError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def commit(fs: fsspec.AbstractFileSystem, folder: str) -> None:
    """Record every object of a folder output just written."""
    fs.pipe_file(record_path(folder), json.dumps(
        {"objects": _listing(fs, folder), "verified_at": time.time()}, sort_keys=True).encode())


def open_for_write(fs: fsspec.AbstractFileSystem, folder: str) -> None:
    """Before a folder output is changed in place: its record is marked open."""
    if (saved := _saved(fs, folder)) is not None:
        fs.pipe_file(record_path(folder), json.dumps({**saved, "open": True}).encode())


def check(fs: fsspec.AbstractFileSystem, folder: str) -> str | None:
    """The first problem of a recorded folder (an object missing or altered), or None."""
    saved = _saved(fs, folder)
    if saved is None or saved.get("open") or not isinstance(saved.get("objects"), dict):
        return None
    now = _listing(fs, folder)
    for name, expected in sorted(saved["objects"].items()):
        got = now.get(name)
        if got is None:
            return f"{name} is missing"
        if got != expected:
            return (f"{name} altered: its size or ETag differs from the one recorded when "
                    "written")
    return None


def set_aside(fs: fsspec.AbstractFileSystem, home: str, folder: str, problem: str) -> str:
    """Move a damaged folder's objects and its record under the root's quarantine prefix
    (kept, never deleted, with a note of what was wrong), so the folder is simply missing and
    the next run builds it again; where it went."""
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    relative = folder.rstrip("/")[len(home.rstrip("/")) + 1:]
    moved = f"{home.rstrip('/')}/{QUARANTINE}/{when}/{relative}"
    for name in _listing(fs, folder):
        fs.copy(f"{folder}/{name}", f"{moved}/{name}")
    fs.pipe_file(f"{moved}.problem.txt", f"{problem}\n".encode())
    fs.rm(folder, recursive=True)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(record_path(folder))
    return moved
