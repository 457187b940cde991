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


def test_the_scorer_embeds_each_sentence_once_and_answers_in_order() -> None:
    from types import SimpleNamespace

    import numpy as np

    from vault_pipeline.integrity import finetuned

    asked: list[list[str]] = []

    class Embedder:
        def embed(self, texts: list[str]) -> np.ndarray:
            asked.append(list(texts))
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    scorer = finetuned.FineTunedScorer.__new__(finetuned.FineTunedScorer)
    scorer.head = SimpleNamespace(weight=np.array([1.0, 0.0]), bias=0.5)
    scorer._embedder, scorer._memo = Embedder(), {}
    assert scorer.logits(["ab", "a", "ab"]).tolist() == [2.5, 1.5, 2.5]
    assert scorer.logits(["abc", "a"]).tolist() == [3.5, 1.5]
    assert asked == [["ab", "a"], ["abc"]]
