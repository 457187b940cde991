"""The gate's figures on the labelled set are kept per machine under a key of the code, the
rows and the judge: the same inputs give the kept figures without scoring again, other rows
or a damaged copy are scored again."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_pipeline.integrity import labelled


@pytest.fixture
def scored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """A private cache, a few labelled rows, and a count of the times they are scored."""
    monkeypatch.setenv("VAULT_MODEL_CACHE", str(tmp_path))
    rows = labelled.load_rows("heldout")[:12]
    monkeypatch.setattr(labelled, "load_rows", lambda split=None, path=None: list(rows))
    calls: list[int] = []
    evaluate = labelled.evaluate

    def counted(*args, **kwargs):
        calls.append(1)
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(labelled, "evaluate", counted)
    return calls


def test_the_same_inputs_reuse_the_kept_figures(scored: list[int]) -> None:
    first = labelled.gate_figures()
    assert first and scored == [1]
    assert labelled.gate_figures() == first
    assert scored == [1]  # kept: not scored again


def test_other_rows_are_scored_again(scored: list[int], monkeypatch) -> None:
    first = labelled.gate_figures()
    fewer = labelled.load_rows("heldout")[:6]
    monkeypatch.setattr(labelled, "load_rows", lambda split=None, path=None: list(fewer))
    second = labelled.gate_figures()
    assert scored == [1, 1] and second != first


def test_a_damaged_copy_is_scored_again(scored: list[int], tmp_path: Path) -> None:
    first = labelled.gate_figures()
    [kept] = (tmp_path / "gate-figures").glob("*.json")
    kept.write_text('[{"layer": "comb')  # torn
    assert labelled.gate_figures() == first and scored == [1, 1]
