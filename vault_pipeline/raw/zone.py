"""The raw zone: every response exactly as received, stored under its sha256 and never
overwritten, with a JSON sidecar describing it. Everything downstream is rebuilt from here.

On an object-store root (``VAULT_HOME=s3://bucket/vault``) the zone lives in the bucket,
under ``<root>/raw``, read and written through the store's fsspec filesystem: a file is
hashed into a local temporary file, then put whole (one PUT), and its sidecar is put last,
so a reader that lists sidecars never finds one whose file is missing or half written. The
parsers need local files: :meth:`RawZone.absolute` fetches a stored file once into the local
cache folder (checked against its sha256 on the way), and sidecars, which never change once
written, are kept there too, so a second listing asks only for new ones."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import fsspec
import polars as pl
from fsspec.implementations.local import LocalFileSystem

from vault_pipeline.errors import RawFormatError, VaultError
from vault_pipeline.raw.detect import detect
from vault_pipeline.schemas import IMPORT_REJECTS, RAW_FILES
from vault_pipeline.store.atomic import atomic_write_bytes, fresh_file, read_only
from vault_pipeline.store.checksums import sha256_file
from vault_pipeline.store.paths import VaultPaths

SIDECAR = ".meta.json"
VERIFIED = ".verified.json"
"""When each stored file last matched its sha256 in full (raw/.verified.json)."""
FULL_CHECK_DAYS = 7
"""Every read of the zone checks each file's presence and size; its bytes are hashed again
when the last full check is older than this (and on every `vault verify`)."""


@dataclass(frozen=True)
class RawFile:
    sha256: str
    kind: str
    wrapper: str | None
    formats: str | None
    path: str
    size_bytes: int
    original_name: str | None
    origin: str | None
    records: int | None
    received_at: datetime


@dataclass
class ImportReport:
    added: list[RawFile] = field(default_factory=list)
    already_present: list[RawFile] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    restored: list[RawFile] = field(default_factory=list)


@dataclass(frozen=True)
class RawProblem:
    """A stored file that no longer matches its record."""

    record: RawFile
    problem: str

    def __str__(self) -> str:
        name = self.record.original_name or self.record.sha256[:12]
        return f"{self.record.path} ({name}): {self.problem}"


def _copy_hashing(source: Path, target: Path) -> str:
    """Copy ``source`` to ``target`` and return the sha256 of the bytes written."""
    digest = hashlib.sha256()
    with source.open("rb") as reader, target.open("wb") as writer:
        for block in iter(lambda: reader.read(1 << 20), b""):
            digest.update(block)
            writer.write(block)
    return digest.hexdigest()


def _walk(paths: Iterable[Path]) -> Iterator[tuple[Path, str | None]]:
    """Each file to import, with why it is refused (None: it is not). A folder's files are
    the ones inside it: a link to a file outside the folder is refused, never followed (a
    link to a folder is not entered), so an import takes only what the folder holds."""
    for path in paths:
        if not path.is_dir():
            yield path, None
            continue
        inside = path.resolve()
        for found in sorted(p for p in path.rglob("*") if p.is_file()):
            target = found.resolve()
            if target != inside and inside not in target.parents:
                yield found, f"a link to {target}, outside {path}: not followed"
            else:
                yield found, None


class RawZone:
    """The raw zone of a vault: a local folder (``paths.raw``), or ``<root>/raw`` on the
    object store, with ``paths.raw`` as its local cache."""

    def __init__(self, paths: VaultPaths):
        self.paths = paths
        self.cache = paths.raw  # the zone itself on a local root; fetched copies otherwise
        self.fs: fsspec.AbstractFileSystem
        if paths.remote:
            self.fs, self.root = fsspec.core.url_to_fs(f"{paths.remote}/raw",
                                                       use_listings_cache=False)
        else:
            self.fs, self.root = LocalFileSystem(), str(paths.raw)
        self._restored: list[str] = []

    @property
    def remote(self) -> bool:
        return not isinstance(self.fs, LocalFileSystem)

    @property
    def location(self) -> Path | str:
        """Where the zone lies: its local folder, or its URL."""
        return self.fs.unstrip_protocol(self.root) if self.remote else self.cache

    def _key(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def _relative(self, sha: str, kind: str, extension: str) -> str:
        return f"{kind}/{sha[:2]}/{sha}{extension}"

    def _put(self, local: Path, relative: str) -> None:
        """Make a finished local file the stored one, whole or not at all: a rename on the
        same file system, else one upload (object stores show an object once complete)."""
        if self.remote:
            self.fs.put_file(str(local), self._key(relative))
            return
        target = self.cache / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(local, target)

    def _write(self, relative: str, data: bytes) -> None:
        if self.remote:
            self.fs.pipe_file(self._key(relative), data)  # one PUT: whole or absent
        else:
            atomic_write_bytes(self.cache / relative, data)

    def _exists(self, relative: str) -> bool:
        return bool(self.fs.exists(self._key(relative)))

    def add_file(self, source: Path, origin: str | None = None) -> tuple[RawFile, bool]:
        """Check, then store one file; return (its record, whether it was new). A file
        already recorded is written again, so importing it restores a missing or damaged
        copy (see :meth:`restored`)."""
        detection = detect(source)
        incoming = self.cache / ".incoming"  # same file system: the final rename is atomic
        incoming.mkdir(parents=True, exist_ok=True)
        tmp = fresh_file(incoming, "import-")
        try:
            sha = _copy_hashing(source, tmp)  # one read: the stored bytes are the hashed ones
            target = self._relative(sha, detection.kind, detection.extension)
            sidecar = target + SIDECAR
            read_only(tmp)  # raw responses are never edited in place
            size = tmp.stat().st_size
            if self._exists(sidecar):
                self._restore(tmp, target)
                return self._read_sidecar(sidecar), False
            self._put(tmp, target)  # the bytes are the sha's: an existing copy is replaced
        finally:
            tmp.unlink(missing_ok=True)
        record = RawFile(
            sha256=sha, kind=detection.kind, wrapper=detection.wrapper,
            formats=detection.formats, path=target, size_bytes=size,
            original_name=source.name, origin=origin or f"import:{source}",
            records=detection.records, received_at=datetime.now(UTC),
        )
        payload = asdict(record) | {"received_at": record.received_at.isoformat()}
        self._write(sidecar, json.dumps(payload, indent=1).encode())  # last: the commit
        return record, True

    def _restore(self, verified: Path, target: str) -> None:
        """Put freshly hashed bytes in place of a stored copy that is missing or damaged
        (an intact copy is left as it is)."""
        key = self._key(target)
        intact = self.fs.isfile(key) and self.fs.size(key) == verified.stat().st_size and (
            self._sha256(target) == target.rsplit("/", 1)[-1].split(".", 1)[0])
        if not intact:
            self._put(verified, target)
            self._restored.append(target)

    def _sha256(self, relative: str) -> str:
        digest = hashlib.sha256()
        with self.fs.open(self._key(relative), "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    @property
    def restored(self) -> list[str]:
        """Stored copies (paths in the zone) this zone object rewrote because they were
        missing or damaged."""
        return list(self._restored)

    def add_bytes(self, data: bytes, name: str, origin: str) -> tuple[RawFile, bool]:
        """Store a response a live client received, under its origin URL and a file name
        (``name``, no folders); the same checks and content addressing as :meth:`add_file`."""
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"not a plain file name: {name!r}")
        folder = self.paths.scratch / f"received-{uuid.uuid4().hex}"
        folder.mkdir(parents=True)
        try:
            source = folder / name
            source.write_bytes(data)
            return self.add_file(source, origin=origin)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def import_paths(self, paths: Iterable[Path]) -> ImportReport:
        """Import files and folders; a bad file is reported and kept out, never fatal."""
        report = ImportReport()
        for path, refused in _walk(paths):
            if refused:
                report.rejected.append((str(path), refused))
                continue
            restored = len(self._restored)
            try:
                record, new = self.add_file(path)
            except (RawFormatError, OSError) as exc:
                report.rejected.append((str(path), str(exc)))
                continue
            if len(self._restored) > restored:
                report.restored.append(record)
            (report.added if new else report.already_present).append(record)
        # every stored copy was just hashed or compared: no full check due for a while
        self._mark_verified([r.sha256 for r in report.added + report.already_present])
        self._log_rejects(report.rejected)
        return report

    def _log_rejects(self, rejected: list[tuple[str, str]]) -> None:
        if not rejected:
            return
        now = datetime.now(UTC)
        new = pl.DataFrame(
            {
                "path": [p for p, _ in rejected],
                "sha256": [_safe_sha(Path(p)) for p, _ in rejected],
                "reason": [r for _, r in rejected],
                "rejected_at": [now] * len(rejected),
            },
            schema=IMPORT_REJECTS.polars,
        )
        self.paths.store.append(IMPORT_REJECTS, new)

    def _read_sidecar(self, relative: str) -> RawFile:
        """A stored file's record. From an object store, kept in the local cache: a sidecar
        never changes once written."""
        local = self.cache / relative
        if self.remote and local.is_file():
            text = local.read_text()
        else:
            text = self.fs.cat_file(self._key(relative)).decode()
            if self.remote:
                atomic_write_bytes(local, text.encode())
        payload = json.loads(text)
        payload["received_at"] = datetime.fromisoformat(payload["received_at"])
        return RawFile(**payload)

    def _sidecars(self) -> list[str]:
        """Every sidecar, as a path in the zone (one listing on an object store)."""
        if not self.fs.exists(self.root):
            return []
        found = self.fs.glob(f"{self.root}/*/*/*{SIDECAR}")
        return ["/".join(f.rsplit("/", 3)[-3:]) for f in found]  # <kind>/<xx>/<name>

    def files(self, kinds: Iterable[str] | None = None, check: bool = True) -> list[RawFile]:
        """Every stored file (sorted by kind, then sha256, so rebuilds are deterministic).

        With ``check`` (what every stage reads), a file missing, of another size or, at its
        periodic full check, of other bytes stops the read with a VaultError: a build from
        a damaged zone would silently lose what the file held."""
        wanted = set(kinds) if kinds else None
        found = []
        for sidecar in self._sidecars():
            if wanted is not None and sidecar.split("/", 1)[0] not in wanted:
                continue  # the folder is the kind: other kinds' sidecars are not read
            record = self._read_sidecar(sidecar)
            if wanted is None or record.kind in wanted:
                found.append(record)
        found.sort(key=lambda r: (r.kind, r.sha256))
        if check and (problems := self.verify(found, full=False)):
            raise VaultError(damage_message(problems))
        return found

    def _sizes(self, records: list[RawFile]) -> dict[str, int | None]:
        """Each record's stored size (None: missing); one listing on an object store."""
        if self.remote:
            listed = self.fs.find(self.root, detail=True) if records else {}
            sizes = {k[len(self.root) + 1:]: int(v["size"]) for k, v in listed.items()}
            return {r.path: sizes.get(r.path) for r in records}
        result: dict[str, int | None] = {}
        for record in records:
            try:
                result[record.path] = (self.cache / record.path).stat().st_size
            except FileNotFoundError:
                result[record.path] = None
        return result

    def verify(self, records: list[RawFile] | None = None, full: bool = True
               ) -> list[RawProblem]:
        """Check stored files against their records: presence and size always; the sha256
        of every file (``full``) or of those whose last full check is over
        :data:`FULL_CHECK_DAYS` old."""
        records = self.files(check=False) if records is None else records
        last = self._verified()
        due = datetime.now(UTC) - timedelta(days=FULL_CHECK_DAYS)
        problems, checked = [], []
        sizes = self._sizes(records)
        for record in records:
            size = sizes[record.path]
            if size is None:
                problems.append(RawProblem(record, "missing"))
                continue
            if size != record.size_bytes:
                problems.append(RawProblem(record, f"{size:,} bytes, {record.size_bytes:,} "
                                                   "recorded"))
                continue
            when = last.get(record.sha256)
            if full or when is None or datetime.fromisoformat(when) < due:
                if self._sha256(record.path) != record.sha256:
                    problems.append(RawProblem(record, "content altered (sha256 differs)"))
                    continue
                checked.append(record.sha256)
        self._mark_verified(checked)
        return problems

    def _verified(self) -> dict[str, str]:
        try:
            return json.loads(self.fs.cat_file(self._key(VERIFIED)))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _mark_verified(self, shas: list[str]) -> None:
        """Stamp ``shas`` as checked now; a file checked within the last day keeps its stamp,
        so a refresh that finds nothing new rewrites nothing (the no-op refresh changes no
        object on a bucket root)."""
        now = datetime.now(UTC)
        state = self._verified()
        recent = (now - timedelta(days=1)).isoformat()
        stale = [sha for sha in shas if state.get(sha, "") < recent]
        if not stale:
            return
        state |= dict.fromkeys(stale, now.isoformat())
        self._write(VERIFIED, json.dumps(state, sort_keys=True).encode())

    def absolute(self, record: RawFile) -> Path:
        """A stored file as a local file the parsers can open: in place on a local root; on
        an object store, a copy in the local cache, fetched once and checked against its
        sha256 (a copy of the recorded size is used as it is)."""
        local = self.cache / record.path
        if not self.remote:
            return local
        if local.is_file() and local.stat().st_size == record.size_bytes:
            return local
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = fresh_file(local.parent, ".fetch-")
        try:
            digest = hashlib.sha256()
            with self.fs.open(self._key(record.path), "rb") as reader, tmp.open("wb") as out:
                for block in iter(lambda: reader.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
            if digest.hexdigest() != record.sha256:
                raise VaultError(damage_message([RawProblem(
                    record, "content altered in the object store (sha256 differs)")]))
            read_only(tmp)
            os.replace(tmp, local)
        except FileNotFoundError:
            raise VaultError(damage_message([RawProblem(record, "missing")])) from None
        finally:
            tmp.unlink(missing_ok=True)
        return local

    def manifest(self) -> pl.DataFrame:
        """The `raw_files` table; a damaged zone is a VaultError (see :meth:`files`)."""
        rows = [asdict(r) for r in self.files()]
        return pl.DataFrame(rows, schema=RAW_FILES.polars) if rows else pl.DataFrame(
            schema=RAW_FILES.polars)

    def fingerprint(self) -> str:
        """Changes whenever a file enters the zone (what the raw-zone sensor watches)."""
        shas = sorted(p.rsplit("/", 1)[-1] for p in self._sidecars())
        return hashlib.sha256("\n".join(shas).encode()).hexdigest()


def build_raw_files(paths: VaultPaths) -> pl.DataFrame:
    """Write the `raw_files` table (the zone's manifest) and return it."""
    manifest = RawZone(paths).manifest()
    paths.store.write(RAW_FILES, manifest)
    return manifest


def damage_message(problems: list[RawProblem]) -> str:
    """One line: what is damaged and how to repair it."""
    shown = "; ".join(str(p) for p in problems[:3])
    more = f" and {len(problems) - 3} more" if len(problems) > 3 else ""
    return (f"raw zone damaged, {len(problems)} file(s): {shown}{more}. Restore them with "
            "`vault import` of the original files (`vault verify` checks every file)")


def _safe_sha(path: Path) -> str | None:
    try:
        return sha256_file(path) if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def raw_location(paths: VaultPaths) -> Path | str:
    """Where the raw zone lies (what the harvests' assets show as their path)."""
    return RawZone(paths).location
