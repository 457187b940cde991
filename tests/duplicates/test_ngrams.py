"""n-gram decontamination: shared 13-grams are measured per text, never against itself."""

from __future__ import annotations

import polars as pl

from vault_pipeline.duplicates.ngrams import ngram_frame, overlaps

TEXT = " ".join(f"word{i}" for i in range(40))


def frame(rows: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame({"id": list(rows), "text": list(rows.values())})


def test_overlap_is_the_share_of_the_query_ngrams() -> None:
    half = " ".join(f"word{i}" for i in range(20)) + " " + " ".join(f"other{i}" for i in range(20))
    found = overlaps(frame({"q": TEXT}), frame({"a": half, "b": "unrelated " * 30, "q": TEXT}))
    assert found.rows() == [("q", "a", 8, 28, 8 / 28)]


def test_short_texts_have_no_ngrams_and_threshold_filters() -> None:
    assert ngram_frame(["s"], ["only five words here now"]).is_empty()
    assert overlaps(frame({"q": TEXT}), frame({"a": TEXT}), threshold=0.99).height == 1
    assert overlaps(frame({"q": TEXT}), frame({"a": "x " * 50}), threshold=0.0).is_empty()


def test_symmetric_uses_the_shorter_text() -> None:
    short = " ".join(f"word{i}" for i in range(14))  # 2 of TEXT's 28 13-grams
    assert overlaps(frame({"q": TEXT}), frame({"s": short}))["overlap"][0] == 2 / 28
    assert overlaps(frame({"q": TEXT}), frame({"s": short}), symmetric=True)["overlap"][0] == 1.0
