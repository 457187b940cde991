"""The table store: the one place that builds a table's location and reads or writes a table
by its schema. It works over an fsspec filesystem, so that the data root can be object storage
rather than a local folder; every write is atomic (a temporary name, then a rename; on an
object store a finished local file, then one PUT), so a reader or a crash never sees half a
table."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import fsspec
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock
from fsspec.implementations.local import LocalFileSystem

from vault_pipeline.errors import VaultError
from vault_pipeline.schemas import TableSchema
from vault_pipeline.store import checksums
from vault_pipeline.store.atomic import atomic_path
from vault_pipeline.store.layout import QUARANTINE, SUFFIX, table_file, table_name

__all__ = ["SUFFIX", "TableStore", "table_file", "table_name"]

COMPRESSION = "zstd"
BATCH_ROWS = 5_000  # rows per streamed batch (:meth:`TableStore.batches`): 50,000 abstracts
# took 300 MB to decode, 5,000 took 116 MB (measured)
RECORDED_PUTS = 16  # puts an object's record accepts: every writer that may still be racing
APPEND_ATTEMPTS = 20
SINGLE_PUT = 5 * 2**30 // 2  # an s3fs chunk size that keeps uploads below 5 GiB in one PUT
Table = str | TableSchema
T = TypeVar("T")


def conform(table: pa.Table | pl.DataFrame, schema: TableSchema) -> pa.Table:
    """Select and cast the schema's columns, in its order, with its field docs."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    missing = set(schema.names) - set(table.column_names)
    if missing:
        raise ValueError(f"table {schema.name} lacks columns {sorted(missing)}")
    return table.select(schema.names).cast(schema.arrow)


FULL = {errno.ENOSPC, errno.EDQUOT}


@contextlib.contextmanager
def disk_full_is_one_line(what: str) -> Iterator[None]:
    """A write that runs out of space (disk full, quota) is a condition the user fixes: one
    line that says the previous file is kept (the write was atomic), not a stack trace."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in FULL:
            raise
        raise VaultError(f"no space left on the device writing {what} ({exc.strerror}); the "
                         "previous version is intact: free space and run again") from None


def readable(source: Path | bytes) -> str | None:
    """A Parquet file's (or object's bytes') problem when it does not decode whole (every
    row group, its pages' CRCs where written), else None: how a table rewritten by another
    tool is judged."""
    if isinstance(source, Path):
        problem = checksums.parquet_shape(source)
    else:
        whole = len(source) >= 12 and source[:4] == source[-4:] == checksums.MAGIC
        problem = None if whole else f"not a whole Parquet object ({len(source):,} bytes)"
    if problem is not None:
        return problem
    try:
        parquet = pq.ParquetFile(source if isinstance(source, Path) else io.BytesIO(source),
                                 page_checksum_verification=True)
        for group in range(parquet.num_row_groups):
            parquet.read_row_group(group)
        if isinstance(source, bytes):  # the reader's own decoding too: PyArrow does not
            pl.read_parquet(io.BytesIO(source))  # check UTF-8, and pages may lack CRCs
    except (OSError, ValueError, pa.ArrowException, pl.exceptions.PolarsError) as exc:
        return f"unreadable Parquet ({' '.join(str(exc).split())[:160]})"
    return None


def damaged(name: str, where: str, problem: str) -> VaultError:
    """The one line of a damaged table: which file, what is wrong, and the repair."""
    return VaultError(f"table {name!r} is damaged ({where}: {problem}); run `vault "
                      "materialize` to quarantine it and rebuild it from the raw zone")


def write_parquet(target: Path, frame: pa.Table | pl.DataFrame, schema: TableSchema) -> int:
    """Write a frame of a table's schema to a local file outside the store (an export),
    atomically; return its rows."""
    arrow = conform(frame, schema)
    with disk_full_is_one_line(str(target)), atomic_path(target) as tmp:
        pq.write_table(arrow, tmp, compression=COMPRESSION)
    return arrow.num_rows


def require_columns(frame: pl.DataFrame, name: str, columns: Sequence[str]) -> None:
    """A one-line user error when a table lacks a column its reader needs."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise VaultError(f"table {name!r} lacks columns {missing}")


def _recorded_puts(saved: dict) -> list[dict]:
    """The puts an object's record accepts, newest first (``sha256``, ``size`` or None),
    from this record's shape or the earlier one (``accept``: sha256s only)."""
    if "puts" in saved:
        return list(saved["puts"])
    return [{"sha256": sha, "size": None}
            for sha in saved.get("accept", [saved.get("sha256")]) if sha]


