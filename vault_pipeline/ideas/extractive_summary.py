"""Extractive summaries of a paper for the review-paradigm study's summary inputs (seed 001:
a vanilla 200-300 word summary, and an objective one under Background, Method, Results and
Limitations), made offline by the `extractive` backend with no model.

Like the extractive decomposer it invents nothing: every sentence is copied from the paper,
chosen by section kind and cue phrase, in a fixed order, so the same text always gives the
same summary. Unlike the decomposer it keeps results (the study's summaries report them);
sentences that address a model (prompt injection), table rows and fragments are never
copied. A part the paper has nothing for is left empty (null), not filled."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from vault_pipeline.ideas import cues
from vault_pipeline.integrity.leaks import sentences
from vault_pipeline.llm.injection import looks_like_instruction
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.llm.sections import split_sections

VERSION = "extractive-summary/1"
KINDS = ("vanilla", "objective")
_MIN_CHARS, _MAX_CHARS = 25, 600
PART_WORDS = 70  # words per part: four parts make the study's 200-300 words
MAX_WORDS = 300
_RESULT = re.compile(r"\b(?:outperform\w*|improv\w*|achiev\w*|surpass\w*|results? (?:show|"
                     r"demonstrate|indicate)|we (?:show|find|observe|demonstrate)|state[- ]of"
                     r"[- ]the[- ]art|gains?|reduc\w*|accura\w*|better|faster)\b", re.I)
_IMPACT = re.compile(r"\b(?:impact|implication\w*|enabl\w*|open\w* (?:the way|new)|future|"
                     r"broad\w*|applicab\w*|practical|we believe|promising)\b", re.I)


@dataclass(frozen=True)
class _Sentence:
    text: str
    kind: str  # section kind (`abstract`, `introduction`, `method`, ...), `title` skipped
    words: int


def _sentences(paper: PaperInput) -> list[_Sentence]:
    title = " ".join(paper.title.split()).lower()
    out = []
    for section in split_sections(paper.markdown()):
        if " ".join(section.heading.split()).lower() == title:
            continue  # the title repeated as a heading over the author lines
        for paragraph in section.paragraphs:
            for text in sentences(paragraph):
                if (_MIN_CHARS <= len(text) <= _MAX_CHARS and not text.startswith("|")
                        and not looks_like_instruction(text)):
                    out.append(_Sentence(text, section.kind, len(text.split())))
    return out


class _Picker:
    """Sentences taken in document order by kind and cue, each at most once overall."""

    def __init__(self, found: list[_Sentence]) -> None:
        self.found, self.used = found, set[str]()

    def take(self, kinds: Iterable[str], cue: re.Pattern[str] | None = None,
             budget: int = PART_WORDS) -> list[str]:
        """Sentences of the first of ``kinds`` that has any (matching ``cue`` when given),
        until ``budget`` words; one sentence at least when one fits at all."""
        for kind in kinds:
            chosen, words = [], 0
            for s in self.found:
                if s.kind != kind or s.text in self.used or (cue and not cue.search(s.text)):
                    continue
                if chosen and words + s.words > budget:
                    break
                chosen.append(s.text)
                words += s.words
            if chosen:
                self.used.update(chosen)
                return chosen
        return []


def _part(picker: _Picker, *tries: tuple[tuple[str, ...], re.Pattern[str] | None]) -> str | None:
    for kinds, cue in tries:
        chosen = picker.take(kinds, cue)
        if chosen:
            return " ".join(chosen)
    return None


def objective(paper: PaperInput) -> dict[str, str | None]:
    """Background, Method, Results, Limitations: each the paper's own sentences, or null."""
    picker = _Picker(_sentences(paper))
    return {
        "background": _part(picker, (("introduction", "problem", "related"), None),
                            (("abstract",), None)),
        "method": _part(picker, (("method",), None), (("abstract", "introduction"),
                                                       cues.CONTRIBUTION)),
        "results": _part(picker, (("experiments",), _RESULT), (("experiments",), None),
                         (("discussion", "abstract"), _RESULT)),
        "limitations": _part(picker, (("limitations",), None),
                             (("discussion", "experiments", "method", "introduction"),
                              cues.LIMITATION)),
    }


def vanilla(paper: PaperInput) -> dict[str, str]:
    """One paragraph: contribution and novelty, methodology, key results, potential impact,
    cut at the study's 300 words (whole sentences); the abstract when nothing else is."""
    picker = _Picker(_sentences(paper))
    parts = [
        _part(picker, (("introduction", "abstract"), cues.CONTRIBUTION),
              (("abstract",), None)),
        _part(picker, (("method",), None)),
        _part(picker, (("experiments",), _RESULT), (("abstract", "discussion"), _RESULT)),
        _part(picker, (("discussion",), _IMPACT), (("discussion",), None)),
    ]
    kept, words = [], 0
    for text in (p for p in parts if p):
        for sentence in sentences(text):
            count = len(sentence.split())
            if kept and words + count > MAX_WORDS:
                break
            kept.append(sentence)
            words += count
    return {"summary": " ".join(kept) or " ".join(paper.abstract.split()) or paper.title}


def summarize(kind: str, paper: PaperInput) -> dict:
    """The answer object of a ``kind`` summary (`vanilla` or `objective`)."""
    if kind == "vanilla":
        return vanilla(paper)
    if kind == "objective":
        return objective(paper)
    raise ValueError(f"unknown summary kind {kind!r} (known: {', '.join(KINDS)})")
