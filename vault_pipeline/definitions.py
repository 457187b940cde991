"""The one Dagster `Definitions` of the vault (loaded by `dagster dev` and by the CLI). They
are built when asked for, never at import: the harvest partitions (venues, first OAI day)
come from the config of the vault they are built for."""


import dagster as dg

from assets import VaultResource, all_assets, all_checks, harvest_assets
from assets.io_manager import VaultTableIOManager
from sensors import all_jobs, all_schedules, all_sensors
from vault_pipeline.pipeline.settings import check_home
from vault_pipeline.store.paths import VaultPaths


def build_defs(paths: VaultPaths | None = None) -> dg.Definitions:
    """The definitions for one vault (default: ``$VAULT_HOME``)."""
    return dg.Definitions(
        assets=[*all_assets, *harvest_assets(paths or VaultPaths.from_env())],
        asset_checks=all_checks,
        jobs=all_jobs,
        sensors=all_sensors,
        schedules=all_schedules,
        resources={"vault": VaultResource(), "io_manager": VaultTableIOManager()},
    )


@dg.definitions
def defs() -> dg.Definitions:
    """What `dagster dev -m vault_pipeline.definitions` loads (`vault dev` sets the home).
    The vault's settings are checked here, as `vault materialize` checks them before a run:
    a bad `vault.toml` or `VAULT_*` value fails the code location in one line, so the UI
    launches no run on settings that cannot resolve."""
    paths = VaultPaths.from_env()
    built = build_defs(paths)
    check_home(paths.home)
    return built
