"""The extractive ideas stage with its isolated pool's workers replaced every 100 papers (the
pool's default, the anchor) and every `WORKER_PAPERS` (now), on the same synthetic vault,
each in its own process: CPU and wall seconds side by side, then the two results compared
table for table (`compare_homes.py`: masked_records, llm_failures, views).

    python benchmarks/bench_ideas_workers.py [--papers 5000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ANCHOR = 100  # isolation.PoolSettings.max_tasks, what the ideas pool used before
IDEAS_TABLES = ("masked_records", "llm_failures", "views")
# The scale benchmark's ideas stage, with the ideas pool's worker size set first.
CHILD = """
import runpy, sys
import vault_pipeline.llm.settings as settings
settings.WORKER_PAPERS = int(sys.argv[1])
sys.argv = [sys.argv[2], "--child", "ideas", "--home", sys.argv[3], "--snapshot", sys.argv[4]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def ideas(worker_papers: int, home: Path, snapshot: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, str(worker_papers),
                             str(HERE / "bench_scale.py"), str(home), str(snapshot)],
                            capture_output=True, text=True)
    lines = [x for x in result.stdout.splitlines() if x.startswith("FIGURES ")]
    if result.returncode != 0 or not lines:
        raise SystemExit(f"ideas failed:\n{result.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("FIGURES "))


def main(argv: list[str] | None = None) -> None:
    from bench_scale import run_stage, snapshot
    from compare_homes import compare

    from vault_pipeline.llm.settings import WORKER_PAPERS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=5_000)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="vault-ideas-workers-"))
    try:
        source = snapshot(folder, args.papers, 0)
        base = folder / "base"
        for stage in ("papers", "documents"):
            run_stage(stage, base, source)
        print(f"{'worker papers':<22} {'wall s':>8} {'cpu s':>8} {'cpu ms/paper':>13}")
        results = {}
        for label, size in ((f"{ANCHOR} (before)", ANCHOR), (f"{WORKER_PAPERS} (now)",
                                                             WORKER_PAPERS)):
            home = folder / str(size)
            shutil.copytree(base, home)
            figures = ideas(size, home, source)
            print(f"{label:<22} {figures['wall_s']:>8.1f} {figures['cpu_s']:>8.1f} "
                  f"{1000 * figures['cpu_s'] / args.papers:>13.2f}", flush=True)
            kept = folder / f"tables-{size}" / "tables"
            kept.mkdir(parents=True)
            for table in IDEAS_TABLES:
                shutil.copy(home / "tables" / f"{table}.parquet", kept)
            results[size] = kept.parent
        differing = compare(results[ANCHOR], results[WORKER_PAPERS])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    raise SystemExit(1 if differing else 0)


if __name__ == "__main__":
    main()
