"""What a user checks on the index: it cannot see the future, and no target can find itself.

Both checks distrust the index's own columns: dates are compared from the `papers` table
and membership from the `splits` table, so an index written through a wrong filter (or with
a wrong date copied into it) fails them."""

from __future__ import annotations

import hashlib

import polars as pl

from vault_pipeline.embeddings.embedders import Embedder
from vault_pipeline.index.lance_index import open_index
from vault_pipeline.index.search import SearchFilters, search
from vault_pipeline.papers.versions import text_before, text_dates
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.schemas import SPLITS
from vault_pipeline.splits.assign import TARGET_SPLITS
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.inputs import clean_views
from vault_pipeline.store.paths import VaultPaths


def _index_frame(table) -> pl.DataFrame:
    count = table.count_rows()
    columns = ["arxiv_id", "view", "published", "text_sha256", "version"]
    if count == 0 or "version" not in table.schema.names:  # an index built before versions
        frame = pl.DataFrame(schema={"arxiv_id": pl.String, "view": pl.String,
                                     "published": pl.Date, "text_sha256": pl.String})
        if count:
            frame = pl.from_arrow(table.search().select(columns[:-1]).limit(count)
                                  .to_arrow()).select(columns[:-1])  # type: ignore[union-attr]
        return frame.with_columns(version=pl.lit(None, pl.Int32))
    return pl.from_arrow(table.search().select(columns).limit(count).to_arrow()).select(columns)


def no_post_cutoff_rows(paths: VaultPaths, table=None) -> Outcome:
    """Every index row is a vault paper published (per `papers`) before the cutoff, read
    from a version created before it: its `version` is dated before the cutoff by the
    paper's version history, or, of unknown version, the paper was last revised before it.
    Its text cannot come from a version written after the cutoff."""
    table = table if table is not None else open_index(paths)
    index = _index_frame(table)
    splits = paths.store.read_required(SPLITS.name, ("arxiv_id", "split", "cutoff"))
    if splits.is_empty():  # no paper metadata yet: nothing can be indexed
        return Outcome(index.height == 0, f"{index.height} rows indexed with no split",
                       {"rows": index.height, "cutoff": None, "post_cutoff_rows": 0,
                        "rows_outside_vault": index.height, "examples": []})
    cutoff = splits["cutoff"][0]
    papers = paths.store.read_required("papers", ("arxiv_id", "published", "updated"))
    joined = text_dates(index, papers).join(
        papers.select("arxiv_id", pl.col("published").alias("true_published")),
        on="arxiv_id", how="left").join(splits.select("arxiv_id", "split"), on="arxiv_id",
                                        how="left")
    late = joined.filter((pl.col("true_published") >= cutoff) | (pl.col("published") >= cutoff)
                         | pl.col("true_published").is_null() | ~text_before(cutoff))
    outside = joined.filter(pl.col("split").ne_missing(VAULT))
    bad = pl.concat([late.select("arxiv_id"), outside.select("arxiv_id")]).unique()
    examples = bad.sort("arxiv_id").head(10)["arxiv_id"].to_list()
    return Outcome(bad.is_empty(),
                   f"{bad.height} indexed papers are not vault papers published, and read "
                   f"from a version written, before {cutoff}" if not bad.is_empty() else
                   f"all {index.height} rows are vault papers published, and read from a "
                   f"version written, before {cutoff}",
                   {"rows": index.height, "cutoff": str(cutoff), "post_cutoff_rows": late.height,
                    "rows_outside_vault": outside.height, "examples": examples})


def no_target_reachable(paths: VaultPaths, embedder: Embedder, probes: int = 20,
                        table=None) -> Outcome:
    """No target paper, and no target's view text under another id, is in the index; and
    searching with the inputs of up to ``probes`` targets never returns the target."""
    table = table if table is not None else open_index(paths)
    index = _index_frame(table)
    splits = paths.store.read_required(SPLITS.name, ("arxiv_id", "split"))
    targets = splits.filter(pl.col("split").is_in(TARGET_SPLITS))["arxiv_id"].to_list()
    views = clean_views(paths.store.read_required("views", ("arxiv_id", "view", "text"))).views
    target_views = views.filter(pl.col("arxiv_id").is_in(targets))
    target_hashes = {hashlib.sha256(t.encode()).hexdigest(): a
                     for a, t in target_views.select("arxiv_id", "text").iter_rows()}
    by_id = index.filter(pl.col("arxiv_id").is_in(targets))["arxiv_id"].unique().to_list()
    by_text = index.filter(pl.col("text_sha256").is_in(list(target_hashes)))
    found_by_search = []
    inputs = (target_views.filter(pl.col("view").is_in(["problem_setting", "challenge"]))
              .group_by("arxiv_id", maintain_order=True).agg(pl.col("text").str.join("\n"))
              .sort("arxiv_id").head(probes))
    if index.height:
        for arxiv_id, text in inputs.iter_rows():
            hits = search(paths, text, embedder, k=10, filters=SearchFilters(), table=table)
            if any(h.arxiv_id == arxiv_id for h in hits):
                found_by_search.append(arxiv_id)
    problems = {"targets_in_index": sorted(by_id)[:10],
                "target_text_under_other_ids": sorted(set(by_text["arxiv_id"]))[:10],
                "targets_found_by_search": found_by_search[:10]}
    count = len(by_id) + by_text.height + len(found_by_search)
    return Outcome(count == 0,
                   f"no target reachable: {len(targets)} targets checked by id and text, "
                   f"{inputs.height} searched with their inputs" if count == 0 else
                   f"{count} ways a target is reachable from search",
                   {"targets": len(targets), "searched": inputs.height, **problems})
