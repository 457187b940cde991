"""index: the LanceDB retrieval index of vault views (vectors and full text), and the checks
that it cannot see the future."""


import contextlib

import dagster as dg
from pydantic import Field

from vault_pipeline.errors import VaultError
from vault_pipeline.index import quality
from vault_pipeline.index.embedders import (
    EMBEDDED,
    EmbedderSettings,
    load_embedder,
    load_query_embedder,
)
from vault_pipeline.index.lance_index import (
    IndexSettings,
    build_index,
    index_dir,
    index_metadata,
    open_index,
)
from vault_pipeline.progress import for_stage
from vault_pipeline.schemas import VIEWS_INDEX

from .metadata import check_result, counts_table, table_attrs
from .resources import VaultResource


class IndexConfig(dg.Config):
    """How the index embeds its views and when it builds an ANN index."""

    model: str = Field(EMBEDDED, description=(
        "`embedded` (all-MiniLM-L6-v2, shipped with its weights), a local "
        "sentence-transformers folder, or a Hugging Face id in the local cache (production: "
        "`BAAI/bge-base-en-v1.5`)."))
    batch_size: int = Field(16, description="Texts embedded per batch.")
    device: str = Field("cpu", description="torch device (`cpu`, `cuda`); the torch backend.")
    allow_download: bool = Field(False, description="Let a missing hub model be downloaded.")
    backend: str = Field("torch", description=(
        "`torch` (sentence-transformers) or `onnx` (ONNX Runtime, the same weights exported "
        "once, batches by text length: several times faster on CPU, same vectors)."))
    ann_min_rows: int = Field(IndexSettings.ann_min_rows, description=(
        "Rows from which an IVF_FLAT index is built; below, every search is exact."))
    exclude_evaluation: bool = Field(IndexSettings.exclude_evaluation, description=(
        "Leave out the papers an evaluation set uses (no contamination of evaluations)."))


@dg.asset(group_name="index", deps=["splits", "views", "papers", "eval_cards"], kinds={"lancedb"},
          **table_attrs(VIEWS_INDEX))
def index(context: dg.AssetExecutionContext, config: IndexConfig,
          vault: VaultResource) -> dg.MaterializeResult:
    paths = vault.paths()
    embedder = load_embedder(EmbedderSettings(config.model, config.batch_size, config.device,
                                              config.allow_download, config.backend))
    report = build_index(paths, embedder, IndexSettings(
        ann_min_rows=config.ann_min_rows, exclude_evaluation=config.exclude_evaluation),
        progress=for_stage("index"))
    if config.backend == "torch":  # export for searches now, while torch is loaded anyway
        with contextlib.suppress(VaultError):
            load_query_embedder(config.model)
    speed = report.views_per_second
    context.log.info(f"index: {report.rows} rows, {report.embedded} embedded, "
                     f"{report.deleted} deleted, {report.unchanged} unchanged")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": report.rows,
        "embedder": report.embedder, "dimension": report.dimension,
        "cutoff": str(report.cutoff),
        "embedded": report.embedded, "unchanged": report.unchanged,
        "metadata_updated": report.metadata_updated, "deleted": report.deleted,
        "rebuilt_for_new_model": report.rebuilt,
        "evaluation_papers_left_out": report.evaluation_excluded,
        "ann_index": report.ann_index or f"none (exact search below {config.ann_min_rows:,})",
        "views_per_second": dg.MetadataValue.float(round(speed, 1)) if speed else "n/a",
        "views_skipped": counts_table(report.skipped_views, "problem"),
        "path": dg.MetadataValue.path(str(index_dir(paths))),
    })


@dg.asset_check(asset="index", blocking=True,
                description="No row of the index is a paper published on or after the "
                            "cutoff (dates from `papers`, membership from `splits`).")
def index_no_post_cutoff_rows(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.no_post_cutoff_rows(vault.paths()))


@dg.asset_check(asset="index", blocking=True,
                description="No target's own id or view text is in the index, and searching "
                            "with a target's inputs never returns it.")
def index_no_target_reachable(vault: VaultResource) -> dg.AssetCheckResult:
    paths = vault.paths()
    table = open_index(paths)
    embedder = load_embedder(EmbedderSettings(model=index_metadata(table)["embedder_source"]))
    return check_result(quality.no_target_reachable(paths, embedder, table=table))


index_assets = [index]
index_checks = [index_no_post_cutoff_rows, index_no_target_reachable]
