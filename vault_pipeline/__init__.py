"""Research Idea Vault: the domain library (sources, parsing, tables). No Dagster imports here,
except in `definitions` and `cli`, the two faces that wire the library into Dagster."""

from vault_pipeline.pipeline.allocator import configure as _configure_allocator

_configure_allocator()  # before anything imports Polars

__version__ = "0.1.0"
__all__ = ["Vault", "__version__"]


def __getattr__(name: str):
    """`from vault_pipeline import Vault` without importing Polars for every other user."""
    if name == "Vault":
        from vault_pipeline.access.api import Vault

        return Vault
    raise AttributeError(f"module 'vault_pipeline' has no attribute {name!r}")
