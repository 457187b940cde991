"""Build time of every evaluation set for a 12,000-submission venue.

    python benchmarks/bench_evalsets.py                    # lexical similarity + embedding rate
    python benchmarks/bench_evalsets.py --full-embedding   # also the whole build with embeddings
    python benchmarks/bench_evalsets.py --published-sizes  # default set sizes vs InnoEval's

Synthetic OpenReview API v2 pages in the real note format (`vault_pipeline.evalsets.
constructed`: ICLR 2025-like, 12,000 submissions with reviews and decisions; an ICLR 2024-like
anchor venue of 7,000 with "8: accept, good paper" ratings) go through the raw zone and the
`reviews` stage into the real `submissions` and `reviews` tables; then every set is built
from those tables, cold (every idea extracted with the offline extractive backend) and warm
(ideas reused by input hash), with the per-stage seconds the build reports. Run on the 2-core
development machine; POLARS_MAX_THREADS and torch are held to 2 threads."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("POLARS_MAX_THREADS", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vault_pipeline.evalsets.build import build_evalsets
from vault_pipeline.evalsets.constructed import constructed_venue, write_pages
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.store.paths import VaultPaths

VENUE, ANCHOR = "ICLR.cc/2025/Conference", "ICLR.cc/2024/Conference"
NEURIPS = "NeurIPS.cc/2025/Conference"
PUBLISHED = {"pointwise": 217, "pairwise": 372, "groupwise": 172}  # InnoEval (seed 000)
STAGES = ("read_inputs", "ideas", "pointwise", "similarity", "pairwise", "groupwise",
          "review_sets", "write", "cards")


def _quiet(*_: object) -> None:
    pass


def build(paths: VaultPaths, settings: EvalSetsSettings, label: str) -> dict:
    started = time.perf_counter()
    report = build_evalsets(paths, settings, log=_quiet)
    total = time.perf_counter() - started
    print(f"\n{label}: {total:.1f} s in all ({report.similarity_method})")
    print("  " + "  ".join(f"{s} {report.seconds.get(s, 0):.2f}" for s in STAGES))
    print("  rows: " + ", ".join(f"{k} {v:,}" for k, v in report.rows.items())
          + f", excluded {report.excluded:,}")
    extraction = report.extraction
    if extraction.processed:
        rate = extraction.processed / report.seconds["ideas"]
        print(f"  ideas extracted: {extraction.processed:,} ({rate:.0f} per second), "
              f"reused {extraction.reused:,}")
    return {"total": total, **report.seconds}


def embedding_rate(paths: VaultPaths, n: int) -> None:
    import polars as pl

    from vault_pipeline.embeddings.embedders import load_embedder
    from vault_pipeline.evalsets.similarity import topic_text

    started = time.perf_counter()
    embedder = load_embedder()
    loaded = time.perf_counter() - started
    subs = pl.read_parquet(paths.table("submissions")).head(n)
    texts = [topic_text(t, a) for t, a in subs.select("title", "abstract").iter_rows()]
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    print(f"\nembedder {embedder.name}: model load {loaded:.1f} s, {len(texts):,} title+abstract "
          f"texts in {seconds:.1f} s = {len(texts) / seconds:.1f} texts/s")


def published_sizes(per_venue: int) -> None:
    """Build the idea sets with the default settings over two synthetic venues (ICLR 2025-
    and NeurIPS 2025-like, ``per_venue`` submissions each) and print their sizes beside the
    published ones."""
    import polars as pl

    with tempfile.TemporaryDirectory(prefix="bench-evalsets-sizes-") as tmp:
        root = Path(tmp)
        paths = VaultPaths(root / "vault").ensure()
        for venue, stem, seed in ((VENUE, "iclr25", 0), (NEURIPS, "neurips25", 1)):
            write_pages(constructed_venue(venue, per_venue, seed=seed), root / "in", stem)
        RawZone(paths).import_paths([root / "in"])
        build_reviews(paths)
        settings = EvalSetsSettings(embedder="lexical")  # defaults: both idea venues
        started = time.perf_counter()
        report = build_evalsets(paths, settings, log=_quiet)
        print(f"\ndefault settings over two venues of {per_venue:,} synthetic submissions "
              f"each: built in {time.perf_counter() - started:.1f} s ({report.similarity_method})")
        points = pl.read_parquet(paths.table("eval_pointwise"))
        pairs = pl.read_parquet(paths.table("eval_pairwise"))
        groups = pl.read_parquet(paths.table("eval_groupwise"))
        built = {"pointwise": points.height, "pairwise": pairs.height,
                 "groupwise": groups.get_column("group_id").n_unique()}
        print(f"  {'set':<10} {'built':>6} {'published':>10}")
        for name, count in built.items():
            print(f"  {name:<10} {count:>6} {PUBLISHED[name]:>10}"
                  f"{'' if count == PUBLISHED[name] else '   DIFFERS'}")
        by_label = dict(points.group_by("label").len().iter_rows())
        print("  point-wise by label: " + ", ".join(
            f"{k} {by_label.get(k, 0)}" for k in settings.pointwise_quota)
            + " (published: Reject 138, Poster 66, Spotlight 9, Oral 4)")
        by_venue = dict(points.group_by("venue_id").len().iter_rows())
        print("  point-wise by venue: " + ", ".join(f"{k} {v}" for k, v in
                                                     sorted(by_venue.items())))
        by_kind = dict(pairs.group_by("difficulty").len().iter_rows())
        print(f"  pair-wise: easy {by_kind.get('easy', 0)}, hard {by_kind.get('hard', 0)} "
              f"(published: 172 easy, 200 hard); hard similarity min "
              f"{pairs.filter(pl.col('difficulty') == 'hard').get_column('similarity').min():.3f}")
        members = groups.filter(~pl.col("is_query"))
        print(f"  group members: similarity to the query min "
              f"{members.get_column('similarity').min():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=12_000)
    parser.add_argument("--anchor-submissions", type=int, default=7_000)
    parser.add_argument("--full-embedding", action="store_true",
                        help="also build with the embedded model (about 8 minutes here)")
    parser.add_argument("--embed-sample", type=int, default=1_000)
    parser.add_argument("--published-sizes", type=int, nargs="?", const=7_000, default=None,
                        metavar="PER_VENUE", help="only build the idea sets with the default "
                        "settings over two venues (default 7,000 submissions each) and "
                        "compare their sizes with the published ones")
    args = parser.parse_args()
    if args.published_sizes:
        published_sizes(args.published_sizes)
        return
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        pass
    with tempfile.TemporaryDirectory(prefix="bench-evalsets-") as tmp:
        root = Path(tmp)
        paths = VaultPaths(root / "vault").ensure()
        started = time.perf_counter()
        notes = constructed_venue(VENUE, args.submissions, seed=0)
        anchors = constructed_venue(ANCHOR, args.anchor_submissions, seed=1,
                                    rating_style="string")
        write_pages(notes, root / "in", "iclr25")
        write_pages(anchors, root / "in", "iclr24")
        generated = time.perf_counter() - started
        started = time.perf_counter()
        RawZone(paths).import_paths([root / "in"])
        imported = time.perf_counter() - started
        started = time.perf_counter()
        reviews = build_reviews(paths)
        parsed = time.perf_counter() - started
        print(f"setup: {args.submissions:,} + {args.anchor_submissions:,} synthetic "
              f"submissions generated in {generated:.1f} s, imported in {imported:.1f} s, "
              f"`reviews` stage {parsed:.1f} s ({reviews.submissions:,} submissions, "
              f"{reviews.reviews:,} replies)")
        settings = EvalSetsSettings(idea_venues=(VENUE,), embedder="lexical")
        build(paths, settings, "cold build, lexical similarity")
        build(paths, settings, "warm rebuild, lexical similarity")
        embedding_rate(paths, args.embed_sample)
        if args.full_embedding:
            embedded = settings.replace(embedder="embedded")
            build(paths, embedded, "build with embeddings, cold vector cache")
            build(paths, embedded, "rebuild with embeddings, warm vector cache")


if __name__ == "__main__":
    main()
