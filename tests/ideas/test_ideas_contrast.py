"""Contrast statements and key ideas (`ideas/contrast.py`): a research gap and an intuition
read from the paper's own sentences, verbatim, never past the integrity gate, and the views
they give a full-text paper and an abstract."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.ideas import contrast
from vault_pipeline.ideas.extractive import decompose
from vault_pipeline.ideas.views import derive_views
from vault_pipeline.llm.inputs import PaperInput


@dataclass(frozen=True)
class S:
    text: str
    kind: str = "introduction"
    heading: str = "Introduction"
    paragraph: int = 0
    safe: bool = True
    gap_safe: bool = False


def ok(_: str) -> bool:
    return True


def test_a_prior_work_sentence_pairs_with_the_turn_after_it() -> None:
    found = contrast.contrasts([
        S("Existing methods typically employ dynamic pattern matching on local windows."),
        S("However, their reliance on local information fails to capture global contexts."),
        S("We propose a method that reads the whole input."),
    ], ["introduction"], ok)
    assert [(c.what_it_does[:16], c.open_gap[:16]) for c in found] == [
        ("Existing methods", "However, their r")]


def test_one_sentence_turns_itself_and_own_work_is_never_prior_work() -> None:
    found = contrast.contrasts([
        S("Most existing forecasting approaches rely on transformer architectures, which "
          "often fall short of expectations in time series forecasting."),
        S("Our existing methods rely on transformers, which fail on long inputs."),
    ], ["introduction"], ok)
    assert len(found) == 1
    assert found[0].open_gap.startswith("which often fall short")


def test_a_sentence_the_gate_refuses_lends_only_a_clean_verbatim_clause() -> None:
    leaky = S("Recent studies have leveraged designed LoRA initialization, to enhance the "
              "fine-tuning efficiency by a large margin.", safe=False)
    gap = S("However, none of these works can address the two cases at the same time.")
    found = contrast.contrasts([leaky, gap], ["introduction"], ok)
    assert found[0].what_it_does == "Recent studies have leveraged designed LoRA initialization"
    assert contrast.contrasts([leaky, gap], ["introduction"], lambda _: False) == []


def test_a_citation_list_does_not_end_the_leading_clause() -> None:
    text = ("MoE models have had notable successes in translation (Shazeer et al., 2017; "
            "Lepikhin et al., 2020), however, adoption is hindered by complexity.")
    assert contrast._lead_clause(text) == ("MoE models have had notable successes in "
                                           "translation (Shazeer et al., 2017; Lepikhin et al.,"
                                           " 2020)")


def test_key_ideas_are_the_papers_own_idea_sentences() -> None:
    sentences = [S("We propose a new loss."), S("Our key insight is that both steps rely on "
                                                 "the test distribution.", kind="abstract")]
    assert contrast.key_ideas(sentences, ["introduction", "abstract"]) == [sentences[1].text]


words = st.lists(st.sampled_from(["existing", "methods", "rely", "on", "data", "however",
                                  "which", "fail", "to", "scale", "our", "we", "models",
                                  "(Lee et al., 2020)", ",", "lack", "GNNs"]), max_size=30)


@given(st.lists(words, min_size=1, max_size=6))
def test_every_contrast_is_copied_from_the_sentences(sentences: list[list[str]]) -> None:
    pool = [S(" ".join(w) + ".") for w in sentences]
    for c in contrast.contrasts(pool, ["introduction"], ok):
        assert any(c.what_it_does in s.text for s in pool)
        assert any(c.open_gap in s.text for s in pool)
        assert not contrast.OWN_WORK.search(c.what_it_does)


ABSTRACT = ("Vertical federated learning enables collaborative learning across parties. "
            "Existing methods in vertical federated learning typically assume perfectly aligned "
            "samples across all clients. However, this assumption rarely holds in practice, "
            "which leaves most real deployments unsupported. We propose a new framework that "
            "completes missing features from other clients and aligns local and global "
            "features. Our key idea is to reconstruct what a client lacks from what the others "
            "share.")


def test_an_abstract_with_a_contrast_gets_all_five_views() -> None:
    paper = PaperInput("2508.00001", "Cross completion for vertical federated learning",
                       ABSTRACT, None, None, "abstract_only", "no documents row", ("cs.LG",))
    record, _ = decompose(paper)
    views = derive_views(record)
    assert all(views.values()), [k for k, v in views.items() if not v]
    assert "Left unresolved: However, this assumption rarely holds" in views["research_gap"]
    # the intuition is the paper's own key statement, copied verbatim (the closing sentence
    # may be held back as a possible outcome by the sentence-role model, then "We propose")
    first = views["intuition"].removeprefix("- ").split("\n")[0]
    assert first in ABSTRACT and ("key idea" in first or first.startswith("We propose"))


def test_a_limitation_of_prior_work_is_told_from_the_papers_own_outcome() -> None:
    assert contrast.prior_limitation("However, post-hoc methods perform poorly when ASR "
                                     "inaccurately transcribes verbatim speech.")
    assert contrast.prior_limitation("Consequently, this approach fails to capture the "
                                     "ordinal nature of emotions.")
    # the paper's own finding, a report of what was measured, or the past tense of a study
    assert not contrast.prior_limitation("We find that existing methods fail on long inputs.")
    assert not contrast.prior_limitation("Experiments reveal that current detectors struggle "
                                         "with propagated errors.")
    assert not contrast.prior_limitation("Existing methods failed to converge on these tasks.")
    assert not contrast.prior_limitation("Existing methods typically align audio and text.")


def test_a_gap_the_strict_judge_holds_back_is_copied_only_as_a_gap() -> None:
    prior = S("Existing methods typically employ dynamic pattern matching on local windows.")
    gap = S("Nevertheless, such methods remain prone to hallucinations over long contexts.",
            safe=False, gap_safe=True)
    found = contrast.contrasts([prior, gap], ["introduction"], lambda _: False)
    assert [(c.what_it_does, c.open_gap) for c in found] == [(prior.text, gap.text)]
    # neither the rest of the record nor a sentence without that standing can copy it
    assert contrast.contrasts([prior, S(gap.text, safe=False)], ["introduction"],
                              lambda _: False) == []
    assert contrast.contrasts([S(prior.text, safe=False, gap_safe=True), gap],
                              ["introduction"], lambda _: False) == []


def test_the_method_statement_after_an_outcome_is_the_method_not_an_outcome() -> None:
    assert contrast.method_statement("Building on recent work in NFs, we propose a single NF "
                                     "architecture which integrates seamlessly into RL "
                                     "algorithms, serving as a policy, Q-function, and "
                                     "occupancy measure.")
    assert not contrast.method_statement("We propose a method that outperforms all baselines.")
    assert not contrast.method_statement("We show that this is not the case.")


# arXiv 2505.23527v1 (CC0 metadata, in the bundled sample): the role model reads "We show
# that this is not the case." as a result; the method statement after it is not one.
NF_ABSTRACT = (
    "Modern reinforcement learning (RL) algorithms have found success by using powerful "
    "probabilistic models, such as transformers, energy-based models, and diffusion/flow-based "
    "models. To this end, RL researchers often choose to pay the price of accommodating these "
    "models into their algorithms -- diffusion models are expressive, but are computationally "
    "intensive due to their reliance on solving differential equations, while autoregressive "
    "transformer models are scalable but typically require learning discrete representations. "
    "Normalizing flows (NFs), by contrast, seem to provide an appealing alternative, as they "
    "enable likelihoods and sampling without solving differential equations or autoregressive "
    "architectures. However, their potential in RL has received limited attention, partly due "
    "to the prevailing belief that normalizing flows lack sufficient expressivity. We show that "
    "this is not the case. Building on recent work in NFs, we propose a single NF architecture "
    "which integrates seamlessly into RL algorithms, serving as a policy, Q-function, and "
    "occupancy measure. Our approach leads to much simpler algorithms, and achieves higher "
    "performance in imitation learning, offline, goal conditioned RL and unsupervised RL.")


def test_an_abstract_keeps_its_method_statement_and_never_its_results() -> None:
    paper = PaperInput("2505.23527", "Normalizing Flows are Capable Models for RL",
                       NF_ABSTRACT, None, None, "abstract_only", "no documents row", ("cs.LG",))
    record, _ = decompose(paper)
    views = derive_views(record)
    assert "we propose a single NF architecture" in views["proposal"]
    assert "we propose a single NF architecture" in views["intuition"]
    text = "\n".join(v for v in views.values() if v)
    assert "We show that this is not the case" not in text
    assert "achieves higher performance" not in text


# A full text's short introduction: the sentence-role model, trained on abstracts, reads its
# last sentence (what the prior work leaves open) as a conclusion.
FULL_TEXT = """# Explainable test prioritisation

