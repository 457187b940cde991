"""The extractive ideas stage on the demo's papers (full text) with each pool worker's
threads at the libraries' defaults (every worker sizes ONNX Runtime's and BLAS's pools to the
machine: the anchor, what the pool did before) and at its share of the cores (now,
`worker_threads = 0`), alternating for `--rounds` rounds in one run; wall seconds side by
side, then the two results compared table for table (`compare_homes.py`).

    python benchmarks/bench_worker_threads.py [--rounds 2] [--workers 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DEMO_CUTOFF = date(2025, 1, 1)  # as `vault demo` (cli/app.py: DEMO_CUTOFF)
IDEAS_TABLES = ("masked_records", "llm_failures")


def base_home(folder: Path):
    """The demo's sample imported, with its papers and documents tables built."""
    from vault_pipeline.cli.app import sample_dir
    from vault_pipeline.documents.build import build_documents
    from vault_pipeline.papers.build import build_papers
    from vault_pipeline.raw.zone import RawZone
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(folder / "base")
    RawZone(paths).import_paths([sample_dir()])
    build_papers(paths)
    build_documents(paths)
    return paths


def ideas_seconds(base: Path, home: Path, workers: int, threads: int) -> float:
    from vault_pipeline.ideas.build import build_masked_records
    from vault_pipeline.llm.settings import IdeasSettings
    from vault_pipeline.store.paths import VaultPaths

    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(base, home)
    started = time.perf_counter()
    build_masked_records(VaultPaths(home), IdeasSettings(workers=workers, worker_threads=threads),
                         log=lambda *_: None, cutoff=DEMO_CUTOFF)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    from compare_homes import compare

    from vault_pipeline.executors.cores import available_cores
    from vault_pipeline.executors.isolation import PoolSettings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=0, help="pool workers; 0: one per core")
    args = parser.parse_args(argv)
    cores = available_cores()
    workers = PoolSettings(workers=args.workers).n_workers
    variants = {f"{cores} a worker (before)": cores,
                f"{max(1, cores // workers)} a worker (now)": 0}
    folder = Path(tempfile.mkdtemp(prefix="vault-worker-threads-"))
    try:
        base = base_home(folder).home
        papers = len(__import__("polars").read_parquet(base / "tables" / "papers.parquet"))
        print(f"demo sample: {papers} papers; {cores} cores, {workers} workers; load "
              f"{os.getloadavg()[0]:.2f}")
        seconds: dict[str, list[float]] = {label: [] for label in variants}
        for _ in range(args.rounds):
            for label, threads in variants.items():
                home = folder / f"threads-{threads}"
                seconds[label].append(ideas_seconds(base, home, workers, threads))
        print(f"{'threads':<22} {'wall s (median)':>16} {'rounds':>24}")
        for label, values in seconds.items():
            rounds = " ".join(f"{v:.1f}" for v in values)
            print(f"{label:<22} {statistics.median(values):>16.1f} {rounds:>24}")
        kept = {}
        for threads in variants.values():
            out = folder / f"tables-{threads}" / "tables"
            out.mkdir(parents=True)
            for table in IDEAS_TABLES:
                shutil.copy(folder / f"threads-{threads}" / "tables" / f"{table}.parquet", out)
            kept[threads] = out.parent
        differing = compare(*kept.values())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    raise SystemExit(1 if differing else 0)


if __name__ == "__main__":
    main()
