"""datasets: training examples per role and split, and their export with a manifest and a
data card (`$VAULT_HOME/exports/latest`; `vault export OUT_DIR` writes the same anywhere)."""


import dagster as dg

from assets.ideas import IdeasRunConfig
from assets.resources import VaultResource
from assets.stages import stage_asset
from vault_pipeline.datasets.manifest import verify_export
from vault_pipeline.datasets.stage import (
    EXPORT_STAGE,
    ROLE_ARTIFACTS_STAGE,
    TRAINING_STAGE,
    latest_export,
)

role_artifacts = stage_asset(ROLE_ARTIFACTS_STAGE, config=IdeasRunConfig)
training_examples = stage_asset(TRAINING_STAGE)
dataset_export = stage_asset(EXPORT_STAGE, kinds=frozenset({"parquet", "json"}))


@dg.asset_check(asset="dataset_export", blocking=True,
                description="Every file of the export matches the sha256, size and row count "
                            "in its manifest, and none is unlisted.")
def dataset_export_verifies(vault: VaultResource) -> dg.AssetCheckResult:
    problems = verify_export(latest_export(vault.paths()))
    return dg.AssetCheckResult(
        passed=not problems,
        description="manifest verifies" if not problems else f"{len(problems)} problems",
        metadata={"problems": dg.MetadataValue.json(problems[:20])})


datasets_assets = [role_artifacts, training_examples, dataset_export]
datasets_checks = [dataset_export_verifies]
