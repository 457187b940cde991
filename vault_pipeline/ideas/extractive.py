"""The extractive decomposer: fills the results-masked record from a paper's own sentences,
chosen by section and cue phrase, with no model and no weights.

It invents nothing: every value is a sentence of the paper (or a heading, a named term, a
reference entry); where the paper has nothing to copy the field is null or the list empty
(no filler limitations, no template predictions: an extractive reader cannot know what the
authors would predict). A sentence is only copied when the rules and the offline judge of
the integrity gate find no result in it, no bare number is left in it (names, years,
settings excepted), and it does not address a model (prompt injection). The problem fields
never take a sentence that states the solution or names the method."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from vault_pipeline.ideas import contrast, cues
from vault_pipeline.ids import NEW_STYLE, OLD_STYLE
from vault_pipeline.integrity import classifier, roles
from vault_pipeline.integrity.leaks import (
    COUNT_WORDS,
    NUM,
    PARAM_WORDS,
    check_sentence,
    residual_number,
    sentences,
)
from vault_pipeline.integrity.method import method_leaks
from vault_pipeline.llm.injection import looks_like_instruction
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.llm.sections import Section, of_kind, split_sections
from vault_pipeline.records.masked import THESIS_MAX_WORDS, MaskedRecord

VERSION = "extractive/7"  # 6: the problem and the method by the role model's reading (the
# problem before the first solution statement, the abstract's method part as the flow); 7: an
# abstract-only paper's method sentences, no evaluation set-up, no past-tense procedure as a
# problem, no name or term from an outcome block
_MIN_CHARS, _MAX_CHARS = 20, 600
# Sections whose sentences report what the paper found: never copied, whatever their wording.
OUTCOME_SECTIONS = frozenset({"experiments", "discussion"})
# The paper speaking of what it does ("We employ ...", "This study uses ..."): from there on
# a block describes the work, not the problem it starts from.
_OWN_WORK = re.compile(r"^\W*(?:(?:here|in this (?:paper|work|article|study)|finally|first|then"
                       r"|next|to (?:this|that) end|to do so|specifically|in particular),?\s+)?"
                       r"(?:we|our|this (?:paper|study|work|article|research|thesis|chapter"
                       r"|report|letter|note))\b", re.IGNORECASE)
# Read without the role model: what others found (related work) is not this paper's result,
# and a limitations section says what the design keeps (rules and judge still read both).
_NOT_ROLE_READ = frozenset({"related", "limitations", "title"})
# Where a paper states its problem before its method: a problem field reads only what these
# say before the method is introduced (what fails in prior work or the setting).
_OPENING = frozenset({"abstract", "introduction", "other"})
# Where what prior work leaves open is stated. A statement there about prior work's
# limitation (:func:`contrast.prior_limitation`) that stands before the paper's method is
# not this paper's outcome: it may be copied as a research gap when the rules find nothing
# in it and the judge passes it at the gate's own threshold (the gate reads it again). The
# sentence-role model, trained on abstracts, reads the last sentence of a short opening
# paragraph as a conclusion: in an introduction or related-work section, and in an abstract
# when the paper's own method is introduced after it, that reading does not hold it back.
_GAP_SECTIONS = frozenset({"abstract", "introduction", "related", "other"})
_GAP_OUTCOME_READ = frozenset({"introduction", "related"})
_SETTING_ROLES = frozenset({"background", "objective"})
# An evaluation being done or planned, not a word a setting may use ("datasets", "compare").
_SETUP = re.compile(r"\b(?:evaluat\w*|experiment\w*|tested|we test|benchmarked)\b",
                    re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![\w.\-])[-+]?\d+(?:[.,]\d+)*\s*%?(?![\w\-])")
_HYPER_PAIR = re.compile(
    rf"\b(?P<name>{PARAM_WORDS})\b(?:\s+(?:of|is|was|=|to|at|as|set to|fixed to|:))?\s*"
    rf"(?P<value>{NUM})|(?P<value2>{NUM})\s+(?P<name2>{COUNT_WORDS})\b", re.IGNORECASE)
_LEAD_IN = re.compile(r"^(?:in this (?:paper|work|article|note|letter)|here|in summary"
                      r"|in particular|finally|moreover|furthermore|additionally),?\s+",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Sentence:
    text: str
    kind: str  # section kind
    heading: str
    paragraph: int  # index of the paragraph in the whole document
    safe: bool  # no leak, no bare number, no instruction, no outcome: may be copied as is
    leaky: bool  # the leak checker found a result in it
    outcome: bool = False  # in a result / conclusion block, or a results section
    before_method: bool = True  # stands before its block introduces the paper's method
    # may be copied as what prior work leaves open (:func:`contrast.prior_limitation`)
    gap_safe: bool = False
    # stands before its block's first solution statement ("we propose X"): what a paper
    # says after naming only what it studies ("This paper considers ...") is still its setting
    before_solution: bool = True
    role: str = "other"  # the sentence-role model's reading, in its block


@dataclass
class _Places:
    """Where each sentence of a paper stands (:func:`_structure`), in document order."""

    outcome: list[bool]
    before_method: list[bool]
    method_after: list[bool]
    before_solution: list[bool]
    roles: list[str]


class _Doc:
    """The paper as classified sentences, split once."""

    def __init__(self, paper: PaperInput) -> None:
        self.paper = paper
        markdown = paper.markdown()
        self.sections = split_sections(markdown)
        self.sentences: list[Sentence] = []
        self.masked = 0
        paragraph = 0
        found: list[tuple[str, str, str, int]] = []
        blocks: list[tuple[int, int]] = []  # (start, end) of each section's sentences
        title = " ".join(paper.title.split()).lower()
        kinds = own_method_kinds(self.sections, _title_name(paper.title))
        for section, own_kind in zip(self.sections, kinds, strict=True):
            # the body repeats the title as a heading over the author lines: never content
            kind = "title" if " ".join(section.heading.split()).lower() == title \
                else own_kind
            start = len(found)
            for text in section.paragraphs:
                found.extend((s, kind, section.heading, paragraph) for s in sentences(text))
                paragraph += 1
            blocks.append((start, len(found)))
        self.judge = classifier.load()
        judge = self.judge
        texts = [s for s, *_ in found]
        scores = judge.scores(texts) if judge and texts else [0.0] * len(texts)
        places = _structure(texts, [k for _, k, *_ in found], blocks)
        outcome, before, method_after = places.outcome, places.before_method, \
            places.method_after
        opening = _opening_run(places.roles, blocks)
        for i, ((sentence, kind, heading, para), score) in enumerate(
                zip(found, scores, strict=True)):
            rules = bool(check_sentence(sentence))
            # the judge's strict bar is for sentences the role model cannot place before
            # the outcomes; one of a block's opening run of background and objective (before
            # anything it reads as a method or an outcome) takes the judge's own
            bar = judge.threshold if judge and opening[i] and not outcome[i] \
                else (judge.strict_threshold if judge else 1.0)
            leaky = bool(judge and score >= bar) or rules
            self.masked += leaky or outcome[i]
            plain = (not residual_number(sentence) and not looks_like_instruction(sentence)
                     and _MIN_CHARS <= len(sentence) <= _MAX_CHARS)
            # an abstract's evaluation set-up ("The design is evaluated on a ZC706 board.")
            # opens its results, as CSAbstruct's annotators read one: its names are read
            # (:func:`_evaluation`), the sentence is never copied
            setup = kind == "abstract" and bool(_SETUP.search(sentence)) \
                and not cues.CONTRIBUTION.search(sentence)
            safe = not leaky and not outcome[i] and plain and not setup
            gap_safe = safe or (
                plain and not rules and kind in _GAP_SECTIONS and before[i]
                and not (judge and score >= judge.threshold)
                and (not outcome[i] or kind in _GAP_OUTCOME_READ or method_after[i])
                and contrast.prior_limitation(sentence))
            self.sentences.append(Sentence(sentence, kind, heading, para, safe, leaky,
                                           outcome[i], before[i], gap_safe,
                                           places.before_solution[i], places.roles[i]))

    def clean(self, text: str) -> bool:
        """Whether a text made from the paper's sentences (cut, reworded) is still free of
        results for the rules and the offline judge (at its masking threshold: the sentence
        it was made from already passed the strict one)."""
        flagged = self.judge.flags([text])[0] if self.judge else False
        return not flagged and not check_sentence(text) and not residual_number(text)

    def pick(self, kinds: Iterable[str] | None, cue: re.Pattern[str] | None = None,
             limit: int = 1, exclude: Iterable[str] = (),
             where: Callable[[Sentence], bool] | None = None) -> list[str]:
        """Up to ``limit`` safe sentences of the given section kinds (in order of kinds,
        then of the document) matching ``cue``, skipping those already used."""
        taken = set(exclude)
        out: list[str] = []
        order = list(kinds) if kinds is not None else [None]
        for kind in order:
            for s in self.sentences:
                if len(out) >= limit:
                    return out
                if kind is not None and s.kind != kind:
                    continue
                if not s.safe or s.text in taken:
                    continue
                if cue is not None and not cue.search(s.text):
                    continue
                if where is not None and not where(s):
                    continue
                out.append(s.text)
                taken.add(s.text)
        return out


def _structure(texts: list[str], kinds: list[str], blocks: list[tuple[int, int]]) -> _Places:
    """Per sentence: whether it is an outcome by where it stands (a results, experiments,
    discussion or conclusion section, or the result / conclusion block of the abstract or
    another section, by the sentence-role model), whether it stands before its block
    first introduces the paper's own work (a contribution or solution statement, or the
    paper speaking of itself), whether such a statement follows it in its block, whether it
    stands before the block's first solution statement, and its role."""
    n = len(texts)
    places = _Places([False] * n, [True] * n, [False] * n, [True] * n, ["other"] * n)
    for start, end in blocks:
        if start == end:
            continue
        if kinds[start] in OUTCOME_SECTIONS:
            places.outcome[start:end] = [True] * (end - start)
            continue
        if kinds[start] not in _NOT_ROLE_READ:
            places.outcome[start:end], places.roles[start:end] = roles.read_block(
                texts[start:end], contrast.method_statement)
        if kinds[start] not in _OPENING:
            continue
        solution_at = next((i for i in range(start, end) if method_leaks(texts[i])), end)
        method_at = next((i for i in range(start, solution_at)
                          if cues.CONTRIBUTION.search(texts[i]) or _OWN_WORK.search(texts[i])),
                         solution_at)
        places.before_method[method_at:end] = [False] * (end - method_at)
        places.method_after[start:method_at] = [method_at < end] * (method_at - start)
        places.before_solution[solution_at:end] = [False] * (end - solution_at)
    return places


