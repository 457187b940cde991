"""The seeded hash split: deterministic, close to the asked fractions, and stable when
papers are added (property-tested)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_pipeline.splits.assign import by_fraction, by_size, hash_unit

ids = st.lists(st.from_regex(r"2[0-9]{3}\.[0-9]{5}", fullmatch=True), unique=True,
               max_size=60)


@given(ids, ids, st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_adding_papers_never_moves_one(old: list[str], new: list[str], seed: int) -> None:
    before = by_fraction(old, seed, 0.2, 0.2)
    after = by_fraction(old + [i for i in new if i not in old], seed, 0.2, 0.2)
    assert all(after[i] == before[i] for i in old)


@given(ids, ids, st.integers(0, 5), st.integers(0, 5))
@settings(max_examples=60, deadline=None)
def test_sizes_are_met_and_kept(old: list[str], new: list[str], val: int, test: int) -> None:
    first = by_size(old, 7, val, test, {})
    assert sum(s == "test" for s in first.values()) == min(test, len(old))
    grown = by_size(old + [i for i in new if i not in old], 7, val, test, first)
    assert all(grown[i] == first[i] for i in old)
    assert sum(s == "test" for s in grown.values()) <= test


def test_fractions_are_close_and_the_seed_matters() -> None:
    population = [f"2601.{i:05d}" for i in range(20_000)]
    split = by_fraction(population, 0, 0.1, 0.05)
    shares = {s: sum(v == s for v in split.values()) / len(population)
              for s in ("train", "validation", "test")}
    assert abs(shares["validation"] - 0.1) < 0.01 and abs(shares["test"] - 0.05) < 0.01
    assert split == by_fraction(population, 0, 0.1, 0.05)
    assert split != by_fraction(population, 1, 0.1, 0.05)
    assert 0 <= hash_unit("2601.00001", 0) < 1
