"""integrity: the integrity report of every run (what the gate found and removed, by layer;
method-leak and placeholder rates; re-check of the final tables; the gate's figures on the
untouched half of the labelled set), kept under `$VAULT_HOME/integrity/`."""

import dagster as dg

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.stages import stage_asset
from vault_pipeline.audit.report import clean_outcome, read_latest
from vault_pipeline.audit.stage import STAGE

integrity_report = stage_asset(STAGE, kinds=frozenset({"json"}))


@dg.asset_check(asset="integrity_report", blocking=True,
                description="A re-check of the final records and views finds no flagged "
                            "sentence and no method leak in a problem view.")
def integrity_clean(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(clean_outcome(read_latest(vault.paths())))


integrity_assets = [integrity_report]
integrity_checks = [integrity_clean]
