"""Damaged derived files set aside before a run, so the run rebuilds them from the raw zone:
every table's file and every folder output with a record (the LanceDB index) is checked
against its checksums (:mod:`.checksums`); a damaged one is moved under
``quarantine/<when>/`` with a note of what was wrong (kept, never deleted), and is then simply
missing, which the fingerprints read as "build it again". On an object-store root a table
is set aside as its damage is read (:meth:`.tables.TableStore._set_aside`), and a folder
output by its objects' listing (:mod:`.folder_outputs`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from vault_pipeline.store import checksums, folder_outputs
from vault_pipeline.store.layout import QUARANTINE, local_tables
from vault_pipeline.store.paths import VaultPaths


@dataclass(frozen=True)
class Quarantined:
    """A derived file found damaged: where it was, what was wrong, where it went."""

    path: str
    problem: str
    moved_to: PurePosixPath | Path  # under the root

    def __str__(self) -> str:
        return (f"{self.path} was damaged ({self.problem}): moved to {self.moved_to}; "
                "`vault materialize` builds it again from the raw zone")


def quarantine(paths: VaultPaths, target: Path, problem: str) -> Quarantined:
    """Move a damaged file or folder (and its record) under the quarantine folder."""
    relative = target.relative_to(paths.home)
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    moved = paths.home / QUARANTINE / when / relative
    moved.parent.mkdir(parents=True, exist_ok=True)
    os.replace(target, moved)
    record = checksums.sidecar(target)
    if record.exists():
        os.replace(record, checksums.sidecar(moved))
    checksums.forget(target)
    moved.with_name(f"{moved.name}.problem.txt").write_text(f"{problem}\n", encoding="utf-8")
    return Quarantined(str(relative), problem, moved.relative_to(paths.home))


def damaged(paths: VaultPaths, folders: Iterable[str] = (), full: bool = False
            ) -> list[tuple[Path, str]]:
    """Every damaged table file and folder output (paths under the root), with its problem
    (``full``: every file hashed, as `vault verify` does). On an object-store root tables
    are checked as they are read."""
    if paths.remote:
        return []
    found = []
    store = paths.store
    for name, file in local_tables(paths.tables).items():
        if (problem := store.problem(name, full=full)) is not None:
            found.append((file, problem))
    for folder in folders:
        if (problem := folder_outputs.problem(paths, folder, full=full)) is not None:
            found.append((paths.home / folder, problem))
    return found


def quarantine_damaged(paths: VaultPaths, folders: Iterable[str] = ()) -> list[Quarantined]:
    """Move every damaged table and folder output aside (see :func:`damaged`); on an
    object-store root, every damaged folder output (its tables are set aside as read)."""
    if paths.remote:
        return [found for folder in folders
                if (found := quarantine_folder(paths, folder)) is not None]
    return [quarantine(paths, target, problem) for target, problem in damaged(paths, folders)]


def quarantine_folder(paths: VaultPaths, folder: str) -> Quarantined | None:
    """Move one folder output (a path under the root) aside if it is damaged."""
    if (problem := folder_outputs.problem(paths, folder)) is None:
        return None
    if not paths.remote:
        return quarantine(paths, paths.home / folder, problem)
    moved = folder_outputs.set_aside_objects(paths, folder, problem)
    return Quarantined(folder, problem, PurePosixPath(moved))


def set_aside_damaged_objects(paths: VaultPaths, folders: Iterable[str] = ()) -> list[str]:
    """On an object-store root, every table fetched and hashed and every folder output's
    listing checked, a damaged one set aside (one line each); nothing on a local root, whose
    files :func:`damaged` checks."""
    if not paths.remote:
        return []
    store = paths.store
    tables = [line for name in store.names() if (line := store.set_aside_if_damaged(name))]
    return tables + [str(found) for found in quarantine_damaged(paths, folders)]
