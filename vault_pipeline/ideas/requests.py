"""The ideas stage's requests (one per paper) and the table rows of a batch's outcome: built
here once, for the stage's own loop and for its isolated workers alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vault_pipeline.ideas.backends import Backend
from vault_pipeline.ideas.decompose import BatchOutcome, findings_rows, now
from vault_pipeline.integrity.gate import gate_key
from vault_pipeline.llm.backends.base import Request
from vault_pipeline.llm.inputs import PaperInput, input_hash
from vault_pipeline.llm.prompting import Prompt
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.records.masked import SCHEMA_VERSION, record_json_schema


def build_requests(inputs: Sequence[PaperInput], backend: Backend, prompt: Prompt,
                   settings: IdeasSettings) -> list[Request]:
    prompt_version = prompt.version if backend.uses_prompt else "none"
    schema = record_json_schema()
    settings_key = f"{settings.generation_key()}|{gate_key(settings.llm_judge)}"
    requests = []
    for paper in inputs:
        key = input_hash(paper, backend=backend.name, model=backend.model,
                         prompt_version=prompt_version, schema_version=SCHEMA_VERSION,
                         settings_key=settings_key)
        messages = (prompt.messages(paper.arxiv_id, paper.markdown(settings.max_input_chars))
                    if backend.uses_prompt else [])
        requests.append(Request(key, paper, tuple(messages), schema))
    return requests


def outcome_rows(outcome: BatchOutcome, backend: Backend,
                 prompt_version: str) -> tuple[list[dict], list[dict]]:
    """Table rows of one batch: records and failures."""
    created = now()
    share = max(1, len(outcome.accepted) + len(outcome.rejected))
    tokens = backend.name != "extractive"
    records = []
    for item in outcome.accepted:
        records.append({
            **_provenance(item.request, backend, prompt_version),
            **item.record.model_dump(),
            "schema_version": SCHEMA_VERSION, "attempts": item.attempts,
            "leaky_answer": item.leaky, "masked_findings": findings_rows(item.removed),
            "tokens_in": outcome.tokens_in // share if tokens else None,
            "tokens_out": outcome.tokens_out // share if tokens else None,
            "created_at": created,
        })
    failures = []
    for item in outcome.rejected:
        failures.append({
            **_provenance(item.request, backend, prompt_version),
            "attempts": item.attempts, "reason": item.reasons[-1], "reasons": item.reasons,
            "raw_answer": item.answer.text, "finish_reason": item.answer.finish_reason,
            "failed_at": created,
        })
    return records, failures


def _provenance(request: Request, backend: Backend, prompt_version: str) -> dict[str, Any]:
    return {"arxiv_id": request.paper.arxiv_id, "version": request.paper.version,
            "backend": backend.name,
            "model": backend.model, "prompt_version": prompt_version,
            "input_hash": request.custom_id, "input_source": request.paper.source,
            "input_note": request.paper.note}


def worker_failure_row(request: Request, backend: Backend, prompt_version: str,
                       reason: str) -> dict:
    """The failure row of a paper whose worker timed out, died or could not answer."""
    return {**_provenance(request, backend, prompt_version), "attempts": 1,
            "reason": reason, "reasons": [reason], "raw_answer": None,
            "finish_reason": None, "failed_at": now()}
