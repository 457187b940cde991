"""Resources shared by every asset: where the vault lives, and its lock."""

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from vault_pipeline.lock import vault_lock
from vault_pipeline.paths import VaultPaths

HARVEST_GROUP = "harvest"


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
    from vault_pipeline.definitions import build_defs

    graph = build_defs().resolve_asset_graph()
    return all(graph.has(key) and graph.get(key).group_name == HARVEST_GROUP
               for key in selection)
