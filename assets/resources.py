"""Resources shared by every asset: where the vault lives."""


import dagster as dg

from vault_pipeline.paths import VaultPaths


class VaultResource(dg.ConfigurableResource):
    """The data root. Unset: ``$VAULT_HOME``, else ``./vault_home``."""

    home: str | None = None

    def paths(self) -> VaultPaths:
        return VaultPaths.from_env(self.home).ensure()
