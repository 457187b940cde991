"""Raw zone: the manifest of every stored response (bronze)."""


import dagster as dg

from vault_pipeline.raw.zone import build_raw_files
from vault_pipeline.schemas import RAW_FILES

from .metadata import counts_table, table_attrs, table_path
from .resources import VaultResource


@dg.asset(
    group_name="raw",
    kinds={"parquet"},
    **table_attrs(RAW_FILES),
)
def raw_files(context: dg.AssetExecutionContext, vault: VaultResource) -> dg.MaterializeResult:
    paths = vault.paths()
    manifest = build_raw_files(paths)
    rows = manifest.height
    by_kind = dict(manifest.group_by("kind").len().iter_rows()) if rows else {}
    context.log.info(f"raw zone holds {rows} files")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": rows,
            "bytes": int(manifest.get_column("size_bytes").sum() or 0),
            "by_kind": counts_table(by_kind, "kind"),
            "path": table_path(paths, RAW_FILES),
        }
    )
