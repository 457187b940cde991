"""Research Idea Vault: the domain library (sources, parsing, tables). No Dagster imports here,
except in `definitions` and `cli`, the two faces that wire the library into Dagster."""

__version__ = "0.1.0"
