"""Clusters of records of the same work: the connected components of the pairs, each with
one canonical member (the one that may be retrieved: the earliest arXiv paper) and why."""

from __future__ import annotations

import hashlib
from collections import defaultdict

import polars as pl

from vault_pipeline.duplicates.records import ARXIV

CLUSTER_COLUMNS = {"cluster_id": pl.String, "canonical_id": pl.String,
                   "members": pl.List(pl.String), "why": pl.String}
SHOWN = 4  # pairs described in a cluster's `why`


def components(pairs: pl.DataFrame) -> list[list[str]]:
    """Connected components of the pair graph (union-find), each sorted, sorted by first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for a, b in pairs.select("a", "b").iter_rows():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = defaultdict(list)
    for x in list(parent):
        groups[find(x)].append(x)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])


def cluster_id(members: list[str]) -> str:
    return "dup-" + hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()[:16]


def build_clusters(pairs: pl.DataFrame, records: pl.DataFrame) -> pl.DataFrame:
    """One row per cluster (`cluster_id`, `canonical_id`, `members`, `why`)."""
    if pairs.is_empty():
        return pl.DataFrame(schema=CLUSTER_COLUMNS)
    info = {r["id"]: r for r in records.select("id", "source", "date").iter_rows(named=True)}
    by_member: dict[str, list[tuple]] = defaultdict(list)
    for a, b, method, score in pairs.select("a", "b", "method", "score").iter_rows():
        by_member[a].append((a, b, method, score))
    rows = []
    for members in components(pairs):
        def order(m: str) -> tuple:
            r = info.get(m, {})
            return (r.get("source") != ARXIV, r.get("date") is None, r.get("date") or 0, m)

        canonical = min(members, key=order)
        r = info.get(canonical, {})
        kind = ("the earliest arXiv paper" if r.get("source") == ARXIV
                else "no arXiv paper: the earliest record")
        found = sorted({p for m in members for p in by_member.get(m, ())},
                       key=lambda p: (p[0], p[1], p[2]))
        shown = "; ".join(f"{a} ~ {b}: {method} {score:.2f}"
                          for a, b, method, score in found[:SHOWN])
        more = f"; +{len(found) - SHOWN} more pairs" if len(found) > SHOWN else ""
        rows.append({"cluster_id": cluster_id(members), "canonical_id": canonical,
                     "members": members,
                     "why": f"{len(members)} records of one work ({shown}{more}); canonical "
                            f"{canonical}: {kind}"
                            + (f", dated {r['date']}" if r.get("date") else "")})
    return pl.DataFrame(rows, schema=CLUSTER_COLUMNS)
