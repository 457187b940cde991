"""One document, start to finish, as it runs inside a worker process: read the input,
convert it (PDF or e-print), clean and truncate it, time it, and turn every failure into a
status, so only a hang or a crash of the process itself is left for the pool to report."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from vault_pipeline.documents.archive import ArchiveLimits, unpack_eprint
from vault_pipeline.documents.cleaning import CLEANING_VERSION, DEFAULT_MAX_CHARS, clean_document
from vault_pipeline.documents.fast_pdf import converter_version as fast_version
from vault_pipeline.documents.fast_pdf import pdf_to_markdown_fast
from vault_pipeline.documents.latex import converter_version as latex_version
from vault_pipeline.documents.latex import eprint_to_markdown
from vault_pipeline.documents.outcome import (
    EMPTY,
    FAILED,
    OK,
    TOO_LARGE,
    Conversion,
    ConversionError,
    Converted,
)
from vault_pipeline.documents.pdf import RULED, PdfLimits, check_table_mode, pdf_to_markdown
from vault_pipeline.documents.pdf import converter_version as pdf_version

PDF = "pdf"
LATEX = "latex"
# PDF converters: pymupdf4llm, or the fast path over PyMuPDF's own structured text.
PYMUPDF4LLM = "pymupdf4llm"
FAST = "fast"
PDF_CONVERTERS = {PYMUPDF4LLM: "pymupdf4llm", FAST: "pymupdf-fast"}  # setting -> row's name
DEFAULT_PDF_CONVERTER = FAST  # at least as good as pymupdf4llm on every measure (benchmarks)


@dataclass(frozen=True)
class Settings:
    """Everything that decides a conversion's output (part of its version) or its limits."""

    max_chars: int = DEFAULT_MAX_CHARS
    pdf_converter: str = DEFAULT_PDF_CONVERTER  # pymupdf4llm or fast (fast_pdf.py)
    use_layout: bool = False  # pymupdf4llm's layout model (pdf.py)
    tables: str = RULED  # pages searched for tables (pdf.py, fast_pdf.py)
    pdf: PdfLimits = field(default_factory=PdfLimits)
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)

    def __post_init__(self) -> None:
        check_table_mode(self.tables)
        if self.pdf_converter not in PDF_CONVERTERS:
            raise ValueError(f"pdf_converter must be one of {', '.join(PDF_CONVERTERS)}, "
                             f"not {self.pdf_converter!r}")

    def converter(self, kind: str) -> tuple[str, str]:
        """(converter name, version) of a kind of input: a conversion is reused only when
        both match (so switching the PDF converter converts every PDF again), and the
        cleaning version and the truncation limit are part of it."""
        if kind != PDF:
            name, base = "pylatexenc", latex_version()
        elif self.pdf_converter == FAST:
            name, base = PDF_CONVERTERS[FAST], fast_version(self.tables)
        else:
            name, base = PDF_CONVERTERS[PYMUPDF4LLM], pdf_version(self.use_layout, self.tables)
        return name, f"{base}; cleaning {CLEANING_VERSION}; max_chars {self.max_chars}"


@dataclass(frozen=True)
class Task:
    """One input for a worker: what it is, where it lies, where it may unpack."""

    key: str
    kind: str
    path: str
    scratch: str
    settings: Settings


def _convert(task: Task) -> Converted:
    path = Path(task.path)
    if task.kind == PDF:
        if path.stat().st_size > task.settings.pdf.max_bytes:
            raise ConversionError(TOO_LARGE, f"{path.stat().st_size:,} bytes, over the limit "
                                             f"of {task.settings.pdf.max_bytes:,}")
        if task.settings.pdf_converter == FAST:
            return pdf_to_markdown_fast(path.read_bytes(), task.settings.pdf,
                                        task.settings.tables)
        return pdf_to_markdown(path.read_bytes(), task.settings.pdf, task.settings.use_layout,
                               task.settings.tables)
    Path(task.scratch).mkdir(parents=True, exist_ok=True)
    unpack_dir = Path(tempfile.mkdtemp(prefix=f"{task.key[:16]}-", dir=task.scratch))
    try:
        unpacked = unpack_eprint(path, unpack_dir / "src", task.settings.archive)
        converted = eprint_to_markdown(unpacked.root, unpacked.files)
        if unpacked.skipped:
            skipped = "; ".join(unpacked.skipped[:10])
            more = f" and {len(unpacked.skipped) - 10} more" if len(unpacked.skipped) > 10 else ""
            converted = Converted(converted.markdown, converted.n_pages, converted.hidden_chars,
                                  (*converted.notes, f"skipped unsafe members: {skipped}{more}"))
        return converted
    finally:
        shutil.rmtree(unpack_dir, ignore_errors=True)


def convert_task(task: Task) -> Conversion:
    """Convert one input; never raises for a bad document (MemoryError included)."""
    started = time.perf_counter()

    def elapsed() -> int:
        return round((time.perf_counter() - started) * 1000)

    try:
        converted = _convert(task)
        cleaned = clean_document(converted.markdown, task.settings.max_chars)
    except ConversionError as exc:
        return Conversion.failure(exc.status, str(exc), elapsed())
    except MemoryError:
        return Conversion.failure(TOO_LARGE, "ran out of the worker's memory cap", elapsed())
    except RecursionError:
        return Conversion.failure(TOO_LARGE, "nested too deeply to parse", elapsed())
    except Exception as exc:  # noqa: BLE001 - a converter bug must cost one row, not the run
        return Conversion.failure(FAILED, f"{type(exc).__name__}: {exc}", elapsed())
    if not cleaned.text.strip():
        return Conversion(status=EMPTY, error="no body text left after cleaning",
                          n_pages=converted.n_pages, references=cleaned.references,
                          appendix=cleaned.appendix, hidden_chars=converted.hidden_chars,
                          notes="; ".join(converted.notes) or None, duration_ms=elapsed(),
                          identifiers=converted.clues)
    return Conversion(
        status=OK, text=cleaned.text, references=cleaned.references, appendix=cleaned.appendix,
        n_pages=converted.n_pages, n_chars=cleaned.n_chars, truncated=cleaned.truncated,
        hidden_chars=converted.hidden_chars, notes="; ".join(converted.notes) or None,
        duration_ms=elapsed(), identifiers=converted.clues,
    )
