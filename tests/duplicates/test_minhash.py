"""MinHash signatures and LSH: equal texts collide, the estimate tracks the true Jaccard,
and empty and short texts are handled (the LSH over them: test_lsh.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_pipeline.duplicates import minhash

PARAMS = minhash.MinHashParams()
_GREEK = "alpha beta gamma delta eps zeta eta theta iota kappa lambda mu nu xi omicron pi rho"
WORDS = st.lists(st.sampled_from(_GREEK.split()), max_size=40)


def sig(*texts: str) -> np.ndarray:
    return minhash.signatures(pl.Series(list(texts), dtype=pl.String), PARAMS)


@given(WORDS)
@settings(max_examples=60, deadline=None)
def test_signature_ignores_case_spacing_and_punctuation(words: list[str]) -> None:
    text = " ".join(words)
    noisy = "  ".join(w.upper() + "," for w in words)
    a, b = sig(text, noisy)
    assert (a == b).all()


@given(WORDS, WORDS)
@settings(max_examples=60, deadline=None)
def test_shingles_are_offsets_of_their_texts(a: list[str], b: list[str]) -> None:
    hashes, offsets = minhash.shingle_hashes(pl.Series([" ".join(a), " ".join(b)]), 5)
    counts = np.diff(offsets)
    for words, count in zip((a, b), counts, strict=True):
        assert count == (0 if not words else max(len(words) - 4, 1))
    assert len(hashes) == counts.sum()


def test_estimate_tracks_jaccard_and_empty_texts_never_collide() -> None:
    base = [f"w{i}" for i in range(200)]
    edited = base[:180] + [f"x{i}" for i in range(20)]
    a, b, empty, none = sig(" ".join(base), " ".join(edited), "", "...")
    truth = 176 / 216  # shared 5-grams / union
    assert abs(minhash.estimate(a[None], b[None])[0] - truth) < 0.1
    keys = minhash.band_keys(np.vstack([a, b, empty, none]), PARAMS)
    assert (keys[2:] == 0).all() and (keys[:2] != 0).all()


def test_short_text_is_one_shingle_of_its_words() -> None:
    a, b, c = sig("graph neural nets", "Graph neural nets!", "graph neural")
    assert (a == b).all() and not (a == c).all()
