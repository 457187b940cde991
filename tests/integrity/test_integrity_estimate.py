"""The leak rate is quoted as an estimate with its 95 % interval, from counts measured on
held-out abstracts with the gate in use; a stale or missing measurement is quoted as none,
and the card never turns the checker's own zero into a leak rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_pipeline.audit.report import card_lines, estimate_lines
from vault_pipeline.integrity import estimate

COUNTS = {"cs": {"abstracts": 113, "result": [1, 400], "clean_kept": [300, 480],
                 "view_sentences": 900, "view_result": 1},
          "bio": {"abstracts": 400, "result": [5, 2000], "conclusion": [3, 900],
                  "clean_kept": [700, 2100], "view_sentences": 1800, "view_result": 2}}


def test_wilson_matches_known_values() -> None:
    rate, low, high = estimate.wilson(0, 100)
    assert rate == 0 and low == 0 and high == pytest.approx(0.0370, abs=1e-4)
    rate, low, high = estimate.wilson(10, 100)
    assert (low, high) == (pytest.approx(0.0552, abs=1e-4), pytest.approx(0.1744, abs=1e-4))
    assert estimate.wilson(0, 0) == (0.0, 0.0, 1.0)


@settings(deadline=None)  # a loaded machine must not fail a pure function
@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_interval_holds_the_share(case: tuple[int, int]) -> None:
    hits, total = case
    rate, low, high = estimate.wilson(hits, total)
    assert 0 <= low <= rate <= high <= 1


def test_a_current_estimate_is_quoted_with_intervals(tmp_path: Path) -> None:
    path = estimate.write_estimate(COUNTS, "heldout", "abc", tmp_path / "e.json")
    found = estimate.view_leak_estimate(path)
    assert found["current"] and found["split"] == "heldout"
    cs = found["domains"]["cs"]
    assert cs["result"]["rate"] == pytest.approx(1 / 400)
    assert cs["result"]["ci95"][0] < 1 / 400 < cs["result"]["ci95"][1]
    assert cs["result_per_1000_view_sentences"]["rate"] == pytest.approx(1000 / 900)
    text = estimate_lines(found)
    assert "0.2% (1 of 400; 95% interval" in text and "biomedical, 400 abstracts" in text
    assert "conclusion sentences 0.3% (3 of 900" in text


def test_a_stale_or_missing_estimate_is_no_claim(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"split": "heldout", "gate": "leaks/0|gate/0", "domains":
                                COUNTS}))
    stale = estimate.view_leak_estimate(path)
    assert stale is not None and not stale["current"]
    assert "quotes none" in estimate_lines(stale) and "%" not in estimate_lines(stale)
    assert estimate.view_leak_estimate(tmp_path / "none.json") is None
    assert "claims none" in estimate_lines(None)


def test_the_card_never_says_zero_leaks() -> None:
    report = {"gate": {"version": "gate/2", "rules": "leaks/4", "offline_judge": "j"},
              "records": {"rows": 3, "masked_by_layer": {}},
              "quarantined": {"papers": 0, "leaky": 0},
              "views": {"rows": 15, "empty_or_missing": 0, "placeholder_rate": 0.0},
              "method_leaks": {"removed_at_derivation": 0, "remaining": 0},
              "residual": {"record_leaks": 0, "view_leaks": 0},
              "view_leak_estimate": None}
    text = card_lines(report)
    assert "not a leak rate" in text and "claims none" in text
    assert "0 leaks" not in text


def test_the_shipped_estimate_was_measured_with_the_shipped_gate() -> None:
    found = estimate.view_leak_estimate()
    assert found is not None, "run benchmarks/bench_view_leaks.py --write"
    assert found["current"], (found["measured_with"], estimate.gate_identity())
    assert set(found["domains"]) == {"cs", "bio"} and found["split"] == "heldout"
