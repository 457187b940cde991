"""Labels, groupings, the seeded order, and the rating checks every set relies on."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.errors import VaultError
from vault_pipeline.evalsets.constructed import review_reply, submission_note
from vault_pipeline.evalsets.inputs import check_ratings, rating_text
from vault_pipeline.evalsets.labels import BINARY, THREE_CLASS, label_of, seeded_order, venue_year
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.parse.openreview import parse_notes_page
from vault_pipeline.schemas import REVIEWS

VENUE = "ICLR.cc/2024/Conference"


@pytest.mark.parametrize(("decision", "mode", "label"), [
    ("Accept (oral)", "exclude", "Oral"), ("Accept (spotlight)", "exclude", "Spotlight"),
    ("Accept (poster)", "exclude", "Poster"), ("Reject", "exclude", "Reject"),
    ("Withdrawn", "exclude", None), ("Withdrawn", "label", "Withdrawn"),
    ("Desk rejected", "exclude", None), ("Desk rejected", "label", "Desk rejected"),
    ("Accept", "label", None), (None, "label", None),
])
def test_decision_labels(decision, mode, label) -> None:
    found, reason = label_of(decision, mode)
    assert found == label
    assert (reason is None) == (label is not None)


def test_reasons_say_why_a_submission_has_no_label() -> None:
    assert label_of(None)[1] == "no decision yet"
    assert "tier" in label_of("Accept")[1]
    assert "withdrawn = exclude" in label_of("Withdrawn", "exclude")[1]


def test_groupings_of_seed_000() -> None:
    assert {k: THREE_CLASS[k] for k in ("Reject", "Poster", "Spotlight", "Oral")} == {
        "Reject": "Reject", "Poster": "Poster", "Spotlight": "Highlight", "Oral": "Highlight"}
    assert {BINARY[k] for k in ("Poster", "Spotlight", "Oral")} == {"Accept"}
    assert BINARY["Withdrawn"] == BINARY["Desk rejected"] == "Reject"


@given(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=30),
       st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=10))
def test_seeded_order_ignores_input_order_and_keeps_its_place_when_items_arrive(
        items, extra) -> None:
    ordered = seeded_order(items, 3, "scope")
    assert seeded_order(list(reversed(items)), 3, "scope") == ordered
    grown = seeded_order(items + [e for e in extra if e not in items], 3, "scope")
    assert [i for i in grown if i in set(items)] == ordered


def test_venue_year() -> None:
    assert venue_year("ICLR.cc/2025/Conference") == 2025
    assert venue_year("NeurIPS.cc/2025/Conference") == 2025
    assert venue_year("TMLR") is None


def _reviews(ratings: list) -> pl.DataFrame:
    replies = [review_reply(VENUE, 7, f"rev{i}", rating, 4, 1_700_000_000_000 + i)
               for i, rating in enumerate(ratings)]
    note = submission_note(VENUE, "forum7", 7, title="T", abstract="A", authors=["A B"],
                           keywords=[], primary_area=None, tldr=None, label="Reject",
                           replies=replies, when_ms=1_690_000_000_000)
    _, rows, _ = parse_notes_page({"notes": [note]})
    return pl.DataFrame(rows, schema={k: v for k, v in REVIEWS.polars.items()
                                      if k != "raw_sha256"})


def test_rating_strings_are_parsed_and_garbage_is_rejected_with_a_reason() -> None:
    reviews = _reviews(["8: accept, good paper", "6: marginally above the acceptance threshold",
                        "strong accept!!!", None, 42, 3, "5.5"])
    kept, excluded = check_ratings(reviews, (1.0, 10.0))
    assert kept.get_column("rating").to_list() == [8.0, 6.0, 3.0, 5.5]
    reasons = dict(zip(excluded.get_column("note_id"), excluded.get_column("reason"),
                       strict=True))
    assert reasons == {"rev2": "rating 'strong accept!!!' is not a number",
                       "rev3": "the review gives no rating",
                       "rev4": "rating 42 is outside the scale 1-10"}
    assert set(excluded.get_column("forum_id")) == {"forum7"}


def test_rating_text_reads_the_rating_section_only() -> None:
    text = "## summary\n\nGood.\n\n## rating\n\nvery   good\n\n## weaknesses\n\nNone."
    assert rating_text(text) == "very good"
    assert rating_text("## summary\n\nrating: 8") is None
    assert rating_text(None) is None


def test_default_quotas_are_innoevals_released_sets() -> None:
    defaults = EvalSetsSettings()
    assert defaults.pointwise_quota == {"Reject": 138, "Poster": 66, "Spotlight": 9, "Oral": 4}
    assert defaults.pair_quota == {"reject-oral": 172, "poster-oral": 69,
                                   "reject-poster": 67, "poster-spotlight": 64}
    assert sum(defaults.pair_quota.values()) == 372


def test_settings_are_checked() -> None:
    with pytest.raises(VaultError, match="unknown point-wise label"):
        EvalSetsSettings(pointwise_quota={"Accept": 3})
    with pytest.raises(VaultError, match="withdrawn"):
        EvalSetsSettings(withdrawn="drop")
    with pytest.raises(VaultError, match="unknown evaluation-set settings"):
        EvalSetsSettings.resolve(run_config={"seeed": 1})
    resolved = EvalSetsSettings.resolve(run_config={"seed": 5, "dense_bins": [3, 4],
                                                    "group_pool": None})
    assert resolved.seed == 5 and resolved.dense_bins == (3, 4) and resolved.group_pool == 800
    assert resolved.fingerprint() != EvalSetsSettings().fingerprint()


class CountingEmbedder:
    """Unit vectors from a text's bytes; counts what it is asked to embed."""

    name, source, dimension = "counting/1", "counting", 8

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        vectors = np.array([[(hash(t) >> i) % 7 + 1 for i in range(8)] for t in texts],
                           dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_embeddings_are_cached_by_text(vault_paths) -> None:
    from vault_pipeline.evalsets.similarity import embed_cached

    embedder = CountingEmbedder()
    first = embed_cached(vault_paths, embedder, ["a", "b", "a"])
    second = embed_cached(vault_paths, embedder, ["b", "c", "a"])
    assert sorted(embedder.asked) == ["a", "b", "c"]  # "a" and "b" were not embedded twice
    assert (first[0] == first[2]).all() and (second[0] == first[1]).all()
    assert (second[2] == first[0]).all()


def test_lexical_fallback_is_named_when_no_embedder_is_installed(vault_paths, monkeypatch
                                                                 ) -> None:
    from vault_pipeline.embeddings import embedders
    from vault_pipeline.evalsets import similarity

    def missing(*_args, **_kwargs):
        raise embedders.EmbedderNotInstalled("sentence-transformers is not installed")

    monkeypatch.setattr(embedders, "load_embedder", missing)
    space = similarity.topic_space(vault_paths, ["graph neural networks", "graph networks",
                                                 "diffusion models"], "embedded")
    assert space.method == "lexical-tfidf"
    assert "no embedder installed" in space.note and "sentence-transformers" in space.note
    sims = space.similarity(np.array([0]))
    assert sims[0, 1] > sims[0, 2] and sims[0, 0] == pytest.approx(1.0)
    asked = similarity.topic_space(vault_paths, ["a graph", "the graph"], "lexical")
    assert asked.method == "lexical-tfidf" and "requested" in asked.note
    empty = similarity.topic_space(vault_paths, ["the", "a"], "lexical")  # stop words only
    assert (empty.similarity(np.array([0, 1])) == 0).all()


def test_score_bins_floor_by_default_and_round_half_up_when_asked() -> None:
    from vault_pipeline.evalsets.review_paradigm import score_bin

    means = pl.DataFrame({"m": [1.0, 2.5, 5.49, 5.5, 6.75, 9.9, 10.0]})
    floor = means.select(score_bin(pl.col("m"), "floor", (1.0, 10.0))).to_series().to_list()
    rounded = means.select(score_bin(pl.col("m"), "round", (1.0, 10.0))).to_series().to_list()
    assert floor == [1, 2, 5, 5, 6, 9, 10]
    assert rounded == [1, 3, 5, 6, 7, 10, 10]