def _opening_run(read: list[str], blocks: list[tuple[int, int]]) -> list[bool]:
    """Per sentence: whether it stands in its block's opening run of sentences the role model
    reads as background or objective (a result read as background stands after a method)."""
    out = [False] * len(read)
    for start, end in blocks:
        for i in range(start, end):
            if read[i] not in _SETTING_ROLES:
                break
            out[i] = True
    return out


def _first(values: list[str]) -> str | None:
    return values[0] if values else None


def _problem_only(name: str | None) -> Callable[[Sentence], bool]:
    """Sentences fit for a problem field: no solution statement, no name of the method,
    and standing before the paper introduces its own work; or, in a paper that first names
    only what it studies ("This paper considers ..."), before its first solution statement,
    read as background by the role model and not speaking of the paper's own work. Never
    a method told in the past tense: a structured abstract's procedure is not its problem."""
    terms = [name] if name else []

    def fits(s: Sentence) -> bool:
        if method_leaks(s.text, terms):
            return False
        if s.role == "method" and contrast.reports(s.text):
            return False  # what the study did ("Samples were collected ..."), not its problem
        return s.before_method or (s.before_solution and s.role == "background"
                                   and not contrast.OWN_WORK.search(s.text))
    return fits


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + ("…" if len(words) > limit else "")


