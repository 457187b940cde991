"""What a user checks on the duplicates and what they guard: the clusters hold every pair
and name one canonical member each; no target has a duplicate dated before the cutoff, and
no cluster has two retrievable or target rows; no retrievable view shares more than the
threshold of a held-out target's n-grams. Each check reads the tables afresh (pairs, not
only clusters; dates from `papers` and `submissions`), so a stage writing past its own rule
fails it."""

from __future__ import annotations

import polars as pl

from vault_pipeline.duplicates import ngrams
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.schemas import DUPLICATE_CLUSTERS, DUPLICATE_PAIRS, SPLITS
from vault_pipeline.splits.assign import TARGET_SPLITS
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.leakage import member_dates
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.tables import TableStore

HELD_OUT = ("validation", "test")


def clusters_consistent(store: TableStore) -> Outcome:
    """Both records of every pair in one cluster, every record in at most one, each
    cluster's canonical member among its two or more members."""
    pairs = store.read_optional(DUPLICATE_PAIRS)
    clusters = store.read_optional(DUPLICATE_CLUSTERS)
    if pairs is None or clusters is None:
        return Outcome(False, "duplicate_pairs or duplicate_clusters is missing", {})
    members = clusters.select("cluster_id", "members").explode("members")
    twice = members.group_by("members").len().filter(pl.col("len") > 1)["members"].to_list()
    of = {m: c for c, m in members.iter_rows()}
    split_pairs = [f"{a}~{b}" for a, b in pairs.select("a", "b").iter_rows()
                   if of.get(a) is None or of.get(a) != of.get(b)]
    bad_canonical = clusters.filter(~pl.col("members").list.contains(pl.col("canonical_id"))
                                    | (pl.col("members").list.len() < 2))["cluster_id"]
    problems = {"records_in_two_clusters": sorted(twice), "pairs_across_clusters": split_pairs,
                "clusters_without_canonical_member": bad_canonical.to_list()}
    found = {k: v for k, v in problems.items() if v}
    return Outcome(not found,
                   f"{clusters.height} clusters hold all {pairs.height} pairs" if not found
                   else "; ".join(f"{k}: {len(v)}" for k, v in found.items()),
                   {"clusters": clusters.height, "pairs": pairs.height,
                    **{k: v[:10] for k, v in found.items()}})


def no_target_with_early_duplicate(store: TableStore) -> Outcome:
    """No target whose cluster (or any pair) holds a record dated before the cutoff, and no
    cluster with two members that are vault rows or targets (an alias is neither)."""
    splits = store.read_required(SPLITS.name, ("arxiv_id", "split", "cutoff"))
    papers = store.read_required("papers", ("arxiv_id", "published"))
    pairs = store.read_optional(DUPLICATE_PAIRS)
    clusters = store.read_optional(DUPLICATE_CLUSTERS)
    if pairs is None or clusters is None:  # nothing compared: it matters only for targets
        unchecked = splits.filter(pl.col("split").is_in(TARGET_SPLITS)).height
        return Outcome(unchecked == 0, f"duplicate_pairs or duplicate_clusters is missing: "
                       f"{unchecked} target(s) never checked for duplicates"
                       + (" (materialize duplicates)" if unchecked else ""),
                       {"targets": unchecked})
    if splits.is_empty():
        return Outcome(True, "no splits yet", {"targets": 0})
    cutoff = splits["cutoff"][0]
    dates = member_dates(papers, store.read_optional("submissions"))
    split_of = dict(splits.select("arxiv_id", "split").iter_rows())
    targets = {i for i, s in split_of.items() if s in TARGET_SPLITS}

    def early(record: str) -> bool:
        return dates.get(record) is not None and dates[record] < cutoff

    linked = pairs.select("a", "b").iter_rows()
    by_pair = sorted({f"{t} ~ {o}" for a, b in linked for t, o in ((a, b), (b, a))
                      if t in targets and early(o)})
    by_cluster, doubled = [], []
    for cid, members in clusters.select("cluster_id", "members").iter_rows():
        held = [m for m in members if split_of.get(m) in (VAULT, *TARGET_SPLITS)]
        if len(held) > 1:
            doubled.append(f"{cid}: {', '.join(held)}")
        by_cluster += [f"{cid}: {t}" for t in members
                       if t in targets and any(early(m) for m in members if m != t)]
    problems = {"targets_paired_with_early_records": by_pair,
                "targets_in_clusters_with_early_members": by_cluster,
                "clusters_with_two_retrievable_or_target_rows": doubled}
    found = {k: v for k, v in problems.items() if v}
    return Outcome(not found,
                   f"none of {len(targets)} targets has a duplicate dated before {cutoff}; "
                   f"every one of {clusters.height} clusters has at most one row in the vault "
                   "or the targets" if not found else
                   "; ".join(f"{k}: {len(v)}" for k, v in found.items()),
                   {"targets": len(targets), "clusters": clusters.height,
                    **{k: v[:10] for k, v in found.items()}})


def _joined(frame: pl.DataFrame) -> pl.DataFrame:
    return (frame.filter(pl.col("text").is_not_null()).sort("arxiv_id", "view")
            .group_by("arxiv_id", maintain_order=True).agg(pl.col("text").str.join("\n"))
            .rename({"arxiv_id": "id"}))


def held_out_overlap(held_out: pl.DataFrame, retrievable: pl.DataFrame,
                     settings: DuplicatesSettings) -> pl.DataFrame:
    """Each held-out target (views `arxiv_id`, `view`, `text`) whose n-grams a retrievable
    paper's views hold above the threshold: `query`, `match`, `shared`, `grams`, `overlap`."""
    return ngrams.overlaps(_joined(held_out), _joined(retrievable), settings.overlap_n,
                           settings.overlap_threshold)


def no_retrievable_overlap(paths: VaultPaths, settings: DuplicatesSettings,
                           table=None) -> Outcome:
    """No index row's paper shares more than the threshold of a validation or test target's
    n-grams (the target's views against the indexed views)."""
    from vault_pipeline.index.lance_index import open_index

    table = table if table is not None else open_index(paths)
    count = table.count_rows()
    index = (pl.from_arrow(table.search().select(["arxiv_id", "view", "text"]).limit(count)
                           .to_arrow()).select("arxiv_id", "view", "text") if count else
             pl.DataFrame(schema={"arxiv_id": pl.String, "view": pl.String,
                                  "text": pl.String}))
    splits = paths.store.read_required(SPLITS.name, ("arxiv_id", "split"))
    held = splits.filter(pl.col("split").is_in(HELD_OUT))["arxiv_id"].implode()
    views = paths.store.read_required("views", ("arxiv_id", "view", "text"))
    found = held_out_overlap(views.filter(pl.col("arxiv_id").is_in(held)), index, settings)
    shown = [f"{q} in {m}: {o:.0%}" for q, m, o in found.select("query", "match", "overlap")
             .head(10).iter_rows()]
    targets = splits.filter(pl.col("split").is_in(HELD_OUT)).height
    return Outcome(found.is_empty(),
                   f"no indexed paper holds over {settings.overlap_threshold:.0%} of a "
                   f"held-out target's {settings.overlap_n}-grams ({targets} targets, "
                   f"{count} rows)" if found.is_empty() else
                   f"{found.height} held-out targets overlap indexed papers",
                   {"held_out_targets": targets, "index_rows": count,
                    "overlapping": shown})
