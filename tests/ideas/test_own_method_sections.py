"""A section named after the paper's own work is its method (evaluation, dataset and
benchmark papers name theirs with words that otherwise mean experiments), and a related-work
paragraph's concession or less-studied area is the gap it names."""

from __future__ import annotations

from vault_pipeline.ideas import cues
from vault_pipeline.ideas.extractive import _title_name, own_method_kinds
from vault_pipeline.llm.sections import split_sections

PAPER = """## 1 Introduction

Human evaluation is hard.

## 3 The LONGEVAL guidelines for faithfulness human evaluation

We annotate clauses.

### 3.1 RQ1: Does agreement improve?

Annotators label units.

### 3.2 Annotation interface

A web page.

## 4 Experiments

We ran it.

## 5 Related work

LongEval builds on Pyramid.
"""


def test_a_section_named_after_the_work_and_its_subsections_are_the_method() -> None:
    sections = split_sections(PAPER)
    name = _title_name("LongEval: Guidelines for Human Evaluation of Faithfulness")
    assert name == "LongEval"
    kinds = dict(zip((s.heading for s in sections), own_method_kinds(sections, name),
                     strict=True))
    assert kinds["3 The LONGEVAL guidelines for faithfulness human evaluation"] == "method"
    assert kinds["3.1 RQ1: Does agreement improve?"] == "method"  # took its parent's kind
    assert kinds["3.2 Annotation interface"] == "method"
    assert kinds["4 Experiments"] == "experiments"  # the renamed section has ended
    assert kinds["5 Related work"] == "related"  # naming the work does not make it a method
    assert kinds["1 Introduction"] == "introduction"


def test_without_a_name_the_kinds_are_the_headings_own() -> None:
    sections = split_sections(PAPER)
    assert own_method_kinds(sections, None) == [s.kind for s in sections]
    assert _title_name("Guidelines for human evaluation") is None
    assert _title_name("A: b") is None  # too short to be a name
    assert _title_name("A very long title with many words: and more") is None


def test_related_work_gaps_beyond_the_general_cues() -> None:
    for sentence in ("Our work focuses on the much less studied area of human evaluation.",
                     "These protocols assume access to multiple references.",
                     "While these efforts focus on salience, ours focuses on faithfulness.",
                     "Long-form faithfulness remains under-explored."):
        assert cues.RELATED_GAP.search(sentence) or cues.GAP.search(sentence), sentence
    assert not cues.RELATED_GAP.search("We study the Pyramid method in detail.")

