"""The Kaggle/Cornell arXiv metadata snapshot: JSON lines, plain or gzip, millions of records.

Read in byte chunks of whole lines and parsed by Polars (no Python object per record). A chunk
Polars cannot read is bisected down to its bad lines, which are rejected with their line
numbers while the rest of the chunk still loads."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import polars as pl

from vault_pipeline.parse.common import CANDIDATE_SCHEMA, Batch, ParseReject, snippet
from vault_pipeline.parse.finalize import WHITESPACE_TO_COLLAPSE

SOURCE = "arxiv_snapshot"
CHUNK_BYTES = 8 << 20
"""Big enough for Polars to work in parallel, small enough that the allocator reuses the
buffers (reads of 32 MiB pay fresh page faults every time, four times slower)."""

SNAPSHOT_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "submitter": pl.String,
        "authors": pl.String,
        "title": pl.String,
        "comments": pl.String,
        "journal-ref": pl.String,
        "doi": pl.String,
        "report-no": pl.String,
        "categories": pl.String,
        "license": pl.String,
        "abstract": pl.String,
        "versions": pl.List(pl.Struct({"version": pl.String, "created": pl.String})),
        "update_date": pl.String,
        "authors_parsed": pl.List(pl.List(pl.String)),
    }
)
_RFC2822 = "%a, %d %b %Y %H:%M:%S GMT"
LINE_SEPARATOR = "\x1f"  # a control character valid JSON never holds raw
LINE_SCHEMA = pl.Schema({"line": pl.String})
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark


def is_gzip(path: Path) -> bool:
    """Tell gzip from plain JSON lines by content (the gzip magic), not by name."""
    with path.open("rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def open_snapshot(path: Path) -> IO[bytes]:
    """Open plain or gzip JSON lines."""
    return gzip.open(path, "rb") if is_gzip(path) else path.open("rb")


def _chunks(stream: IO[bytes], chunk_bytes: int) -> Iterator[tuple[int, bytes]]:
    """Yield (first line number, bytes of whole lines)."""
    line_no, carry = 1, b""
    while True:
        block = stream.read(chunk_bytes)
        if not block:
            if carry:
                yield line_no, carry
            return
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            carry += block
            continue
        chunk = b"".join((carry, memoryview(block)[:cut]))  # one copy, not two
        carry = block[cut:]
        yield line_no, chunk
        line_no += chunk.count(b"\n")


def _read(data: bytes) -> pl.DataFrame:
    return pl.read_ndjson(io.BytesIO(data), schema=SNAPSHOT_SCHEMA, ignore_errors=False)


def suspect(record: pl.Expr) -> pl.Expr:
    """Records ``str.json_decode`` may read differently from the strict reader: a line that
    decodes to null, or an ``authors_parsed`` entry of one name (``json_decode`` wraps a
    scalar where a list belongs into such an entry; the strict reader refuses it)."""
    return record.is_null() | record.struct.field("authors_parsed").list.eval(
        pl.element().list.len() == 1).list.any().fill_null(False)


def _decode(lines: pl.LazyFrame) -> pl.LazyFrame:
    return lines.filter(pl.col("line").is_not_null()).with_columns(
        pl.col("_line").cast(pl.Int64),
        record=pl.col("line").str.json_decode(pl.Struct(SNAPSHOT_SCHEMA)),
    )


def _read_fast(data: bytes, first_line: int) -> pl.DataFrame | None:
    """The chunk with a ``_line`` column, or None when only :func:`_read` may judge it.

    ``read_ndjson`` builds the nested ``versions`` and ``authors_parsed`` columns several times
    slower than ``str.json_decode`` does, so whole lines are read as strings (CSV on a control
    character, which valid JSON never holds raw) and decoded in one pass. Blank lines stay
    rows of the CSV, so line numbers need no Python loop. Anything the strict reader might
    judge differently returns None: a BOM, a decode error, a :func:`suspect` record."""
    if data.startswith(BOM):
        return None
    try:
        lines = pl.read_csv(io.BytesIO(data), has_header=False, separator=LINE_SEPARATOR,
                            quote_char=None, schema=LINE_SCHEMA)
        if lines.height != data.count(b"\n") + (not data.endswith(b"\n")):
            return None
        decoded = _decode(lines.lazy().with_row_index("_line", offset=first_line)).collect()
        if decoded.select(suspect(pl.col("record")).any()).item():
            return None
    except pl.exceptions.PolarsError:
        return None
    return decoded.select(pl.col("record").struct.unnest(), "_line")


def _scan_lines(path: Path) -> pl.LazyFrame:
    return pl.scan_csv(path, has_header=False, separator=LINE_SEPARATOR, quote_char=None,
                       schema=LINE_SCHEMA, row_index_name="_line", row_index_offset=1)


def count_lines(path: Path) -> int:
    """Lines of a plain snapshot as :func:`scan_snapshot` sees them, blank ones included,
    counted without being parsed."""
    return _scan_lines(path).select(pl.len()).collect().item()


def scan_snapshot(path: Path) -> pl.LazyFrame:
    """A plain (not gzip) snapshot as one lazy query for the streaming engine: its records
    unnested, with ``_line``, ``_suspect`` (see :func:`suspect`) and ``_text``, the line
    itself, kept for suspect records only so that the strict reader can judge them.

    The query raises a ``PolarsError`` on a line that is not JSON or not UTF-8 (or holds
    the CSV separator); the caller then reads the file with :func:`parse_snapshot`."""
    return _decode(_scan_lines(path)).with_columns(_suspect=suspect(pl.col("record"))).select(
        pl.col("record").struct.unnest(), "_line", "_suspect",
        _text=pl.when("_suspect").then("line"),
    )


def _line_error(line: bytes) -> str:
    """A readable reason for one line Polars refused."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"invalid UTF-8 at byte {exc.start}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return "JSON nested too deeply"
    if not isinstance(value, dict):
        return f"JSON {type(value).__name__}, expected an object"
    return "fields of unexpected types for the snapshot schema"


