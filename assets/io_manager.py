"""Reading asset values back: `defs.load_asset_value("papers")` returns the Polars table.

Every asset writes its own tables atomically through the library (so a crash never leaves
half a table, and the CLI, the UI and notebooks share one layout); this IO manager is only
the reading side, so Dagster's own APIs and any asset that takes a table as an input see
the same files."""

import dagster as dg

from vault_pipeline.errors import VaultError
from vault_pipeline.store.paths import VaultPaths

INDEX_ASSET = "index"


class VaultTableIOManager(dg.ConfigurableIOManager):
    """Loads a table asset as a Polars frame and `index` as its LanceDB table. ``home``:
    the data root (unset: ``$VAULT_HOME``, else ``./vault_home``)."""

    home: str | None = None

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        """Assets return only metadata: their tables are already written."""
        if obj is not None:
            raise VaultError(f"asset {context.asset_key.to_user_string()} returned a value: "
                             "vault assets write their own tables")

    def load_input(self, context: dg.InputContext):
        name = context.asset_key.path[-1]
        paths = VaultPaths.from_env(self.home).existing()
        if name == INDEX_ASSET:
            from vault_pipeline.index.lance_index import open_index

            return open_index(paths)
        frame = paths.store.read_optional(name)
        if frame is None:
            raise VaultError(f"asset {name!r} has no table in {paths.tables} (materialize it "
                             "first; harvests and exports write no table)")
        return frame
