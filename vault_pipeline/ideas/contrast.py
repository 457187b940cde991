"""Contrast statements about prior work and key-idea statements, found in a paper's own
sentences: the extractive reader's research gap ("X does Y via Z, which leaves ...") and
intuition ("our key insight is ...").

Kept apart from the section-and-cue reader of :mod:`.extractive` so that the gap and the
intuition rules can grow without touching how problem or result sentences are chosen. Every
value is a sentence of the paper or a verbatim clause of one; nothing is reworded."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from vault_pipeline.integrity.statements import method_statement, reports

_F = re.IGNORECASE

# A sentence about other people's work: a determiner of prior work before a plural noun
# phrase ("existing 3D MLLMs", "traditional heuristic approaches", "most PLR algorithms"),
# a citation, or a named earlier line of work.
PRIOR_WORK = re.compile(
    r"\b(?:existing|prior|previous|current|conventional|traditional|standard|classical"
    r"|typical|popular|earlier|recent|mainstream|state-of-the-art|most|many|several"
    r"|these)\s+(?:(?:[\w\-/]+|\([A-Z][\w\-]*\))\s+){0,6}?(?:[A-Za-z][\w\-]*(?:s|ies|ches))\b"
    r"|\b\w+(?:-\w+)+\s+(?:\([A-Z][\w\-]*\)\s+)?(?:methods|approaches|models|techniques"
    r"|algorithms|solutions|systems)\b"
    r"|^(?:[A-Z][\w\-]*)(?:\s+[\w\-]+){0,3}\s+(?:methods|approaches|models|techniques"
    r"|algorithms|systems|frameworks)\s+(?:often\s+|typically\s+|usually\s+|still\s+)?"
    r"(?:suffer|fail|struggle|lack|remain|rely|cannot|do not|are (?:limited|prone|unable))\b"
    r"|\bet al\.?|\([A-Z][A-Za-z\-']+(?: et al\.?| and [A-Z][A-Za-z\-']+)?,? \d{4}[a-z]?\)"
    r"|\[\d+(?:\s*[,\u2013-]\s*\d+)*\]"
    r"|\b(?:prior|previous|existing|related) (?:work|art|literature|research)\b"
    r"|\b(?:have|has) been (?:proposed|developed|introduced|studied|explored|used)\b", _F)
# A class of models named by its plural acronym ("GNNs", "MLLMs", "VLAs"): existing work.
MODEL_CLASS = re.compile(r"\b[A-Z][A-Za-z]*[A-Z]s\b")
# Where a sentence turns to what that work leaves open.
TURN = re.compile(
    r"(?:,\s*|\s+)(?P<turn>but|yet|however|although|though|while|whereas|which|thereby"
    r"|restricting|limiting|leaving|making|resulting in|leading to|at the expense of"
    r"|despite)\b", _F)
LIMIT = re.compile(
    r"\b(?:fail\w*|lack\w*|suffer\w*|struggl\w*|ignor\w*|overlook\w*|neglect\w*|cannot"
    r"|can ?not|unable|do(?:es)? not|did not|remain\w*|limit\w*|insufficient\w*|inadequate\w*"
    r"|costly|expensive|prohibitive\w*|restrict\w*|at odds|fall short|falls short|rely heavily"
    r"|unrealistic|suboptimal|sub-optimal|poor\w*|brittle|unstable|bottleneck\w*|unclear"
    r"|unexplored|under-?explored|overly|only|intensive|inefficien\w*"
    r"|not (?:yet )?(?:address|consider|handle|capture)\w*|hinder\w*|bias\w*|drawbacks?"
    r"|shortcomings?|challeng\w*|difficult\w*|open question)\b",
    _F)
OPENS_TURN = re.compile(r"^(?:however|but|yet|unfortunately|nonetheless|nevertheless"
                        r"|despite|although|still|in practice|consequently)\b", _F)
OWN_WORK = re.compile(r"\b(?:we|our|this (?:paper|work|article|study)|in this (?:paper|work"
                      r"|article|study)|here)\b", _F)
KEY_IDEA = re.compile(
    r"\b(?:key|main|core|central|underlying|simple|basic) (?:idea|insight|intuition"
    r"|observation|principle|hypothesis)\b|\bintuition\b|\bwe (?:observe|hypothesi[sz]e"
    r"|argue|posit|conjecture|find|reveal|show) that\b|\b(?:inspired|motivated) by\b"
    r"|\bbased on (?:the|this) (?:observation|insight|understanding|finding)\b"
    r"|\bthe idea (?:is|behind)\b|\bbuilds? on the (?:observation|idea|insight)\b", _F)


def prior_limitation(text: str) -> bool:
    """Whether a sentence is worded as a limitation of the state of the art (a gap: "existing
    methods cannot X", "however, this approach fails to capture Y") and not as an outcome of
    the paper: a limitation word, in the present tense, with no own-work reference and no
    report of what was found or measured. Where it stands (before the paper's method, in an
    opening or related-work section) is the reader's to check."""
    return bool(LIMIT.search(text)) and not OWN_WORK.search(text) and not reports(text)


# Where a method statement turns from what the method is to what it achieves ("..., a
# framework that leverages X, achieving better Y than Z").
_OUTCOME_TAIL = re.compile(
    r",\s+(?:(?:thereby|thus|hence)\s+)?(?:achiev|yield|result|lead|outperform|improv|enabl"
    r"|offer|deliver|attain|reach|surpass|reduc|boost|obtain|show|demonstrat|allow)\w*\b"
    r"|,\s+which\s+(?:\w+\s+){0,2}?(?:achiev|yield|outperform|improv|lead|result|reduc"
    r"|surpass|enabl|allow)\w*\b|;\s+", _F)


def method_head(text: str) -> str | None:
    """The verbatim head of a sentence that introduces the paper's method and then turns to
    what it achieves: what the method is, without the outcome ("we propose X, a framework
    that leverages Y" of "..., achieving better Z"). None when there is no such turn or the
    head is not a method statement on its own."""
    match = _OUTCOME_TAIL.search(text)
    if match is None:
        return None
    head = text[:match.start()].rstrip(" ,;")
    return head if len(head.split()) >= 6 and method_statement(head) else None


class Candidate(Protocol):
    """A sentence of the paper as the extractive reader classified it."""

    text: str
    kind: str
    heading: str
    paragraph: int
    safe: bool
    gap_safe: bool  # may be copied whole as what prior work leaves open


@dataclass(frozen=True)
class Contrast:
    what_it_does: str  # the sentence saying what prior work does
    open_gap: str  # the sentence, or the verbatim clause, saying what it leaves open
    heading: str
    kind: str


def _about_prior_work(text: str) -> bool:
    return bool(PRIOR_WORK.search(text) or MODEL_CLASS.search(text)) \
        and not OWN_WORK.search(text)


def _turn_clause(text: str) -> str | None:
    """The verbatim clause of a prior-work sentence that says what is left open."""
    for match in TURN.finditer(text):
        clause = text[match.start("turn"):].strip(" ,;")
        if LIMIT.search(clause) and len(clause.split()) >= 4 and \
                len(text[:match.start()].split()) >= 5:
            return clause
    return None


_CLAUSE_END = re.compile(r",\s+(?:to|which|who|while|and|but|thereby|leading|resulting|making"
                         r"|such as|as|where|with|yet|though|although|however)\b|;\s+|:\s+")
_PARENS = re.compile(r"\([^()]*\)")


def _lead_clause(text: str) -> str | None:
    """The sentence up to its first subordinate clause (a clause mark inside parentheses, as
    in a citation list, does not count): a verbatim head that can stand alone."""
    masked = _PARENS.sub(lambda m: "x" * len(m.group()), text)
    match = _CLAUSE_END.search(masked)
    head = text[:match.start()].strip() if match else None
    return head if head and len(head.split()) >= 6 else None


_CONCESSIVE = re.compile(r"^(?:while|although|though|even though|despite)\b[^,]*,\s+", _F)


def _main_clause(text: str) -> str | None:
    """What a concessive sentence asserts ("While effective, it is costly" -> "it is
    costly"), verbatim."""
    match = _CONCESSIVE.match(_PARENS.sub(lambda m: "x" * len(m.group()), text))
    rest = text[match.end():].strip() if match else None
    return rest if rest and len(rest.split()) >= 4 and LIMIT.search(rest) else None


def _usable(s: Candidate, text: str | None, clean: Callable[[str], bool],
            gap: bool = False) -> str | None:
    """``text`` (the sentence or a verbatim part of it) when it may be copied; ``gap``: as
    what prior work leaves open."""
    if not text:
        return None
    if text == s.text:
        return text if s.safe or (gap and getattr(s, "gap_safe", False)) else None
    return text if clean(text) else None


def contrasts(sentences: Sequence[Candidate], kinds: Sequence[str],
              clean: Callable[[str], bool], allowed: Callable[[str], bool] = lambda _: True,
              limit: int = 6) -> list[Contrast]:
    """Contrast statements about prior work in the given section kinds, in their order: a
    prior-work sentence followed in its paragraph by one that turns to a limitation
    ("However, ..."), or one sentence that turns itself ("..., which ignores ..."). A
    sentence the integrity gate will not let through whole may lend its leading clause or
    its turn clause, when ``clean`` passes that verbatim part."""
    out: list[Contrast] = []
    used: set[str] = set()
    for kind in kinds:
        pool = [s for s in sentences if s.kind == kind]
        for i, s in enumerate(pool):
            if len(out) >= limit:
                return out
            if s.text in used or not _about_prior_work(s.text):
                continue
            what = _usable(s, s.text, clean) or _usable(s, _lead_clause(s.text), clean)
            if what is None or not (PRIOR_WORK.search(what) or MODEL_CLASS.search(what)):
                continue
            prev = pool[i - 1] if i > 0 else None
            nxt = pool[i + 1] if i + 1 < len(pool) else None
            found = _pair(s, what, nxt, used, clean)
            if found is None and OPENS_TURN.search(s.text) and LIMIT.search(s.text) \
                    and prev is not None and prev.paragraph == s.paragraph \
                    and prev.text not in used and not OWN_WORK.search(prev.text):
                # "X is how it is done. However, current X suffer from Z": the sentence
                # before says what is done, this one what it leaves open
                before = _usable(prev, prev.text, clean) or _usable(prev, _lead_clause(
                    prev.text), clean)
                gap = _usable(s, s.text, clean, gap=True) or _usable(s, _lead_clause(s.text),
                                                                     clean)
                found = (before, gap) if before and gap else None
            if found is None or not allowed(found[1]):
                continue
            used.update({s.text, *found})
            out.append(Contrast(found[0], found[1], s.heading, kind))
    return out


def _pair(s: Candidate, what: str, nxt: Candidate | None, used: set[str],
          clean: Callable[[str], bool]) -> tuple[str, str] | None:
    """(what prior work does, what it leaves open) for a prior-work sentence: the next
    sentence of its paragraph when it turns to a limitation, else its own turn clause."""
    gap = None
    if nxt is not None and nxt.paragraph == s.paragraph and nxt.text not in used \
            and not OWN_WORK.search(nxt.text) \
            and (OPENS_TURN.search(nxt.text) or LIMIT.search(nxt.text)):
        gap = (_usable(nxt, nxt.text, clean, gap=True)
               or _usable(nxt, _lead_clause(nxt.text), clean)
               or _usable(nxt, _turn_clause(nxt.text), clean)
               or _usable(nxt, _main_clause(nxt.text), clean))
    if gap is None:
        gap = _usable(s, _turn_clause(s.text), clean)
    return (what, gap) if gap and gap != what else None


def key_ideas(sentences: Sequence[Candidate], kinds: Sequence[str],
              limit: int = 3) -> list[str]:
    """Sentences that state the idea behind the work and why it should work ("our key
    insight is ...", "motivated by ...", "we observe that ..."), in order of kinds."""
    out: list[str] = []
    for kind in kinds:
        for s in sentences:
            if len(out) >= limit:
                return out
            if s.kind == kind and s.safe and s.text not in out and KEY_IDEA.search(s.text):
                out.append(s.text)
    return out
