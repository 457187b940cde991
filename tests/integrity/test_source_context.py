"""A finding of the paper's own results is the same on every run: of the outcome phrases a
sentence repeats, the first in reading order is named, whatever order Python hashes sets in
(a table rebuilt in another process must not change)."""

from __future__ import annotations

import os
import subprocess
import sys

from vault_pipeline.integrity.source import ResultsContext, outcome_runs

SENTENCE = ("Our sampler reduces variance sharply and improves mixing markedly on every "
            "benchmark, and increases throughput on large graphs.")


def test_the_first_repeated_phrase_in_reading_order_is_named() -> None:
    runs = outcome_runs(SENTENCE)
    context = ResultsContext(frozenset(), frozenset(runs[1:]), 1)  # all but the first
    [finding] = context.findings(SENTENCE)
    assert finding.match == " ".join(runs[1])


def test_the_finding_does_not_depend_on_the_hash_seed() -> None:
    code = ("from vault_pipeline.integrity.source import ResultsContext, outcome_runs\n"
            f"s = {SENTENCE!r}\n"
            "print(ResultsContext(frozenset(), frozenset(outcome_runs(s)), 1)"
            ".findings(s)[0].match)")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}
                           ).stdout for seed in range(6)}
    assert seen == {" ".join(outcome_runs(SENTENCE)[0]) + "\n"}

