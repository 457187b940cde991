"""PDF to Markdown with pymupdf4llm, after checks that turn a hostile or broken file into a
status (encrypted, corrupt, empty, too large) instead of an exception, and after hidden text
is dropped. Runs inside a worker process (PyMuPDF is not thread-safe and can crash).

pymupdf4llm runs without its layout model by default (``use_layout(False)``; the run config
switches it on): on the benchmark's paper-like PDFs the layout model's ONNX image features
cost about 1.2 s a page (0.8 pages/s against 4.1 without it on one core here), which would
push long papers past the 60 s timeout; elsewhere on this machine it measured 5.2 against
4.4 pages/s on six real arXiv PDFs, so it stays one switch away. Without it headings come
out as bold lines, which the cleaning turns into Markdown headings. OCR stays off: a page
without a text layer yields no text (status ``empty``).

Without the layout model three quarters of the time went to pymupdf4llm's table finder, run
on every page; by default (``tables="ruled"``) it runs only on pages whose vector graphics
could form a ruled table, which gives the same text about three times faster (see
benchmarks/README.md)."""

from __future__ import annotations

import contextlib
import io
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from vault_pipeline.documents.identify import content_clues
from vault_pipeline.documents.invisible import drop_hidden_text
from vault_pipeline.documents.outcome import (
    CORRUPT,
    EMPTY,
    ENCRYPTED,
    TOO_LARGE,
    ConversionError,
    Converted,
)
from vault_pipeline.pipeline.lazy import lazy_import

pymupdf = lazy_import("pymupdf")  # about 0.35 s: loaded on first use, not with the definitions

RULED, ALL, OFF = "ruled", "all", "off"
TABLE_MODES = (RULED, ALL, OFF)
RULE_TOLERANCE = 3.0  # points: pymupdf's snap tolerance for an axis-parallel edge
HEADER_SEARCH = 1024  # a PDF header may follow junk; MuPDF and the importer look this far


@dataclass(frozen=True)
class PdfLimits:
    max_bytes: int = 200 << 20
    max_pages: int = 600


def converter_version(use_layout: bool = False, tables: str = RULED) -> str:
    """The version a conversion is reused under. ``ruled`` and ``all`` give the same text
    (``ruled`` skips only pages where no table can be found), so they share it."""
    import pymupdf4llm

    options = ", layout" if use_layout else ", tables off" if tables == OFF else ""
    return f"pymupdf4llm {pymupdf4llm.version} (PyMuPDF {pymupdf.VersionBind}{options})"


def open_pdf(data: bytes, limits: PdfLimits) -> tuple[pymupdf.Document, list[str]]:
    """Open PDF bytes, or raise ConversionError saying why not; return notes on repairs."""
    if not data:
        raise ConversionError(EMPTY, "zero-byte file")
    if len(data) > limits.max_bytes:
        raise ConversionError(TOO_LARGE, f"{len(data):,} bytes, over the limit of "
                                         f"{limits.max_bytes:,}")
    offset = data.find(b"%PDF-", 0, HEADER_SEARCH)
    if offset < 0:
        raise ConversionError(CORRUPT, "no %PDF- header in the first 1 KiB")
    notes = [f"skipped {offset} bytes before %PDF-"] if offset else []
    pymupdf.TOOLS.mupdf_warnings(reset=True)
    try:
        doc = pymupdf.open(stream=data[offset:], filetype="pdf")
    except (pymupdf.FileDataError, pymupdf.EmptyFileError, RuntimeError, ValueError) as exc:
        raise ConversionError(CORRUPT, f"cannot open: {exc}") from None
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise ConversionError(ENCRYPTED, "encrypted: a password is needed to open it")
    if doc.is_repaired:
        notes.append("damaged cross-reference table repaired")
    if doc.page_count == 0:
        doc.close()
        raise ConversionError(CORRUPT if notes else EMPTY, "no pages")
    if doc.page_count > limits.max_pages:
        pages = doc.page_count
        doc.close()
        raise ConversionError(TOO_LARGE, f"{pages} pages, over the limit of {limits.max_pages}")
    return doc, notes


def check_table_mode(tables: str) -> None:
    """A wrong setting is the caller's error, never a document's status."""
    if tables not in TABLE_MODES:
        raise ValueError(f"tables must be one of {', '.join(TABLE_MODES)}, not {tables!r}")


