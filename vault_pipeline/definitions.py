"""The one Dagster `Definitions` of the vault (loaded by `dagster dev` and by the CLI)."""


import dagster as dg

from assets import VaultResource, all_assets, all_checks
from assets.io_manager import VaultTableIOManager
from sensors import all_jobs, all_schedules, all_sensors

defs = dg.Definitions(
    assets=all_assets,
    asset_checks=all_checks,
    jobs=all_jobs,
    sensors=all_sensors,
    schedules=all_schedules,
    resources={"vault": VaultResource(), "io_manager": VaultTableIOManager()},
)