class TableStore:
    """The vault's tables under one root (a local folder or an fsspec URL)."""

    def __init__(self, root: str | os.PathLike[str],
                 fs: fsspec.AbstractFileSystem | None = None) -> None:
        if fs is None:
            fs, root = fsspec.core.url_to_fs(os.fspath(root))
        self.fs = fs
        self.root = os.fspath(root).rstrip("/")

    @classmethod
    def at_url(cls, url: str) -> TableStore:
        """A store on an object store, listing afresh on every call (another process or
        machine may have written a table since)."""
        fs, root = fsspec.core.url_to_fs(url, use_listings_cache=False)
        return cls(root, fs)

    @property
    def url(self) -> str:
        """The root with its scheme (for messages and other libraries)."""
        return self.fs.unstrip_protocol(self.root)

    @property
    def local(self) -> bool:
        """Local tables are read in place (memory-mapped, lazily scanned)."""
        return isinstance(self.fs, LocalFileSystem)

    def path(self, table: Table) -> str:
        return table_file(self.root, table)

    def exists(self, table: Table) -> bool:
        return bool(self.fs.exists(self.path(table)))

    def names(self) -> list[str]:
        """Every table written so far, sorted."""
        if not self.fs.exists(self.root):
            return []
        files = self.fs.glob(f"{self.root}/*{SUFFIX}")
        return sorted(Path(f).name[: -len(SUFFIX)] for f in files)

    def problem(self, table: Table, full: bool = False) -> str | None:
        """What is wrong with a local table's file (see :mod:`.checksums`; ``full``: hashed
        whatever its stat), None when it is intact or absent; an object is checked as it is
        read (:meth:`_read`) and with :meth:`set_aside_if_damaged`."""
        if not self.local:
            return None
        return checksums.check(Path(self.path(table)), readable, full=full)

    def set_aside_if_damaged(self, table: Table) -> str | None:
        """An object fetched and hashed now (`vault verify` on an object-store root): the
        one line of its damage after it is set aside, None when it is intact or absent."""
        if self.local or not self.exists(table):
            return None
        if (problem := self._object_problem(table, self.fs.cat_file(self.path(table)))):
            return str(self._set_aside(table, problem))
        return None

    def verified(self, table: Table) -> str:
        """A local table's path, checked against its checksum: damage is a VaultError."""
        path = self.path(table)
        if (problem := self.problem(table)) is not None:
            raise damaged(table_name(table), path, problem)
        return path

    def _read(self, table: Table, columns: Sequence[str] | None) -> pl.DataFrame:
        cols = list(columns) if columns is not None else None
        if self.local:
            return pl.read_parquet(self.verified(table), columns=cols)
        # One GET of the whole object: one version of the table, even when a writer
        # replaces it meanwhile (ranged reads would fail on the changed ETag half-way).
        data = self.fs.cat_file(self.path(table))
        self._check_object(table, data)
        return pl.read_parquet(io.BytesIO(data), columns=cols)

    def _sidecar(self, table: Table) -> str:
        return f"{self.root}/{checksums.sidecar(Path(self.path(table))).name}"

    def _check_object(self, table: Table, data: bytes) -> None:
        """A damaged object read is set aside (:meth:`_set_aside`) and is a VaultError."""
        if (problem := self._object_problem(table, data)) is not None:
            raise self._set_aside(table, problem)

    def _object_problem(self, table: Table, data: bytes) -> str | None:
        """An object's bytes against the sha256 recorded when it was put (if any). Bytes the
        record does not accept, of a size it records, are damage (a bad copy or bit rot keeps
        the size; a flipped byte in a page header or its statistics still decodes, so
        decoding alone would take it for a new version). Bytes of another size are another
        tool's put: a new version when they decode whole, damage otherwise."""
        try:
            saved = json.loads(self.fs.cat_file(self._sidecar(table)))
        except (FileNotFoundError, ValueError):
            return None
        sha, puts = hashlib.sha256(data).hexdigest(), _recorded_puts(saved)
        if sha in {put["sha256"] for put in puts}:
            return None
        if len(data) in {put["size"] for put in puts}:
            return (f"its bytes changed, size kept ({len(data):,} bytes, sha256 {sha[:12]}… "
                    "not the one recorded when it was put)")
        return readable(data)

    def _set_aside(self, table: Table, problem: str) -> VaultError:
        """Move a damaged object and its record under the root's quarantine prefix (kept,
        never deleted, with a note of what was wrong), so the table is simply missing and the
        next run builds it again. Done as the damage is read because an object store has no
        cheap pre-run check: a local root's files are checked by their stat before each run
        (:mod:`.repair`); hashing every object before each run would read the whole vault."""
        name, source = table_name(table), self.path(table)
        when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        home, folder = self.root.rsplit("/", 1)
        moved = f"{home}/{QUARANTINE}/{when}/{folder}/{source.rsplit('/', 1)[1]}"
        self.fs.copy(source, moved)
        self.fs.pipe_file(f"{moved}.problem.txt", f"{problem}\n".encode())
        self.fs.rm(source)
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._sidecar(table))
        return VaultError(f"table {name!r} was damaged ({self.fs.unstrip_protocol(source)}: "
                          f"{problem}): moved to {self.fs.unstrip_protocol(moved)}; "
                          "`vault materialize` builds it again from the raw zone")

    def read(self, schema: TableSchema, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """A table, or an empty frame of its schema when it was never written."""
        if not self.exists(schema):
            empty = pl.from_arrow(schema.empty())
            assert isinstance(empty, pl.DataFrame)
            return empty.select(columns) if columns is not None else empty
        return self._read(schema, columns)

    def read_optional(self, table: Table, columns: Sequence[str] | None = None
                      ) -> pl.DataFrame | None:
        """A table, or None when no stage has written it yet."""
        return self._read(table, columns) if self.exists(table) else None

    def read_required(self, table: Table, columns: Sequence[str] = ()) -> pl.DataFrame:
        """A table a stage cannot run without, checked for the columns it needs."""
        name = table_name(table)
        frame = self.read_optional(table)
        if frame is None:
            raise VaultError(f"table {name!r} does not exist yet: materialize it first "
                             f"(vault materialize --select {name})")
        require_columns(frame, name, columns)
        return frame

    def scan(self, table: Table) -> pl.LazyFrame:
        """A lazy scan of a written table (local files stream; others are read once)."""
        if self.local:
            return pl.scan_parquet(self.verified(table))
        return self._read(table, None).lazy()

    def batches(self, table: Table, columns: Sequence[str] | None = None,
                rows: int = BATCH_ROWS) -> Iterator[pl.DataFrame]:
        """A table a batch of at most ``rows`` rows at a time, in file order (none when it
        was never written): how a stage reads a table too large to hold. A local file is
        checked, then read a row group's pages at a time; an object is fetched once (one
        version of it, as :meth:`_read`) and decoded a batch at a time."""
        if not self.exists(table):
            return
        cols = list(columns) if columns is not None else None
        if self.local:
            source: str | io.BytesIO = self.verified(table)
        else:
            data = self.fs.cat_file(self.path(table))
            self._check_object(table, data)
            source = io.BytesIO(data)
        # Not pre-buffered: that keeps every row group read so far allocated.
        with pq.ParquetFile(source, pre_buffer=False) as parquet:
            for batch in parquet.iter_batches(batch_size=rows, columns=cols):
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                yield frame

    def scan_optional(self, table: Table) -> pl.LazyFrame | None:
        return self.scan(table) if self.exists(table) else None

    def rows(self, table: Table) -> int:
        """Row count from the Parquet footer; 0 when the table was never written."""
        if not self.exists(table):
            return 0
        if self.local:
            return int(pq.read_metadata(self.verified(table)).num_rows)
        with self.fs.open(self.path(table), "rb") as handle:
            return int(pq.read_metadata(handle).num_rows)

    def size(self, table: Table) -> int:
        """Bytes of a written table's file (or object)."""
        return int(self.fs.size(self.path(table)))

    @contextlib.contextmanager
    def writing(self, table: Table) -> Iterator[Path]:
        """A local temporary file that becomes the table on success only (for writers that
        stream row groups); elsewhere it is uploaded once complete."""
        what = f"table {table_name(table)!r}"
        if self.local:
            with disk_full_is_one_line(what), checksums.recorded_path(
                    Path(self.path(table))) as tmp:
                yield tmp
            return
        with disk_full_is_one_line(what), tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder) / f"{table_name(table)}{SUFFIX}"
            yield tmp
            from vault_pipeline.store.object_lock import refuse_if_lost

            refuse_if_lost(self.url)  # another writer took the root over: not over its tables
            self._record_object(table, tmp)
            # One PUT (or one completed multipart upload) of the finished file: object
            # stores make it visible whole or not at all, so no temporary key is needed.
            self.fs.put_file(str(tmp), self.path(table))

    def _record_object(self, table: Table, file: Path) -> None:
        """Before an object is put: its sha256 and size, added to the ones recorded before
        (the last :data:`RECORDED_PUTS`). A put that fails leaves a record that accepts the
        object still there; appenders racing on two machines each add theirs, the record
        itself replaced by a conditional put, so the put that wins is always accepted."""
        sha, size = checksums.sha256_file(file), file.stat().st_size
        sidecar = self._sidecar(table)

        def record(match: dict[str, str]) -> None:
            try:
                saved = json.loads(self.fs.cat_file(sidecar))
            except (FileNotFoundError, ValueError):
                saved = {}
            puts = [put for put in _recorded_puts(saved) if put["sha256"] != sha]
            self.fs.pipe_file(sidecar, json.dumps(
                {"puts": [{"sha256": sha, "size": size}, *puts][:RECORDED_PUTS]}).encode(),
                **match)

        self._conditionally(sidecar, record, f"the record of table {table_name(table)!r}")

    def _conditionally(self, path: str, attempt: Callable[[dict[str, str]], T], what: str
                       ) -> T:
        """``attempt(match)`` reads the object at ``path`` and puts what it makes of it with
        ``match`` (``If-Match`` the version seen before the read, ``If-None-Match: *`` when
        there was none); it runs again while another writer's put lands first. Stores
        without conditional puts: one attempt, unconditioned (one writer at a time)."""
        from vault_pipeline.store.object_store import conditional, precondition_failed

        if not conditional(self.fs):
            return attempt({})
        for _ in range(APPEND_ATTEMPTS):
            try:
                match = {"IfMatch": self.fs.info(path)["ETag"]}
            except FileNotFoundError:
                match = {"mode": "create"}
            try:
                return attempt(match)
            except OSError as exc:
                if precondition_failed(exc):
                    continue  # another writer's put went in first: build on it
                raise
        raise VaultError(f"{what} changed {APPEND_ATTEMPTS} times while it was written: "
                         "run again")

    def write(self, schema: TableSchema, frame: pa.Table | pl.DataFrame) -> int:
        """Write one table as Parquet, atomically, cast to its schema; return its rows."""
        arrow = conform(frame, schema)
        with self.writing(schema) as tmp:  # page CRCs: a rewrite is judged page by page
            pq.write_table(arrow, tmp, compression=COMPRESSION, write_page_checksum=True)
        return arrow.num_rows

    def write_batches(self, schema: TableSchema,
                      batches: Iterable[pa.Table | pa.RecordBatch | pl.DataFrame]) -> int:
        """Write one table from batches, one row group each, atomically (as :meth:`write`),
        without holding it whole; return its rows."""
        total = 0
        with self.writing(schema) as tmp, pq.ParquetWriter(
                tmp, schema.arrow, compression=COMPRESSION,
                write_page_checksum=True) as writer:
            for batch in batches:
                table = pa.Table.from_batches([batch]) if isinstance(
                    batch, pa.RecordBatch) else batch
                arrow = conform(table, schema)
                if arrow.num_rows:
                    writer.write_table(arrow)
                    total += arrow.num_rows
        return total

    def append(self, schema: TableSchema, rows: pl.DataFrame) -> int:
        """Append rows under a lock of that table, so that concurrent appenders (two imports
        at once) never lose each other's rows; on an object store, by a conditional put."""
        if not self.local:
            return self._append_conditionally(schema, rows)
        target = Path(self.path(schema))
        with FileLock(target.with_name(f".{target.name}.lock"), thread_local=False):
            return self.write(schema, pl.concat([self.read(schema), rows.select(schema.names)]))

    def _append_conditionally(self, schema: TableSchema, rows: pl.DataFrame) -> int:
        """Optimistic appends (imports on two machines take no vault lock): the table is
        read with its ETag and put back only if the object is still that version
        (``If-Match``; ``If-None-Match: *`` when there was none), else read again. Stores
        without conditional puts: one appender at a time."""
        from vault_pipeline.store.object_store import conditional

        if not conditional(self.fs):
            return self.write(schema, pl.concat([self.read(schema), rows.select(schema.names)]))
        from vault_pipeline.store.object_lock import refuse_if_lost

        path = self.path(schema)
        refuse_if_lost(self.url)

        def append(match: dict[str, str]) -> int:
            arrow = conform(pl.concat([self.read(schema), rows.select(schema.names)]), schema)
            with tempfile.TemporaryDirectory() as folder:
                tmp = Path(folder) / f"{schema.name}{SUFFIX}"
                pq.write_table(arrow, tmp, compression=COMPRESSION, write_page_checksum=True)
                self._record_object(schema, tmp)
                # one PUT up to 5 GiB: the condition travels with PutObject
                self.fs.put_file(str(tmp), path, chunksize=SINGLE_PUT, **match)
            return arrow.num_rows

        return self._conditionally(path, append, f"table {schema.name!r}")
