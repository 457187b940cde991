"""The gate every record passes, whatever made it: its sentences are judged by each layer,
the findings say which layer found what, and masking drops exactly the flagged sentences.

One :class:`Gate` per paper (it carries that paper's results context and its method's
names); :class:`FieldPolicy` says how a kind of record is read (which fields are
bibliographic, which are predictions, which are problem fields that must not state the
solution), so the masked record and the evaluation sets' six-part idea share this code."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from vault_pipeline.integrity import classifier
from vault_pipeline.integrity.leaks import Finding, check_sentence, sentences
from vault_pipeline.integrity.method import method_leaks, method_terms
from vault_pipeline.integrity.source import EMPTY, ResultsContext, results_context
from vault_pipeline.llm.injection import looks_like_instruction
from vault_pipeline.llm.inputs import PaperInput

Flagged = list[tuple[str, Finding]]  # (field path, finding)


@dataclass(frozen=True)
class FieldPolicy:
    unchecked: re.Pattern[str]  # bibliographic paths: not the paper's claims
    planning: re.Pattern[str]  # predictions and refutations: read in planning voice
    problem: re.Pattern[str]  # problem paths: must not state the solution or name it


NEVER = re.compile(r"(?!x)x")
MASKED_RECORD = FieldPolicy(re.compile(r"^(?:references|title)\b"),
                            re.compile(r"^falsifiable_predictions\b"),
                            re.compile(r"^(?:core_problem|problem_definition)\b"))
# A derived text (a view, a training reference): every sentence read as it stands.
PLAIN_TEXT = FieldPolicy(NEVER, NEVER, NEVER)


def iter_texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) for every string in a record dict, e.g. `related_work[0].open_gap`.
    A hyperparameter is one text, `name value`, so the checker sees its name."""
    if isinstance(value, dict):
        if set(value) == {"name", "value"}:
            yield path, f"{value['name']} {value['value']}"
            return
        for key, item in value.items():
            yield from iter_texts(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from iter_texts(item, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


@dataclass
class Gate:
    policy: FieldPolicy = MASKED_RECORD
    context: ResultsContext = EMPTY  # the paper's own results
    judge: classifier.SentenceJudge | None = None  # the offline judge, for offline backends
    terms: tuple[str, ...] = ()  # extra method names (the record's own are always used)

    def sentence_units(self, data: dict[str, Any]) -> list[tuple[str, str, bool]]:
        """(path, sentence, planning) for every checked sentence of a record dict."""
        out = []
        for path, text in iter_texts(data):
            if self.policy.unchecked.match(path):
                continue
            planning = bool(self.policy.planning.match(path))
            out.extend((path, s, planning) for s in sentences(text))
        return out

    def findings(self, data: dict[str, Any]) -> Flagged:
        """Every flagged sentence of a record dict, with the layer that flagged it."""
        units = self.sentence_units(data)
        terms = [*method_terms(data), *self.terms]
        found: Flagged = []
        clear: list[int] = []
        for i, (path, sentence, planning) in enumerate(units):
            hits = check_sentence(sentence, planning) + self.context.findings(sentence)
            if looks_like_instruction(sentence):
                hits.append(Finding("instruction", sentence[:120], sentence))
            if self.policy.problem.match(path):
                hits += method_leaks(sentence, terms)
            found.extend((path, f) for f in hits)
            if not hits:
                clear.append(i)
        if self.judge is not None and clear:
            flags = self.judge.flags([units[i][1] for i in clear])
            found.extend((units[i][0], Finding("judge_result", units[i][1][:120],
                                               units[i][1], "judge"))
                         for i, hit in zip(clear, flags, strict=True) if hit)
        return found

    def mask(self, data: dict[str, Any], extra: Iterable[tuple[str, Finding]] = ()
             ) -> tuple[dict[str, Any], Flagged]:
        """``data`` without every flagged sentence (and ``extra`` ones, e.g. an LLM judge's);
        a text left empty becomes None, a list drops it. Repeated until nothing is
        flagged, since joining kept sentences can form a new one."""
        removed: Flagged = list(extra)
        masked = _drop(data, "", {(p, f.sentence) for p, f in removed})
        for _ in range(3):
            flagged = self.findings(masked)
            if not flagged:
                break
            removed.extend(flagged)
            masked = _drop(masked, "", {(p, f.sentence) for p, f in flagged})
        return masked, removed


def _drop(value: Any, path: str, drop: set[tuple[str, str]]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"name", "value"}:
            return None if (path, f"{value['name']} {value['value']}") in drop else value
        return {k: _drop(v, f"{path}.{k}" if path else k, drop) for k, v in value.items()}
    if isinstance(value, list):
        items = [_drop(v, f"{path}[{i}]", drop) for i, v in enumerate(value)]
        return [v for v in items if v not in (None, "")]
    if isinstance(value, str):
        lines, changed = [], False
        for line in value.splitlines():
            parts = sentences(line)
            kept = [s for s in parts if (path, s) not in drop]
            changed |= len(kept) != len(parts)
            if kept:
                lines.append(" ".join(kept))
        return ("\n".join(lines) or None) if changed else value
    return value


def gate_key(llm_judge: bool) -> str:
    """What of the gate decides an accepted answer: part of every input hash, so that a new
    rule set, gate or judge model judges the answers again."""
    from vault_pipeline.integrity import GATE_VERSION, JUDGE_PROMPT, roles
    from vault_pipeline.integrity.leaks import RULESET_VERSION

    judge = classifier.load()
    role_model = roles.load()
    return (f"{RULESET_VERSION}|{GATE_VERSION}|{judge.version if judge else 'no-judge'}"
            f"|{role_model.version if role_model else 'no-roles'}"
            f"|llm_judge={JUDGE_PROMPT if llm_judge else False}")


def paper_gate(paper: PaperInput, policy: FieldPolicy = MASKED_RECORD,
               offline_judge: bool = False) -> Gate:
    """The gate of records made from ``paper``: with its results context, and the offline
    judge when no LLM judges (an LLM backend's judge layer is the LLM pass instead)."""
    judge = classifier.load()
    context = results_context(paper, judge.flags if judge else None)
    return Gate(policy, context, judge if offline_judge else None)


def text_findings(text: str | None, gate: Gate | None = None) -> list[Finding]:
    """Findings in one derived text (a view, a reference), every sentence as it stands."""
    if not text:
        return []
    gate = gate or Gate(PLAIN_TEXT)
    return [f for _, f in gate.findings({"text": text})]


def mask_plain(text: str | None, gate: Gate | None = None) -> tuple[str | None, list[Finding]]:
    """``text`` without its flagged sentences (None when nothing is left)."""
    if not text:
        return None, []
    gate = gate or Gate(PLAIN_TEXT)
    masked, removed = gate.mask({"text": text})
    return masked["text"], [f for _, f in removed]
