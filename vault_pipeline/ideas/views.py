"""The five views, derived deterministically from a record by :func:`derive_views`: the one
function the index, the datasets and every other consumer call, so the text embedded at
index time and the text built at query time never drift apart.

A view says only what the record states: a part the record leaves null is left out, and a
view with nothing substantive left is None (absent: not complete, never indexed, its paper
never a target). The problem views (`problem_setting`, `challenge`) are a role's inputs, so
any sentence of theirs that states the solution or names the method is dropped here and
recorded (:mod:`vault_pipeline.integrity.method`); so is it from the gap view's gaps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vault_pipeline.integrity.leaks import Finding
from vault_pipeline.integrity.method import method_terms, strip_method
from vault_pipeline.records.masked import MaskedRecord

VIEWS_VERSION = "views/2"
VIEW_NAMES: tuple[str, ...] = ("problem_setting", "challenge", "research_gap", "intuition",
                               "proposal")
PROBLEM_VIEWS = ("problem_setting", "challenge")


@dataclass
class View:
    name: str
    text: str | None  # None: nothing substantive to say
    removed: list[Finding] = field(default_factory=list)  # method leaks dropped from it


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _items(values: list[str]) -> str:
    return "; ".join(" ".join(v.split()).rstrip(".") for v in values) + "."


class _Lines:
    """Labelled lines of a view; problem views drop method-leaking text as they go."""

    def __init__(self, terms: list[str] | None) -> None:
        self.terms = terms  # None: no method check (solution views)
        self.lines: list[str] = []
        self.removed: list[Finding] = []

    def clean(self, text: str | None) -> str | None:
        if not text or not text.strip():
            return None
        if self.terms is None:
            return text
        kept, removed = strip_method(text, self.terms)
        self.removed.extend(removed)
        return kept

    def add(self, label: str, value: str | list[str] | None) -> None:
        """One labelled line: a text as a sentence, a list as its items; none when the
        record says nothing (or only what the method check dropped)."""
        if isinstance(value, list):
            items = [k for k in (self.clean(v) for v in value) if k]
            line = _items(items) if items else None
        else:
            text = self.clean(value)
            line = _sentence(text) if text else None
        if line:
            self.lines.append(f"{label}: {line}")

    def view(self, name: str, substantive: bool = True) -> View:
        text = "\n".join(self.lines) if self.lines and substantive else None
        return View(name, text, self.removed)


_Part = tuple[str, str | list[str] | None]  # a view line's label and what the record says


def _problem_view(name: str, terms: list[str], parts: list[_Part],
                  extra: list[_Part] | None = None) -> View:
    """A problem view: a line per part the record states, method-checked; ``extra`` parts
    follow them but never make the view substantive alone."""
    out = _Lines(terms)
    for label, value in parts:
        out.add(label, value)
    substantive = bool(out.lines)
    for label, value in extra or []:
        out.add(label, value)
    return out.view(name, substantive)


def problem_setting(r: MaskedRecord, terms: list[str]) -> View:
    d = r.problem_definition
    key_terms = [f"{t.term}: {t.definition}" for t in r.key_terms]
    return _problem_view("problem_setting", terms, [
        ("Setting", d.setting), ("Inputs", d.inputs), ("Outputs", d.outputs)],
        extra=[("Key terms", key_terms)])


def challenge(r: MaskedRecord, terms: list[str]) -> View:
    c = r.core_problem
    return _problem_view("challenge", terms, [
        ("What fails", c.statement), ("Why it matters", c.why_it_matters),
        ("Failing example", c.failing_example)])


def research_gap(r: MaskedRecord, terms: list[str]) -> View:
    """The gap finder's contrastive form: prior methods do X via Y; Y leaves Z unresolved.
    A line of prior work counts only with what it does and the gap it leaves."""
    out = _Lines(terms)
    for w in r.related_work:
        gap = out.clean(w.open_gap)
        if w.what_it_does and gap:
            out.lines.append(f"{w.sub_area.rstrip('.')}: {_sentence(w.what_it_does)} "
                             f"Left unresolved: {_sentence(gap)}")
    return out.view("research_gap")


def intuition(r: MaskedRecord) -> View:
    k = r.key_novelty
    out = _Lines(None)
    if k.explanation:
        out.lines = ([f"Idea: {k.name.rstrip('.')}."] if k.name else []) + [
            f"- {_sentence(e)}" for e in k.explanation]
    return out.view("intuition")


def proposal(r: MaskedRecord) -> View:
    m, d = r.method, r.model_details
    out = _Lines(None)
    out.add("Thesis", r.thesis)
    out.add("Method", m.flow)
    if m.modules:
        out.add("Modules", [f"{x.name} ({x.role.rstrip('.')})" if x.role else x.name
                                  for x in m.modules])
    out.add("Structural novelties", m.structural_novelties)
    out.add("Design choices", [f"{c.choice.rstrip('.')}, {c.reason}" if c.reason
                                     else c.choice for c in m.design_choices])
    details = [f"base model {d.base_model}" if d.base_model else None,
               f"training: {d.training_method}" if d.training_method else None,
               f"adaptation: {d.adaptation}" if d.adaptation else None]
    if d.objectives:
        details.append("objectives: " + "; ".join(o.rstrip(".") for o in d.objectives))
    details = [x.rstrip(".") for x in details if x]
    if details:
        out.lines.append("Model: " + "; ".join(details) + ".")
    out.add("Theory", m.theory)
    substantive = bool(m.flow or m.modules or m.structural_novelties or m.design_choices)
    return out.view("proposal", substantive=substantive)


def build_all(record: MaskedRecord | dict[str, Any]) -> dict[str, View]:
    """The five views of a record with what the method check dropped from each."""
    if not isinstance(record, MaskedRecord):
        record = MaskedRecord.model_validate(record)
    terms = method_terms(record.model_dump())
    views = [problem_setting(record, terms), challenge(record, terms),
             research_gap(record, terms), intuition(record), proposal(record)]
    return {v.name: v for v in views}


def derive_views(record: MaskedRecord | dict[str, Any]) -> dict[str, str | None]:
    """The five views of a record, by name, in :data:`VIEW_NAMES` order; None where the
    record says nothing substantive for that view."""
    return {name: view.text for name, view in build_all(record).items()}
