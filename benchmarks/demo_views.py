"""The views a demo vault holds, by the goals of issue 26: full-text papers with all five
views (goal >= 90 %) and abstract-only computer-science papers (primary category `cs.*`)
with a problem setting, a challenge and a proposal (goal >= 70 %), each with its 95 %
Wilson interval, and which views the others miss.

    python benchmarks/demo_views.py VAULT_HOME   # a home `vault demo` filled
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vault_pipeline.ideas.views import VIEW_NAMES  # noqa: E402
from vault_pipeline.integrity.estimate import wilson  # noqa: E402
from vault_pipeline.records.placeholders import is_placeholder  # noqa: E402
from vault_pipeline.schemas import DOCUMENTS, PAPERS, VIEWS  # noqa: E402
from vault_pipeline.store.paths import VaultPaths  # noqa: E402

THREE = ("problem_setting", "challenge", "proposal")


def coverage(home: Path) -> list[str]:
    """One line per goal: papers meeting it of those it counts, and the views missed."""
    store = VaultPaths(home).store
    papers = store.read(PAPERS, ["arxiv_id", "primary_category"])
    documents = store.read(DOCUMENTS, ["arxiv_id", "source"])
    views = store.read(VIEWS, ["arxiv_id", "view", "text"]).filter(
        pl.col("text").is_not_null()
        & ~pl.col("text").map_elements(is_placeholder, pl.Boolean))
    have: dict[str, set[str]] = {}
    for arxiv_id, view in views.select("arxiv_id", "view").iter_rows():
        have.setdefault(arxiv_id, set()).add(view)
    full = set(documents.filter(pl.col("source").is_in(["latex", "pdf"])
                                & pl.col("arxiv_id").is_not_null())["arxiv_id"])
    cs = set(papers.filter(pl.col("primary_category").str.starts_with("cs."))["arxiv_id"])
    lines = []
    for label, ids, wanted in (("full-text papers with all five views", full, VIEW_NAMES),
                               ("abstract-only CS papers with problem setting, challenge "
                                "and proposal", cs - full, THREE)):
        missing = {a: set(wanted) - have.get(a, set()) for a in sorted(ids)}
        met = sum(1 for m in missing.values() if not m)
        rate, low, high = wilson(met, len(ids))
        by_view = Counter(v for m in missing.values() for v in m)
        lines.append(f"{label}: {met} of {len(ids)} = {100 * rate:.1f}% "
                     f"[{100 * low:.1f}-{100 * high:.1f}]; missing by view: "
                     f"{dict(sorted(by_view.items()))}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home", type=Path)
    print("\n".join(coverage(parser.parse_args().home)))


if __name__ == "__main__":
    main()
