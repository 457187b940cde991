"""The `raw_files` stage: the manifest of every stored response (bronze).

Its input is not a table but the raw zone's files themselves (put there by `vault import` and
the harvests), so it declares no input; its report is the manifest it wrote."""

from __future__ import annotations

import polars as pl

from vault_pipeline.pipeline.stage import Counts, Stage, plain
from vault_pipeline.raw.zone import build_raw_files
from vault_pipeline.schemas import RAW_FILES


def _figures(manifest: pl.DataFrame) -> dict:
    by_kind = dict(manifest.group_by("kind").len().iter_rows()) if manifest.height else {}
    return {RAW_FILES.name: {"dagster/row_count": manifest.height,
                             "bytes": int(manifest.get_column("size_bytes").sum() or 0),
                             "by_kind": Counts("kind", by_kind)}}


STAGE = Stage(
    "raw_files", "raw", inputs=(), outputs=(RAW_FILES,), run=plain(build_raw_files),
    describe=lambda manifest: f"raw zone holds {manifest.height} files", figures=_figures)
