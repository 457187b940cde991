"""Is a paper methodological? The extractive classifier over title, abstract and record.

Targets must contribute a new method, model, algorithm, architecture, training procedure or
framework; surveys, position papers, dataset/benchmark papers and empirical reports are
excluded (seed paper, target selection). No library answers this offline, so it is written
here as a small set of cue phrases, each weighted by where it is found (the title speaks
louder than one abstract sentence) and reported as the evidence for the decision. The same
:class:`PaperKind` comes back from the LLM-backed classifier (:mod:`.llm_kinds`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

METHODOLOGICAL = "methodological"
SURVEY = "survey"
POSITION = "position"
DATASET = "dataset_benchmark"
EMPIRICAL = "empirical"
UNKNOWN = "no_method_found"
KINDS = (METHODOLOGICAL, SURVEY, POSITION, DATASET, EMPIRICAL, UNKNOWN)
EXTRACTIVE = "extractive/3"

_ARTIFACT = (r"(?:method|methodology|methodologies|model|algorithm|architecture|framework|"
             r"approach|technique|procedure|scheme|estimator|network|system|loss|objective|"
             r"mechanism|strategy|pipeline|policy|optimizer|solver|sampler|encoder|decoder|"
             r"module|layer|attention|regularizer|protocol|formulation|paradigm|integrator|"
             r"limiter|prescription|locator|tool|heuristic|platform|toolbox|toolkit|engine|"
             r"controller|filter|representation|descriptor|index|metric|library|simulator|"
             r"detector|classifier|predictor|tracker|planner|prototype|design|interface)s?")
_FILLER = r"(?:[\w\-]+\s+){0,6}?"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# (kind, where, weight, pattern). A title naming a non-method kind weighs 3; other cues 1-2.
_CUES: tuple[tuple[str, str, int, re.Pattern[str]], ...] = (
    (SURVEY, "title", 3, _rx(r"\b(?:survey|surveys|overview|tutorial|primer|"
                             r"(?:systematic |scoping |literature |critical )review|"
                             r"meta-analysis|a review|review of|taxonomy of)\b")),
    (SURVEY, "abstract", 2, _rx(r"\b(?:this|our|the present|we present an?|we provide an?|"
                                r"comprehensive|systematic)\s+(?:comprehensive\s+|"
                                r"systematic\s+|brief\s+)?(?:survey|review|overview|"
                                r"tutorial)\b")),
    (SURVEY, "abstract", 2, _rx(r"\bwe (?:survey|review|summari[sz]e) (?:the |recent )")),
    (SURVEY, "abstract", 2, _rx(r"\b(?:paper|article|chapter|work)\s+(?:presents|provides|gives|"
                                r"offers)\s+an?\s+(?:\w+\s+){0,2}?(?:survey|review|overview|"
                                r"tutorial|introduction)\b")),
    (POSITION, "title", 3, _rx(r"(?:^position\b|\bposition paper\b|\bmanifesto\b|"
                               r"\ba call to action\b|\bperspective on\b|\bopinion\b)")),
    (POSITION, "abstract", 2, _rx(r"\b(?:this|in this) position paper\b|\bthis perspective\b"
                                  r"|\bthis (?:essay|commentary|viewpoint)\b")),
    (POSITION, "abstract", 1, _rx(r"\bwe (?:argue|advocate|call for|contend)\b")),
    (DATASET, "title", 3, _rx(r"\b(?:dataset|data set|benchmark|corpus|leaderboard|"
                              r"test suite|testbed|gym|arena)s?\b")),
    (DATASET, "abstract", 2, _rx(r"\bwe (?:introduce|present|release|construct|build|create|"
                                 r"curate|collect|propose)\s+" + _FILLER +
                                 r"(?:dataset|data set|benchmark|corpus|test suite|"
                                 r"testbed)s?\b")),
    (EMPIRICAL, "title", 3, _rx(r"\b(?:empirical|comparative|exploratory|case|user|"
                                r"replication|reproducibility|measurement|large-scale)\s+"
                                r"(?:study|studies|evaluation|analysis|investigation)\b|"
                                r"\blessons learned\b|\ban analysis of\b|\bhow (?:well|good|"
                                r"do|does|far)\b|\bpromises (?:and|&) perils\b")),
    (EMPIRICAL, "abstract", 2, _rx(r"\bwe (?:conduct|perform|present|carr(?:y|ied) out|report)"
                                   r"(?:ed|s)?\s+"
                                   r"(?:an?\s+|the first\s+)?(?:\w+\s+){0,2}?(?:empirical|"
                                   r"comparative|exploratory|case|user|interview|"
                                   r"measurement)\s+(?:study|studies|evaluation|analysis)\b")),
    (METHODOLOGICAL, "abstract", 2, _rx(r"\bwe (?:propose|introduce|present|develop|design|"
                                        r"devise|derive|formulate|construct|give|describe|"
                                        r"implement)\s+" + _FILLER + _ARTIFACT + r"\b")),
    (METHODOLOGICAL, "abstract", 2, _rx(r"\b(?:this|the present|our)\s+(?:paper|article|work|"
                                        r"letter|chapter|contribution)\s+(?:presents|proposes|"
                                        r"introduces|describes|develops|derives|designs|"
                                        r"reports)\s+" + _FILLER + _ARTIFACT + r"\b")),
    (METHODOLOGICAL, "abstract", 2, _rx(r"\b" + _ARTIFACT + r"\b[^.;]{0,50}?\b(?:is|are)\s+"
                                        r"(?:proposed|presented|introduced|developed|devised|"
                                        r"designed|described)\b(?!\s+with\b)")),
    (METHODOLOGICAL, "abstract", 2, _rx(r"\b(?:a|an)\s+(?:new|novel)\s+" + _FILLER
                                        + _ARTIFACT + r"\b")),
    (METHODOLOGICAL, "abstract", 1, _rx(r"\b(?:our|the proposed)\s+(?:\w+\s+)?" + _ARTIFACT
                                        + r"\b")),
    (METHODOLOGICAL, "abstract", 1, _rx(r"\bwe (?:propose|introduce)\b")),
    (METHODOLOGICAL, "title", 1, _rx(r"^[\w\-]+:\s")),  # "Name: what it does" titles
    (METHODOLOGICAL, "title", 2, _rx(r"^(?:an?\s+)?(?:new|novel|general|efficient|fast)\s+"
                                     r"(?:\w+\s+)?" + _ARTIFACT + r"\s+(?:for|to|of)\b")),
)


@dataclass(frozen=True)
class PaperKind:
    """The answer for one paper: its kind, whether it may be a target, and why."""

    kind: str
    evidence: str
    classifier: str

    @property
    def methodological(self) -> bool:
        return self.kind == METHODOLOGICAL

    def reason(self) -> str:
        if self.methodological:
            return f"methodological ({self.evidence})"
        return f"not methodological: {self.kind} ({self.evidence})"


def _record_text(record: Mapping[str, Any] | None) -> str:
    """The record's own statement of its contribution (thesis, key novelty, method flow)."""
    if not record:
        return ""
    novelty = record.get("key_novelty") or {}
    method = record.get("method") or {}
    parts = [record.get("thesis"), novelty.get("name"), *(novelty.get("explanation") or []),
             method.get("flow")]
    return " ".join(p for p in parts if isinstance(p, str) and p.strip())


