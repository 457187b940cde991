"""The evaluation sets built from OpenReview pages in the raw zone, end to end through the
`reviews` stage: labels and counts, invariants of pairs and groups, strata, anchors,
representations, citations, seeded rebuilds, and every bad input of the issue."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from testing.evalsets_vault import (
    ICLR24,
    ICLR25,
    ICLR26,
    QUOTA,
    small,
    two_venue_sets,
    vault_with,
)
from vault_pipeline.citations.build import build_citations
from vault_pipeline.evalsets.build import build_evalsets
from vault_pipeline.evalsets.constructed import (
    constructed_venue,
    decision_reply,
    review_reply,
    submission_note,
)
from vault_pipeline.evalsets.labels import RANK
from vault_pipeline.evalsets.settings import PAIR_TYPES
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.schemas import CITATIONS, DOCUMENTS, PAPERS, TableSchema
from vault_pipeline.store.paths import VaultPaths


def table(paths: VaultPaths, name: str) -> pl.DataFrame:
    return pl.read_parquet(paths.table(name))


def rows_of(schema: TableSchema, *rows: dict) -> pa.Table:
    """Rows in a table's schema, unnamed columns null."""
    return pa.Table.from_pylist(list(rows), schema=schema.arrow)


def card(paths: VaultPaths, set_name: str) -> tuple[dict, str]:
    row = table(paths, "eval_cards").filter(pl.col("set_name") == set_name).row(0, named=True)
    return json.loads(row["metrics"]), row["card"]


# session, not module: xdist may run another file's tests between this file's, which
# tears a module fixture down and builds it again (read only, so sharing it is safe)
@pytest.fixture(scope="session")
def built(tmp_path_factory) -> VaultPaths:
    return two_venue_sets(tmp_path_factory.mktemp("evalsets"), 260, 400, small())


def test_pointwise_labels_and_counts(built: VaultPaths) -> None:
    points = table(built, "eval_pointwise")
    subs = table(built, "submissions").filter(pl.col("venue_id") == ICLR25)
    available = {"Reject": subs.filter(pl.col("decision") == "Reject").height,
                 **{t: subs.filter(pl.col("decision") == f"Accept ({t.lower()})").height
                    for t in ("Poster", "Spotlight", "Oral")}}
    got = dict(points.group_by("label").len().iter_rows())
    assert got == {label: min(q, available[label]) for label, q in QUOTA.items()
                   if min(q, available[label])}
    assert points.get_column("forum_id").is_unique().all()
    decisions = dict(subs.select("forum_id", "decision").iter_rows())
    for row in points.iter_rows(named=True):
        tier = "Reject" if decisions[row["forum_id"]] == "Reject" else \
            decisions[row["forum_id"]].split("(")[1].rstrip(")").title()
        assert row["label"] == tier
        assert row["label_3class"] == {"Spotlight": "Highlight", "Oral": "Highlight"}.get(
            tier, tier)
        assert row["label_binary"] == ("Reject" if tier == "Reject" else "Accept")
        assert row["idea"]["tldr"] and row["idea"]["research_question"]
        assert "%" not in json.dumps(row["idea"])  # the abstracts' measured gains withheld
    assert "withdrawn" not in set(points.get_column("label").str.to_lowercase())


def test_pairs_same_venue_right_labels_random_order(built: VaultPaths) -> None:
    pairs = table(built, "eval_pairwise")
    assert not pairs.is_empty()
    labels = dict(table(built, "eval_pointwise").select("forum_id", "label").iter_rows())
    for row in pairs.iter_rows(named=True):
        low, high, difficulty = PAIR_TYPES[row["pair_type"]]
        assert {row["label_a"], row["label_b"]} == {low, high}
        assert row["difficulty"] == difficulty and row["venue_id"] == ICLR25
        better = row["forum_id_a"] if row["better"] == "a" else row["forum_id_b"]
        assert better == row["better_forum_id"]
        assert (row["label_a"] if row["better"] == "a" else row["label_b"]) == high
        assert row["idea_a"]["tldr"] and row["idea_b"]["tldr"]
        assert row["similarity_method"] == "lexical-tfidf"
        for side in ("a", "b"):
            if row[f"forum_id_{side}"] in labels:
                assert labels[row[f"forum_id_{side}"]] == row[f"label_{side}"]
    assert set(pairs.get_column("better")) == {"a", "b"}
    for (_,), part in pairs.group_by("pair_type"):
        members = part.get_column("forum_id_a").to_list() + part.get_column("forum_id_b").to_list()
        assert len(members) == len(set(members))  # nobody twice in one type
    metrics, text = card(built, "pairwise")
    assert metrics["pair_types"] == dict(pairs.group_by("pair_type").len().iter_rows())
    assert "lexical-tfidf" in text


