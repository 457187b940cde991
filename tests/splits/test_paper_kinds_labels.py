"""The labelled sets of methodological / not-methodological papers are whole and readable:
every label names a paper the sample bundles (or carries its CSAbstruct abstract) and a
kind of the guide, with a reason, and both halves hold both classes (a half without
positives could not measure recall)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = {"methodological", "survey", "position", "dataset_benchmark", "empirical", "analysis"}


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_paper_kinds", ROOT / "benchmarks" / "bench_paper_kinds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labels_name_bundled_papers_and_known_kinds() -> None:
    bench = _bench()
    rows = [json.loads(line) for line in bench.LABELS.read_text().splitlines()]
    texts = bench.texts()
    assert len(rows) == len({r["arxiv_id"] for r in rows}) >= 100
    assert {r["arxiv_id"] for r in rows} <= set(texts)
    assert {r["kind"] for r in rows} <= KINDS
    assert all(r["methodological"] == (r["kind"] == "methodological") and r["why"]
               for r in rows)
    for half in ("dev", "untouched"):
        labels = {r["methodological"] for r in rows if bench.half(r["arxiv_id"]) == half}
        assert labels == {True, False}


def test_scores_count_each_cell() -> None:
    s = _bench().scores([(True, True), (True, False), (False, True), (False, False)])
    assert (s["tp"], s["fn"], s["fp"], s["tn"]) == (1, 1, 1, 1)
    assert s["precision"] == s["recall"] == 0.5


def test_csabstruct_set_is_labelled_and_split_by_paper() -> None:
    bench = _bench()
    rows = [json.loads(line) for line in bench.LABELS_CS.read_text().splitlines()]
    assert len(rows) == len({r["id"] for r in rows}) >= 400
    assert len({" ".join(r["abstract"].lower().split()) for r in rows}) == len(rows)
    assert {r["kind"] for r in rows} <= KINDS and {r["sample"] for r in rows} == {
        "random", "enriched"}
    assert all(r["methodological"] == (r["kind"] == "methodological") and r["why"]
               and isinstance(r["ambiguous"], bool) and r["id"].startswith("csabstruct-")
               for r in rows)
    for half in ("dev", "heldout"):
        labels = [r["methodological"] for r in rows if r["half"] == half]
        assert len(labels) >= 150 and 50 <= sum(labels) <= len(labels) - 50
    assert {r["half"] for r in rows} == {"dev", "heldout"}


def test_intervals_bracket_the_point_estimate() -> None:
    bench = _bench()
    pairs = [(True, True)] * 30 + [(True, False)] * 10 + [(False, True)] * 5 + [
        (False, False)] * 40
    s, ci = bench.scores(pairs), bench.intervals(pairs)
    for name in ("precision", "recall", "f1"):
        low, high = ci[name]
        assert low < s[name] < high and low >= 0.0 and high <= 1.0
    assert bench.intervals([(True, True)] * 5)["recall"] == (1.0, 1.0)
