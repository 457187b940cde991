"""Unpack an arXiv e-print safely: a gzipped tar, or a single gzipped ``.tex``.

Nothing is written outside the destination: members with absolute paths or ``..`` are
refused by tarfile's ``data`` filter and skipped, links and device files are skipped, and
the decompressed size (a gzip bomb), the member count and each member's size are limited
before anything is written. What was skipped is reported, so a hostile member costs a note,
not the paper."""

from __future__ import annotations

import gzip
import shutil
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from vault_pipeline.documents.outcome import CORRUPT, TOO_LARGE, UNSUPPORTED, ConversionError

CHUNK = 1 << 20
TAR_BLOCK = 512


@dataclass(frozen=True)
class ArchiveLimits:
    max_unpacked_bytes: int = 512 << 20  # decompressed stream, and all members together
    max_members: int = 5000
    max_member_bytes: int = 128 << 20


@dataclass
class Unpacked:
    root: Path
    files: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def is_tar_header(block: bytes) -> bool:
    """True when ``block`` starts with a valid tar header (checksum verified)."""
    if len(block) < TAR_BLOCK:
        return False
    try:
        tarfile.TarInfo.frombuf(block[:TAR_BLOCK], "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


def gunzip_limited(source: Path, target: Path, limit: int) -> int:
    """Decompress ``source`` into ``target``, stopping past ``limit`` bytes (a gzip bomb)."""
    written = 0
    try:
        with gzip.open(source, "rb") as stream, target.open("wb") as out:
            while block := stream.read(CHUNK):
                written += len(block)
                if written > limit:
                    raise ConversionError(TOO_LARGE, f"decompresses to more than {limit:,} "
                                                     "bytes (stopped there: a gzip bomb?)")
                out.write(block)
    except (OSError, EOFError, zlib.error) as exc:
        raise ConversionError(CORRUPT, f"broken gzip stream: {exc}") from None
    return written


def _vet(member: tarfile.TarInfo, dest: Path, limits: ArchiveLimits
         ) -> tuple[tarfile.TarInfo | None, str | None]:
    """The member as it may be extracted, or None and why it is skipped."""
    if not (member.isfile() or member.isdir()):
        kind = "link" if member.issym() or member.islnk() else "special file"
        target = f" -> {member.linkname}" if member.linkname else ""
        return None, f"{member.name}{target} ({kind})"
    try:
        safe = tarfile.data_filter(member, str(dest))
    except tarfile.FilterError as exc:
        return None, f"{member.name} ({type(exc).__name__})"
    if safe.size > limits.max_member_bytes:
        raise ConversionError(TOO_LARGE, f"member {member.name} has {member.size:,} bytes, "
                                         f"over the limit of {limits.max_member_bytes:,}")
    return safe, None


def extract_tar(tar_path: Path, dest: Path, limits: ArchiveLimits) -> Unpacked:
    unpacked = Unpacked(dest)
    total = 0
    try:
        with tarfile.open(tar_path, "r:") as tar:
            members = []
            for count, member in enumerate(tar, start=1):
                if count > limits.max_members:
                    raise ConversionError(TOO_LARGE, f"more than {limits.max_members:,} members")
                safe, reason = _vet(member, dest, limits)
                if safe is None:
                    unpacked.skipped.append(reason or member.name)
                    continue
                total += safe.size
                if total > limits.max_unpacked_bytes:
                    raise ConversionError(TOO_LARGE, f"members hold more than "
                                                     f"{limits.max_unpacked_bytes:,} bytes")
                members.append(safe)
            # The vetted members, extracted under the data filter once more.
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise ConversionError(CORRUPT, f"broken tar archive: {exc}") from None
    unpacked.files = sorted(p for p in dest.rglob("*") if p.is_file() and not p.is_symlink())
    return unpacked


def unpack_eprint(source: Path, dest: Path, limits: ArchiveLimits = ArchiveLimits()
                  ) -> Unpacked:
    """Unpack an e-print into the empty folder ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as handle:
        magic = handle.read(2)
    stream = dest.parent / f".{dest.name}.stream"
    try:
        if magic == b"\x1f\x8b":
            gunzip_limited(source, stream, limits.max_unpacked_bytes)
        else:
            shutil.copyfile(source, stream)
        with stream.open("rb") as handle:
            head = handle.read(TAR_BLOCK)
        if is_tar_header(head):
            return extract_tar(stream, dest, limits)
        if b"\\" not in head and b"%" not in head:
            raise ConversionError(UNSUPPORTED, "e-print is neither a tar archive nor TeX")
        main = dest / "main.tex"
        shutil.move(stream, main)
        return Unpacked(dest, [main])
    finally:
        stream.unlink(missing_ok=True)
