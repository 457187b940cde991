"""The leak checker: measured results flagged, plans and settings not, on a labelled set of
real abstract sentences and written ones (a held-out half was written before the rules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_pipeline.integrity.leaks import find_leaks, mask_text

LABELLED = Path(__file__).parents[1] / "data" / "ideas" / "leak_sentences.jsonl"


def _scores(split: str) -> tuple[float, float]:
    rows = [json.loads(x) for x in LABELLED.read_text().splitlines()]
    rows = [r for r in rows if r["split"] == split]
    tp = sum(1 for r in rows if r["label"] == "result" and find_leaks(r["text"]))
    fp = sum(1 for r in rows if r["label"] == "clean" and find_leaks(r["text"]))
    fn = sum(1 for r in rows if r["label"] == "result" and not find_leaks(r["text"]))
    return tp / (tp + fp), tp / (tp + fn)


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_precision_and_recall_on_the_labelled_set(split: str) -> None:
    precision, recall = _scores(split)
    assert precision >= 0.9, precision
    assert recall >= 0.9, recall


@pytest.mark.parametrize("text", [
    "Our model achieves 92.3% accuracy on ImageNet.",
    "The method outperforms the strongest baseline by 4.1 points.",
    "We report state-of-the-art results on GLUE.",
    "It reaches state of the art on three benchmarks.",
    "| Ours | 45.3 | 61.2 |",
    "Latency drops from 120 ms to 40 ms.",
    "The effect is significant (p < 0.01).",
    "The measured ratio is 0.93 ± 0.02.",
])
def test_measured_results_are_flagged(text: str) -> None:
    assert find_leaks(text), text


@pytest.mark.parametrize("text", [
    "We train with a learning rate of 3e-4 and batch size 256 for 100 epochs.",
    "We will compare against BERT and report accuracy on ImageNet.",
    "If the idea holds, the model should outperform the baseline on long inputs.",
    "The encoder has 12 layers and 8 heads.",
    "We evaluate on CIFAR-10 and CIFAR-100 with 5 random seeds.",
    "GPT-4 and Llama-3-8B are used as base models (Section 4).",
])
def test_plans_settings_and_names_are_not_flagged(text: str) -> None:
    assert not find_leaks(text), find_leaks(text)


def test_mask_keeps_plans_and_drops_results() -> None:
    text = ("We propose a sparse router. It outperforms Switch by 2 points. "
            "We will evaluate on C4.\n| A | 1.0 | 2.0 |")
    masked = mask_text(text)
    assert masked.text == "We propose a sparse router. We will evaluate on C4."
    assert {f.kind for f in masked.findings} == {"comparison", "delta", "table_row"} or \
        {"comparison", "table_row"} <= {f.kind for f in masked.findings}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([
    "We propose X.", "X achieves 91.5% accuracy.", "The learning rate is 0.1.",
    "X beats Y by 3 points.", "We will test X on Z.", "| a | 1 | 2 |", "Results show gains.",
    "Ablations will remove the router.",
]), max_size=8), st.text(max_size=40))
def test_masking_is_idempotent_and_leaves_no_leak(parts: list[str], noise: str) -> None:
    text = " ".join(parts) + " " + noise
    once = mask_text(text)
    assert not find_leaks(once.text)
    assert mask_text(once.text).text == once.text
