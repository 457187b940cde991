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
