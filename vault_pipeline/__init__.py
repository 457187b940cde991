"""Research Idea Vault: the domain library (sources, parsing, tables). No Dagster imports here,
except in `definitions` and `cli`, the two faces that wire the library into Dagster."""

from .allocator import configure as _configure_allocator

_configure_allocator()  # before anything imports Polars

__version__ = "0.1.0"
