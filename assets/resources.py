"""Resources shared by every asset: where the vault lives, and its lock."""

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from vault_pipeline.sources.stage import STAGES as HARVESTS
from vault_pipeline.store.lock import vault_lock
from vault_pipeline.store.paths import VaultPaths


class VaultResource(dg.ConfigurableResource):
    """The data root. Unset: ``$VAULT_HOME``, else ``./vault_home``."""

    home: str | None = None
    lock_wait_s: float = 3600.0
    """How long a run (or a step process) waits for another run to release the vault."""

    def paths(self) -> VaultPaths:
        return VaultPaths.from_env(self.home).ensure()

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["VaultResource"]:
        """Hold the vault lock for the run (for each step, in a multi-process run); sensors
        and runs of live harvests alone, which only add raw files, go without it."""
        run = context.run
        if run is None or _harvest_only(run.asset_selection):
            yield self
            return
        with vault_lock(self.paths(), self.lock_wait_s, f"Dagster run {run.run_id[:8]}"):
            yield self


def _harvest_only(selection: frozenset[dg.AssetKey] | None) -> bool:
    if not selection:
        return False
    harvests = {output.name for stage in HARVESTS for output in stage.outputs}
    return all(key.to_user_string() in harvests for key in selection)