def _clean_heading(heading: str) -> str:
    return re.sub(r"^\s*[0-9IVXA-H]+(?:\.[0-9]+)*\.?\s+", "", heading).strip() or heading


def _thesis(doc: _Doc) -> str | None:
    contribution = doc.pick(["abstract"], cues.CONTRIBUTION, limit=3)
    contribution += _method_roles(doc, limit=2, exclude=contribution)
    candidates = contribution + doc.pick(["abstract", "introduction"], limit=6,
                                         exclude=contribution)
    for sentence in candidates:
        text = _LEAD_IN.sub("", sentence).rstrip(".")
        text = text[0].upper() + text[1:] if text else text
        if _BARE_NUMBER.search(text):
            continue
        if len(text.split()) >= THESIS_MAX_WORDS:
            for cut in (", which ", ", where ", "; ", ", and ", " by ", ", ", " that "):
                head = text.split(cut)[0]
                if 5 <= len(head.split()) < THESIS_MAX_WORDS:
                    text = head
                    break
            else:
                text = _words(text, THESIS_MAX_WORDS - 2)
        text += "" if text.endswith(("…", ".")) else "."
        if doc.clean(text):
            return text
    title = " ".join(doc.paper.title.split())  # the title states what the paper is about
    if not _BARE_NUMBER.search(title) and len(title.split()) < THESIS_MAX_WORDS \
            and doc.clean(title):
        return title if title.endswith((".", "?", "!")) else title + "."
    return None  # no clean sentence: the record cannot be made (quarantined, with why)


