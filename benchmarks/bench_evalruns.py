"""Calls, tokens and wall time per task and per input (abstract, vanilla and objective
summary) of an evaluation run over the default-sized sets, with the scripted
OpenAI-compatible evaluator of the tests (so the time is the pipeline's: rendering, HTTP,
validation, caching; not a model's). The summaries are made by the same server (task
`summary`).

    python benchmarks/bench_evalruns.py [--submissions 2000]

Constructed ICLR 2025-like and ICLR 2024-like venues go through the raw zone, `reviews` and
the evaluation sets (seed 001 stratified sample of 30 per bin, 100 anchors; InnoEval sets at
their default quotas where the venue has them), then one cold run of every task on every
input and a warm rerun (every call and summary reused by input hash)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("POLARS_MAX_THREADS", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.evalruns_server import EvaluatorServer
from vault_pipeline.evalruns.metering import TaskStats
from vault_pipeline.evalruns.run import run_evaluation
from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.evalsets.build import build_evalsets
from vault_pipeline.evalsets.constructed import constructed_venue, write_pages
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.store.paths import VaultPaths

VENUE, ANCHOR = "ICLR.cc/2025/Conference", "ICLR.cc/2024/Conference"


def _quiet(*_: object) -> None:
    pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EvaluatorServer() as server:
        root = Path(tmp)
        paths = VaultPaths(root / "vault").ensure()
        write_pages(constructed_venue(VENUE, args.submissions, seed=1), root / "in", "v25")
        write_pages(constructed_venue(ANCHOR, args.submissions, seed=2,
                                      rating_style="string"), root / "in", "v24")
        RawZone(paths).import_paths([root / "in"])
        build_reviews(paths)
        build_evalsets(paths, EvalSetsSettings.resolve(run_config={"idea_venues": [VENUE],
                                                        "embedder": "lexical"}), log=_quiet)
        settings = EvalRunSettings.resolve(run_config={
            "run_id": "bench", "model": "scripted", "embedder": "lexical",
            "ideas": {"backend": "openai", "base_url": server.base_url, "http_retries": 0,
                      "concurrency": 8}})
        for label in ("cold", "warm"):
            started = time.perf_counter()
            report = run_evaluation(paths, settings, log=_quiet)
            total = time.perf_counter() - started
            print(f"\n{label} run: {report.units:,} calls in the run, {report.asked:,} asked, "
                  f"{report.reused:,} reused, {report.summaries_made:,} summaries made, "
                  f"{report.summaries_reused:,} reused, {total:.1f} s in all (metrics "
                  "included)")
            _table("task", sorted(report.by_task.items()))
            _table("task / input", sorted((f"{t} / {i}", s)
                                          for (t, i), s in report.by_cell.items()))
            by_input: dict[str, TaskStats] = defaultdict(TaskStats)
            for (task, source), stats in report.by_cell.items():
                if task != "summary" and source != "idea":
                    total_of = by_input[source]
                    total_of.calls += stats.calls
                    total_of.tokens_in += stats.tokens_in
                    total_of.tokens_out += stats.tokens_out
                    total_of.seconds += stats.seconds
            _table("input (review paradigms)", sorted(by_input.items()))


def _table(label: str, rows: list[tuple[str, TaskStats]]) -> None:
    if not rows:
        print(f"  {label}: nothing asked (every call reused)")
        return
    print(f"  {label:<28}{'requests':>10}{'tokens in':>12}{'tokens out':>12}{'seconds':>9}")
    for name, stats in rows:
        print(f"  {name:<28}{stats.calls:>10,}{stats.tokens_in:>12,}"
              f"{stats.tokens_out:>12,}{stats.seconds:>9.2f}")


if __name__ == "__main__":
    main()
