"""The fine-tuned judge scores a sentence once: a sentence read again (the views copied from
a paper's sentences) is answered from the scorer's memo, in the order asked, and the memo
stays within its bound."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from vault_pipeline.integrity import finetuned


class Embedder:
    """Two-number vectors (length, 1) of the texts, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def _scorer() -> finetuned.FineTunedScorer:
    scorer = finetuned.FineTunedScorer.__new__(finetuned.FineTunedScorer)
    scorer.head = SimpleNamespace(weight=np.array([1.0, 0.0]), bias=0.5)
    scorer._embedder, scorer._memo = Embedder(), {}
    return scorer


def test_the_scorer_embeds_each_sentence_once_and_answers_in_order() -> None:
    scorer = _scorer()
    asked = scorer._embedder.asked
    assert scorer.logits(["ab", "a", "ab"]).tolist() == [2.5, 1.5, 2.5]
    assert scorer.logits(["abc", "a"]).tolist() == [3.5, 1.5]
    assert asked == [["ab", "a"], ["abc"]]


def test_the_memo_stays_within_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(finetuned, "MEMO_SIZE", 2)
    scorer = _scorer()
    scorer.logits(["a", "bb"])
    assert scorer.logits(["ccc"]).tolist() == [3.5]
    assert len(scorer._memo) <= 2
    assert scorer.logits(["a"]).tolist() == [1.5]  # forgotten, scored again, same answer
    assert scorer._embedder.asked[-1] == ["a"]


@pytest.mark.parametrize("size", [0, 1, 2])
def test_a_full_memo_still_answers_the_sentences_it_held(monkeypatch: pytest.MonkeyPatch,
                                                         size: int) -> None:
    """A call that both reads memo entries and overflows the memo (a long paper late in a
    worker's life, or the memo off) answers every sentence: the overflow used to clear the
    entries the call was about to read (KeyError)."""
    monkeypatch.setattr(finetuned, "MEMO_SIZE", size)
    scorer = _scorer()
    scorer.logits(["a"])
    assert scorer.logits(["a", "bb", "ccc"]).tolist() == [1.5, 2.5, 3.5]
    assert scorer.logits(["ccc", "a"]).tolist() == [3.5, 1.5]
    assert len(scorer._memo) <= max(size, 0)
