"""Settings of the documents stage, resolved like every stage's
(:mod:`vault_pipeline.pipeline.settings`:
defaults, `[documents]` in `vault.toml`, `VAULT_DOCUMENTS_<FIELD>`, the run config). Flat, as
a user sets them; :meth:`DocumentsSettings.config` turns them into the converter's limits."""

from __future__ import annotations

from dataclasses import dataclass

from vault_pipeline.documents.archive import ArchiveLimits
from vault_pipeline.documents.build import DocumentsConfig
from vault_pipeline.documents.cleaning import DEFAULT_MAX_CHARS
from vault_pipeline.documents.convert import DEFAULT_PDF_CONVERTER, Settings
from vault_pipeline.documents.pdf import RULED, PdfLimits
from vault_pipeline.documents.workers import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, PoolSettings
from vault_pipeline.pipeline.settings import StageSettings

STAGE = "documents"


@dataclass(frozen=True)
class DocumentsSettings(StageSettings):
    """Limits of a run; the truncation limit, the PDF converter and its switches are part of
    the converter version, so changing them converts every document again."""

    SECTION = STAGE

    timeout_s: float = DEFAULT_TIMEOUT_S
    """Seconds one document may take to convert before its worker is stopped."""
    workers: int = 0  # 0: one per core
    """Conversion processes; 0: one per core."""
    memory_mb: int = DEFAULT_MEMORY_MB  # 0: no cap
    """Address space in MB one document may add to its warmed-up conversion process; 0: no
    cap."""
    max_chars: int = DEFAULT_MAX_CHARS
    """Characters of text kept per document (the rest is cut at a paragraph)."""
    max_pages: int = PdfLimits().max_pages
    """PDF pages converted per document."""
    max_unpacked_mb: int = ArchiveLimits().max_unpacked_bytes >> 20
    """Most MB a LaTeX source archive may unpack to (a guard against archive bombs)."""
    pdf_converter: str = DEFAULT_PDF_CONVERTER  # "fast" (PyMuPDF's own text) or "pymupdf4llm"
    """`fast` (the default: PyMuPDF's own text with headings, columns and tables, several times
    faster) or `pymupdf4llm` (its Markdown)."""
    use_layout: bool = False
    """Let pymupdf4llm run its layout model (slower, better reading order on complex pages)."""
    tables: str = RULED  # "ruled": table search only on pages with ruled lines; "all"; "off"
    """Pages searched for tables: `ruled` (only pages with ruled lines), `all` or `off`."""
    max_tries: int = 3  # a timeout, crash or error is tried again up to this many times
    """Times a timeout, crash or error is tried before the document stays failed."""
    retry_failed: bool = False  # try every such failure again now (`--retry-failed`)
    """Try every document that failed before again in this run."""

    def config(self) -> DocumentsConfig:
        """The build's configuration: converter settings, worker pool, retries."""
        archive = ArchiveLimits(max_unpacked_bytes=self.max_unpacked_mb << 20)
        settings = Settings(max_chars=self.max_chars, pdf_converter=self.pdf_converter,
                            use_layout=self.use_layout, tables=self.tables,
                            pdf=PdfLimits(max_pages=self.max_pages), archive=archive)
        pool = PoolSettings(workers=self.workers, timeout_s=self.timeout_s,
                            memory_mb=self.memory_mb or None)
        return DocumentsConfig(settings=settings, pool=pool, max_tries=self.max_tries,
                               retry_failed=self.retry_failed)
