"""What a user checks on `papers`, as plain functions over the table store: the asset checks
call them, and so can anyone in a notebook."""

from __future__ import annotations

import polars as pl

from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.schemas import PAPERS
from vault_pipeline.store.tables import TableStore

REQUIRED = ("arxiv_id", "title", "abstract", "authors", "published", "updated")


def duplicate_ids(store: TableStore) -> Outcome:
    dupes = (
        store.scan(PAPERS).group_by("arxiv_id").len().filter(pl.col("len") > 1)
        .sort("len", descending=True).collect()
    )
    examples = dupes.head(10).get_column("arxiv_id").to_list()
    return Outcome(dupes.is_empty(), f"{dupes.height} arxiv_id values appear more than once",
                   {"duplicated_ids": dupes.height, "examples": examples})


def empty_required(store: TableStore) -> Outcome:
    lf = store.scan(PAPERS)
    exprs = []
    for name in REQUIRED:
        column = pl.col(name)
        empty = column.is_null()
        if name == "authors":
            empty = empty | (column.list.len() == 0)
        elif name in ("arxiv_id", "title", "abstract"):
            empty = empty | (column.str.strip_chars() == "")
        exprs.append(empty.sum().alias(name))
    counts = lf.select(exprs).collect().row(0, named=True)
    bad = {k: int(v) for k, v in counts.items() if v}
    return Outcome(not bad, f"empty required fields: {bad or 'none'}", {"empty": counts})


def date_order(store: TableStore) -> Outcome:
    bad = (
        store.scan(PAPERS).filter(pl.col("published") > pl.col("updated"))
        .select("arxiv_id").collect().get_column("arxiv_id")
    )
    return Outcome(bad.is_empty(), f"{bad.len()} papers published after their last update",
                   {"violations": bad.len(), "examples": bad.head(10).to_list()})


def summary(store: TableStore) -> dict[str, dict[str, int] | int]:
    """Row count, rows by year of v1, by primary category and by source."""
    lf = store.scan(PAPERS)

    def counts(expr: pl.Expr) -> dict[str, int]:
        frame = lf.group_by(expr.alias("k")).len().sort("k").collect()
        return {str(k): int(n) for k, n in frame.iter_rows()}

    return {
        "rows": lf.select(pl.len()).collect().item(),
        "by_year": counts(pl.col("published").dt.year()),
        "by_primary_category": counts(pl.col("primary_category")),
        "by_source": counts(pl.col("source")),
    }
