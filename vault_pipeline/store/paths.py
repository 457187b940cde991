"""The data root: one directory (``VAULT_HOME``) holding the raw zone, the tables and the
Dagster instance, so a vault can be moved, backed up or deleted as one thing.

The root may also be an object-store URL (``s3://bucket/vault``, any fsspec URL): the raw
zone, the tables and the LanceDB index then live there, and what needs a local file system
(stage scratch and journals, copies of raw files for the parsers, the vault lock, the Dagster
instance, the DuckDB catalog, the `vault.toml` read by this machine) lives in a local cache
folder, ``$VAULT_CACHE`` or
``~/.cache/research-idea-vault/<scheme>/<bucket>/<path>`` (docs/object_storage.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from vault_pipeline.errors import VaultError

if TYPE_CHECKING:  # the store imports Polars and PyArrow: loaded when a table is touched
    from vault_pipeline.store.tables import TableStore

DEFAULT_HOME = "vault_home"
CACHE_ENV = "VAULT_CACHE"


def is_url(root: str) -> bool:
    """An object-store root (``s3://…``, ``gs://…``, ``memory://…``), not a local folder."""
    scheme = urlsplit(root).scheme
    return len(scheme) > 1 and scheme != "file"


def local_cache(url: str) -> Path:
    """The local folder of an object-store root: ``$VAULT_CACHE``, else one per URL under
    the user's cache folder."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen).expanduser().resolve()
    parts = urlsplit(url)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return (base / "research-idea-vault" / parts.scheme / parts.netloc
            / parts.path.strip("/")).resolve()


@dataclass(frozen=True)
class VaultPaths:
    """Where everything of one vault lives. Create with :meth:`from_env` or a path.
    ``remote``: the object-store URL of the root, when it is one (``home`` is then its
    local cache folder)."""

    home: Path
    remote: str | None = None

    @classmethod
    def from_env(cls, home: str | os.PathLike[str] | None = None) -> VaultPaths:
        """Resolve the root: the argument, else ``$VAULT_HOME``, else ``./vault_home``."""
        chosen = os.fspath(home or os.environ.get("VAULT_HOME") or DEFAULT_HOME)
        if is_url(chosen):
            return cls(local_cache(chosen), chosen.rstrip("/"))
        return cls(Path(chosen).expanduser().resolve())

    @property
    def root(self) -> str:
        """The root as a URL or a local path: where the tables and the index live."""
        return self.remote or str(self.home)

    @property
    def raw(self) -> Path:
        """Immutable, content-addressed responses exactly as received (on an object-store
        root, the local cache of ``<root>/raw``: see :mod:`vault_pipeline.raw.zone`)."""
        return self.home / "raw"

    @property
    def tables(self) -> Path:
        """One Parquet file per table."""
        return self.home / "tables"

    @property
    def dagster_home(self) -> Path:
        """The Dagster instance (run history, event log, schedules)."""
        return self.home / "dagster"

    @property
    def scratch(self) -> Path:
        """Temporary files of running stages; safe to delete when nothing runs."""
        return self.home / "tmp"

    def table(self, name: str) -> Path:
        """A table's local file (the store builds the name; kept for tools and tests)."""
        from vault_pipeline.store.layout import table_file

        return Path(table_file(self.tables, name))

    @property
    def store(self) -> TableStore:
        """The tables, read and written by schema (on the object store, when the root is)."""
        from vault_pipeline.store.tables import TableStore

        if self.remote:
            return TableStore.at_url(f"{self.remote}/tables")
        return TableStore(self.tables)

    def ensure(self) -> VaultPaths:
        """Create the vault's folders; a root that cannot hold them is a VaultError."""
        if self.home.exists() and not self.home.is_dir():
            raise VaultError(f"{self.home} is a file, not a vault folder (check --home)")
        try:
            for directory in (self.raw, self.tables, self.dagster_home, self.scratch):
                directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise VaultError(f"cannot create the vault at {self.home}: "
                             f"{exc.strerror or exc}") from None
        return self

    def _remote_raw(self) -> bool:
        """Whether the object-store root holds a raw zone (a harvest before any table)."""
        import fsspec

        fs, root = fsspec.core.url_to_fs(f"{self.remote}/raw", use_listings_cache=False)
        return bool(fs.exists(root))

    def existing(self) -> VaultPaths:
        """This vault, which must already exist: read-only commands never create one."""
        if self.remote and (self.store.names() or self._remote_raw()):
            return self
        if not (self.raw.is_dir() or self.tables.is_dir()):
            raise VaultError(f"no vault at {self.home} (run `vault import` or `vault demo` "
                             "first, or pass --home)")
        return self
