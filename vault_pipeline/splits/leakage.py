"""The duplicates policy as the splits apply it (from the `duplicate_clusters` and
`duplicate_pairs` tables): one canonical member per cluster is retrievable or a target;
another arXiv member is an alias, never a separate vault row or target; and a paper published
on or after the cutoff with any member dated before it is no target, whichever member is
canonical. Each verdict names the matching record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

ALIAS, PRE_CUTOFF_DUPLICATE = "alias of another record", "pre-cutoff duplicate"


@dataclass(frozen=True)
class Verdict:
    kind: str  # ALIAS or PRE_CUTOFF_DUPLICATE
    duplicate_of: str
    reason: str


def member_dates(papers: pl.DataFrame, submissions: pl.DataFrame | None
                 ) -> dict[str, date | None]:
    """Dates of the records clusters name: v1 of an arXiv paper, creation of an OpenReview
    submission (`openreview:<forum id>`); others have none (never proof of being early)."""
    dates = dict(papers.select("arxiv_id", "published").iter_rows())
    if submissions is not None and {"forum_id", "created"} <= set(submissions.columns):
        dates |= {f"openreview:{f}": c.date() if c is not None else None
                  for f, c in submissions.select("forum_id", "created").iter_rows()}
    return dates


def _how(pairs: pl.DataFrame | None, a: str, b: str) -> str:
    """The strongest direct match of two members, or how they are linked at all."""
    if pairs is None or pairs.is_empty():
        return "same cluster"
    lo, hi = min(a, b), max(a, b)
    direct = pairs.filter((pl.col("a") == lo) & (pl.col("b") == hi)).sort(
        "score", descending=True)
    if direct.is_empty():
        return "same cluster, through other members"
    row = direct.row(0, named=True)
    return f"{row['method']} {row['score']:.2f}"


def verdicts(clusters: pl.DataFrame | None, pairs: pl.DataFrame | None,
             dates: dict[str, date | None], cutoff: date) -> dict[str, Verdict]:
    """Which arXiv papers the policy keeps out, by id (papers not named stay as they are)."""
    out: dict[str, Verdict] = {}
    if clusters is None or clusters.is_empty():
        return out
    for cid, canonical, members in clusters.select(
            "cluster_id", "canonical_id", "members").iter_rows():
        early = sorted((m for m in members if dates.get(m) is not None
                        and dates[m] < cutoff), key=lambda m: (dates[m], m))
        for m in members:
            if m.startswith(("openreview:", "s2:")) or m not in dates:
                continue
            published = dates[m]
            others = [e for e in early if e != m]
            if published is not None and published >= cutoff and others:
                match = canonical if canonical in others else others[0]
                out[m] = Verdict(PRE_CUTOFF_DUPLICATE, match,
                                 f"pre-cutoff duplicate: the same work as {match}, dated "
                                 f"{dates[match]} before the cutoff ({_how(pairs, m, match)}; "
                                 f"cluster {cid})")
            elif m != canonical:
                out[m] = Verdict(ALIAS, canonical,
                                 f"alias of {canonical} ({_how(pairs, m, canonical)}; cluster "
                                 f"{cid}): one member per cluster is retrievable or a target")
    return out
