"""One request clock per service, shared by every thread and process of a vault.

arXiv asks for one request every three seconds over one connection, from everything a
harvester runs at once. A Dagster concurrency pool keeps runs of the instance from starting
arXiv steps together, but a CLI harvest, a sensor tick or a second run can still overlap, so
the spacing is enforced here: a thread lock plus a file lock (``filelock``) around each request,
and a small JSON file under the data root holding when the last request ended and, after a
``Retry-After``, the earliest time anyone may ask again. The lock is held for the whole request,
body included, so at most one request per service is in flight from the whole vault; the
polite client's total deadline per request (``PoliteClient._read_by_deadline``) bounds how
long that can be.

Written by hand because no library found does cross-process spacing with a shared
"not before" time that a server's Retry-After can push back."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from vault_pipeline.errors import VaultError
from vault_pipeline.store.atomic import atomic_write_bytes

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_REGISTRY = threading.Lock()


def _thread_lock(path: Path) -> threading.Lock:
    with _REGISTRY:
        return _THREAD_LOCKS.setdefault(str(path), threading.Lock())


class SharedRateLimiter:
    """Spacing of at least ``interval_s`` between the end of one request and the start of the
    next, for everyone using the same ``state_dir`` and ``name``."""

    def __init__(self, state_dir: Path, name: str, interval_s: float,
                 lock_timeout_s: float = 3600.0,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep):
        state_dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.interval_s = interval_s
        self.state_path = state_dir / f"{name}.clock.json"
        self._file_lock = FileLock(state_dir / f"{name}.lock", timeout=lock_timeout_s)
        self._thread_lock = _thread_lock(self.state_path)
        self._clock = clock
        self._sleep = sleep
        self._deferred: float | None = None
        self.waited_s = 0.0

    def _read(self) -> dict[str, float]:
        try:
            return json.loads(self.state_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold the service's only request slot: wait for the spacing, run the request,
        record when it ended (and any "not before" time set with :meth:`defer`)."""
        with self._thread_lock:
            try:
                self._file_lock.acquire()
            except Timeout:
                raise VaultError(f"{self.name}: another harvest has held the request slot "
                                 "too long (stale lock?)") from None
            try:
                state = self._read()
                ready = max(state.get("last_end", 0.0) + self.interval_s,
                            state.get("not_before", 0.0))
                wait = ready - self._clock()
                if wait > 0:
                    self.waited_s += wait
                    self._sleep(wait)
                self._deferred = None
                try:
                    yield
                finally:
                    now = self._clock()
                    payload = {"last_end": now,
                               "not_before": max(state.get("not_before", 0.0),
                                                 now + (self._deferred or 0.0))}
                    atomic_write_bytes(self.state_path, json.dumps(payload).encode())
            finally:
                self._file_lock.release()

    def defer(self, seconds: float) -> None:
        """Inside a slot: nobody asks this service again for ``seconds`` (Retry-After)."""
        self._deferred = max(self._deferred or 0.0, seconds)
