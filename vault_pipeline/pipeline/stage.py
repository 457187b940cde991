"""Stage declarations: what a stage reads, what it writes, its settings and how it runs, in
one place beside its library code. The Dagster assets are generated from them (one function,
`assets.stages.stage_asset`), so dependencies and config are never repeated by hand.

Every stage runs the same way: ``run(paths, settings, context) -> report``. It reads its
declared inputs through the vault's table store (``paths.store``) and writes its declared
outputs there; it does not receive frames, because several stages are incremental (they read
their own last output and the journal under the scratch folder) or stream tables larger than
memory, and the store alone knows where a table lies.

A stage may be split into partitions (the live harvests: one per datestamp day, one per
OpenReview venue): ``partitions`` gives them for the vault the definitions are built for
(never at import: a venue list comes from that vault's config), and a run receives its
partition in its context (``partition``, and ``window`` for days). Outputs that are not tables
(raw-zone files, an index, an export) are declared as :class:`Artifact`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Generic, TypeVar

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline import settings as config
from vault_pipeline.pipeline.progress import Progress, no_progress
from vault_pipeline.schemas import TableSchema
from vault_pipeline.store.paths import VaultPaths

S = TypeVar("S")
R = TypeVar("R")


@dataclass(frozen=True)
class Counts:
    """Figures by category (shown as a small table; ``label`` names a category)."""

    label: str
    counts: Mapping[str, int]


class Markdown(str):
    """A figure shown as rendered Markdown (a data card, a report)."""


@dataclass(frozen=True)
class Rows:
    """A figure shown as a table the UI sorts: records and their columns (name -> type:
    `string`, `int`, `float`)."""

    records: Sequence[Mapping[str, object]]
    columns: Mapping[str, str]


@dataclass(frozen=True)
class Chart:
    """A figure shown as a picture: bars of (label, value) in the given order, or columns by
    year (``by_year``: every year from the first to the last)."""

    items: Sequence[tuple[str, float]]
    title: str
    percent: bool = False
    by_year: bool = False


Figures = Mapping[str, object]  # a report's figures for one output


@dataclass(frozen=True)
class NoSettings:
    """The settings of a stage with nothing to set: it rebuilds its outputs from its inputs."""


@dataclass(frozen=True)
class RunContext:
    """What a run knows of the run it is part of: an id (Dagster's run id; None outside a
    run), where log lines go, where progress goes (the CLI's bars, or nowhere), and, for a
    partitioned stage, its partition key and, for days, the window of days it covers (first
    and last, inclusive: a backfill run may cover several)."""

    run_id: str | None = None
    log: Callable[[str], object] = print
    progress: Progress = no_progress
    partition: str | None = None
    window: tuple[date, date] | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The settings of the other sections the stage declared in ``uses``, as the runner
    resolved them for this vault (:meth:`Stage.used_settings`)."""

    def uses(self, section: str) -> Any:
        """The settings of ``section``, which the stage must have declared in ``uses``."""
        return given_section(self.settings, section)


def given_section(settings: Mapping[str, Any], section: str) -> Any:
    """``section`` of the settings a run was given (:meth:`Stage.used_settings`), or the error
    saying its stage did not declare it in ``uses``."""
    if section not in settings:
        raise VaultError(f"this run was not given the [{section}] settings: declare "
                         f"{section!r} in the stage's uses")
    return settings[section]


@dataclass(frozen=True)
class Daily:
    """One partition per day from ``first`` to today; a backfill run covers up to
    ``per_run`` days as one window (fewest requests)."""

    first: date
    per_run: int = 1


@dataclass(frozen=True)
class Keys:
    """One partition per key (an OpenReview venue id, say)."""

    keys: tuple[str, ...]


Partitions = Daily | Keys


@dataclass(frozen=True)
class Artifact:
    """An output that is not a Parquet table of the store (a LanceDB table, a JSON report, an
    export folder, raw-zone files): its asset name, what it holds, where it lies (a local
    path, or a URL on an object-store root), and its columns if any."""

    name: str
    doc: str
    path: Callable[[VaultPaths], Path | str]
    schema: TableSchema | None = None


Output = TableSchema | Artifact


@dataclass(frozen=True)
class StageResult(Generic[S, R]):
    """A build's report with what the run's figures need besides: the settings it ran under
    and what was read after the build (``read``, by name: a summary of a table written, a
    rendered report)."""

    report: R
    settings: S
    read: Mapping[str, Any] = field(default_factory=dict)


def _none(_report: Any) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class Stage(Generic[S, R]):
    """One stage: ``run`` reads ``inputs`` (tables or assets upstream) from the vault, writes
    ``outputs`` and returns its report; ``settings`` is its frozen settings class, resolved
    by :func:`vault_pipeline.pipeline.settings.resolve` under ``section`` (default: the stage's
    name);
    ``describe`` says the report in one line, ``figures`` gives each output's figures (by
    output name), ``warnings`` what a reader of the run should not miss; ``partitions``
    splits its runs (for the vault given), ``pool`` names the concurrency pool its runs
    share (one service's politeness limit, say)."""

    name: str
    group: str
    inputs: tuple[str, ...]
    outputs: tuple[Output, ...]
    run: Callable[[VaultPaths, S, RunContext], R]
    describe: Callable[[R], str]
    figures: Callable[[R], Mapping[str, Figures]]
    settings: type[S] = NoSettings  # type: ignore[assignment]
    section: str | None = None
    label: str | None = None  # names the settings in errors (default: the section)
    warnings: Callable[[R], Sequence[str]] = field(default=_none)
    partitions: Callable[[VaultPaths], Partitions] | None = None
    pool: str | None = None
    uses: tuple[str, ...] = ()
    """Sections of other stages' settings the run reads (e.g. ``("splits", "compute")``:
    the cutoff, the executor), resolved by the runner into :attr:`RunContext.settings`."""

    def __post_init__(self) -> None:
        DECLARED[self.name] = self  # type: ignore[assignment]
        if self.settings is not NoSettings:
            config.register(self.section or self.name, self.settings)

    @property
    def sections(self) -> tuple[str, ...]:
        """Every settings section its run reads: its own, then those it ``uses``."""
        return (self.section or self.name, *self.uses)

    def resolve(self, *, home: Path | None = None,
                run_config: Mapping[str, Any] | None = None,
                flags: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None) -> S:
        """The stage's settings from every layer of :mod:`vault_pipeline.pipeline.settings`
        (the same signature as :meth:`~vault_pipeline.pipeline.settings.StageSettings.resolve`)."""
        return config.resolve(self.settings, self.section or self.name, home=home,
                              run_config=run_config, flags=flags, environ=environ,
                              label=self.label)

    def used_settings(self, home: Path | None,
                      environ: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The settings of every section in ``uses``, for the run's context."""
        return {section: config.section_settings(section, home, environ)
                for section in self.uses}


DECLARED: dict[str, Stage] = {}
"""Every stage declared so far, by name (its op's name): filled as stage modules are
imported, so that a run config can be checked against the stage it configures."""


def plain(build: Callable[[VaultPaths], R]) -> Callable[[VaultPaths, Any, RunContext], R]:
    """The run of a stage whose build needs neither settings nor the run's context."""

    def run(paths: VaultPaths, _settings: Any, _context: RunContext) -> R:
        return build(paths)

    run.__doc__ = build.__doc__
    return run
