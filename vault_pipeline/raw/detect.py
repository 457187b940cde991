"""Recognise a raw file by its content, never its name, and check it before it may enter the
raw zone: XML pages are parsed in full (so a truncated page or an error envelope is caught at
the door); a snapshot is checked on its first lines (its bad lines are rejected later, one by
one, with their line numbers); a PDF by its header."""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from vault_pipeline.errors import RawFormatError
from vault_pipeline.parse import parse_raw_file, unwrap_recorded
from vault_pipeline.parse.atom import ATOM
from vault_pipeline.parse.oai import OAI
from vault_pipeline.parse.openreview import classify as classify_openreview
from vault_pipeline.parse.openreview import load_page
from vault_pipeline.parse.semantic_scholar import classify as classify_s2

PROBE_BYTES = 64 << 10
SNAPSHOT_KEYS = {"id", "title", "abstract"}
_TEX = re.compile(rb"\\(documentclass|documentstyle|begin\{document\}|input\b|section\b)")


@dataclass(frozen=True)
class Detection:
    kind: str
    wrapper: str | None
    extension: str
    records: int | None = None
    formats: str | None = None


def _xml_root(data: bytes) -> str | None:
    try:
        for _event, element in etree.iterparse(
            io.BytesIO(data), events=("start",), resolve_entities=False, no_network=True
        ):
            return element.tag
    except etree.XMLSyntaxError:
        return None
    return None


def _snapshot_lines(head: bytes) -> bool:
    """True when one of the first lines is a snapshot record (one bad line must not hide a
    good file)."""
    for line in head.splitlines()[:5]:
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(record, dict) and record.keys() >= SNAPSHOT_KEYS:
            return True
    return False


def _count_records(path: Path, kind: str, wrapper: str | None) -> tuple[int, set[str]]:
    records, sources = 0, set()
    for batch in parse_raw_file(path, kind, wrapper):
        for reject in batch.rejects:
            if reject.whole_file:
                where = f" at line {reject.position}" if reject.position else ""
                raise RawFormatError(f"{reject.reason}{where}")
        records += batch.candidates.height + len(batch.rejects)
        sources.update(batch.candidates.get_column("source").unique().to_list())
    return records, sources


def _classify_xml(data: bytes) -> tuple[str, str]:
    root = _xml_root(data)
    if root == f"{ATOM}feed":
        return "arxiv_api", ".xml"
    if root == f"{OAI}OAI-PMH":
        return "oai_pmh", ".xml"
    if root is None:
        raise RawFormatError("malformed XML (truncated or invalid)")
    raise RawFormatError(f"XML with root <{root}> is neither an arXiv Atom feed nor OAI-PMH")


def detect(path: Path) -> Detection:
    """Classify and check one file; RawFormatError says why a file is kept out."""
    size = path.stat().st_size
    if size == 0:
        raise RawFormatError("empty file")
    with path.open("rb") as handle:
        head = handle.read(PROBE_BYTES)
    if b"%PDF-" in head[:1024]:
        return Detection("pdf", None, ".pdf")
    if head[:2] == b"\x1f\x8b":
        inner = _gunzip_checked(path)
        if _snapshot_lines(inner):
            return Detection("arxiv_snapshot", "gzip", ".jsonl.gz")
        if (eprint := _eprint(inner)) is not None:
            return eprint
        raise RawFormatError("gzip file that is not an arXiv metadata snapshot (JSON lines) "
                             "nor an arXiv e-print (LaTeX source)")
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    detection: Detection
    if stripped.startswith(b"<"):
        kind, extension = _classify_xml(path.read_bytes())
        detection = Detection(kind, None, extension)
    elif stripped.startswith(b"{") and _is_recorded_response(path, size):
        kind, extension = _classify_xml(unwrap_recorded(path.read_bytes()))
        detection = Detection(kind, "recorded_http", ".json")
    elif stripped.startswith(b"{") and _snapshot_lines(head):
        return Detection("arxiv_snapshot", None, ".jsonl")
    elif stripped[:1] in (b"{", b"[") and (service := _service_json(path, size)) is not None:
        return service
    else:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError:
            raise RawFormatError("not UTF-8 text, nor PDF or gzip") from None
        raise RawFormatError("not an arXiv Atom feed, OAI-PMH response, snapshot or PDF, "
                             "nor an OpenReview or Semantic Scholar response")
    records, sources = _count_records(path, detection.kind, detection.wrapper)
    formats = ",".join(sorted(s.removeprefix("oai_") for s in sources)) or None
    return Detection(detection.kind, detection.wrapper, detection.extension, records, formats)


def _gunzip_checked(path: Path) -> bytes:
    """The first bytes of a gzip file, after reading its whole stream: a download cut short
    fails its end-of-stream or CRC check here, at the door, not in every later build."""
    try:
        with gzip.open(path, "rb") as handle:
            inner = handle.read(PROBE_BYTES)
            while handle.read(1 << 20):
                pass
    except (OSError, EOFError, zlib.error) as exc:
        raise RawFormatError(f"unreadable gzip (truncated or corrupt): {exc}") from None
    return inner


def _eprint(inner: bytes) -> Detection | None:
    """An arXiv e-print: a gzipped tar of the LaTeX source, or one gzipped TeX/PS file."""
    if inner[257:262] == b"ustar":
        return Detection("eprint", None, ".tar.gz")
    if _TEX.search(inner[:PROBE_BYTES]) or inner.startswith(b"%!PS"):
        return Detection("eprint", None, ".gz")
    return None


def _service_json(path: Path, size: int) -> Detection | None:
    """OpenReview notes or groups pages and Semantic Scholar batch responses, as received;
    None for JSON of no known service."""
    if size > 1 << 30:
        return None
    try:
        payload, extension = load_page(path.read_bytes())
    except UnicodeDecodeError:
        return None
    except json.JSONDecodeError as exc:
        raise RawFormatError(f"malformed JSON (truncated or invalid) at line {exc.lineno}: "
                             f"{exc.msg}") from None
    for classify in (classify_openreview, classify_s2):
        if (found := classify(payload)) is not None:
            kind, records = found
            return Detection(kind, None, extension, records, kind)
    return None


def _is_recorded_response(path: Path, size: int) -> bool:
    if size > 256 << 20:
        return False
    try:
        record = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and {"status_code", "body"} <= record.keys()
