"""`openai`: any OpenAI-compatible chat-completions endpoint (`vllm serve`, a hosted API).

Requests go out concurrently (bounded), each with a timeout, a JSON-schema response format,
and retries with exponential backoff on 408/409/429/5xx and transport errors, honouring
`Retry-After`. httpx does the HTTP; the retry loop is a few lines here because it must read
`Retry-After` and tell retryable statuses from final ones, which a generic retry decorator
would need the same code for."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx

from vault_pipeline.llm.backends.base import Answer, Backend, BackendError, Request
from vault_pipeline.llm.settings import IdeasSettings

_RETRYABLE = {408, 409, 429}


def response_format(request: Request, strict: bool) -> dict[str, Any]:
    return {"type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.schema,
                            "strict": strict}}


def answer_from_completion(custom_id: str, body: Any) -> Answer:
    """An Answer from a chat-completion body (HTTP response or batch output line)."""
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"]
        usage = body.get("usage") or {}
        return Answer(custom_id, text, choice.get("finish_reason"),
                      usage.get("prompt_tokens"), usage.get("completion_tokens"))
    except (KeyError, IndexError, TypeError) as exc:
        return Answer(custom_id, None, None,
                      error=f"malformed chat completion ({type(exc).__name__}: {exc})")


class OpenAICompatBackend(Backend):
    name = "openai"

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None,
                 concurrency: int = 8, timeout_s: float = 300.0, http_retries: int = 5,
                 backoff_s: float = 1.0, max_tokens: int = 8192, temperature: float = 0.2,
                 top_p: float = 0.95, seed: int | None = 0, strict_schema: bool = True,
                 max_backoff_s: float = 60.0) -> None:
        super().__init__(model)
        if concurrency < 1:
            raise BackendError("concurrency must be at least 1")
        self.base_url = base_url.rstrip("/") + "/"
        self.api_key = api_key
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.http_retries = http_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.seed = seed
        self.strict_schema = strict_schema

    @classmethod
    def from_settings(cls, settings: IdeasSettings) -> OpenAICompatBackend:
        model = cls.model_of(settings, "the openai backend needs a model name: set `model` in "
                                       "the ideas config or VAULT_IDEAS_MODEL")
        return cls(model, base_url=settings.base_url, api_key=os.environ.get(settings.api_key_env),
                   concurrency=settings.concurrency, timeout_s=settings.timeout_s,
                   http_retries=settings.http_retries, backoff_s=settings.backoff_s,
                   strict_schema=settings.strict_schema, **settings.sampling())

    def body(self, request: Request) -> dict[str, Any]:
        """The chat-completions request body (also one line of a batch input file)."""
        body: dict[str, Any] = {
            "model": self.model, "messages": list(request.messages),
            "max_tokens": self.max_tokens, "temperature": self.temperature,
            "top_p": self.top_p,
            "response_format": response_format(request, self.strict_schema),
        }
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        if not requests:
            return []
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._run(requests))
        # Called from inside an event loop: run ours on a thread of its own.
        box: list[list[Answer]] = []
        thread = threading.Thread(target=lambda: box.append(asyncio.run(self._run(requests))))
        thread.start()
        thread.join()
        return box[0]

    async def _run(self, requests: Sequence[Request]) -> list[Answer]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        limits = httpx.Limits(max_connections=self.concurrency)
        semaphore = asyncio.Semaphore(self.concurrency)
        async with httpx.AsyncClient(base_url=self.base_url, headers=headers, limits=limits,
                                     timeout=self.timeout_s) as client:
            async def bounded(request: Request) -> Answer:
                async with semaphore:
                    started = time.perf_counter()
                    answer = await self._one(client, request)
                    return dataclasses.replace(answer,
                                               seconds=time.perf_counter() - started,
                                               received_at=time.time())

            return list(await asyncio.gather(*(bounded(r) for r in requests)))

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.max_backoff_s)
            except ValueError:
                pass
        base = self.backoff_s * (2 ** attempt)
        return min(base + random.uniform(0, self.backoff_s), self.max_backoff_s)

    async def _one(self, client: httpx.AsyncClient, request: Request) -> Answer:
        body = self.body(request)
        last = "no attempt made"
        for attempt in range(self.http_retries + 1):
            retry_after = None
            try:
                response = await client.post("chat/completions", json=body)
            except httpx.TimeoutException as exc:
                last = f"timeout after {self.timeout_s:g}s ({type(exc).__name__})"
            except httpx.TransportError as exc:
                last = f"transport error: {type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        payload = response.json()
                    except ValueError:
                        return Answer(request.custom_id, None, None,
                                      error=f"HTTP 200 with a body that is not JSON: "
                                            f"{response.text[:200]!r}")
                    return answer_from_completion(request.custom_id, payload)
                last = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in _RETRYABLE and response.status_code < 500:
                    return Answer(request.custom_id, None, None, error=last)
                retry_after = response.headers.get("retry-after")
            if attempt < self.http_retries:
                await asyncio.sleep(self._delay(attempt, retry_after))
        return Answer(request.custom_id, None, None,
                      error=f"gave up after {self.http_retries + 1} attempts; last: {last}")
