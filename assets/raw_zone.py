"""Raw zone: the manifest of every stored response (bronze)."""

from vault_pipeline.raw.stage import STAGE

from .stages import stage_asset

raw_files = stage_asset(STAGE, kinds=frozenset({"parquet"}))