## Abstract

Test case prioritisation is a critical task in regression testing. Here, we present and
discuss scenarios that require different explanations.

## 1 Introduction

Regression test suites grow with the software they protect, and running all of them after
every change becomes too slow. Prioritisation orders the tests so that those likely to fail
run first.

Learning-to-rank models learn such an order from the history of test executions. Developers,
however, are asked to trust an order they cannot inspect, which hinders adoption.

## 2 Approach

The ranking model scores every test with a function of its features and sorts the tests by
score.
"""


def test_a_full_texts_introduction_gives_the_gap_the_role_model_would_hold_back() -> None:
    paper = PaperInput("2405.13786", "Explainable test prioritisation", "", FULL_TEXT, None,
                       "pdf", None, ("cs.SE",))
    record, _ = decompose(paper)
    gap = derive_views(record)["research_gap"]
    assert gap is not None
    assert "Left unresolved: Developers, however, are asked to trust an order they cannot " \
           "inspect" in gap


def test_a_method_statement_keeps_its_head_and_drops_what_it_achieves() -> None:
    text = ("To address these limitations, we propose Segment Policy Optimization (SPO), a "
            "novel RL framework that leverages segment-level advantage estimation, achieving "
            "a better balance than trajectory-level methods.")
    assert contrast.method_head(text) == ("To address these limitations, we propose Segment Policy "
                                 "Optimization (SPO), a novel RL framework that leverages "
                                 "segment-level advantage estimation")
    # too short a head
    assert contrast.method_head("We propose X, which improves accuracy.") is None
    assert contrast.method_head("Our results show that X, achieving more, is better.") is None
    assert contrast.method_head("We propose a router that learns where to send tokens.") is None
