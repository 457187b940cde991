"""The OpenAI batch JSONL format, as `vllm run-batch` reads and writes it: one request per
line (`custom_id`, `method`, `url`, `body`) in, one `{id, custom_id, response: {status_code,
request_id, body}, error}` per line out. Lets a GPU job answer a whole stage offline; the
`batch_file` backend then reads the answers back by `custom_id` (the input hash)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from vault_pipeline.llm.backends.base import Answer, Backend, BackendError, Request
from vault_pipeline.llm.backends.openai_compat import OpenAICompatBackend, answer_from_completion
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.store.atomic import atomic_path

CHAT_URL = "/v1/chat/completions"


def batch_lines(requests: Iterable[Request], client: OpenAICompatBackend) -> Iterable[str]:
    for request in requests:
        yield json.dumps({"custom_id": request.custom_id, "method": "POST", "url": CHAT_URL,
                          "body": client.body(request)}, ensure_ascii=False)


def write_batch_input(requests: Sequence[Request], path: Path,
                      client: OpenAICompatBackend) -> int:
    """Write the requests as a batch input file, atomically; return how many."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        count = 0
        for line in batch_lines(requests, client):
            out.write(line + "\n")
            count += 1
    return count


def read_batch_output(path: Path) -> dict[str, Answer]:
    """Answers of a batch output file by custom_id; a bad line becomes an error answer."""
    answers: dict[str, Answer] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                custom_id = item["custom_id"]
            except (ValueError, KeyError, TypeError) as exc:
                raise BackendError(f"{path}:{number}: not a batch output line ({exc})") from None
            response = item.get("response") or {}
            status = response.get("status_code")
            if item.get("error") or status != 200 or not response.get("body"):
                reason = item.get("error") or f"status {status}"
                answers[custom_id] = Answer(custom_id, None, None,
                                            error=f"batch request failed: {reason}")
            else:
                answers[custom_id] = answer_from_completion(custom_id, response["body"])
    return answers


class BatchFileBackend(Backend):
    """Answers from a batch output file; a request missing from it is an error answer."""

    name = "batch_file"
    deterministic = True

    def __init__(self, model: str, output: Path) -> None:
        super().__init__(model)
        if not output.is_file():
            raise BackendError(f"batch output file not found: {output}")
        self.answers = read_batch_output(output)

    @classmethod
    def from_settings(cls, settings: IdeasSettings) -> BatchFileBackend:
        if not settings.model or not settings.batch_output:
            raise BackendError("the batch_file backend needs `model` (the model that "
                               "answered) and `batch_output` (the output JSONL file)")
        return cls(settings.model, Path(settings.batch_output))

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        return [self.answers.get(r.custom_id) or Answer(
            r.custom_id, None, None, error="no answer in the batch output file")
            for r in requests]
