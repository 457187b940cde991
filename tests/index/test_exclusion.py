"""InnoEval's self-exclusion rule: the target itself and any paper whose title holds 80 % of
the target's title words are never retrieved for it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.index.exclusion import excluded_for, title_contained

WORD = st.text("abcdefghij", min_size=1, max_size=6)


@given(st.lists(WORD, min_size=1, max_size=12), st.lists(WORD, max_size=6))
def test_a_title_with_words_added_is_contained(title: list[str], extra: list[str]) -> None:
    assert title_contained(" ".join(title), " ".join(extra + title + extra))


def test_the_eighty_percent_rule() -> None:
    target = "Adaptive Capacity for Expert Routing in Sparse Models"  # 8 words
    assert title_contained(target, "Adaptive capacity for expert routing in sparse networks")
    assert not title_contained(target, "Capacity for expert routing in dense networks")
    assert not title_contained("", "anything") and not title_contained(target, None)
    assert title_contained("Routing Routing", "routing") is False  # repeats count


def test_excluded_for_names_the_target_and_its_retitled_copies() -> None:
    pool = [("2601.00001", "Expert Routing"), ("2401.00002", "Expert Routing, Revisited"),
            ("2401.00003", "Black Hole Entropy")]
    assert excluded_for("2601.00001", "Expert Routing", pool) == {"2601.00001", "2401.00002"}
