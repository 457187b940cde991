"""PDF to Markdown with pymupdf4llm, after checks that turn a hostile or broken file into a
status (encrypted, corrupt, empty, too large) instead of an exception, and after hidden text
is dropped. Runs inside a worker process (PyMuPDF is not thread-safe and can crash).

pymupdf4llm runs without its layout model by default (``use_layout(False)``; the run config
switches it on): on the benchmark's paper-like PDFs the layout model's ONNX image features
cost about 1.2 s a page (0.8 pages/s against 4.1 without it on one core here), which would
push long papers past the 60 s timeout; elsewhere on this machine it measured 5.2 against
4.4 pages/s on six real arXiv PDFs, so it stays one switch away. Without it headings come
out as bold lines, which the cleaning turns into Markdown headings. OCR stays off: a page
without a text layer yields no text (status ``empty``)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

import pymupdf

from .invisible import drop_hidden_text
from .outcome import CORRUPT, EMPTY, ENCRYPTED, TOO_LARGE, ConversionError, Converted

HEADER_SEARCH = 1024  # a PDF header may follow junk; MuPDF and the importer look this far


@dataclass(frozen=True)
class PdfLimits:
    max_bytes: int = 200 << 20
    max_pages: int = 600


def converter_version(use_layout: bool = False) -> str:
    import pymupdf4llm

    return f"pymupdf4llm {pymupdf4llm.version} (PyMuPDF {pymupdf.VersionBind}" + \
        (", layout)" if use_layout else ")")


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


def _quiet():
    """pymupdf4llm prints notices on stdout; a worker's stdout is not the place for them."""
    return contextlib.redirect_stdout(io.StringIO())


def pdf_to_markdown(data: bytes, limits: PdfLimits = PdfLimits(),
                    use_layout: bool = False) -> Converted:
    """Convert PDF bytes to Markdown (hidden text dropped first)."""
    import pymupdf4llm

    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    doc, notes = open_pdf(data, limits)
    try:
        hidden = drop_hidden_text(doc)
        if hidden.total:
            notes.append(f"dropped hidden text: {hidden.white} white, {hidden.tiny} tiny, "
                         f"{hidden.invisible} invisible characters")
        with _quiet():
            pymupdf4llm.use_layout(use_layout)
            # Headers and footers are kept here and dropped by the cleaning (repeated lines,
            # page numbers, venue stamps): the layout model also labels a lone line of a
            # short page as a header, which must not cost the text.
            options = {"use_ocr": False} if use_layout else {}
            markdown = pymupdf4llm.to_markdown(doc, show_progress=False, **options)
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
                     notes=tuple(notes))


def pdf_plain_text(data: bytes) -> tuple[str, int]:
    """Plain PyMuPDF text of every page (the speed baseline of the benchmark)."""
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        return "\n".join(page.get_text() for page in doc), doc.page_count
