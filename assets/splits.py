"""splits: the pre-cutoff vault and the post-cutoff targets, one partition for every role."""


import dagster as dg

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.run_config import stage_config
from assets.stages import stage_asset
from vault_pipeline.schemas import SPLITS
from vault_pipeline.splits import quality
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.splits.stage import STAGE

SplitsConfig = stage_config(
    SplitSettings, STAGE.section, "SplitsConfig",
    "Cutoff (YYYY-MM-DD), seed, held-out shares (below 1: fractions; 1 or more: sizes), "
    "cited-work threshold, and the classifier: `extractive`, `llm` (the ideas stage's LLM "
    "backend) or `auto` (`llm` when the ideas backend is an LLM, else `extractive`).")


splits = stage_asset(STAGE, config=SplitsConfig)


@dg.asset_check(asset="splits", blocking=True,
                description="Every paper in exactly one split, on the right side of the "
                            "cutoff, under one cutoff and seed.")
def splits_disjoint_and_complete(vault: VaultResource) -> dg.AssetCheckResult:
    store = vault.paths().store
    outcome = quality.disjoint_and_complete(store.read_optional(SPLITS),
                                            store.read_optional("papers"))
    return check_result(outcome)


splits_assets = [splits]
splits_checks = [splits_disjoint_and_complete]
