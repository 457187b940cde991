"""The source-grounded layer: what the paper itself reports as results must not reappear in
anything made from it.

The results context of a paper is the text where it reports outcomes: the sentences of its
abstract (and body) that the rules or the judge flag as results, those of its abstract's
result and conclusion block (by the sentence-role model, :mod:`.roles`), every sentence of its
results / experiments / discussion sections, its table rows and its captions. From it come
the figures it reports (numbers left once years, names, references and set-up values are
blanked) and its outcome phrases (runs of five content words with an outcome word in them).
A record sentence that repeats one of those figures, or one of those phrases, repeats a
result of the paper, even
when no rule recognises its shape ("the gap closes to 3.1", "beats BM25 on every split")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vault_pipeline.integrity import roles
from vault_pipeline.integrity.leaks import _FIGURE, Finding, _neutralise, check_sentence, sentences
from vault_pipeline.integrity.statements import method_statement
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.llm.sections import split_sections

_RESULT_SECTIONS = {"experiments", "discussion", "limitations"}
_CAPTION = re.compile(r"^\s*(?:\*\*)?(?:table|tab\.|figure|fig\.)\s*\d+", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_WORD = re.compile(r"[a-z][a-z\-]+|\d+(?:\.\d+)?")
_STOP_WORDS = (
    "a an the of to in on for with by and or as at from is are was were be been being it its "
    "this that these those we our they their which who whom than then also into over under "
    "between while both each such can could may might will would should shall not no")
STOP_WORDS = _STOP = frozenset(_STOP_WORDS.split(" "))  # also the vault retrieval's
SHINGLE = 5


def figure_key(token: str) -> str | None:
    """A reported figure in a comparable form ("1,024" → "1024", "94.10" → "94.1"); None for
    numbers too common to say anything (single digits)."""
    plain = token.replace(",", "").replace("−", "-").lstrip("+")
    try:
        value = float(plain)
    except ValueError:
        return None
    if "." not in plain and abs(value) < 10:
        return None
    return f"{value:.6g}"


def figures(sentence: str) -> set[str]:
    """Figures of a sentence once names, years, references and set-up values are blanked."""
    keys = (figure_key(m.group()) for m in _NUMBER.finditer(_neutralise(sentence)))
    return {k for k in keys if k}


# A phrase says an outcome only with one of these in it: otherwise a run of content words is
# a topic ("markov chain monte carlo"), which every part of a record may name.
_OUTCOME_WORD = re.compile(
    r"^(?:improv|outperform|surpass|beat|exceed|achiev|attain|reach|yield|obtain|reduc|increas"
    r"|decreas|lower|higher|better|worse|best|faster|slower|fewer|less|more|gain|drop|boost"
    r"|match|rival|eliminat|prevent|avoid|converg|recover|solv|succeed|fail|found|show"
    r"|demonstrat|confirm|reveal|agree|consistent|significant|state-of-the-art|sota|record"
    r"|accura|error|score|speed|halv|doubl|margin|prefer|robust|stabl|effective)")


def outcome_runs(sentence: str) -> list[tuple[str, ...]]:
    """Runs of content words of a sentence that carry an outcome word, in reading order."""
    words = [w for w in _WORD.findall(sentence.lower()) if w not in _STOP]
    runs = (tuple(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
    return [r for r in runs if any(_OUTCOME_WORD.match(w) for w in r)]


@dataclass(frozen=True)
class ResultsContext:
    figures: frozenset[str]
    phrases: frozenset[tuple[str, ...]]
    sentences: int  # how many sentences of the paper it was built from

    def findings(self, sentence: str) -> list[Finding]:
        """What ``sentence`` repeats of the paper's results."""
        found = []
        same = sorted(figures(sentence) & self.figures)
        if same:
            found.append(Finding("source_figure", ", ".join(same), sentence, "source"))
        # the first repeated run in reading order: the finding is the same on every run
        phrase = next((r for r in outcome_runs(sentence) if r in self.phrases), None)
        if phrase:
            found.append(Finding("source_phrase", " ".join(phrase), sentence, "source"))
        return found


EMPTY = ResultsContext(frozenset(), frozenset(), 0)


def _result_lines(paper: PaperInput) -> Iterable[tuple[str, bool]]:
    """(text, always) pairs: always=True where the text is results context by position."""
    abstract = sentences(paper.abstract or "")
    # the abstract's result and conclusion block is results context by where it stands, read
    # as the extractive reader reads it (a method statement is in it only as an outcome)
    yield from zip(abstract, roles.outcome_block(abstract, method_statement), strict=True)
    if not paper.text:
        return
    for section in split_sections(paper.text):
        where = section.kind in _RESULT_SECTIONS
        for paragraph in section.paragraphs:
            for sentence in sentences(paragraph):
                # a results section's figures (decimals, percentages) are its results;
                # its set-up sentences are not, and may be copied into the plan
                yield sentence, bool(_CAPTION.match(sentence)) or (
                    where and bool(_FIGURE.search(_neutralise(sentence))))
    for line in paper.text.splitlines():
        if line.count("|") >= 2 and re.search(r"\d", line):
            yield line, True


def results_context(paper: PaperInput,
                    judge: Callable[[list[str]], list[bool]] | None = None
                    ) -> ResultsContext:
    """The figures and outcome phrases ``paper`` reports. ``judge`` (a sentence classifier)
    adds the sentences it flags to those the rules flag."""
    lines = list(_result_lines(paper))
    flagged = [always or bool(check_sentence(text)) for text, always in lines]
    if judge is not None:
        unsure = [i for i, f in enumerate(flagged) if not f]
        for i, hit in zip(unsure, judge([lines[i][0] for i in unsure]), strict=True):
            flagged[i] = hit
    nums: set[str] = set()
    phrases: set[tuple[str, ...]] = set()
    for (text, _always), hit in zip(lines, flagged, strict=True):
        if not hit:
            continue
        nums |= figures(text)
        if "|" not in text:  # a table row has figures, not phrases
            phrases.update(outcome_runs(text))
    return ResultsContext(frozenset(nums), frozenset(phrases), sum(flagged))