def _tolerant_read(
    lines: list[bytes], first_line: int
) -> tuple[list[pl.DataFrame], list[ParseReject]]:
    """Bisect ``lines`` until every readable run is read and every bad line is isolated."""
    try:
        frame = _read(b"\n".join(lines))
        return [frame.with_columns(_line=pl.Series(_line_numbers(lines, first_line)))], []
    except pl.exceptions.PolarsError:  # any read failure means: look closer
        if len(lines) == 1:
            return [], [ParseReject(first_line, None, _line_error(lines[0]), snippet(lines[0]))]
    half = len(lines) // 2
    left_frames, left_rejects = _tolerant_read(lines[:half], first_line)
    right_frames, right_rejects = _tolerant_read(lines[half:], first_line + half)
    return left_frames + right_frames, left_rejects + right_rejects


def _line_numbers(lines: list[bytes], first_line: int) -> list[int]:
    return [first_line + i for i, line in enumerate(lines) if line.strip()]


def snapshot_candidates(records: pl.LazyFrame, *keep: str) -> pl.LazyFrame:
    """Snapshot records → candidate rows (plus the columns named in ``keep``).

    Values used more than once (version dates, the parsed-authors test, categories) are
    computed once as columns first: ``when`` branches and ``list.eval`` escape
    common-subexpression elimination."""
    versions = pl.col("versions").list.eval(pl.struct(
        version=pl.element().struct.field("version").str.strip_prefix("v")
        .cast(pl.Int32, strict=False),
        created=pl.element().struct.field("created").str.strptime(pl.Date, _RFC2822,
                                                                    strict=False)))
    created = pl.col("_versions").list.eval(pl.element().struct.field("created"))
    numbers = pl.col("_versions").list.eval(pl.element().struct.field("version"))
    parsed_names = pl.col("authors_parsed").list.eval(pl.concat_str(
        [pl.element().list.get(1, null_on_oob=True), pl.element().list.get(0, null_on_oob=True),
         pl.element().list.get(2, null_on_oob=True)],
        separator=" ", ignore_nulls=True))  # whitespace is collapsed by `finalize`
    # `when` evaluates both branches; string work on nulls is free, so split only the
    # `authors` strings that will be used
    fallback_names = (
        pl.when(pl.col("_has_parsed")).then(None).otherwise(pl.col("authors"))
        .str.replace_all(WHITESPACE_TO_COLLAPSE, " ").str.replace_all(r",? and ", ", ")
        .str.split(", ")
    )
    return records.with_columns(_versions=versions).with_columns(
        _created=created,
        _numbers=numbers,
        _has_parsed=pl.col("authors_parsed").list.len() > 0,
        _categories=pl.col("categories").str.split(" "),
        _id=pl.col("id").str.strip_chars(),
    ).with_columns(
        _max_version=pl.col("_numbers").list.max(),
        # v1's date and the last version's date, by version number, never min and max: a v1
        # dated after a later version must stay visible to validation, not be swapped
        _v1=pl.col("_created").list.get(pl.col("_numbers").list.arg_min(), null_on_oob=True),
        _last=pl.col("_created").list.get(pl.col("_numbers").list.arg_max(), null_on_oob=True),
        _earliest=pl.col("_created").list.min(),
    ).select(
        *keep,
        raw_id=pl.when(pl.col("_max_version").is_not_null())
        .then(pl.col("_id") + pl.lit("v") + pl.col("_max_version").cast(pl.String))
        .otherwise(pl.col("_id")),
        title=pl.col("title"),
        abstract=pl.col("abstract"),
        authors=pl.when(pl.col("_has_parsed")).then(parsed_names).otherwise(fallback_names),
        categories=pl.col("_categories"),
        primary_category=pl.col("_categories").list.first(),
        published=pl.coalesce("_v1", "_earliest"),
        # a later version dated before v1 shows as an update before publication (rejected)
        updated=pl.when(pl.col("_earliest") < pl.col("_v1")).then("_earliest")
        .otherwise(pl.coalesce("_last", "_earliest")),
        versions=pl.when(pl.col("_versions").list.len() > 0).then("_versions"),
        doi=pl.col("doi"),
        journal_ref=pl.col("journal-ref"),
        comments=pl.col("comments"),
        license=pl.col("license"),
        source=pl.lit(SOURCE),
        position=pl.col("_line").cast(pl.Int64),
    ).cast(CANDIDATE_SCHEMA)  # type: ignore[arg-type]