def _title_name(title: str) -> str | None:
    """The name a title gives its own work before a colon ("LongEval: Guidelines for ...")."""
    head, colon, _ = title.partition(":")
    name = head.strip()
    return name if colon and len(name.split()) <= 5 and len(name) >= 3 else None


# Kinds a section named after the paper's own work is read as its method instead: "The
# LongEval guidelines for faithfulness human evaluation" is the method of an evaluation
# paper, "The S2ORC dataset" of a dataset paper, though their words say experiments.
_RENAMEABLE = frozenset({"experiments", "problem", "other", "method"})


def own_method_kinds(sections: Sequence[Section], name: str | None) -> list[str]:
    """Each section's kind, with a section whose heading names the paper's own work (and
    the sub-sections that took their kind from it) read as the method."""
    kinds = [section.kind for section in sections]
    if not name:
        return kinds
    pattern = re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE)
    inside: tuple[int, str] | None = None  # (level, original kind) of the renamed section
    for i, section in enumerate(sections):
        if inside and section.level <= inside[0]:
            inside = None
        if section.kind in _RENAMEABLE and pattern.search(section.heading):
            inside = (section.level, section.kind)
            kinds[i] = "method"
        elif inside and section.kind == inside[1]:
            kinds[i] = "method"
    return kinds


def _novelty_name(doc: _Doc) -> str | None:
    """The idea's own name when the paper gives one ("we propose X", "called X")."""
    for s in doc.sentences:
        if s.kind in ("abstract", "introduction", "method") and not s.leaky \
                and not s.outcome:
            match = cues.NAMED.search(s.text)
            if match:
                return match.group("name") or match.group("name2")
    return _title_name(doc.paper.title)


def _related_work(doc: _Doc) -> list[dict]:
    related = [s for s in doc.sentences if s.kind == "related"]
    entries: list[dict] = []
    by_paragraph: dict[int, list[Sentence]] = {}
    for s in related:
        by_paragraph.setdefault(s.paragraph, []).append(s)
    for group in by_paragraph.values():
        safe = [s for s in group if s.safe]
        if not safe:
            continue
        heading = _clean_heading(group[0].heading)
        generic = cues.PRIOR.search(heading) or re.search(
            r"related|background|prior|literature", heading, re.IGNORECASE)
        what = safe[0].text
        gap = next((s.text for s in safe[1:]
                    if cues.GAP.search(s.text) or cues.RELATED_GAP.search(s.text)), None)
        citations = sorted({m.group(1) or m.group(2)
                            for s in group for m in cues.CITATION.finditer(s.text)})
        entries.append({
            "sub_area": _words(what, 8) if generic else heading,
            "what_it_does": what, "open_gap": gap, "citations": citations,
        })
        if len(entries) == 6:
            break
    if not any(e["open_gap"] for e in entries):  # contrast statements about prior work
        entries += _contrast_entries(doc)
    return entries


_WHERE = {"introduction": "the introduction", "abstract": "the abstract",
          "related": "the related work"}


def _contrast_entries(doc: _Doc) -> list[dict]:
    """Related-work entries from the paper's contrast statements about prior work
    (:mod:`.contrast`), where its related-work paragraphs name no gap."""
    found = contrast.contrasts(doc.sentences, ["related", "introduction", "abstract", "method"],
                               doc.clean)
    return [{"sub_area": f"Prior work named in {_WHERE.get(c.kind, _clean_heading(c.heading))}",
             "what_it_does": c.what_it_does, "open_gap": c.open_gap,
             "citations": sorted({m.group(1) or m.group(2)
                                  for m in cues.CITATION.finditer(c.what_it_does)})}
            for c in found]


