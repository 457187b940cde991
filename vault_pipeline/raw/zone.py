"""The raw zone: every response exactly as received, stored under its sha256 and never
overwritten, with a JSON sidecar describing it. Everything downstream is rebuilt from here."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from ..errors import RawFormatError, VaultError
from ..paths import VaultPaths
from ..schemas import IMPORT_REJECTS, RAW_FILES
from ..storage import atomic_write_bytes
from .detect import detect

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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _copy_hashing(source: Path, target: Path) -> str:
    """Copy ``source`` to ``target`` and return the sha256 of the bytes written."""
    digest = hashlib.sha256()
    with source.open("rb") as reader, target.open("wb") as writer:
        for block in iter(lambda: reader.read(1 << 20), b""):
            digest.update(block)
            writer.write(block)
    return digest.hexdigest()


def _walk(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        else:
            yield path


class RawZone:
    def __init__(self, paths: VaultPaths):
        self.paths = paths
        self.root = paths.raw
        self._restored: list[Path] = []

    def _location(self, sha: str, kind: str, extension: str) -> Path:
        return self.root / kind / sha[:2] / f"{sha}{extension}"

    def add_file(self, source: Path, origin: str | None = None) -> tuple[RawFile, bool]:
        """Check, then store one file; return (its record, whether it was new). A file
        already recorded is written again, so importing it restores a missing or damaged
        copy (see :meth:`restored`)."""
        detection = detect(source)
        incoming = self.root / ".incoming"  # same file system: the final rename is atomic
        incoming.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix="import-", dir=incoming)
        os.close(handle)
        tmp = Path(name)
        try:
            sha = _copy_hashing(source, tmp)  # one read: the stored bytes are the hashed ones
            target = self._location(sha, detection.kind, detection.extension)
            sidecar = target.with_name(target.name + SIDECAR)
            tmp.chmod(0o444)  # raw responses are never edited in place
            target.parent.mkdir(parents=True, exist_ok=True)
            if sidecar.exists():
                self._restore(tmp, target)
                return self._read_sidecar(sidecar), False
            os.replace(tmp, target)  # the bytes are the sha's: an existing copy is replaced
        finally:
            tmp.unlink(missing_ok=True)
        record = RawFile(
            sha256=sha, kind=detection.kind, wrapper=detection.wrapper,
            formats=detection.formats, path=str(target.relative_to(self.root)),
            size_bytes=target.stat().st_size, original_name=source.name,
            origin=origin or f"import:{source}", records=detection.records,
            received_at=datetime.now(UTC),
        )
        payload = asdict(record) | {"received_at": record.received_at.isoformat()}
        atomic_write_bytes(sidecar, json.dumps(payload, indent=1).encode())
        return record, True

    def _restore(self, verified: Path, target: Path) -> None:
        """Put freshly hashed bytes in place of a stored copy that is missing or damaged
        (an intact copy is left as it is)."""
        intact = target.is_file() and target.stat().st_size == verified.stat().st_size and (
            sha256_of(target) == target.name.split(".", 1)[0])
        if not intact:
            os.replace(verified, target)
            self._restored.append(target)

    @property
    def restored(self) -> list[Path]:
        """Stored copies this zone object rewrote because they were missing or damaged."""
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
        for path in _walk(paths):
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

    @staticmethod
    def _read_sidecar(sidecar: Path) -> RawFile:
        payload = json.loads(sidecar.read_text())
        payload["received_at"] = datetime.fromisoformat(payload["received_at"])
        return RawFile(**payload)

    def files(self, kinds: Iterable[str] | None = None, check: bool = True) -> list[RawFile]:
        """Every stored file (sorted by kind, then sha256, so rebuilds are deterministic).

        With ``check`` (what every stage reads), a file missing, of another size or, at its
        periodic full check, of other bytes stops the read with a VaultError: a build from
        a damaged zone would silently lose what the file held."""
        wanted = set(kinds) if kinds else None
        found = []
        if not self.root.exists():
            return found
        for sidecar in self.root.glob(f"*/*/*{SIDECAR}"):
            record = self._read_sidecar(sidecar)
            if wanted is None or record.kind in wanted:
                found.append(record)
        found.sort(key=lambda r: (r.kind, r.sha256))
        if check and (problems := self.verify(found, full=False)):
            raise VaultError(damage_message(problems))
        return found

    def verify(self, records: list[RawFile] | None = None, full: bool = True
               ) -> list[RawProblem]:
        """Check stored files against their records: presence and size always; the sha256
        of every file (``full``) or of those whose last full check is over
        :data:`FULL_CHECK_DAYS` old."""
        records = self.files(check=False) if records is None else records
        last = self._verified()
        due = datetime.now(UTC) - timedelta(days=FULL_CHECK_DAYS)
        problems, checked = [], []
        for record in records:
            path = self.absolute(record)
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                problems.append(RawProblem(record, "missing"))
                continue
            if size != record.size_bytes:
                problems.append(RawProblem(record, f"{size:,} bytes, {record.size_bytes:,} "
                                                   "recorded"))
                continue
            when = last.get(record.sha256)
            if full or when is None or datetime.fromisoformat(when) < due:
                if sha256_of(path) != record.sha256:
                    problems.append(RawProblem(record, "content altered (sha256 differs)"))
                    continue
                checked.append(record.sha256)
        self._mark_verified(checked)
        return problems

    def _verified(self) -> dict[str, str]:
        try:
            return json.loads((self.root / VERIFIED).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _mark_verified(self, shas: list[str]) -> None:
        if not shas:
            return
        now = datetime.now(UTC).isoformat()
        state = self._verified() | dict.fromkeys(shas, now)
        atomic_write_bytes(self.root / VERIFIED, json.dumps(state, sort_keys=True).encode())

    def absolute(self, record: RawFile) -> Path:
        return self.root / record.path

    def manifest(self) -> pl.DataFrame:
        """The `raw_files` table; a damaged zone is a VaultError (see :meth:`files`)."""
        rows = [asdict(r) for r in self.files()]
        return pl.DataFrame(rows, schema=RAW_FILES.polars) if rows else pl.DataFrame(
            schema=RAW_FILES.polars)

    def fingerprint(self) -> str:
        """Changes whenever a file enters the zone (what the raw-zone sensor watches)."""
        shas = sorted(p.name for p in self.root.glob(f"*/*/*{SIDECAR}"))
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
        return sha256_of(path) if path.is_file() else None
    except OSError:
        return None


def raw_location(paths: VaultPaths) -> Path | str:
    """Where the raw zone lies (what the harvests' assets show as their path)."""
    return paths.raw