def test_groups_span_labels_and_rank_by_label(built: VaultPaths) -> None:
    groups = table(built, "eval_groupwise")
    assert groups.get_column("group_id").n_unique() == 12
    for (_,), group in groups.group_by("group_id"):
        assert group.height >= 3 and group.get_column("label").is_unique().all()
        assert group.get_column("venue_id").unique().to_list() == [ICLR25]
        ranked = group.sort("rank")
        assert ranked.get_column("forum_id").to_list() == ranked.get_column("ranking")[0].to_list()
        assert [RANK[x] for x in ranked.get_column("label")] == sorted(
            RANK[x] for x in ranked.get_column("label"))
        assert ranked.get_column("is_best").to_list() == [True] + [False] * (group.height - 1)
        assert sorted(group.get_column("position")) == list(range(1, group.height + 1))
        assert group.filter(pl.col("is_query")).height == 1
        retrieved = group.filter(~pl.col("is_query"))
        assert retrieved.get_column("retrieval_rank").max() <= 25
    metrics, _ = card(built, "groupwise")
    assert metrics["groups"] == 12 and sum(metrics["group_sizes"].values()) == 12


def test_review_population_strata_and_anchors(built: VaultPaths) -> None:
    population = table(built, "eval_review_population")
    reviews = table(built, "reviews").filter(pl.col("kind") == "review")
    rated = reviews.filter(pl.col("venue_id") == ICLR25).get_column("forum_id").unique()
    assert set(population.get_column("forum_id")) == set(rated)
    assert population.get_column("withdrawn").any()  # the population keeps them
    for row in population.iter_rows(named=True):
        assert row["mean_rating"] == pytest.approx(sum(row["ratings"]) / len(row["ratings"]))
        assert row["accept_by_threshold"] == (row["mean_rating"] >= 6)
        assert row["score_bin"] == int(row["mean_rating"] // 1)
    strata = table(built, "eval_review_stratified")
    # rated withdrawn papers stay in the draw, counted as not accepted (seed 001: 18 of 232)
    withdrawn = strata.filter(pl.col("withdrawn"))
    assert withdrawn.height and not withdrawn.get_column("accepted").any()
    assert strata.filter(pl.col("decision").str.starts_with("Accept")).get_column(
        "accepted").all()
    anchors = table(built, "eval_review_anchors")
    for row in strata.iter_rows(named=True):  # the 3 nearest anchors, most similar first
        assert len(row["nearest_anchors"]) == 3
        assert set(row["nearest_anchors"]) <= set(anchors.get_column("forum_id"))
        assert row["nearest_anchor_similarities"] == sorted(
            row["nearest_anchor_similarities"], reverse=True)
    for (bin_,), part in population.group_by("score_bin"):
        taken = strata.filter(pl.col("score_bin") == bin_).height
        if bin_ in range(2, 9):
            assert taken == min(10, part.height)
        else:
            assert taken == part.height  # every paper of a sparse bin
    anchors = table(built, "eval_review_anchors")
    assert anchors.height == 8 and set(anchors.get_column("venue_id")) == {ICLR24}
    for ratings in anchors.get_column("ratings"):
        assert len(ratings) >= 2 and len(set(ratings)) == 1
    metrics, text = card(built, "review_population")
    assert 0 < metrics["reliability"]["icc_1_1"] < 1
    assert metrics["reliability"]["spearman_ceiling"] == pytest.approx(
        metrics["reliability"]["icc_1_k"] ** 0.5, abs=1e-5)
    assert "ICC(1,1)" in text and "Spearman ceiling" in text
    assert metrics["rows"] == population.height


def test_seeded_rebuild_is_identical_and_another_seed_is_not(built: VaultPaths) -> None:
    names = ["eval_pointwise", "eval_pairwise", "eval_groupwise", "eval_review_population",
             "eval_review_stratified", "eval_review_anchors", "eval_excluded"]
    before = {n: table(built, n) for n in names}
    build_evalsets(built, small(), log=lambda *_: None)
    for name in names:
        assert table(built, name).equals(before[name]), name
    build_evalsets(built, small(seed=9), log=lambda *_: None)
    assert not table(built, "eval_pointwise").equals(before["eval_pointwise"])
    assert not table(built, "eval_review_stratified").equals(before["eval_review_stratified"])
    build_evalsets(built, small(), log=lambda *_: None)  # back to seed 0 for other tests
    assert table(built, "eval_pointwise").equals(before["eval_pointwise"])


def test_label_short_of_its_quota_is_reported_never_padded(tmp_path: Path) -> None:
    paths = vault_with(tmp_path, {"v": constructed_venue(ICLR25, 120, seed=4)})
    build_evalsets(paths, small(pointwise_quota={"Oral": 50, "Reject": 5}),
                   log=lambda *_: None)
    points = table(paths, "eval_pointwise")
    orals = points.filter(pl.col("label") == "Oral")
    available = table(paths, "submissions").filter(
        pl.col("decision") == "Accept (oral)").height
    assert 0 < orals.height == available < 50
    assert orals.get_column("forum_id").is_unique().all()
    metrics, text = card(paths, "pointwise")
    assert metrics["shortfalls"] == [{"set": "pointwise", "venue_id": ICLR25,
                                      "stratum": "Oral", "quota": 50,
                                      "available": available, "short_by": 50 - available}]
    assert "nothing padded" in text and f"| {ICLR25} | Oral | 50 | {available} |" in text


def test_venue_with_no_decisions_yet(tmp_path: Path) -> None:
    paths = vault_with(tmp_path, {"v": constructed_venue(ICLR26, 80, seed=5, decided=False,
                                                         withdrawn_share=0,
                                                         desk_rejected_share=0)})
    build_evalsets(paths, small(idea_venues=(ICLR26,), review_venue=ICLR26,
                                anchor_venue=ICLR26), log=lambda *_: None)
    assert table(paths, "eval_pointwise").is_empty()
    assert table(paths, "eval_pairwise").is_empty()
    assert table(paths, "eval_groupwise").is_empty()
    metrics, text = card(paths, "pointwise")
    assert any("no decisions yet (80 submissions undecided)" in n for n in metrics["notes"])
    assert "This set is empty" in text
    excluded = table(paths, "eval_excluded").filter(pl.col("set_name") == "idea_sets")
    assert excluded.height == 80 and set(excluded.get_column("reason")) == {"no decision yet"}
    population = table(paths, "eval_review_population")  # ratings exist before decisions
    assert population.height == 80 and population.get_column("decision").is_null().all()
    assert any("no decisions yet" in n for n in card(paths, "review_population")[0]["notes"])


ABSTRACT = "Constructed tasks defeat current methods. We propose a constructed method."


def _note(forum: str, number: int, replies: list[dict], label: str = "Reject",
          title: str | None = None) -> dict:
    return submission_note(ICLR25, forum, number, title=title or f"Constructed {forum}",
                           abstract=ABSTRACT,
                           authors=["Ada Example"], keywords=["k"], primary_area="optimization",
                           tldr=None, label=label, replies=replies,
                           when_ms=1_727_300_000_000 + number)


def test_no_reviews_and_bad_ratings_are_excluded_with_reasons(tmp_path: Path) -> None:
    t = 1_731_000_000_000
    notes = [
        _note("noreviews01", 1, [decision_reply(ICLR25, 1, "dec1", "Reject", t)]),
        _note("badratings", 2, [review_reply(ICLR25, 2, "rv2a", "excellent!!", 3, t),
                                review_reply(ICLR25, 2, "rv2b", None, 3, t + 1),
                                decision_reply(ICLR25, 2, "dec2", "Reject", t + 2)]),
        _note("mixed00001", 3, [review_reply(ICLR25, 3, "rv3a", "8: accept, good paper", 4, t),
                                review_reply(ICLR25, 3, "rv3b", 0, 4, t + 1),
                                review_reply(ICLR25, 3, "rv3c", "3: reject, not good enough",
                                             4, t + 2),
                                decision_reply(ICLR25, 3, "dec3", "Accept (Poster)", t + 3)],
              label="Poster"),
    ]
    paths = vault_with(tmp_path, {"v": notes})
    build_evalsets(paths, small(), log=lambda *_: None)
    population = table(paths, "eval_review_population")
    assert population.get_column("forum_id").to_list() == ["mixed00001"]
    row = population.row(0, named=True)
    assert row["ratings"] == [8.0, 3.0] and row["mean_rating"] == 5.5
    assert row["rated_reviews"] == 2 and row["review_count"] == 3
    reasons = {(r["forum_id"], r["note_id"]): r["reason"] for r in
               table(paths, "eval_excluded").iter_rows(named=True)}
    assert reasons[("noreviews01", None)] == "no official reviews"
    assert reasons[("badratings", None)] == "none of its 2 official reviews has a valid rating"
    assert reasons[("badratings", "rv2a")] == "rating 'excellent!!' is not a number"
    assert reasons[("badratings", "rv2b")] == "the review gives no rating"
    assert reasons[("mixed00001", "rv3b")] == "rating 0 is outside the scale 1-10"
    points = table(paths, "eval_pointwise")  # a decision is enough for the idea sets
    assert set(points.get_column("forum_id")) == {"noreviews01", "badratings", "mixed00001"}
    assert points.filter(pl.col("forum_id") == "noreviews01").row(0, named=True)[
        "ratings"] == []


def test_withdrawn_can_be_labelled(tmp_path: Path) -> None:
    paths = vault_with(tmp_path, {"v": constructed_venue(ICLR25, 150, seed=6)})
    build_evalsets(paths, small(withdrawn="label",
                                pointwise_quota={"Reject": 5, "Withdrawn": 4}),
                   log=lambda *_: None)
    points = table(paths, "eval_pointwise")
    withdrawn = points.filter(pl.col("label") == "Withdrawn")
    assert withdrawn.height == 4
    assert set(withdrawn.get_column("label_binary")) == {"Reject"}
    assert set(withdrawn.get_column("decision")) == {"Withdrawn"}


def test_representations_and_citations(tmp_path: Path) -> None:
    t = 1_731_000_000_000
    title = "Learning Constructed Things with Constructed Tools"
    notes = [_note(f"paper{i:05d}", i, [review_reply(ICLR25, i, f"r{i}a", 5, 3, t),
                                        review_reply(ICLR25, i, f"r{i}b", 6, 3, t + 1),
                                        decision_reply(ICLR25, i, f"d{i}", "Reject", t + 2)],
                   title=title if i == 1 else None) for i in range(1, 4)]
    s2 = tmp_path / "s2.json"
    s2.write_text(json.dumps([{"paperId": "s2paper1", "externalIds": {"DOI": "10.1/x"},
                               "title": title.upper(), "year": 2025, "citationCount": 17,
                               "influentialCitationCount": 2, "referenceCount": 30}]))
    paths = vault_with(tmp_path, {"v": notes}, [s2])
    paths.store.write(PAPERS, rows_of(PAPERS, {
        "arxiv_id": "2501.00002", "title": "Constructed paper00002", "abstract": "A.",
        "authors": ["Ada Example"], "published": date(2025, 1, 2),
        "updated": date(2025, 1, 2), "source": "arxiv_api", "raw_sha256": "0" * 64}))
    build_reviews(paths)  # matches paper00002 to its arXiv id
    build_citations(paths)
    read = date(2026, 8, 1)  # citing rows as the paged S2 /citations harvest writes them
    paths.store.write(CITATIONS, rows_of(CITATIONS, *(
        {"citing_s2_id": f"c{i}", "cited_s2_id": "s2paper1", "citing_date": day,
         "read_at": read, "raw_sha256": "1" * 64}
        for i, day in enumerate([date(2025, 1, 5), date(2025, 9, 30), None]))))
    body = "## Introduction\n\n" + "A sentence of the constructed body. " * 100
    paths.store.write(DOCUMENTS, rows_of(DOCUMENTS, {
        "arxiv_id": "2501.00002", "source": "pdf", "status": "ok", "text": body,
        "n_chars": len(body), "truncated": False, "converter": "pymupdf4llm",
        "converter_version": "x"}))
    build_evalsets(paths, small(max_text_chars=500, dense_bins=(), per_bin=0),
                   log=lambda *_: None)
    strata = table(paths, "eval_review_stratified").sort("forum_id")
    assert strata.height == 3
    rows = {r["forum_id"]: r for r in strata.iter_rows(named=True)}
    full = rows["paper00002"]
    assert full["full_text_source"] == "pdf" and full["full_text_truncated"]
    assert len(full["full_text"]) <= 500 and full["full_text"].startswith("## Introduction")
    assert full["full_text_chars"] == len(body) and full["full_text_note"] is None
    plain = rows["paper00003"]
    assert plain["full_text_source"] == "abstract_only"
    assert plain["full_text"] == plain["title_abstract"] == \
        f"Constructed paper00003\n\n{ABSTRACT}"
    assert "no arXiv match" in plain["full_text_note"]
    cited = rows["paper00001"]
    assert (cited["citation_count"], cited["citation_match"]) == (17, "title")
    assert cited["citation_title_ratio"] == 1.0
    assert cited["citations_read_at"] is not None and cited["s2_id"] == "s2paper1"
    assert rows["paper00003"]["citation_count"] is None
    windows = table(paths, "eval_citation_windows")
    assert windows.get_column("forum_id").to_list() == ["paper00001"]  # matched ones only
    w = windows.row(0, named=True)
    assert (w["published"], w["citations_12m"], w["citations_17m"]) == (
        date(2024, 9, 25), 1, 2)
    assert (w["citing_papers"], w["citing_undated"], w["citation_count"]) == (3, 1, 17)
    assert w["citations_read_at"] == cited["citations_read_at"]


def test_withdrawn_left_out_of_the_stratified_sample_when_asked(built: VaultPaths) -> None:
    build_evalsets(built, small(withdrawn_as_non_accepted=False), log=lambda *_: None)
    try:
        assert not table(built, "eval_review_stratified").get_column("withdrawn").any()
    finally:
        build_evalsets(built, small(), log=lambda *_: None)


def test_similarity_floors_keep_off_topic_pairs_and_members_out(built: VaultPaths) -> None:
    pairs = table(built, "eval_pairwise")
    hard = pairs.filter(pl.col("difficulty") == "hard")
    assert hard.height and hard.get_column("similarity").min() >= 0.4
    groups = table(built, "eval_groupwise").filter(~pl.col("is_query"))
    assert groups.get_column("similarity").min() >= 0.4
    build_evalsets(built, small(hard_pair_min_similarity=0.999, group_min_similarity=0.999),
                   log=lambda *_: None)
    try:
        assert table(built, "eval_pairwise").filter(pl.col("difficulty") == "hard").is_empty()
        metrics, _ = card(built, "pairwise")
        assert {s["stratum"] for s in metrics["shortfalls"]} >= {"poster-oral", "reject-poster"}
        skipped = table(built, "eval_excluded").filter(pl.col("set_name") == "groupwise")
        assert skipped.height and skipped.get_column("reason").str.contains(
            "at least 0.999 similar").all()
    finally:
        build_evalsets(built, small(), log=lambda *_: None)


def test_quotas_are_totals_over_the_idea_venues(tmp_path: Path) -> None:
    """An odd total (9 spotlights over two venues) is met exactly, from both venues."""
    neurips = "NeurIPS.cc/2025/Conference"
    paths = vault_with(tmp_path, {"a": constructed_venue(ICLR25, 300, seed=5),
                                  "b": constructed_venue(neurips, 300, seed=6)})
    quota = {"Reject": 21, "Spotlight": 9}
    pairs = {"reject-oral": 7, "reject-poster": 5}
    build_evalsets(paths, small(idea_venues=(ICLR25, neurips), pointwise_quota=quota,
                                pair_quota=pairs, hard_pair_min_similarity=None),
                   log=lambda *_: None)
    points = table(paths, "eval_pointwise")
    assert dict(points.group_by("label").len().iter_rows()) == quota
    assert set(points.get_column("venue_id")) == {ICLR25, neurips}
    got = table(paths, "eval_pairwise")
    assert dict(got.group_by("pair_type").len().iter_rows()) == pairs
    subs = dict(table(paths, "submissions").select("forum_id", "venue_id").iter_rows())
    for row in got.iter_rows(named=True):
        assert subs[row["forum_id_a"]] == subs[row["forum_id_b"]] == row["venue_id"]


class IncompleteIdeas:
    """An LLM backend whose ideas are complete, leave the method unstated, or lack their
    TLDR and motivation (a schema error: quarantined), by a hash of the forum id."""

    name, model, uses_prompt, deterministic, in_process = "openai", "scripted", True, True, False

    @staticmethod
    def kind(forum: str) -> int:
        return int(hashlib.sha256(forum.encode()).hexdigest(), 16) % 3

    def generate(self, requests):
        from vault_pipeline.llm.backends.base import Answer

        answers = []
        for request in requests:
            idea = {"tldr": "Route queries to memory blocks by a learned score.",
                    "motivation": "Fixed routing wastes memory on unrelated blocks.",
                    "research_question": "Can a learned score route each query?",
                    "method": "A scorer ranks the blocks for each query.",
                    "experimental_setting": "Retrieval benchmarks against fixed routing.",
                    "expected_results": None}
            kind = self.kind(request.paper.arxiv_id)
            if kind == 1:
                idea["method"] = None
            elif kind == 2:
                idea |= {"tldr": None, "motivation": None}
            answers.append(Answer(request.custom_id, json.dumps(idea), "stop", 10, 5))
        return answers

    def close(self) -> None:
        pass


def test_a_submission_with_an_incomplete_idea_stays_in_the_sets_with_its_reason(
        tmp_path: Path) -> None:
    from vault_pipeline.evalruns.tasks import pair_units, point_units

    paths = vault_with(tmp_path, {"v": constructed_venue(ICLR25, 150, seed=6)})
    settings = small(pointwise_quota={"Reject": 12, "Poster": 8},
                     pair_quota={"reject-poster": 6})
    build_evalsets(paths, settings, backend=IncompleteIdeas(), log=lambda *_: None)
    points = table(paths, "eval_pointwise")
    kinds = [IncompleteIdeas.kind(f) for f in points.get_column("forum_id")]
    assert points.height == 20 and {0, 1, 2} <= set(kinds)  # the quotas are met all the same
    notes = dict(points.select("forum_id", "idea_note").rows())
    for forum, idea, kind in zip(points.get_column("forum_id"), points.get_column("idea"),
                                 kinds, strict=True):
        if kind == 2:
            assert idea is None
            assert notes[forum].startswith("idea extraction quarantined (eval_idea_failures)")
            assert "tldr" in notes[forum]
        else:
            assert idea["tldr"] and notes[forum] == "not stated in the submission: " + (
                "method, expected results" if kind == 1 else "expected results")
    excluded = table(paths, "eval_excluded").get_column("reason").to_list()
    assert not any("idea extraction" in r for r in excluded)
    card = table(paths, "eval_cards").filter(pl.col("set_name") == "pointwise")
    assert "kept in the draw with the reason" in card.get_column("card")[0]
    pairs = table(paths, "eval_pairwise")
    assert {"idea_note_a", "idea_note_b"} <= set(pairs.columns)
    # the runs show only what there is: a submission without an idea is left out of them
    shown = {u.item_id for u in point_units("idea_point2", points)}
    assert shown == {f for f, k in zip(points.get_column("forum_id"), kinds, strict=True)
                     if k != 2}
    assert len(pair_units(pairs)) == pairs.filter(
        pl.col("idea_a").is_not_null() & pl.col("idea_b").is_not_null()).height
