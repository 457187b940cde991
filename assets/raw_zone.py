"""Raw zone: the manifest of every stored response (bronze)."""

from assets.stages import stage_asset
from vault_pipeline.raw.stage import STAGE

raw_files = stage_asset(STAGE, kinds=frozenset({"parquet"}))
