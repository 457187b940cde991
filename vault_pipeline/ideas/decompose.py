"""One batch of papers through a backend: ask, judge through the integrity gate, re-ask with
the reason (up to `max_retries`; a request that got no answer at all, a transport error, is
asked again as it was), mask a leaky answer that has no retries left, quarantine the rest.
The record model defaults to the masked record; the evaluation sets pass their six-part idea
record (and its field policy, through their gates)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from vault_pipeline.ideas.validate import Verdict, describe_leaks, judge, mask_record
from vault_pipeline.integrity.gate import Flagged, Gate, paper_gate
from vault_pipeline.integrity.leaks import Finding
from vault_pipeline.llm.backends.base import Answer, Backend, Request
from vault_pipeline.llm.prompting import Prompt
from vault_pipeline.records.masked import MaskedRecord

# The gate of one request (its paper's results context, the offline judge).
GateFor = Callable[[Request], Gate]
# A second opinion on a round's accepted records: flagged sentences by request id.
SecondOpinion = Callable[[Sequence[tuple[Request, dict[str, Any], Gate]]], dict[str, Flagged]]


@dataclass
class Accepted:
    request: Request
    record: BaseModel  # a MaskedRecord unless the batch was judged with another model
    attempts: int
    removed: list[tuple[str, Finding]]  # what masking took out of the final answer
    leaky: bool  # some answer for this paper stated a result (then retried or masked)


@dataclass
class Rejected:
    request: Request
    attempts: int
    reasons: list[str]
    answer: Answer
    leaky: bool = False  # some answer for this paper stated a result


@dataclass
class BatchOutcome:
    accepted: list[Accepted] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0


def run_batch(backend: Backend, requests: Sequence[Request], prompt: Prompt,
              max_retries: int, gate_for: GateFor | None = None,
              model: type[BaseModel] = MaskedRecord,
              second_opinion: SecondOpinion | None = None) -> BatchOutcome:
    """Every request ends accepted or rejected, none dropped. Each answer is judged by the
    gate of its paper, then (with an LLM backend) by ``second_opinion``; a leaky answer is
    asked again with the reason, then masked, then quarantined."""
    outcome = BatchOutcome()
    rounds = 1 if backend.deterministic else 1 + max(0, max_retries)
    pending = {r.custom_id: r for r in requests}
    original = {r.custom_id: r for r in requests}
    gate_for = gate_for or (lambda r: paper_gate(r.paper))
    gates = {key: gate_for(r) for key, r in original.items()}
    attempts = dict.fromkeys(pending, 0)
    reasons: dict[str, list[str]] = {k: [] for k in pending}
    leaky: set[str] = set()
    for round_ in range(rounds):
        if not pending:
            break
        asked = list(pending.values())
        answers = {a.custom_id: a for a in backend.generate(asked)}
        last = round_ == rounds - 1
        verdicts = {}
        for request in asked:
            key = request.custom_id
            answer = answers.get(key) or Answer(key, None, error="the backend returned no "
                                                "answer for this request")
            answers[key] = answer
            attempts[key] += 1
            outcome.tokens_in += answer.tokens_in or 0
            outcome.tokens_out += answer.tokens_out or 0
            verdicts[key] = judge(answer, gates[key], model)
        if second_opinion is not None:  # the judge reads every schema-valid answer
            valid = {k: v.record.model_dump() if v.record is not None else v.data
                     for k, v in verdicts.items() if v.ok or v.data is not None}
            judged = second_opinion([(original[k], d, gates[k]) for k, d in valid.items()])
            for key, hits in judged.items():
                leaks = [*verdicts[key].leaks, *hits]
                verdicts[key] = Verdict(None, describe_leaks(leaks), leaks, valid[key])
        for request in asked:
            key = request.custom_id
            verdict, answer = verdicts[key], answers[key]
            if verdict.ok:
                assert verdict.record is not None
                outcome.accepted.append(Accepted(original[key], verdict.record,
                                                 attempts[key], [], key in leaky))
                del pending[key]
                continue
            reasons[key].append(verdict.reason or "rejected")
            if verdict.leaks:
                leaky.add(key)
            if last:
                if verdict.data is not None:
                    # every layer's findings on this answer, the LLM judge's included
                    record, removed, why = mask_record(verdict.data, gates[key], model,
                                                       verdict.leaks)
                    if record is not None:
                        outcome.accepted.append(Accepted(original[key], record, attempts[key],
                                                         removed, True))
                        del pending[key]
                        continue
                    reasons[key].append(why or "masking failed")
                outcome.rejected.append(Rejected(original[key], attempts[key], reasons[key],
                                                 answer, key in leaky))
                del pending[key]
            elif answer.text is None:
                # no answer at all (HTTP 5xx, timeout, connection error, an engine error):
                # the same request again; the repair prompt is for answers that were wrong
                pending[key] = original[key]
            else:
                messages = prompt.repair_messages(list(original[key].messages),
                                                  answer.text or "", verdict.reason or "")
                pending[key] = Request(key, request.paper, tuple(messages), request.schema,
                                       request.schema_name)
    return outcome


def now() -> datetime:
    return datetime.now(UTC)


def findings_rows(removed: list[tuple[str, Finding]]) -> list[dict[str, Any]]:
    return [{"field": path, "kind": f.kind, "match": f.match, "layer": f.layer}
            for path, f in removed]
