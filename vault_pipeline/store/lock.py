"""The vault lock: one run that writes tables at a time. Two runs on one vault would delete
each other's scratch (the documents journal, the ideas checkpoints) and overwrite each other's
tables; the second one waits for the lock or refuses with who holds it.

A file lock (``filelock``) under the data root, so it holds across processes: CLI runs, the
Dagster UI's runs and their step processes. Reentrant within a process, so a CLI run that
holds it can execute steps that ask for it again. On an object-store root the file lock (in
the local cache) is followed by the root's lock object (:mod:`.object_lock`), which excludes
writers on other machines."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

from filelock import FileLock, Timeout

from vault_pipeline.errors import VaultError
from vault_pipeline.store.atomic import atomic_write_bytes
from vault_pipeline.store.paths import VaultPaths

LOCK_NAME = ".vault.lock"
HOLDER_NAME = ".vault.lock.json"  # who holds it: shown to the run that cannot get it

_held: dict[str, int] = {}
_guard = threading.Lock()


def _holder(paths: VaultPaths) -> str:
    try:
        info = json.loads((paths.home / HOLDER_NAME).read_text())
    except (OSError, json.JSONDecodeError):
        return "another run"
    command = info.get("command", "another run")
    return f"{command} (pid {info.get('pid')}, since {info.get('since')})"


@contextlib.contextmanager
def vault_lock(paths: VaultPaths, wait_s: float = 0, command: str | None = None
               ) -> Iterator[None]:
    """Hold the vault lock; wait up to ``wait_s`` seconds, then a VaultError naming the
    holder."""
    key = str(paths.home)
    with _guard:
        if _held.get(key):
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _guard:
                _held[key] -= 1
        return
    lock = FileLock(paths.home / LOCK_NAME, timeout=wait_s, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        waited = f" after waiting {wait_s:g} s" if wait_s else ""
        raise VaultError(f"the vault at {paths.home} is in use by {_holder(paths)}{waited}; "
                         "wait for it to finish, or pass --wait SECONDS") from None
    command = command or " ".join(["vault", *sys.argv[1:2]])
    remote = None
    try:
        if paths.remote:
            from vault_pipeline.store.object_lock import ObjectLock

            remote = ObjectLock(paths.remote, command)
            remote.acquire(wait_s)
        with _guard:
            _held[key] = 1
        holder = {"pid": os.getpid(), "since": datetime.now(UTC).isoformat(timespec="seconds"),
                  "command": command}
        atomic_write_bytes(paths.home / HOLDER_NAME, json.dumps(holder).encode())
        yield
        if remote is not None:
            remote.release()
            if remote.was_lost:
                raise VaultError(f"the writer lock of {paths.remote} was taken over by another "
                                 "writer during this run (its heartbeat stopped for too long): "
                                 "check `vault status` and run again")
    finally:
        with _guard:
            _held.pop(key, None)
        (paths.home / HOLDER_NAME).unlink(missing_ok=True)
        if remote is not None:
            remote.release()  # idempotent: after an error, the lock object goes too
        lock.release()
