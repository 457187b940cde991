"""Any ideas backend on a distributed executor: the batch driver (``run_batch``) stays on
the driver and hands each round's requests to the executor, whose actors each build the
configured backend once (a vLLM engine per GPU actor, an HTTP client, the extractive
rules) and call its ``generate``: the same function the local path calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vault_pipeline.executors import Executor
from vault_pipeline.llm.backends.base import Answer, Backend, Request
from vault_pipeline.llm.settings import IdeasSettings


def in_order(answers: Sequence[Answer], requests: Sequence[Request]) -> list[Answer]:
    """One answer per request, in the requests' order; a missing one says so."""
    by_id = {a.custom_id: a for a in answers}
    return [by_id.get(r.custom_id) or Answer(r.custom_id, None, error="the backend returned "
                                             "no answer for this request") for r in requests]


@dataclass(frozen=True)
class GenerateOn:
    """Built once per actor: the configured backend's ``generate``."""

    settings: IdeasSettings

    def __call__(self) -> Callable[[list[Request]], list[Answer]]:
        from vault_pipeline.ideas.backends import make_backend

        backend = make_backend(self.settings)
        return lambda requests: in_order(backend.generate(requests), requests)


class DistributedBackend(Backend):
    """Looks like ``inner`` (name, model, prompt use, determinism: the input hashes and
    provenance do not change with the executor) but generates on the executor's actors;
    ``inner`` itself never generates (vLLM loads its engine on first use only)."""

    def __init__(self, inner: Backend, settings: IdeasSettings, executor: Executor) -> None:
        super().__init__(inner.model)
        self.name = inner.name  # type: ignore[misc]
        self.uses_prompt = inner.uses_prompt  # type: ignore[misc]
        self.deterministic = inner.deterministic  # type: ignore[misc]
        self.settings = settings
        self.executor = executor

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        answers = [a for _, a in self.executor.map_model(GenerateOn(self.settings),
                                                         list(requests))]
        return in_order(answers, requests)