def _quote(text: str, match: re.Match[str], margin: int = 25) -> str:
    """The matched cue with a few whole words either side."""
    start, end = max(0, match.start() - margin), min(len(text), match.end() + margin)
    before, after = text[start:match.start()], text[match.end():end]
    if start > 0:
        before = "…" + before.split(" ", 1)[-1] if " " in before else "…"
    if end < len(text):
        after = after.rsplit(" ", 1)[0] + "…" if " " in after else "…"
    return "'" + " ".join((before + match.group() + after).split()) + "'"


def name() -> str:
    """The classifier's version: the cue rules and, when shipped, the learned model's
    weights (either changing re-classifies every cached verdict)."""
    from vault_pipeline.splits.kind_model import model

    judge = model()
    return f"{EXTRACTIVE}+{judge.version}" if judge else EXTRACTIVE


def classify(title: str, abstract: str, record: Mapping[str, Any] | None = None) -> PaperKind:
    """The cue rules decide when a cue is found; where none is, the learned model
    (:mod:`.kind_model`) reads title and abstract, and a paper it scores below its
    threshold is not a target."""
    from vault_pipeline.splits.kind_model import model, probability

    verdict = rules(title, abstract, record)
    judge = model()
    if judge is None:
        return verdict
    version = name()
    if verdict.kind != UNKNOWN:
        return PaperKind(verdict.kind, verdict.evidence, version)
    p = probability(title, abstract, judge)
    if p is not None and p >= judge.threshold:
        return PaperKind(METHODOLOGICAL, f"no cue phrase; learned model: {p:.2f} >= "
                         f"{judge.threshold:.2f} on title and abstract", version)
    return PaperKind(UNKNOWN, f"{verdict.evidence}; learned model: {p:.2f} < "
                     f"{judge.threshold:.2f}", version)


def rules(title: str, abstract: str, record: Mapping[str, Any] | None = None) -> PaperKind:
    """The cue rules alone: weigh the cues of every kind; a non-method kind wins when it is
    at least as strong as the method cues, and a paper with no cue decides nothing
    (`no_method_found`)."""
    where = {"title": title or "", "abstract": f"{abstract or ''} {_record_text(record)}"}
    score: dict[str, int] = dict.fromkeys(KINDS, 0)
    evidence: dict[str, str] = {}
    for kind, field, weight, pattern in _CUES:
        match = pattern.search(where[field])
        if match:
            score[kind] += weight
            evidence.setdefault(kind, f"{field}: {_quote(where[field], match)}")
    method = score[METHODOLOGICAL]
    rivals = sorted((k for k in (SURVEY, POSITION, DATASET, EMPIRICAL) if score[k] >= 2),
                    key=lambda k: -score[k])
    if rivals and score[rivals[0]] >= method:
        return PaperKind(rivals[0], evidence[rivals[0]], EXTRACTIVE)
    if method >= 2:
        return PaperKind(METHODOLOGICAL, evidence[METHODOLOGICAL], EXTRACTIVE)
    return PaperKind(UNKNOWN, "no cue of a new method, model, algorithm, architecture, "
                     "training procedure or framework", EXTRACTIVE)
