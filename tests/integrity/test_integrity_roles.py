"""The sentence-role model and what the extractive reader does with it: a result or
conclusion block (found by position and neighbours, whatever its wording) and a results or
discussion section are never copied; problem fields read only what precedes the method."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_pipeline.ideas.extractive import decompose
from vault_pipeline.ideas.views import derive_views
from vault_pipeline.integrity import roles
from vault_pipeline.llm.inputs import PaperInput

# Written for this test: outcomes stated without a digit, where abstracts put them.
TRIAL = [
    "Chronic low back pain is a leading cause of disability in older adults.",
    "Existing exercise programmes are rarely tailored to patients with frailty.",
    "We aimed to assess a home-based tailored exercise programme in frail older adults.",
    "Participants were randomly assigned to the programme or to usual care for six months.",
    "The primary outcome was pain intensity measured at the end of treatment.",
    "The programme reduced pain intensity compared with usual care.",
    "No participant experienced a serious adverse event.",
    "A tailored home-based programme is a practical option for frail older adults.",
]
CS = [
    "Retrieval-augmented generation depends on a retriever that finds relevant passages.",
    "Current retrievers fail when the query and the passage share no words.",
    "We propose Bridger, a retriever that rewrites queries with a learned paraphraser.",
    "Bridger is trained with a contrastive objective on paraphrase pairs.",
    "Bridger consistently beats lexical and dense retrievers on open-domain benchmarks.",
    "Our analysis shows that paraphrasing helps most for rare entities.",
]


def test_the_shipped_model_loads_and_reads_a_whole_abstract() -> None:
    model = roles.load()
    assert model is not None and model.version.startswith("roles-stack/")
    assert 0 < model.threshold < 1
    block = model.outcome_block(TRIAL)
    assert block[:5] == [False] * 5, block
    assert all(block[5:]), block
    assert model.roles(TRIAL)[0] == "background"


def test_position_and_neighbours_decide_a_sentence_without_cues() -> None:
    """The same plain sentence scores as an outcome at the end of an abstract, after its
    results, more than at its start, before its method."""
    model = roles.load()
    plain = "A tailored home-based programme is a practical option for frail older adults."
    late = model.outcome_scores([*TRIAL[:7], plain])[-1]
    early = model.outcome_scores([plain, *TRIAL[1:5]])[0]
    assert late > early + 0.3, (late, early)


def test_no_weights_no_model(tmp_path: Path) -> None:
    assert roles.load(tmp_path / "missing.npz") is None


def test_features_have_one_row_per_sentence() -> None:
    assert roles.features([TRIAL, CS]).shape == (len(TRIAL) + len(CS), roles.N_FEATURES)
    assert roles.features([]).shape[0] == 0
    assert roles.load().probabilities([[]]).shape == (0, len(roles.ROLES))


@settings(deadline=None)  # a loaded machine must not fail a pure function
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))))
def test_position_is_one_hot_in_each_group(case: tuple[int, int]) -> None:
    i, n = case
    v = roles.position(i, n)
    for group in (slice(0, 10), slice(10, 14), slice(14, 18), slice(18, 22)):
        assert v[group].sum() == 1
    assert 0 <= v[22] <= 1 and v[23] == 1
    assert (v[10] == 1) == (i == 0) and (v[14] == 1) == (i == n - 1)


def test_the_shipped_data_is_split_by_document() -> None:
    splits = {s: {r["id"] for r in roles.load_abstracts(s)} for s in ("train", "dev",
                                                                      "heldout")}
    assert splits["heldout"] and splits["dev"] and splits["train"]
    assert not splits["heldout"] & (splits["train"] | splits["dev"])
    assert not splits["train"] & splits["dev"]
    heldout = roles.load_abstracts("heldout")
    assert {r["domain"] for r in heldout} == {"cs", "bio"}
    assert all(len(r["sentences"]) == len(r["labels"]) and set(r["labels"]) <= set(roles.ROLES)
               for r in heldout)


def _copied(paper: PaperInput) -> str:
    record, _ = decompose(paper)
    views = derive_views(record)
    return json.dumps(record) + json.dumps(views)


def test_the_outcome_block_of_an_abstract_is_never_copied() -> None:
    paper = PaperInput("2401.00001", "Tailored exercise for frail older adults",
                       " ".join(TRIAL), None, None, "abstract_only", None)
    copied = _copied(paper)
    for sentence in TRIAL[5:]:
        assert sentence.rstrip(".") not in copied, sentence
    assert TRIAL[1].rstrip(".") in copied  # what fails in the setting is kept


def test_results_and_discussion_sections_are_never_copied_and_challenge_precedes_method(
        ) -> None:
    text = "\n\n".join([
        "## 1 Introduction", " ".join(CS[:3]),
        "## 3 Method", CS[3] + " It encodes the rewritten query with a shared encoder.",
        "## 5 Results", "Retrieval quality improves in every setting we consider.",
        "## 6 Discussion", "Paraphrasing is a simple way to make retrieval robust.",
    ])
    paper = PaperInput("2401.00002", "Bridger: paraphrase retrieval", " ".join(CS[:3]),
                       text, None, "pdf", None)
    record, _ = decompose(paper)
    copied = json.dumps(record)
    assert "every setting we consider" not in copied
    assert "simple way to make retrieval robust" not in copied
    problem = json.dumps([record["core_problem"], record["problem_definition"]])
    assert "Bridger" not in problem and "We propose" not in problem
    assert "fail when the query" in problem


def test_outcome_scores_are_probabilities() -> None:
    scores = roles.load().outcome_scores(CS)
    assert scores.shape == (len(CS),) and np.all((scores >= 0) & (scores <= 1))


@settings(deadline=None)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=4), st.integers(0, 2 ** 16))
def test_context_reads_each_sentence_within_its_own_block(lengths: list[int], seed: int
                                                          ) -> None:
    """The second pass sees its neighbours' first-pass roles, never across blocks."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(len(roles.ROLES)), size=sum(lengths))
    around = roles.context(p, lengths)
    assert around.shape == (sum(lengths), roles.CONTEXT_FEATURES)
    k, start = len(roles.ROLES), 0
    for n in lengths:
        q = p[start:start + n]
        outcome = q[:, roles.ROLES.index("result")] + q[:, roles.ROLES.index("conclusion")]
        for i in range(n):
            row = around[start + i]
            before = q[i - 1] if i else np.zeros(k)
            assert np.allclose(row[:k], before)
            assert row[4 * k] == (i == 0) and row[4 * k + 1] == (i == n - 1)
            assert np.isclose(row[4 * k + 2], outcome[:i].max() if i else 0.0)
        start += n


