"""The writer lock of an object-store root: two machines writing one ``s3://`` root would
overwrite each other's tables, and a local file lock cannot see the other machine. The lock
is one object, ``<root>/.vault.lock.json``, created with a conditional put (S3
``If-None-Match: *``), so of two writers that start at once exactly one creates it; the
other reads who holds it and waits or refuses in one line.

The holder rewrites the object every ``heartbeat_s`` (``If-Match`` its own ETag, so it
notices when another writer took the lock over, and from then on the table store refuses
its writes under that root) and deletes it when done (``If-Match``
again, never someone else's lock). A lock whose heartbeat is older than ``stale_after_s``
belongs to a run that died without releasing it: the next writer replaces it, again with
``If-Match`` the ETag it read, so of two writers taking over one stale lock one wins.

Conditional writes go through s3fs (``pipe_file(mode="create")`` sends ``If-None-Match``,
extra keywords reach ``PutObject``); the conditional delete calls the S3 client through
s3fs's ``call_s3``, because fsspec's ``rm_file`` passes no condition. Stores without
conditional writes (``memory://``, fsspec protocols other than S3) get the same protocol
as check-then-put, which excludes sequential writers but not a race of two."""

from __future__ import annotations

import getpass
import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import fsspec

from vault_pipeline.errors import VaultError
from vault_pipeline.store.object_store import conditional, precondition_failed

LOCK_KEY = ".vault.lock.json"
HEARTBEAT_S = 30.0
STALE_AFTER_S = 300.0  # ten missed heartbeats: the holder is gone (clocks within a minute)
POLL_S = 1.0

log = logging.getLogger(__name__)

_lost_roots: set[str] = set()  # roots whose lock this process held and lost: no more writes


def refuse_if_lost(url: str) -> None:
    """Called before a table goes up: a VaultError when ``url`` lies under a root whose
    writer lock this process lost to another writer (their writes would interleave)."""
    for root in _lost_roots:
        if url == root or url.startswith(f"{root}/"):
            raise VaultError(f"the writer lock of {root} was taken over by another writer "
                             "(this run's heartbeat stopped for too long): nothing more is "
                             "written; check `vault status` and run again")


class LockLost(Exception):
    """The lock object is no longer ours: another writer took it over (or removed it)."""


@dataclass(frozen=True)
class Holder:
    """What the lock object says about the run that holds it."""

    owner: str
    host: str
    pid: int
    command: str
    started: str
    heartbeat: float  # seconds since the epoch, by the holder's clock
    token: str

    def describe(self, now: float) -> str:
        age = max(0.0, now - self.heartbeat)
        return (f"{self.command} (owner {self.owner}@{self.host}, pid {self.pid}, since "
                f"{self.started}, heartbeat {age:.0f} s ago)")

    @classmethod
    def parse(cls, body: bytes) -> Holder | None:
        try:
            data = json.loads(body)
            return cls(str(data["owner"]), str(data["host"]), int(data["pid"]),
                       str(data["command"]), str(data["started"]), float(data["heartbeat"]),
                       str(data["token"]))
        except (ValueError, KeyError, TypeError):
            return None


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


