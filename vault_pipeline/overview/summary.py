"""The state of a vault in a few distributions: papers by year and by category, split sizes,
document statuses, and the leak and quarantine rates of the latest integrity report. The
same figures feed `vault report` and the charts in the assets' Dagster metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from vault_pipeline.pipeline.figures import split_sizes, top, years
from vault_pipeline.store.paths import VaultPaths


@dataclass
class Overview:
    home: str
    built_at: str
    papers: int = 0
    by_year: list[tuple[str, int]] = field(default_factory=list)
    by_category: list[tuple[str, int]] = field(default_factory=list)
    splits: list[tuple[str, int]] = field(default_factory=list)
    cutoff: str | None = None
    documents: list[tuple[str, int]] = field(default_factory=list)
    integrity: list[tuple[str, float]] = field(default_factory=list)
    integrity_run: str | None = None
    missing: list[str] = field(default_factory=list)  # tables not built yet


def _counts(paths: VaultPaths, table: str, column: str, overview: Overview) -> dict[str, int]:
    frame = paths.store.read_optional(table, [column])
    if frame is None:
        overview.missing.append(table)
        return {}
    return {str(k): int(n) for k, n in frame.group_by(column).len().iter_rows()}


def collect(paths: VaultPaths) -> Overview:
    """The overview of the vault at ``paths`` (tables not built yet are listed, not an
    error: a new vault has a report too)."""
    import polars as pl

    from vault_pipeline.audit.report import integrity_rates, read_latest

    overview = Overview(home=str(paths.home),
                        built_at=datetime.now(UTC).isoformat(timespec="seconds"))
    papers = paths.store.read_optional("papers", ["published", "primary_category"])
    if papers is None:
        overview.missing.append("papers")
    else:
        overview.papers = papers.height
        by_year = papers.group_by(pl.col("published").dt.year().alias("year")).len()
        overview.by_year = years({("unknown" if y is None else y): n
                                  for y, n in by_year.iter_rows()})
        overview.by_category = top({("none" if c is None else c): n for c, n in
                                    papers.group_by("primary_category").len().iter_rows()})
    overview.splits = split_sizes(_counts(paths, "splits", "split", overview))
    if "splits" not in overview.missing:
        cutoffs = paths.store.read_required("splits", ["cutoff"])["cutoff"].unique()
        overview.cutoff = str(cutoffs[0]) if cutoffs.len() == 1 else None
    overview.documents = top(_counts(paths, "documents", "status", overview))
    report = read_latest(paths)
    overview.integrity = integrity_rates(report)
    overview.integrity_run = (report or {}).get("built_at")
    if report is None:
        overview.missing.append("integrity report")
    return overview