def ruled_pages(doc: pymupdf.Document) -> list[bool]:
    """For each page, whether its vector graphics could form a ruled table: at least two
    horizontal and two vertical strokes (a rectangle counts for both, filled or not, since
    a thin filled rectangle is how many producers draw a rule). The ``lines_strict`` table
    finder builds cells from exactly these edges, so a page without them cannot hold a table
    it would find, and its costly character scan is skipped."""
    flags = []
    for page in doc:
        horizontal = vertical = 0
        for path in page.get_cdrawings():
            for item in path["items"]:
                if item[0] in ("re", "qu"):
                    horizontal += 2
                    vertical += 2
                elif item[0] == "l":
                    (x0, y0), (x1, y1) = item[1], item[2]
                    horizontal += abs(y1 - y0) <= RULE_TOLERANCE
                    vertical += abs(x1 - x0) <= RULE_TOLERANCE
            if horizontal >= 2 and vertical >= 2:
                break
        flags.append(horizontal >= 2 and vertical >= 2)
    return flags


def _markdown_without_layout(doc: pymupdf.Document, tables: str) -> str:
    """pymupdf4llm's Markdown of ``doc``, its table finder run on the pages ``tables`` says.

    The finder (``lines_strict``) is three quarters of the conversion time on a text page
    (it turns every character into a dictionary); ``ruled`` runs it only where
    ``ruled_pages`` allows a table, ``all`` on every page, ``off`` nowhere. Pages are
    converted in runs of the same choice, headings judged once over the whole document;
    pymupdf4llm joins pages the same way, so the text is what one call would give."""
    import pymupdf4llm
    from pymupdf4llm.helpers.pymupdf_rag import IdentifyHeaders

    wanted = ruled_pages(doc) if tables == RULED else [tables == ALL] * doc.page_count
    headers = IdentifyHeaders(doc)
    parts = []
    for find, run in itertools.groupby(range(doc.page_count), key=wanted.__getitem__):
        parts.append(pymupdf4llm.to_markdown(
            doc, pages=list(run), hdr_info=headers, show_progress=False,
            table_strategy="lines_strict" if find else None, ignore_graphics=not find))
    return "".join(parts)


def _quiet():
    """pymupdf4llm prints notices on stdout; a worker's stdout is not the place for them."""
    return contextlib.redirect_stdout(io.StringIO())


def convert_pdf(data: bytes, limits: PdfLimits,
                render: Callable[[pymupdf.Document], str]) -> Converted:
    """Open PDF bytes, drop hidden text, and let ``render`` turn the document into Markdown;
    every converter shares this so statuses and notes mean the same whichever renders."""
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    doc, notes = open_pdf(data, limits)
    try:
        hidden = drop_hidden_text(doc)
        if hidden.total:
            notes.append(f"dropped hidden text: {hidden.white} white, {hidden.tiny} tiny, "
                         f"{hidden.invisible} invisible characters")
        markdown = render(doc)
        clues = content_clues(doc).to_json()
        pages = doc.page_count
        repaired = doc.is_repaired
    except (RuntimeError, ValueError) as exc:
        raise ConversionError(CORRUPT, f"conversion failed: {exc}") from None
    finally:
        doc.close()
    if not markdown.strip():
        if repaired:
            raise ConversionError(CORRUPT, "damaged PDF (repaired) with no extractable text")
        raise ConversionError(EMPTY, f"no extractable text on {pages} page(s) "
                                     "(a scan without a text layer? OCR is off)")
    return Converted(markdown=markdown, n_pages=pages, hidden_chars=hidden.total,
                     notes=tuple(notes), clues=clues)


def pdf_to_markdown(data: bytes, limits: PdfLimits = PdfLimits(),
                    use_layout: bool = False, tables: str = RULED) -> Converted:
    """Convert PDF bytes to Markdown with pymupdf4llm (hidden text dropped first)."""
    import pymupdf4llm

    check_table_mode(tables)

    def render(doc: pymupdf.Document) -> str:
        with _quiet():
            pymupdf4llm.use_layout(use_layout)
            # Headers and footers are kept here and dropped by the cleaning (repeated lines,
            # page numbers, venue stamps): the layout model also labels a lone line of a
            # short page as a header, which must not cost the text.
            if use_layout:
                return pymupdf4llm.to_markdown(doc, show_progress=False, use_ocr=False)
            return _markdown_without_layout(doc, tables)

    return convert_pdf(data, limits, render)


def pdf_plain_text(data: bytes) -> tuple[str, int]:
    """Plain PyMuPDF text of every page (the speed baseline of the benchmark)."""
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        return "\n".join(page.get_text() for page in doc), doc.page_count