def _modules(doc: _Doc) -> list[dict]:
    out = []
    for section in of_kind(doc.sections, "method"):
        if section.level <= 2 or not section.paragraphs:
            continue
        own = [s for s in doc.sentences if s.heading == section.heading and s.safe]
        if not own:
            continue
        inputs = [s.text for s in own if cues.INPUTS.search(s.text)][:1]
        outputs = [s.text for s in own if cues.OUTPUTS.search(s.text)][:1]
        out.append({"name": _clean_heading(section.heading), "role": own[0].text,
                    "inputs": inputs, "outputs": outputs})
        if len(out) == 8:
            break
    return out


def _design_choices(doc: _Doc) -> list[dict]:
    out = []
    for sentence in doc.pick(["method", "problem"], cues.DESIGN, limit=4):
        match = cues.DESIGN.search(sentence)
        assert match is not None
        choice = sentence[:match.start()].strip(" ,;") or sentence
        reason = sentence[match.start():].strip()
        out.append({"choice": choice, "reason": reason})
    return out


def _hyperparameters(doc: _Doc) -> list[dict]:
    """Named settings with their values ("learning rate of 3e-4", "64 experts")."""
    out: list[dict] = []
    seen = set()
    for s in doc.sentences:
        if s.leaky or s.kind in ("related", "abstract") or looks_like_instruction(s.text):
            continue
        for match in _HYPER_PAIR.finditer(s.text):
            name = (match.group("name") or match.group("name2")).lower()
            value = match.group("value") or match.group("value2")
            if name in seen:
                continue
            seen.add(name)
            out.append({"name": name, "value": value.strip()})
            if len(out) == 12:
                return out
    return out


def _names_in(sentences_: list[str]) -> list[str]:
    found: list[str] = []
    for sentence in sentences_:
        for match in cues.PROPER_NAME.finditer(sentence):
            name = match.group().rstrip(".-")
            if name not in cues.NOT_NAMES and name not in found and len(name) > 1:
                found.append(name)
    return found[:10]


def _evaluation(doc: _Doc, method_name: str | None) -> dict:
    plan = doc.pick(["experiments", "abstract", "introduction", "method"], cues.EVALUATION,
                    limit=3)
    # names only (datasets, baselines, metrics), so a set-up sentence of the outcome block
    # ("We evaluate X on A and B against C, measuring D.") gives its names as long as the
    # rules find no result in it: the judge's reading of a whole sentence says nothing of a
    # name
    eval_text = [s.text for s in doc.sentences
                 if s.kind in ("experiments", "abstract") and cues.EVALUATION.search(s.text)
                 and not check_sentence(s.text)]
    metrics: list[str] = []
    for text in eval_text:
        for match in cues.METRIC_NAMES.finditer(text):
            if match.group() not in metrics:
                metrics.append(match.group())
    baselines: list[str] = []
    for text in eval_text:
        for match in cues.BASELINE_LIST.finditer(text):
            for name in _names_in([match.group("list")]):
                if name not in baselines and name != method_name:
                    baselines.append(name)
    benchmarks = [n for n in _names_in([t for t in eval_text if re.search(
        r"\b(?:datasets?|benchmarks?|corpus|corpora|on)\b", t)])
        if n not in baselines and n != method_name][:8]
    return {
        "setting": " ".join(plan) if plan else None,
        "benchmarks": benchmarks, "baselines": baselines[:8], "metrics": metrics[:8],
        "ablations": doc.pick(["experiments", "method"], cues.ABLATION, limit=3),
    }


def _limitations(doc: _Doc) -> list[str]:
    """Limitations the paper states: its limitations section, then limitation cues."""
    found = doc.pick(["limitations"], limit=5)
    found += doc.pick(["discussion", "experiments", "method", "problem", "introduction"],
                      cues.LIMITATION, limit=5 - len(found), exclude=found)
    return found[:5]


_ARXIV = re.compile(rf"arXiv:\s*({NEW_STYLE}|{OLD_STYLE})", re.IGNORECASE)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s,;]+[^\s,;.])")
_ENTRY_START = re.compile(r"^\s*(?:\[(\w+)\]|(\d+)\.|[-*])\s+")


