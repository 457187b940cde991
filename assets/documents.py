"""documents: every paper's best full text (LaTeX, PDF, else abstract) as clean Markdown,
and the record of every conversion that makes it incremental."""


import dagster as dg

from vault_pipeline.documents import quality
from vault_pipeline.documents.archive import ArchiveLimits
from vault_pipeline.documents.build import DocumentsConfig, build_documents
from vault_pipeline.documents.cleaning import DEFAULT_MAX_CHARS
from vault_pipeline.documents.convert import DEFAULT_PDF_CONVERTER, Settings
from vault_pipeline.documents.pdf import RULED, PdfLimits
from vault_pipeline.documents.workers import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, PoolSettings
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS

from .metadata import check_result, counts_table, table_path, table_spec
from .resources import VaultResource


class DocumentsRunConfig(dg.Config):
    """Limits of a run; the truncation limit, the PDF converter and its switches are part of
    the converter version, so changing them converts every document again."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    workers: int = 0  # 0: one per core
    memory_mb: int = DEFAULT_MEMORY_MB
    max_chars: int = DEFAULT_MAX_CHARS
    max_pages: int = PdfLimits().max_pages
    max_unpacked_mb: int = ArchiveLimits().max_unpacked_bytes >> 20
    pdf_converter: str = DEFAULT_PDF_CONVERTER  # "pymupdf4llm" or "fast" (PyMuPDF's own text)
    use_layout: bool = False
    tables: str = RULED  # "ruled": table search only on pages with ruled lines; "all"; "off"
    max_tries: int = 3  # a timeout, crash or error is tried again up to this many times
    retry_failed: bool = False  # try every such failure again now (`--retry-failed`)

    def to_library(self) -> DocumentsConfig:
        archive = ArchiveLimits(max_unpacked_bytes=self.max_unpacked_mb << 20)
        settings = Settings(max_chars=self.max_chars, pdf_converter=self.pdf_converter,
                            use_layout=self.use_layout,
                            tables=self.tables, pdf=PdfLimits(max_pages=self.max_pages),
                            archive=archive)
        pool = PoolSettings(workers=self.workers, timeout_s=self.timeout_s,
                            memory_mb=self.memory_mb or None)
        return DocumentsConfig(settings=settings, pool=pool, max_tries=self.max_tries,
                               retry_failed=self.retry_failed)


@dg.multi_asset(
    specs=[table_spec(DOCUMENTS, "documents", ["raw_files", "papers"],
                      kinds=frozenset({"pymupdf", "parquet"})),
           table_spec(DOCUMENT_ATTEMPTS, "documents", ["raw_files", "papers"],
                      kinds=frozenset({"parquet"}))],
)
def documents(context: dg.AssetExecutionContext, config: DocumentsRunConfig,
              vault: VaultResource):
    paths = vault.paths()
    report = build_documents(paths, config.to_library())
    context.log.info(f"documents: {report.rows} rows; {report.converted} converted, "
                     f"{report.reused} reused, {report.resumed} resumed from a crashed run")
    rates = quality.success_rates(paths.store)
    yield dg.MaterializeResult(
        asset_key="documents",
        metadata={
            "dagster/row_count": report.rows,
            "converted_now": report.converted,
            "reused": report.reused,
            "resumed": report.resumed,
            "by_status": counts_table(report.by_status, "status"),
            "by_source": counts_table(report.by_source, "source"),
            "success_rate_by_source": dg.MetadataValue.json(rates),
            "path": table_path(paths, DOCUMENTS),
        },
    )
    attempts = sum(sum(v.values()) for v in report.attempts_by_kind_status.values())
    yield dg.MaterializeResult(
        asset_key="document_attempts",
        metadata={
            "dagster/row_count": attempts,
            "by_kind_and_status": dg.MetadataValue.json(report.attempts_by_kind_status),
            "path": table_path(paths, DOCUMENT_ATTEMPTS),
        },
    )


class SuccessFloorConfig(dg.Config):
    min_success_rate: float = quality.DEFAULT_MIN_SUCCESS_RATE


@dg.asset_check(asset="documents", description="Each source (LaTeX, PDF) converts at least "
                "the configured share of its inputs; rates by source in the metadata.")
def documents_success_rate(config: SuccessFloorConfig,
                           vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.success_floor(vault.paths().store, config.min_success_rate),
                   dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset="documents", blocking=True,
                description="No row marked successful has empty text.")
def documents_ok_rows_have_text(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.ok_rows_have_text(vault.paths().store))


@dg.asset_check(asset="documents", description="One row per arXiv id.")
def documents_one_row_per_paper(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.one_row_per_paper(vault.paths().store))


documents_checks = [documents_success_rate, documents_ok_rows_have_text,
                    documents_one_row_per_paper]