def test_a_saved_model_reads_as_it_was_trained(tmp_path: Path) -> None:
    """Both passes are saved and loaded; a first-pass-only weights file still loads."""
    model = roles.load()
    assert model.stack_coef is not None
    path = tmp_path / "weights.npz"
    model.save(path)
    again = roles.load(path)
    assert np.allclose(again.probabilities([CS]), model.probabilities([CS]), atol=1e-6)
    single = roles.RoleModel(model.coef, model.intercept, model.threshold,
                             model.block_threshold, model.meta)
    single.save(tmp_path / "single.npz")
    loaded = roles.load(tmp_path / "single.npz")
    assert loaded.stack_coef is None and loaded.version.startswith("roles-sgd/")
    assert not np.allclose(loaded.probabilities([CS]), model.probabilities([CS]))


def test_a_method_statement_after_a_claim_is_kept() -> None:
    """A method statement is in the outcome block only when it reads as an outcome itself
    (the low threshold is for recall), not for standing after "We show that this is not
    the case."."""
    from vault_pipeline.integrity.statements import method_statement

    block = [
        "Graph neural networks have found success in molecular property prediction.",
        "Spectral methods are expressive but costly, while message passing is cheap but "
        "myopic.",
        "However, random walk kernels have received limited attention, partly due to the "
        "prevailing belief that they lack sufficient expressivity.",
        "We show that this is not the case.",
        "Building on recent work on kernels, we propose a single walk kernel which integrates "
        "seamlessly into graph networks, serving as an encoder, a pooling layer, and a "
        "readout.",
        "Our approach leads to much simpler models, and achieves higher accuracy on molecular "
        "and social benchmarks."]
    model = roles.load()
    assert model.outcome_scores(block)[4] >= model.threshold  # held by its score alone
    blocked = model.outcome_block(block, method_statement)
    assert blocked[3] and blocked[5] and not blocked[4], blocked


def test_terms_and_names_are_never_read_from_an_outcome_block() -> None:
    """A key term, a name or a base model met only in result sentences (no rule or judge
    flags them: only where they stand does) is left out: its words are those sentences'."""
    trial = [*TRIAL[:5],
             "Uptake of free fatty acids in natural killer cells contributed to peroxisome "
             "proliferator-activated receptor (PPAR) activation.",
             "Natural killer cells built on the ResNet-50 backbone respond to exercise, a "
             "response called MoveCheck.", *TRIAL[7:]]
    paper = PaperInput("2401.00003", "Tailored exercise for frail older adults",
                       " ".join(trial), None, None, "abstract_only", None)
    record, _ = decompose(paper)
    assert [t["term"] for t in record["key_terms"]] == []
    assert record["key_novelty"]["name"] != "MoveCheck"
    assert record["model_details"]["base_model"] is None
