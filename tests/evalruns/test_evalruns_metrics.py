"""The evaluation runs' statistics: each against scipy / scikit-learn or a case computed by
hand; Elo on a fixed schedule; Bradley-Terry recovering simulated strengths."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, f1_score, roc_auc_score

from vault_pipeline.errors import VaultError
from vault_pipeline.evalruns import metrics as m
from vault_pipeline.evalruns.scores import bradley_terry, elo
from vault_pipeline.evalruns.swiss import pair_round
from vault_pipeline.evalruns.tasks import elo_schedule, group_units, input_texts


def test_elo_k32_matches_the_hand_computed_sequence() -> None:
    # 1: A beats B at equal ratings: +-16. 2: B (1484) beats C (1500): expected
    # 1/(1+10^(16/400)) = 0.47698, B gains 32 x 0.52302 = 16.7366. 3: A (1516) ties C
    # (1483.2634): expected 0.54694, A loses 32 x 0.04694 = 1.5021.
    ratings = elo([("A", "B", 1.0), ("B", "C", 1.0), ("A", "C", 0.5)], k=32)
    assert ratings["A"] == pytest.approx(1514.4969, abs=1e-3)
    assert ratings["B"] == pytest.approx(1500.7363, abs=1e-3)
    assert ratings["C"] == pytest.approx(1484.7668, abs=1e-3)
    # order matters for Elo
    assert elo([("A", "C", 0.5), ("B", "C", 1.0), ("A", "B", 1.0)])["A"] != ratings["A"]


def test_elo_replays_the_schedule_by_default_or_the_order_answers_came_back() -> None:
    from datetime import UTC, datetime, timedelta

    from vault_pipeline.evalruns.results import predictions, to_scale
    from vault_pipeline.evalruns.settings import EvalRunSettings

    start = datetime(2026, 1, 1, tzinfo=UTC)
    games = [("A", "B", "A", 3), ("B", "C", "A", 1), ("A", "C", "tie", 2), ("C", "B", "B", None)]
    calls = [{"task": "elo", "repeat": 0, "input": "abstract", "item_id": f"m{n:05d}",
              "items": [a, b], "answer": {"better": better},
              "answered_at": None if late is None else start + timedelta(seconds=late)}
             for n, (a, b, better, late) in enumerate(games)]
    outcome = {"A": 1.0, "B": 0.0, "tie": 0.5}

    def ratings(order: str) -> dict[str, float]:
        rows = predictions("r", calls, {}, EvalRunSettings(elo_order=order))
        return {r["item_id"]: r["predicted"] for r in rows if r["task"] == "elo"}

    played = [(a, b, outcome[w]) for a, b, w, _ in games]
    assert ratings("schedule") == pytest.approx(to_scale(elo(played)))
    # returned: 1 s, 2 s, 3 s, then the one without a return time
    back = [played[1], played[2], played[0], played[3]]
    assert ratings("returned") == pytest.approx(to_scale(elo(back)))
    assert ratings("returned") != pytest.approx(ratings("schedule"))
    assert EvalRunSettings().elo_order == "schedule"
    with pytest.raises(VaultError, match="elo_order"):
        EvalRunSettings(elo_order="random")


def test_bradley_terry_recovers_known_strengths_in_any_order() -> None:
    rng = random.Random(7)
    truth = {f"p{i:02d}": s for i, s in enumerate(np.linspace(-2, 2, 20))}
    names = sorted(truth)
    games = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p_a = 1 / (1 + np.exp(truth[b] - truth[a]))
            games += [(a, b, 1.0 if rng.random() < p_a else 0.0) for _ in range(30)]
    fitted = bradley_terry(games)
    got = np.array([fitted[n] for n in names])
    want = np.array([truth[n] for n in names])
    assert stats.pearsonr(got, want).statistic > 0.98
    assert np.max(np.abs(got - want)) < 0.4  # both centred at 0
    shuffled = games[:]
    rng.shuffle(shuffled)
    again = bradley_terry(shuffled)
    assert all(again[n] == pytest.approx(fitted[n], abs=1e-6) for n in names)


def test_bradley_terry_keeps_an_unbeaten_paper_finite() -> None:
    fitted = bradley_terry([("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 0.5)])
    assert np.isfinite(list(fitted.values())).all()
    assert fitted["a"] > fitted["b"] == pytest.approx(fitted["c"])


def test_rating_metrics_against_scipy_sklearn_and_by_hand() -> None:
    pred = np.array([9.0, 8.0, 2.0, 1.0])
    human = np.array([7.0, 3.0, 6.0, 2.0])
    got = {r[0]: r for r in m.rating_metrics(pred, human, 6.0, 200, seed=1)}
    assert got["pearson"][1] == pytest.approx(stats.pearsonr(pred, human).statistic)
    assert got["spearman"][1] == pytest.approx(stats.spearmanr(pred, human).statistic)
    assert got["kendall"][1] == pytest.approx(stats.kendalltau(pred, human).statistic)
    assert got["auc"][1] == pytest.approx(roc_auc_score(human >= 6, pred))
    assert got["mse"][1] == pytest.approx(11.5)  # (4 + 25 + 16 + 1) / 4
    assert got["inflation"][1] == pytest.approx(0.5)  # (2 + 5 - 4 - 1) / 4
    said, accept = pred >= 6, human >= 6
    assert got["kappa_fixed"][1] == pytest.approx(cohen_kappa_score(accept, said))
    assert got["f1_macro"][1] == pytest.approx(f1_score(accept, said, average="macro"))
    assert got["f1_weighted"][1] == pytest.approx(f1_score(accept, said, average="weighted"))
    assert got["reject_recall"][1] == pytest.approx(0.5)  # rejects 1, 3; predicted 2, 3
    # two human accepts -> the two highest predictions (0, 1); agreement 2/4 = chance -> 0
    assert got["kappa_matched"][1] == pytest.approx(0.0)


def test_matched_kappa_puts_tied_predictions_on_one_side_of_the_cut() -> None:
    # three papers tie at 6: a rank cut at the human share (3 accepts) would accept the tie
    # block's first one, and which one is first would decide kappa
    pred = np.array([8.0, 6.0, 6.0, 6.0, 2.0, 2.0])
    human = np.array([7.0, 7.0, 2.0, 2.0, 7.0, 1.0])
    accept = human >= 6
    # reject shares of the cuts 2, 6, 8, above 8: 0, 2/6, 5/6, 1; the human share 1/2 is
    # closest to 2/6: accept iff >= 6
    assert m.matched_cut(pred, 0.5) == 6.0
    got = {r[0]: r[1] for r in m.rating_metrics(pred, human, 6.0, 0, seed=0)}
    assert got["matched_cut"] == 6.0
    assert got["kappa_matched"] == pytest.approx(cohen_kappa_score(accept, pred >= 6))
    assert got["f1_macro_matched"] == pytest.approx(f1_score(accept, pred >= 6,
                                                             average="macro"))
    for order in ([0, 3, 2, 1, 4, 5], [0, 2, 1, 3, 5, 4], [5, 4, 3, 2, 1, 0]):
        again = {r[0]: r[1] for r in m.rating_metrics(pred[order], human[order], 6.0, 0, 0)}
        assert again["kappa_matched"] == pytest.approx(got["kappa_matched"])
    # of two equally close cuts, the one rejecting fewer; all rejected: no finite cut
    assert m.matched_cut(np.array([1.0, 2.0, 3.0, 4.0]), 0.5) == 3.0
    assert m.matched_cut(np.array([5.0, 5.0]), 0.5) == 5.0
    assert m.matched_cut(np.array([5.0, 5.0, 5.0]), 0.9) == np.inf


@settings(deadline=None, max_examples=60)
@given(st.lists(st.tuples(st.integers(1, 10), st.floats(1, 10)), min_size=2, max_size=40),
       st.randoms(use_true_random=False))
def test_matched_kappa_never_depends_on_the_order_of_papers(items, rng) -> None:
    pred = np.array([float(p) for p, _ in items])
    accept = np.array([h >= 6 for _, h in items])
    shuffled = list(range(len(items)))
    rng.shuffle(shuffled)
    share = float(np.mean(~accept))
    cut = m.matched_cut(pred, share)
    assert m.matched_cut(pred[shuffled], share) == cut
    # every paper with a given prediction gets the same decision
    decided = dict(zip(pred.tolist(), (pred >= cut).tolist(), strict=True))
    assert all(decided[p] == (p >= cut) for p in pred.tolist())
    with np.errstate(all="ignore"):
        kappa = m._safe(lambda a, b: cohen_kappa_score(b, a), pred >= cut, accept)
        again = m._safe(lambda a, b: cohen_kappa_score(b, a), pred[shuffled] >= cut,
                        accept[shuffled])
    assert (kappa is None) == (again is None)
    assert kappa is None or again == pytest.approx(kappa)


def test_accuracy_balanced_accuracy_and_the_always_reject_baseline() -> None:
    pred = np.array([9.0, 8.0, 7.0, 7.0, 6.0, 5.0, 3.0, 2.0])
    human = np.array([7.0, 6.5, 4.0, 3.0, 2.0, 5.0, 6.0, 1.0])
    got = {r[0]: r for r in m.rating_metrics(pred, human, 6.0, 300, seed=2)}
    said, accept = pred >= 6, human >= 6
    # said accept: 0-4; human accept: 0, 1, 6 -> right: 0, 1, 5, 7 = 4 of 8
    assert got["accuracy"][1] == pytest.approx(0.5)
    assert got["balanced_accuracy"][1] == pytest.approx(balanced_accuracy_score(accept, said))
    assert got["balanced_accuracy"][1] == pytest.approx((2 / 3 + 2 / 5) / 2)
    assert got["always_reject_accuracy"][1] == pytest.approx(5 / 8)
    assert got["accuracy_over_always_reject"][1] == pytest.approx(0.5 - 5 / 8)
    for name in ("accuracy", "balanced_accuracy", "always_reject_accuracy",
                 "accuracy_over_always_reject"):
        low, high = got[name][2], got[name][3]
        assert low <= got[name][1] <= high and got[name][4] == 8


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(0)
    human = rng.normal(5, 1.5, 80)
    pred = human + rng.normal(0, 1, 80)
    first = m.bootstrap(m.spearman, pred, human, 300, seed=3)
    assert first == m.bootstrap(m.spearman, pred, human, 300, seed=3)
    assert first != m.bootstrap(m.spearman, pred, human, 300, seed=4)
    assert first[0] < m.spearman(pred, human) < first[1]


def test_label_ranking_and_icc() -> None:
    rows = {r[0]: r[1] for r in m.label_metrics(["a", "b", "b", "a"], ["a", "b", "a", "a"],
                                                0, 0)}
    assert rows["accuracy"] == pytest.approx(0.75)
    assert rows["f1_macro"] == pytest.approx(f1_score(["a", "b", "a", "a"],
                                                      ["a", "b", "b", "a"], average="macro"))
    assert m.ranking_kendall([["x", "y", "z"]], [["x", "y", "z"]]) == pytest.approx(1.0)
    assert m.ranking_kendall([["z", "y", "x"]], [["x", "y", "z"]]) == pytest.approx(-1.0)
    # Shrout and Fleiss (1979), six targets by four judges: ICC(2,1) = 0.29
    table = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                      [6, 2, 4, 7]])
    assert m.icc_2_1(table) == pytest.approx(0.29, abs=0.005)


def test_elo_schedule_and_groups_are_fixed_by_the_seed() -> None:
    forums = [f"f{i:02d}" for i in range(30)]
    pairs = elo_schedule(forums, 10, seed=0)
    games = {f: sum(f in p for p in pairs) for f in forums}
    assert set(games.values()) == {10} and len(pairs) == 150
    assert pairs == elo_schedule(forums, 10, seed=0) != elo_schedule(forums, 10, seed=1)
    firsts = sum(a < b for a, b in pairs)
    assert 40 < firsts < 110  # who is shown first is random, not sorted
    sample = pl.DataFrame({"forum_id": forums[:11], "title": forums[:11],
                           "abstract": forums[:11]})
    groups = group_units(input_texts(sample), 5, seed=0)
    assert [len(g.items) for g in groups] == [5, 6]  # a last group of one joins the one before
    assert sorted(f for g in groups for f in g.items) == forums[:11]


def test_partial_correlation_and_wilcoxon_against_their_formulas() -> None:
    rng = np.random.default_rng(1)
    length = rng.normal(1000, 200, 60)
    human = rng.normal(5, 1, 60) + length / 400
    pred = human + length / 200 + rng.normal(0, 1, 60)
    r_xy = stats.pearsonr(pred, human).statistic
    r_xz = stats.pearsonr(pred, length).statistic
    r_yz = stats.pearsonr(human, length).statistic
    want = (r_xy - r_xz * r_yz) / np.sqrt((1 - r_xz ** 2) * (1 - r_yz ** 2))
    assert m.partial_pearson(pred, human, length) == pytest.approx(want)
    worse = pred + rng.normal(0, 2, 60)
    row = m.wilcoxon_errors(pred, worse, human)
    assert row[1] == pytest.approx(stats.wilcoxon(np.abs(pred - human),
                                                  np.abs(worse - human)).pvalue)
    assert m.wilcoxon_errors(pred, pred, human)[1] is None  # identical: no test


def test_swiss_pairs_equal_standings_without_repeats() -> None:
    pairs, bye = pair_round(["a", "b", "c", "d", "e"], {frozenset(("a", "b"))})
    assert pairs == [("a", "c"), ("b", "d")] and bye == "e"
    # when every partner left was met already, the next one is taken
    pairs, bye = pair_round(["a", "b"], {frozenset(("a", "b"))})
    assert pairs == [("a", "b")] and bye is None
    assert pair_round([], set()) == ([], None) and pair_round(["a"], set()) == ([], "a")


def _met(*pairs: str) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairs}


def test_swiss_avoids_a_repeat_the_greedy_leftovers_would_make() -> None:
    # greedy down the standings: a meets c (a-b met), which leaves b-d, met before
    pairs, _ = pair_round(["a", "b", "c", "d"], _met("ab", "cd", "bd"))
    assert pairs == [("a", "d"), ("b", "c")]
    # the same across blocks: the first block alone can only pair b-d again
    order = ["a", "b", "c", "d", "e", "f"]
    pairs, _ = pair_round(order, _met("ab", "cd", "bd", "ac"), block=2)
    assert not {frozenset(p) for p in pairs} & _met("ab", "cd", "bd", "ac")


def test_swiss_never_pairs_a_failed_match_again_while_another_pairing_is_left() -> None:
    everyone = _met("ab", "ac", "ad", "bc", "bd", "cd")
    # every pairing is a repeat; a-b failed: the neighbours' pairing a-b + c-d is not made
    pairs, _ = pair_round(["a", "b", "c", "d"], everyone, failed=_met("ab"))
    assert pairs == [("a", "c"), ("b", "d")]
    # the paper that sat out before does not sit out again
    _, bye = pair_round(["a", "b", "c"], set(), byes={"c"})
    assert bye == "b"


def _repeat_free_exists(players: list[str], met: set[frozenset[str]]) -> bool:
    if len(players) < 2:
        return True
    if len(players) % 2:  # someone sits out
        return any(_repeat_free_exists(players[:i] + players[i + 1:], met)
                   for i in range(len(players)))
    first, rest = players[0], players[1:]
    return any(frozenset((first, other)) not in met
               and _repeat_free_exists([p for p in rest if p != other], met) for other in rest)


@settings(deadline=None, max_examples=80)
@given(st.integers(2, 9), st.sets(st.tuples(st.integers(0, 8), st.integers(0, 8))),
       st.sampled_from([2, 4, 32]))
def test_swiss_repeats_only_when_no_pairing_avoids_them(size, edges, block) -> None:
    order = [f"p{i}" for i in range(size)]
    met = {frozenset((f"p{a}", f"p{b}")) for a, b in edges if a != b and max(a, b) < size}
    pairs, bye = pair_round(order, met, block=block)
    seen = [f for p in pairs for f in p] + ([bye] if bye is not None else [])
    assert sorted(seen) == sorted(order) and len(pairs) == size // 2
    repeats = sum(frozenset(p) in met for p in pairs)
    assert repeats == 0 or not _repeat_free_exists(order, met)


def test_bootstrap_of_all_resamples_at_once_equals_one_by_one() -> None:
    rng = np.random.default_rng(5)
    pred = rng.integers(1, 11, 40).astype(float)
    human = pred + rng.normal(0, 2, 40)
    labels = np.asarray(rng.choice(["Reject", "Accept"], 40), dtype=object)
    truth = np.asarray(rng.choice(["Reject", "Accept"], 40), dtype=object)
    said, accept = pred >= 6, human >= 6
    for stat, p, t in ((m.pearson, pred, human), (m.spearman, pred, human),
                       (m.accuracy, labels, truth), (m.balanced_accuracy, said, accept),
                       (m.always_reject_accuracy, said, accept),
                       (m.accuracy_over_always_reject, said, accept)):
        draws = np.random.default_rng(7)
        values = []
        for _ in range(200):
            pick = draws.integers(0, 40, 40)
            values.append(m._safe(stat, p[pick], t[pick]))
        expected = np.percentile([v for v in values if v is not None], [2.5, 97.5])
        assert m.bootstrap(stat, p, t, 200, seed=7) == pytest.approx(tuple(expected))
