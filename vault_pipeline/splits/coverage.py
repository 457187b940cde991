"""How much of a paper's cited work the vault holds with full text.

A cited work counts when it is a vault paper (published before the cutoff) and, where the
`documents` table exists, has full text from LaTeX or PDF. The cited works come from the
`citations` table (Semantic Scholar references: every cited work, on arXiv or not, so a work
outside arXiv counts against the paper). Without that table, or without rows for the paper,
its citations are unknown and the threshold is not applied, which the reason says."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import polars as pl

from vault_pipeline.ids import id_expr

CITING_COLUMNS = ("citing_arxiv_id", "citing_id", "citing")
CITED_COLUMNS = ("cited_arxiv_id", "cited_id", "cited")
FULL_TEXT_SOURCES = ("latex", "pdf")


@dataclass(frozen=True)
class Coverage:
    cited: int | None  # cited works known; None when unknown
    in_vault: int | None
    source: str  # where the cited works came from, or why they are unknown

    def fraction(self) -> float | None:
        if not self.cited:
            return None
        return (self.in_vault or 0) / self.cited


def full_text_ids(documents: pl.DataFrame | None) -> set[str] | None:
    """Papers with usable full text; None when there is no documents table to ask."""
    if documents is None:
        return None
    usable = documents.filter(pl.col("status") == "ok")
    if "source" in usable.columns:
        usable = usable.filter(pl.col("source").is_in(FULL_TEXT_SOURCES))
    return set(usable["arxiv_id"].to_list())


def _first(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    return next((c for c in candidates if c in columns), None)


def _from_citations(citations: pl.DataFrame, targets: Collection[str],
                    available: Collection[str]) -> dict[str, tuple[int, int]]:
    citing = _first(citations.columns, CITING_COLUMNS)
    cited = _first(citations.columns, CITED_COLUMNS)
    if citing is None or cited is None:
        raise ValueError(f"citations table has neither of {CITING_COLUMNS} / {CITED_COLUMNS}: "
                         f"{citations.columns}")
    identity = [c for c in citations.columns if c.startswith("cited")]
    rows = (citations.with_columns(id_expr(citing).alias("_citing"),
                                   id_expr(cited).alias("_cited"))
            .filter(pl.col("_citing").is_in(list(targets)))
            .unique(["_citing", *identity]))
    counts = rows.group_by("_citing").agg(
        pl.len().alias("cited"), pl.col("_cited").is_in(list(available)).sum().alias("in"))
    return {r["_citing"]: (r["cited"], r["in"]) for r in counts.iter_rows(named=True)}


def coverage(targets: Collection[str], vault_ids: Collection[str],
             citations: pl.DataFrame | None,
             documents: pl.DataFrame | None) -> dict[str, Coverage]:
    """Coverage of every target id; a paper without citations rows: unknown."""
    full = full_text_ids(documents)
    available = set(vault_ids) if full is None else set(vault_ids) & full
    scope = "vault papers" if full is None else "vault papers with full text"
    known: dict[str, Coverage] = {}
    if citations is not None:
        for pid, (n, hit) in _from_citations(citations, targets, available).items():
            known[pid] = Coverage(n, hit, f"counted {scope}")
    why = "no citations table" if citations is None else "no citations rows for the paper"
    return {t: known.get(t, Coverage(None, None, why)) for t in targets}
