"""The `index` stage: the LanceDB retrieval index of the vault's views (vectors and full
text), which never holds a post-cutoff paper.

Its output is a LanceDB table under `index/`, not a Parquet table of the store: the run
brings it in step with its inputs in place (embeds only new and changed views, deletes what
left), so it neither returns frames nor writes through the store."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass

from vault_pipeline.embeddings.embedders import (
    EMBEDDED,
    EmbedderSettings,
    load_embedder,
    load_query_embedder,
)
from vault_pipeline.errors import VaultError
from vault_pipeline.executors import make_executor
from vault_pipeline.index.lance_index import IndexReport, IndexSettings, build_index, index_dir
from vault_pipeline.index.layout import INDEX_FOLDER
from vault_pipeline.pipeline.stage import Artifact, Counts, RunContext, Stage, StageResult
from vault_pipeline.schemas import VIEWS_INDEX
from vault_pipeline.store import folder_outputs
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.repair import quarantine_folder


@dataclass(frozen=True)
class IndexBuildSettings:
    """How the index embeds its views and when it builds an ANN index. ``model``:
    `embedded` (all-MiniLM-L6-v2, shipped with its weights), a local sentence-transformers
    folder, or a Hugging Face id in the local cache (production: `BAAI/bge-base-en-v1.5`);
    ``backend``: `torch` (sentence-transformers) or `onnx` (ONNX Runtime, the same weights
    exported once: several times faster on CPU, same vectors); ``device``: the torch device;
    ``allow_download`` lets a missing hub model be downloaded; from ``ann_min_rows`` rows an
    IVF_FLAT index is built (below, every search is exact); ``exclude_evaluation`` leaves
    out the papers an evaluation set uses."""

    model: str = EMBEDDED
    """`embedded` (all-MiniLM-L6-v2, shipped with its weights), a local sentence-transformers
    folder, or a Hugging Face id in the local cache (production: `BAAI/bge-base-en-v1.5`)."""
    batch_size: int = EmbedderSettings.batch_size
    """Texts embedded per batch."""
    device: str = EmbedderSettings.device
    """torch device (`cpu`, `cuda`) of the torch backend."""
    allow_download: bool = EmbedderSettings.allow_download
    """Let a missing hub model be downloaded."""
    backend: str = "onnx"
    """`onnx` (ONNX Runtime, the default: the same weights exported once, several times
    faster on CPU, the same vectors: benchmarks/README.md) or `torch` (sentence-transformers)."""
    ann_min_rows: int = IndexSettings.ann_min_rows
    """From this many rows on an IVF_FLAT index is built; below it every search is exact."""
    exclude_evaluation: bool = IndexSettings.exclude_evaluation
    """Leave out of the index the papers an evaluation set uses."""


Result = StageResult[IndexBuildSettings, IndexReport]


def run_index(paths: VaultPaths, settings: IndexBuildSettings, context: RunContext
              ) -> Result:
    load = functools.partial(load_embedder, EmbedderSettings(
        settings.model, settings.batch_size, settings.device, settings.allow_download,
        settings.backend))
    executor = make_executor(context.uses("compute"))
    # The index is brought in step in place: verified first, marked open while written.
    if (found := quarantine_folder(paths, INDEX_FOLDER)) is not None:
        context.log(f"repaired: {found}")
    folder_outputs.open_for_write(paths, INDEX_FOLDER)
    report = build_index(paths, load(), IndexSettings(
        ann_min_rows=settings.ann_min_rows, exclude_evaluation=settings.exclude_evaluation,
        cutoff=context.uses("splits").cutoff),
        executor=executor, load=load, progress=context.progress)
    folder_outputs.commit(paths, INDEX_FOLDER)
    if settings.backend == "torch":  # export for searches now, while torch is loaded anyway
        with contextlib.suppress(VaultError):
            load_query_embedder(settings.model)
    return StageResult(report, settings)


def _figures(run: Result) -> dict:
    r, speed = run.report, run.report.views_per_second
    return {"index": {
        "dagster/row_count": r.rows, "embedder": r.embedder, "dimension": r.dimension,
        "cutoff": str(r.cutoff), "embedded": r.embedded, "unchanged": r.unchanged,
        "metadata_updated": r.metadata_updated, "deleted": r.deleted,
        "rebuilt_for_new_model": r.rebuilt, "evaluation_papers_left_out": r.evaluation_excluded,
        "ann_index": r.ann_index or
        f"none (exact search below {run.settings.ann_min_rows:,})",
        "views_per_second": round(speed, 1) if speed else "n/a",
        "views_skipped": Counts("problem", r.skipped_views)}}


STAGE = Stage(
    "index", "index", inputs=("splits", "views", "papers", "eval_cards"),
    outputs=(Artifact("index", VIEWS_INDEX.doc, index_dir, VIEWS_INDEX),),
    run=run_index, settings=IndexBuildSettings, uses=("compute", "splits"),
    describe=lambda run: (f"index: {run.report.rows} rows, {run.report.embedded} embedded, "
                          f"{run.report.deleted} deleted, {run.report.unchanged} unchanged"),
    figures=_figures)
