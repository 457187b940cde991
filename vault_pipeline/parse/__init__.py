"""Metadata parsers, one per raw file kind, all yielding :class:`Batch` streams."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

from vault_pipeline.errors import RawFormatError
from vault_pipeline.parse.atom import parse_atom
from vault_pipeline.parse.common import Batch, ParseReject, batches_from_rows
from vault_pipeline.parse.oai import parse_oai
from vault_pipeline.parse.snapshot import parse_snapshot

METADATA_KINDS = ("arxiv_api", "oai_pmh", "arxiv_snapshot")


def unwrap_recorded(data: bytes) -> bytes:
    """The body of a recorded ``{url, status_code, body}`` HTTP response, if 2xx."""
    try:
        record = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RawFormatError(f"recorded response is not valid JSON: {exc}") from exc
    if not isinstance(record, dict) or not {"status_code", "body"} <= record.keys():
        raise RawFormatError("JSON object is not a recorded {url, status_code, body} response")
    status = record["status_code"]
    if not isinstance(status, int) or not 200 <= status < 300:
        raise RawFormatError(f"recorded HTTP {status} response from {record.get('url', '?')}")
    body = record["body"]
    if not isinstance(body, str):
        raise RawFormatError("recorded response has no text body")
    return _undo_latin1_decoding(body).encode("utf-8")


def _undo_latin1_decoding(body: str) -> str:
    """Recorders that decode an un-labelled UTF-8 body as Latin-1 (HTTP's old default) store
    mojibake (``RamÃ­rez``). Such text round-trips exactly through Latin-1 back to valid UTF-8,
    which real Latin-1 text almost never does; anything else is left as it is."""
    try:
        return body.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return body


def parse_raw_file(path: Path, kind: str, wrapper: str | None = None) -> Iterator[Batch]:
    """Parse one raw file of a metadata kind. Raises RawFormatError for file-level errors."""
    if kind == "arxiv_snapshot":
        yield from parse_snapshot(path)
        return
    data = path.read_bytes()
    if wrapper == "recorded_http":
        data = unwrap_recorded(data)
    if kind == "arxiv_api":
        yield from batches_from_rows(parse_atom(io.BytesIO(data)))
    elif kind == "oai_pmh":
        yield from batches_from_rows(parse_oai(io.BytesIO(data)))
    else:
        raise RawFormatError(f"no metadata parser for raw kind {kind!r}")


__all__ = ["METADATA_KINDS", "Batch", "ParseReject", "parse_raw_file", "unwrap_recorded"]
