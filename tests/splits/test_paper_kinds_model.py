"""The learned half of the extractive paper-kind classifier: how rules and model combine,
how the threshold is chosen, that the shipped weights were fitted on the dev halves only,
and that the model is what admits a methodological abstract without a cue phrase."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np

from vault_pipeline.splits import kind_model
from vault_pipeline.splits.kinds import classify, rules

ROOT = Path(__file__).resolve().parents[2]
NO_CUE = ("We use a convolutional network trained end to end to segment the pancreas in CT "
          "images, outperforming prior work on two datasets.")


def test_rules_decide_and_the_model_fills_the_gap() -> None:
    kinds = ["survey", "methodological", "no_method_found", "no_method_found", "empirical"]
    scores = np.array([0.99, 0.01, 0.60, 0.40, 0.99])
    assert kind_model.combined(kinds, scores, 0.5).tolist() == [False, True, True, False,
                                                                False]


def test_threshold_is_the_best_out_of_fold_f1_and_ties_go_higher() -> None:
    kinds = ["no_method_found"] * 4
    labels = [True, True, False, False]
    oof = [np.array([0.9, 0.62, 0.5, 0.1])]
    threshold, f1 = kind_model.choose_threshold(kinds, labels, oof)
    assert threshold == 0.6 and f1 == 1.0  # 0.55 and 0.60 both separate; the higher wins


def test_a_methodological_abstract_without_cue_needs_the_model(monkeypatch) -> None:
    assert rules("", NO_CUE).kind == "no_method_found"
    verdict = classify("", NO_CUE)
    assert verdict.methodological and "learned model" in verdict.evidence
    monkeypatch.setattr(kind_model, "model", lambda path=None: None)
    assert classify("", NO_CUE).kind == "no_method_found"


def test_shipped_weights_were_fitted_on_the_dev_halves_only() -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_paper_kinds", ROOT / "benchmarks" / "bench_paper_kinds.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    judge = kind_model.model()
    assert judge is not None and judge.version.startswith("paper-kind-lr/")
    dev = [r for r in bench.papers() if r["half"] == "dev"]
    payload = "\n".join(f"{r['id']}\t{r['methodological']}\t"
                        f"{kind_model.text_of(r['title'], r['abstract'])}" for r in dev)
    assert judge.meta["trained_on_sha256"] == hashlib.sha256(payload.encode()).hexdigest()
    assert judge.meta["papers"] == len(dev) and judge.threshold in kind_model.GRID


def test_train_fits_and_picks_a_grid_threshold(monkeypatch) -> None:
    monkeypatch.setattr(kind_model, "SEEDS", (0,))  # one round of folds keeps it fast
    method = ["we propose a new network architecture for segmentation",
              "a novel algorithm for routing is described and evaluated"]
    other = ["a survey of the literature on routing", "an interview study with managers"]
    texts = [f"{pair[i % 2]} (paper {i})" for i in range(10) for pair in (method, other)]
    labels = [pair is method for _ in range(10) for pair in (method, other)]
    judge = kind_model.train(texts, labels, ["no_method_found"] * 20, "0" * 64)
    assert judge.threshold in kind_model.GRID and judge.meta["papers"] == 20
    assert min(judge.scores(method)) > max(judge.scores(other))