def _references(text: str | None) -> list[dict]:
    if not text:
        return []
    entries: list[tuple[str | None, str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _ENTRY_START.match(line)
        if match or not entries:
            key = (match.group(1) or match.group(2)) if match else None
            entries.append((f"[{key}]" if key else None,
                            line[match.end():] if match else line))
        else:
            key, body = entries[-1]
            entries[-1] = (key, f"{body} {line.strip()}")
    out = []
    for key, body in entries[:300]:
        body = " ".join(body.split())
        if not body or body.startswith("#") or looks_like_instruction(body):
            continue
        arxiv, doi = _ARXIV.search(body), _DOI.search(body)
        out.append({"key": key, "title": body[:300], "arxiv_id": arxiv and arxiv.group(1),
                    "doi": doi and doi.group(1)})
    return out


def _acronyms(doc: _Doc) -> list[dict]:
    out, seen = [], set()
    for s in doc.sentences:  # never from an outcome block: a term's words are its own
        if s.leaky or s.outcome or looks_like_instruction(s.text):
            continue
        for match in cues.ACRONYM.finditer(s.text):
            abbr = match.group("abbr")
            letters = [w[0].upper() for w in re.split(r"[\s\-]+", match.group("term")) if w]
            initials = "".join(letters[-len(abbr.rstrip("s")):])
            if abbr in seen or not initials.startswith(abbr.rstrip("s")[:1]):
                continue
            words = match.group("term").split()[-len(abbr.rstrip("s")):]
            seen.add(abbr)
            out.append({"term": abbr, "definition": " ".join(words)})
            if len(out) == 8:
                return out
    return out


def _naming(doc: _Doc, name: str | None, limit: int) -> list[str]:
    """Clean abstract sentences that name the paper's own method ("BioReason's reasoning is
    developed through supervised fine-tuning ..."): what the method is made of."""
    if not name:
        return []
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    return doc.pick(["abstract"], limit=limit, where=lambda s: bool(pattern.search(s.text)))


def _method_roles(doc: _Doc, limit: int = 3, exclude: Iterable[str] = ()) -> list[str]:
    """The abstract's method part where no sentence may be copied as "we propose ...": the
    clean sentences the role model reads as the method or the objective from where the
    paper introduces its own work ("The proposed method introduces ...", "Our approach
    constructs ..."), up to the first sentence that is not one, says what fails or reports
    anything (a solution statement held back only by where it stands or by a number does
    not end the part). The method's flow, and the thesis before a background sentence."""
    out: list[str] = []
    for s in doc.sentences:
        if s.kind != "abstract" or s.before_method:
            continue
        if not s.safe and not s.leaky and method_leaks(s.text) and not contrast.reports(s.text):
            continue
        if not (s.safe and s.role in ("method", "objective") and not cues.PROBLEM.search(s.text)
                and not cues.PRIOR.search(s.text) and not contrast.reports(s.text)):
            break
        if s.text not in exclude:
            out.append(s.text)
        if len(out) == limit:
            break
    return out


def _abstract_method(doc: _Doc, limit: int) -> list[str]:
    """The abstract's own method where the paper has no method section: its contribution
    statements and the clean sentences after them that the role model reads as the method
    and that say what the method does ("Our algorithm learns to attend to ..."), in order,
    up to where the abstract turns to its outcomes. Never one that names an evaluation,
    which an abstract's results open with, nor one told in the past tense ("Samples were
    collected ..."): that is what a study did, and a structured abstract's results often
    open with it."""
    turned = next((i for i, s in enumerate(doc.sentences) if s.kind == "abstract"
                   and (s.outcome or s.role in ("result", "conclusion"))), len(doc.sentences))
    before_outcomes = {s.text for s in doc.sentences[:turned]}
    return doc.pick(["abstract"], limit=limit, where=lambda s: bool(
        cues.CONTRIBUTION.search(s.text) or (
            s.role == "method" and not s.before_method and s.text in before_outcomes
            and not cues.EVALUATION.search(s.text) and not contrast.reports(s.text))))


def _method_heads(doc: _Doc) -> list[str]:
    """Where no whole sentence may say what the method is (the abstract's method statement
    also says what it achieves), the verbatim head that says only what it is, when it is
    clean on its own; never from a result or conclusion block, whatever its wording."""
    for s in doc.sentences:
        if s.kind in ("abstract", "introduction") and not s.safe and not s.outcome:
            head = contrast.method_head(s.text)
            if head and not looks_like_instruction(head) and doc.clean(head):
                return [head]
    return []


def decompose(paper: PaperInput) -> tuple[dict, int]:
    """The record of one paper (a dict valid as :class:`MaskedRecord`) and the number of
    sentences left out because they stated a result."""
    doc = _Doc(paper)
    own_name = _novelty_name(doc)
    thesis = _thesis(doc)
    problem = _problem_only(own_name)
    # the paper's own problem sentences; without a cue, the opening sentences of the abstract
    # (papers open with the problem) as long as they neither state nor name the solution
    statement = (doc.pick(["introduction", "abstract", "problem"], cues.PROBLEM, where=problem)
                 or doc.pick(["abstract"], where=problem))
    why = (doc.pick(["introduction", "abstract"], cues.MATTERS, exclude=statement,
                    where=problem)
           or doc.pick(["introduction", "abstract", "related"], cues.GAP, exclude=statement,
                       where=problem)
           or doc.pick(["abstract"], exclude=statement, where=lambda s: problem(s) and not
                       cues.CONTRIBUTION.search(s.text) and not cues.EVALUATION.search(s.text)))
    example = doc.pick(["introduction", "problem", "abstract", "method"], cues.EXAMPLE,
                       exclude=statement + why, where=problem)
    # the idea and why it should work first ("our key insight is ..."), then contributions
    explanation = contrast.key_ideas(doc.sentences, ["introduction", "abstract", "method"],
                                     limit=2)
    explanation += doc.pick(["abstract", "introduction", "method"], cues.CONTRIBUTION,
                            limit=3 - len(explanation), exclude=explanation)
    explanation += doc.pick(["abstract", "introduction", "method"], cues.NOVELTY,
                            limit=3 - len(explanation), exclude=explanation)
    setting = (doc.pick(["problem"], limit=3, where=problem)
               or doc.pick(["abstract", "introduction"], limit=3, where=problem))
    modules = _modules(doc)
    choices = _design_choices(doc)
    evaluation = _evaluation(doc, own_name)
    flow = (doc.pick(["method"], limit=4) or _abstract_method(doc, limit=4)
            or _method_heads(doc) or _naming(doc, own_name, limit=2) or _method_roles(doc))
    theory = doc.pick(["method", "problem", "abstract"], cues.THEORY, limit=3)
    code = next((c for s in of_kind(doc.sections, "method", "problem") for c in s.code), None)
    base = next((m.group("name") for s in doc.sentences if not s.leaky and not s.outcome
                 for m in [cues.BASE_MODEL.search(s.text)] if m), None)
    record = {
        "title": paper.title,
        "topics": list(paper.categories),
        "thesis": thesis,
        "core_problem": {"statement": _first(statement), "why_it_matters": _first(why),
                         "failing_example": _first(example)},
        "key_novelty": {"name": own_name,
                        "explanation": explanation[:3]},
        "problem_definition": {
            "setting": " ".join(setting) or None,
            "inputs": doc.pick(["problem", "method", "abstract"], cues.INPUTS, limit=3,
                               where=problem),
            "outputs": doc.pick(["problem", "method", "abstract"], cues.OUTPUTS, limit=3,
                                where=problem),
        },
        "key_terms": _acronyms(doc),
        "related_work": _related_work(doc),
        "method": {
            "flow": " ".join(flow) or None,
            "modules": modules,
            "structural_novelties": doc.pick(["method"], cues.NOVELTY, limit=3),
            "design_choices": choices,
            "pseudocode": code if code and not check_sentence(code) else None,
            "theory": " ".join(theory) if theory else None,
        },
        "model_details": {
            "base_model": base,
            "training_method": _first(doc.pick(["method", "experiments"], cues.TRAINING)),
            "objectives": doc.pick(["method", "problem"], cues.OBJECTIVE, limit=3),
            "adaptation": _first(doc.pick(["method", "experiments"], cues.ADAPTATION)),
            "hyperparameters": _hyperparameters(doc),
        },
        "differences_from_prior_work": [
            {"related_method": m.group("other").strip(), "difference": s}
            for s in doc.pick(None, cues.DIFFERENCE, limit=5)
            for m in [cues.DIFFERENCE.search(s)] if m],
        "proposed_evaluation": evaluation,
        "falsifiable_predictions": [],
        "limitations": _limitations(doc),
        "references": _references(paper.references),
    }
    MaskedRecord.model_validate(record)
    return record, doc.masked
