"""Folder outputs (the LanceDB index): recorded when written, checked before they are read or
changed, on a local root and on an object store alike, so a stage never branches on where
the root is. A local folder is judged by its files' checksums (:mod:`.checksums`). On an
object store, the size and ETag of every object under it are recorded beside it
(``<folder>.objects.json``) and one listing is compared with that record: an object is
never changed in place (LanceDB writes new files for every version), so an object missing,
or one whose size or ETag differs, is damage.

ETags, not hashes: the store computes them as it takes each object, so the check costs one
LIST request and no download, where hashing would read the whole index before every run. A
folder whose write did not finish is marked open and left unjudged, never wrongly damaged.
Light on purpose (no Polars, no table store): a local search checks its index through it."""

from __future__ import annotations

import contextlib
import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from vault_pipeline.store import checksums
from vault_pipeline.store.layout import QUARANTINE
from vault_pipeline.store.paths import VaultPaths

if TYPE_CHECKING:
    import fsspec


def location(paths: VaultPaths, folder: str) -> tuple[fsspec.AbstractFileSystem, str]:
    """The filesystem and path of a folder output (a path under an object-store root)."""
    import fsspec

    assert paths.remote is not None
    return fsspec.core.url_to_fs(f"{paths.remote}/{folder}", use_listings_cache=False)


def problem(paths: VaultPaths, folder: str, full: bool = False) -> str | None:
    """The first problem of a recorded folder output (a file or object missing or
    altered since it was written), or None."""
    if not paths.remote:
        return checksums.check_folder(paths.home / folder, full=full)
    fs, path = location(paths, folder)
    saved = _saved(fs, path)
    if saved is None or saved.get("open") or not isinstance(saved.get("objects"), dict):
        return None
    now = _listing(fs, path)
    for name, expected in sorted(saved["objects"].items()):
        got = now.get(name)
        if got is None:
            return f"{name} is missing"
        if got != expected:
            return (f"{name} altered: its size or ETag differs from the one recorded when "
                    "written")
    return None


def open_for_write(paths: VaultPaths, folder: str) -> None:
    """Before a folder output is changed in place: its record is marked open."""
    if not paths.remote:
        checksums.open_folder(paths.home / folder)
        return
    fs, path = location(paths, folder)
    if (saved := _saved(fs, path)) is not None:
        fs.pipe_file(record_path(path), json.dumps({**saved, "open": True}).encode())


def commit(paths: VaultPaths, folder: str) -> None:
    """Record every file or object of a folder output just written."""
    if not paths.remote:
        checksums.commit_folder(paths.home / folder)
        return
    fs, path = location(paths, folder)
    fs.pipe_file(record_path(path), json.dumps(
        {"objects": _listing(fs, path), "verified_at": time.time()}, sort_keys=True).encode())


def set_aside_objects(paths: VaultPaths, folder: str, problem: str) -> str:
    """Move a damaged folder's objects and its record under the root's quarantine prefix
    (kept, never deleted, with a note of what was wrong), so the folder is simply missing and
    the next run builds it again; where it went, under the root. (A local folder is moved
    whole by :func:`.repair.quarantine`.)"""
    fs, path = location(paths, folder)
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    home = path[:-len(folder)].rstrip("/")
    moved = f"{QUARANTINE}/{when}/{folder}"
    for name in _listing(fs, path):
        fs.copy(f"{path}/{name}", f"{home}/{moved}/{name}")
    fs.pipe_file(f"{home}/{moved}.problem.txt", f"{problem}\n".encode())
    fs.rm(path, recursive=True)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(record_path(path))
    return moved


def record_path(path: str) -> str:
    """Where an object folder's record lives: beside it (never inside a LanceDB dataset)."""
    return f"{path.rstrip('/')}.objects.json"


def _listing(fs: fsspec.AbstractFileSystem, path: str) -> dict[str, dict[str, object]]:
    """Every object under ``path``: its size and ETag, by its name inside the folder."""
    fs.invalidate_cache(path)
    prefix = path.rstrip("/") + "/"
    return {key[len(prefix):]: {"size": int(info.get("size") or 0),
                                "etag": str(info.get("ETag") or info.get("etag") or "")}
            for key, info in fs.find(path, detail=True).items() if key.startswith(prefix)}


def _saved(fs: fsspec.AbstractFileSystem, path: str) -> dict | None:
    try:
        saved = json.loads(fs.cat_file(record_path(path)))
    except (FileNotFoundError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None
