"""Stage declarations: what a stage reads, what it writes and how it runs, in one place
beside its library code. The Dagster assets are generated from them (one function,
`assets.stages.stage_asset`), so dependencies are never repeated by hand."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .paths import VaultPaths
from .schemas import TableSchema


@dataclass(frozen=True)
class Counts:
    """Figures by category (shown as a small table; ``label`` names a category)."""

    label: str
    counts: Mapping[str, int]


Figures = Mapping[str, object]  # a report's figures for one output table


@dataclass(frozen=True)
class Stage:
    """One stage: ``run`` reads ``inputs`` (tables or assets upstream) from the vault, writes
    ``outputs`` and returns its report; ``describe`` says the report in one line, ``figures``
    gives each output's figures (by table name), row count first."""

    name: str
    group: str
    inputs: tuple[str, ...]
    outputs: tuple[TableSchema, ...]
    run: Callable[[VaultPaths], Any]
    describe: Callable[[Any], str]
    figures: Callable[[Any], Mapping[str, Figures]]