class ObjectLock:
    """The lock object of one root; :meth:`acquire`, then :meth:`release` (or use
    :func:`held`). ``clock`` is injectable so tests need not wait for a lock to go stale."""

    def __init__(self, root_url: str, command: str, stale_after_s: float = STALE_AFTER_S,
                 heartbeat_s: float = HEARTBEAT_S, clock=time.time) -> None:
        self.root = root_url.rstrip("/")
        self.url = f"{self.root}/{LOCK_KEY}"
        self.fs, self.path = fsspec.core.url_to_fs(self.url, use_listings_cache=False)
        self.conditional = conditional(self.fs)
        self.command, self.stale_after_s, self.heartbeat_s = command, stale_after_s, heartbeat_s
        self.clock = clock
        self.holder = Holder(_user(), socket.gethostname(), os.getpid(), command,
                             datetime.now(UTC).isoformat(timespec="seconds"), clock(),
                             uuid.uuid4().hex)
        self.etag: str | None = None
        self._lost = False
        self._holding = False
        self._stop = threading.Event()
        self._beating: threading.Thread | None = None

    # the conditional operations -----------------------------------------------------------

    def _body(self) -> bytes:
        return json.dumps(asdict(self.holder), sort_keys=True).encode()

    def _etag_of(self, out: object) -> str:
        if isinstance(out, dict) and out.get("ETag"):
            return str(out["ETag"])
        return str(self.fs.info(self.path).get("ETag") or self.holder.token)

    def _create(self) -> bool:
        """Put the lock object if there is none; False when another writer has one."""
        try:
            out = self.fs.pipe_file(self.path, self._body(), mode="create")
        except FileExistsError:
            return False
        except OSError as exc:
            if precondition_failed(exc):
                return False
            raise
        self.etag = self._etag_of(out)
        return True

    def _replace(self, etag: str, token: str) -> None:
        """Overwrite the lock object if it is still the version ``etag`` (holding
        ``token``); LockLost otherwise."""
        if self.conditional:
            try:
                out = self.fs.pipe_file(self.path, self._body(), IfMatch=etag)
            except OSError as exc:
                if precondition_failed(exc):
                    raise LockLost from None
                raise
        else:
            current = self._read()
            if current is None or current[0].token != token:
                raise LockLost
            out = self.fs.pipe_file(self.path, self._body())
        self.etag = self._etag_of(out)

    def _delete(self) -> None:
        """Remove the lock object if it is still ours."""
        if self.conditional:
            bucket, key, _ = self.fs.split_path(self.path)
            try:
                self.fs.call_s3("delete_object", Bucket=bucket, Key=key, IfMatch=self.etag)
            except OSError as exc:
                if precondition_failed(exc):
                    raise LockLost from None
                raise
            self.fs.invalidate_cache(self.path)
            return
        current = self._read()
        if current is None or current[0].token != self.holder.token:
            raise LockLost
        self.fs.rm_file(self.path)

    def _read(self) -> tuple[Holder, str] | None:
        """The holder and the ETag of the lock object; None when there is none."""
        try:
            info = self.fs.info(self.path)
            body = self.fs.cat_file(self.path)
        except FileNotFoundError:
            return None
        holder = Holder.parse(body)
        if holder is None:  # unreadable: treated as a holder that never beats
            holder = Holder("unknown", "unknown", 0, "an unreadable lock object", "?", 0.0, "")
        return holder, str(info.get("ETag") or holder.token)

    # the protocol ---------------------------------------------------------------------------

    def acquire(self, wait_s: float = 0) -> None:
        """Take the lock, waiting up to ``wait_s`` for the holder; a stale lock is taken
        over; a VaultError names the holder when the wait is over."""
        deadline = time.monotonic() + wait_s
        while True:
            if self._create():
                break
            current = self._read()
            if current is None:
                continue  # released between our put and our read: try again at once
            holder, etag = current
            now = self.clock()
            if now - holder.heartbeat > self.stale_after_s:
                try:
                    self._stamp()
                    self._replace(etag, holder.token)
                except LockLost:
                    continue  # another writer took it over first: judge the new holder
                log.warning("took over the stale writer lock of %s from %s", self.url,
                            holder.describe(now))
                break
            if time.monotonic() >= deadline:
                waited = f" after waiting {wait_s:g} s" if wait_s else ""
                raise VaultError(
                    f"the vault at {self.root} is in use by {holder.describe(now)}{waited}; wait "
                    f"for it to finish, or pass --wait SECONDS (a lock without a heartbeat "
                    f"for {self.stale_after_s:g} s is taken over)")
            time.sleep(min(POLL_S, max(0.05, deadline - time.monotonic())))
        self._holding = True
        _lost_roots.discard(self.root)
        self._stop.clear()
        if self.heartbeat_s > 0:
            self._beating = threading.Thread(target=self._beat_loop, daemon=True,
                                             name="vault-lock-heartbeat")
            self._beating.start()

    def _stamp(self) -> None:
        self.holder = Holder(**{**asdict(self.holder), "heartbeat": self.clock()})

    def beat(self) -> None:
        """One heartbeat: the lock object rewritten with the time, if it is still ours."""
        assert self.etag is not None
        self._stamp()
        self._replace(self.etag, self.holder.token)

    def _beat_loop(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                self.beat()
            except LockLost:
                self._lost = True
                _lost_roots.add(self.root)
                log.error("lost the writer lock of %s: another writer took it over", self.url)
                return
            except OSError as exc:  # a network error: the next beat tries again
                log.warning("heartbeat of the writer lock %s failed: %s", self.url, exc)

    def release(self) -> None:
        """Stop the heartbeat and remove the lock object, unless another writer took it
        over (then :attr:`was_lost` is True); a second call does nothing."""
        if not self._holding:
            return
        self._holding = False
        self._stop.set()
        if self._beating is not None:
            self._beating.join()
            self._beating = None
        if self._lost:
            return
        try:
            self._delete()
        except LockLost:
            self._lost = True
            _lost_roots.add(self.root)

    @property
    def was_lost(self) -> bool:
        return self._lost
