"""The block-at-a-time LSH finds exactly the pairs of the whole-corpus definition (share a
band, estimate at or above the threshold; new rows against stored and other new rows, each
pair once), whatever the block sizes, and compares nothing when nothing is new."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_pipeline.duplicates import lsh, minhash

PARAMS = minhash.MinHashParams()


def corpus(seed: int, n: int) -> np.ndarray:
    """Signatures of ``n`` random texts of a small vocabulary, a third of them edited
    copies of an earlier one (so many pairs share bands, some fall under 0.5)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(60)])
    texts: list[list[str]] = []
    for i in range(n):
        if i and rng.random() < 0.4:
            words = list(texts[int(rng.integers(i))])
            for j in rng.integers(0, len(words), int(rng.integers(1, 7))):
                words[j] = str(rng.choice(vocab))
        else:
            words = list(rng.choice(vocab, int(rng.integers(3, 50))))
        texts.append(words)
    return minhash.signatures(pl.Series([" ".join(w) for w in texts]), PARAMS)


def whole(sig: np.ndarray, n_old: int, threshold: float) -> set[tuple[int, int]]:
    """The definition, by brute force over every pair."""
    keys = minhash.band_keys(sig, PARAMS)
    found = set()
    for b in range(n_old, len(sig)):
        for a in range(b):
            share = ((keys[a] == keys[b]) & (keys[b] != 0)).any()
            if share and minhash.estimate(sig[a][None], sig[b][None])[0] >= threshold:
                found.add((a, b))
    return found


def blocks(sig: np.ndarray, cuts: list[int]) -> list[np.ndarray]:
    edges = [0, *sorted(set(cuts)), len(sig)]
    return [sig[x:y] for x, y in itertools.pairwise(edges)]


@given(st.integers(0, 2**16), st.integers(2, 60), st.data())
@settings(max_examples=25, deadline=None)
def test_blocked_pairs_are_the_whole_corpus_pairs(seed: int, n: int, data) -> None:
    sig = corpus(seed, n)
    n_old = data.draw(st.integers(0, n))
    threshold = data.draw(st.sampled_from([0.0, 0.25, 0.5, 0.9]))
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    old = blocks(sig[:n_old], [c for c in cuts if c < n_old])
    new = blocks(sig[n_old:], [c - n_old for c in cuts if c > n_old])
    seen: list[np.ndarray] = []
    pairs, got_old = lsh.lsh_pairs(old, new, PARAMS, threshold, on_new=seen.append)
    assert got_old == n_old
    assert set(pairs.select("a", "b").iter_rows()) == whole(sig, n_old, threshold)
    assert pairs.select("a", "b").is_unique().all()
    assert (np.vstack(seen) if seen else sig[n_old:n_old]).tolist() == sig[n_old:].tolist()
    if pairs.height:
        a, b = pairs["a"].to_numpy(), pairs["b"].to_numpy()
        assert np.allclose(pairs["score"].to_numpy(), minhash.estimate(sig[a], sig[b]))


def test_nothing_new_compares_nothing_and_verify_reads_a_batch_at_a_time(tmp_path: Path
                                                                         ) -> None:
    sig = corpus(1, 40)
    assert lsh.lsh_pairs([sig], [], PARAMS, 0.0)[0].is_empty()
    engine = lsh.BlockedLSH(tmp_path, PARAMS)
    engine.add(sig)
    candidates = engine.candidates(0)
    assert candidates is not None
    lsh_batch, lsh.VERIFY_BATCH = lsh.VERIFY_BATCH, 3  # many small batches, same pairs
    try:
        small = engine.verify(candidates, 0.25)
    finally:
        lsh.VERIFY_BATCH = lsh_batch
    assert small.equals(engine.verify(candidates, 0.25))
    assert set(small.select("a", "b").iter_rows()) == whole(sig, 0, 0.25)


def test_stage_signs_blocks_capped_by_texts_and_characters(monkeypatch) -> None:
    from vault_pipeline.duplicates.incremental import signed_blocks as _signed_blocks

    monkeypatch.setattr(lsh, "BLOCK", 3)
    monkeypatch.setattr(lsh, "BLOCK_CHARS", 10)
    texts = ["aaaa bbbb", "c", "a text longer than the cap", "e f", "g", "h", "i"]
    got = list(_signed_blocks(texts, PARAMS))
    assert [len(b) for b in got] == [2, 1, 3, 1]  # 10 chars; one long text alone; 3 texts
    assert np.vstack(got).tolist() == minhash.signatures(pl.Series(texts), PARAMS).tolist()
    assert list(_signed_blocks([], PARAMS)) == []
