"""The five views, derived deterministically from a record by :func:`derive_views`: the one
function the index, the datasets and every other consumer call, so the text embedded at
index time and the text built at query time never drift apart."""

from __future__ import annotations

from typing import Any

from .record import MaskedRecord

VIEWS_VERSION = "views/1"
VIEW_NAMES: tuple[str, ...] = ("problem_setting", "challenge", "research_gap", "intuition",
                               "proposal")
NOTHING = "Not stated."


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _items(values: list[str]) -> str:
    return "; ".join(" ".join(v.split()).rstrip(".") for v in values) + "." if values else NOTHING


def problem_setting(r: MaskedRecord) -> str:
    d = r.problem_definition
    lines = [f"Setting: {_sentence(d.setting)}", f"Inputs: {_items(d.inputs)}",
             f"Outputs: {_items(d.outputs)}"]
    if r.key_terms:
        lines.append("Key terms: " + _items([f"{t.term}: {t.definition}"
                                             for t in r.key_terms]))
    return "\n".join(lines)


def challenge(r: MaskedRecord) -> str:
    c = r.core_problem
    return "\n".join([f"What fails: {_sentence(c.statement)}",
                      f"Why it matters: {_sentence(c.why_it_matters)}",
                      f"Failing example: {_sentence(c.failing_example)}"])


def research_gap(r: MaskedRecord) -> str:
    """The gap finder's contrastive form: prior methods do X via Y; Y leaves Z unresolved."""
    if not r.related_work:
        return ("Prior work: not described.\nGap: "
                f"{_sentence(r.core_problem.why_it_matters)}")
    lines = []
    for w in r.related_work:
        lines.append(f"{w.sub_area.rstrip('.')}: {_sentence(w.what_it_does)} "
                     f"Left unresolved: {_sentence(w.open_gap)}")
    return "\n".join(lines)


def intuition(r: MaskedRecord) -> str:
    k = r.key_novelty
    return "\n".join([f"Idea: {k.name.rstrip('.')}."] + [f"- {_sentence(e)}"
                                                         for e in k.explanation])


def proposal(r: MaskedRecord) -> str:
    m, d = r.method, r.model_details
    lines = [f"Thesis: {_sentence(r.thesis)}", f"Method: {_sentence(m.flow)}"]
    if m.modules:
        lines.append("Modules: " + _items([f"{x.name} ({x.role.rstrip('.')})"
                                           for x in m.modules]))
    if m.structural_novelties:
        lines.append(f"Structural novelties: {_items(m.structural_novelties)}")
    if m.design_choices:
        lines.append("Design choices: " + _items([f"{c.choice.rstrip('.')}, {c.reason}"
                                                  for c in m.design_choices]))
    details = [f"base model {d.base_model}" if d.base_model else None,
               f"training: {d.training_method}" if d.training_method else None,
               f"adaptation: {d.adaptation}" if d.adaptation else None]
    if d.objectives:
        details.append("objectives: " + "; ".join(o.rstrip(".") for o in d.objectives))
    details = [x.rstrip(".") for x in details if x]
    if details:
        lines.append("Model: " + "; ".join(details) + ".")
    if m.theory:
        lines.append(f"Theory: {_sentence(m.theory)}")
    return "\n".join(lines)


_BUILDERS = {"problem_setting": problem_setting, "challenge": challenge,
             "research_gap": research_gap, "intuition": intuition, "proposal": proposal}


def derive_views(record: MaskedRecord | dict[str, Any]) -> dict[str, str]:
    """The five views of a record, by name, in :data:`VIEW_NAMES` order."""
    if not isinstance(record, MaskedRecord):
        record = MaskedRecord.model_validate(record)
    return {name: _BUILDERS[name](record) for name in VIEW_NAMES}
