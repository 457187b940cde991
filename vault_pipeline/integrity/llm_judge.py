"""The judge layer with an LLM backend: one batched, JSON-schema-constrained pass over the
sentences of every record a round accepted, through the same backend that wrote them
(prompt `judge.v2`). A sentence labelled an observed outcome is a finding of layer `judge`;
the record is then asked again with the reason, or masked, like any other leak.

An unusable judge answer (an error, invalid JSON, missing verdicts) flags nothing and is
counted in :attr:`LLMJudge.errors`: the deterministic layers and the offline judge have
already passed the record, and the count is in the integrity report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from vault_pipeline.integrity import JUDGE_PROMPT
from vault_pipeline.integrity.gate import Flagged, Gate
from vault_pipeline.integrity.leaks import Finding
from vault_pipeline.llm.backends.base import Backend, Request
from vault_pipeline.llm.prompting import Prompt, load_prompt

PROMPT = JUDGE_PROMPT
SCHEMA_NAME = "sentence_verdicts"
OUTCOME = "observed_outcome"
LABELS = [OUTCOME, "plan", "hypothesis", "mechanism", "setup", "other"]
SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["verdicts"],
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["id", "label"],
        "properties": {"id": {"type": "integer"}, "label": {"type": "string",
                                                            "enum": LABELS}}}}},
}


class LLMJudge:
    """Labels the sentences of records through ``backend``; callable on a round's
    accepted (request, record dict, gate) triples, returning flagged sentences by request."""

    def __init__(self, backend: Backend, prompt: Prompt | None = None) -> None:
        self.backend = backend
        self.prompt = prompt or load_prompt(PROMPT)
        self.calls = 0
        self.errors = 0
        self.flagged = 0

    def requests(self, items: Sequence[tuple[Request, dict[str, Any], Gate]]
                 ) -> tuple[list[Request], dict[str, list[tuple[str, str]]]]:
        out, units = [], {}
        for request, data, gate in items:
            listed = [(path, s) for path, s, _ in gate.sentence_units(data)]
            key = f"judge:{request.custom_id}"
            units[key] = listed
            numbered = "\n".join(f"{i}. [{path}] {s}" for i, (path, s) in
                                 enumerate(listed, 1))
            messages = self.prompt.messages(request.paper.arxiv_id, numbered)
            out.append(Request(key, request.paper, tuple(messages), SCHEMA, SCHEMA_NAME))
        return out, units

    def __call__(self, items: Sequence[tuple[Request, dict[str, Any], Gate]]
                 ) -> dict[str, Flagged]:
        if not items:
            return {}
        requests, units = self.requests(items)
        self.calls += len(requests)
        answers = {a.custom_id: a for a in self.backend.generate(requests)}
        out: dict[str, Flagged] = {}
        for request, _, _ in items:
            key = f"judge:{request.custom_id}"
            labels = _labels(answers.get(key))
            if labels is None:
                self.errors += 1
                continue
            hits = [(path, Finding("judge_outcome", s[:120], s, "judge"))
                    for i, (path, s) in enumerate(units[key], 1) if labels.get(i) == OUTCOME]
            self.flagged += len(hits)
            if hits:
                out[request.custom_id] = hits
        return out


def _labels(answer: Any) -> dict[int, str] | None:
    if answer is None or answer.error or not answer.text:
        return None
    try:
        data = json.loads(answer.text)
        return {int(v["id"]): str(v["label"]) for v in data["verdicts"]}
    except (ValueError, KeyError, TypeError):
        return None


def judge_for(backend: Backend, enabled: bool = True) -> LLMJudge | None:
    """The LLM judge of a run, when its backend can answer new requests (an OpenAI-compatible
    server, a vLLM engine); None for the extractive backend and for answers read back from a
    batch file, whose records the offline judge reads instead."""
    if enabled and backend.uses_prompt and not backend.deterministic:
        return LLMJudge(backend)
    return None
