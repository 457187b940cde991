"""duplicates: records of the same work across versions and sources, and the checks that
keep them from leaking a target's answer across the cutoff."""


import dagster as dg

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.stages import stage_asset
from vault_pipeline.duplicates import quality
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.duplicates.stage import STAGE

duplicates = stage_asset(STAGE)


@dg.asset_check(asset="duplicate_clusters", blocking=True,
                description="Both records of every pair in one cluster, each record in at "
                            "most one, each cluster's canonical member among its members.")
def duplicate_clusters_consistent(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.clusters_consistent(vault.paths().store))


@dg.asset_check(asset="splits", blocking=True,
                description="No target has a duplicate (a pair or a cluster member) dated "
                            "before the cutoff; no cluster has two rows in the vault or the "
                            "targets (aliases are neither).")
def splits_no_target_with_early_duplicate(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.no_target_with_early_duplicate(vault.paths().store))


@dg.asset_check(asset="index", blocking=True,
                description="No indexed paper holds more than the threshold of a validation "
                            "or test target's n-grams (13-gram decontamination).")
def index_no_held_out_overlap(vault: VaultResource) -> dg.AssetCheckResult:
    paths = vault.paths()
    settings = DuplicatesSettings.resolve(home=paths.home)
    return check_result(quality.no_retrievable_overlap(paths, settings))


duplicates_assets = [duplicates]
duplicates_checks = [duplicate_clusters_consistent, splits_no_target_with_early_duplicate,
                     index_no_held_out_overlap]