def _to_candidates(frame: pl.DataFrame) -> pl.DataFrame:
    return snapshot_candidates(frame.lazy()).collect()


def reread_lines(lines: list[tuple[int, bytes]]) -> Batch:
    """Read numbered lines one by one with the strict reader: candidates and rejects."""
    frames: list[pl.DataFrame] = []
    rejects: list[ParseReject] = []
    for number, line in lines:
        read, refused = _tolerant_read([line], number)
        frames += [_to_candidates(f) for f in read if f.height]
        rejects += refused
    return Batch(pl.concat(frames) if frames else CANDIDATE_SCHEMA.to_frame(), rejects)


def parse_snapshot(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Batch]:
    """The batch reader: chunks of whole lines, each read fast or, failing that, line-exact.
    A UTF-8 byte order mark opening the file is skipped, as the streaming reader skips it."""
    with open_snapshot(path) as stream:
        for first_line, chunk in _chunks(stream, chunk_bytes):
            if first_line == 1 and chunk.startswith(BOM):
                chunk = chunk[len(BOM):]
            fast = _read_fast(chunk, first_line)
            if fast is not None:
                yield Batch(_to_candidates(fast))
                continue
            try:
                frame = _read(chunk)
                lines = None
            except pl.exceptions.PolarsError:  # fall back to the line-exact reader
                lines = chunk.split(b"\n")
                if lines and lines[-1] == b"":
                    lines.pop()
            if lines is None:
                numbers = _line_numbers(chunk.split(b"\n"), first_line)
                frame = frame.with_columns(_line=pl.Series(numbers, dtype=pl.Int64))
                yield Batch(_to_candidates(frame))
                continue
            frames, rejects = _tolerant_read(lines, first_line)
            good = [_to_candidates(f) for f in frames if f.height]
            yield Batch(pl.concat(good) if good else CANDIDATE_SCHEMA.to_frame(), rejects)
