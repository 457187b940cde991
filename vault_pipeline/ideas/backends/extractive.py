"""`extractive`: the offline CPU default. No model weights: the record is filled from the
paper's own sentences (:mod:`vault_pipeline.ideas.extractive`), deterministically; a request
for a summary (schema `eval_summary_<kind>`, the evaluation runs' summary inputs) is answered
with the paper's own sentences too (:mod:`vault_pipeline.ideas.extractive_summary`)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from vault_pipeline.ideas import extractive, extractive_summary
from vault_pipeline.llm.backends.base import Answer, Backend, Request

SUMMARY_SCHEMA = "eval_summary_"  # + kind: what the evaluation runs' summaries ask for


class ExtractiveBackend(Backend):
    name = "extractive"
    uses_prompt = False
    deterministic = True
    in_process = True

    def __init__(self, model: str | None = None) -> None:
        super().__init__(model or extractive.VERSION)

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        answers = []
        for request in requests:
            try:
                if request.schema_name.startswith(SUMMARY_SCHEMA):
                    kind = request.schema_name.removeprefix(SUMMARY_SCHEMA)
                    record = extractive_summary.summarize(kind, request.paper)
                else:
                    record, _masked = extractive.decompose(request.paper)
            except Exception as exc:  # noqa: BLE001 - one paper's failure is quarantined
                answers.append(Answer(request.custom_id, None, "error",
                                      error=f"extractive {request.schema_name} failed: {exc}"))
                continue
            answers.append(Answer(request.custom_id, json.dumps(record, ensure_ascii=False),
                                  "stop"))
        return answers
