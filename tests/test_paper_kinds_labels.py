"""The labelled set of methodological / not-methodological papers is whole and readable:
every label names a paper the sample bundles and a kind of the guide, and both halves hold
both classes (a half without positives could not measure recall)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
