"""`vllm`: the offline `vllm.LLM` engine on a GPU, one batched `chat` call per batch, every
answer constrained to the record's JSON schema (structured outputs:
`SamplingParams(structured_outputs=StructuredOutputsParams(json=schema))`). vLLM is an
optional extra, imported only when this backend is chosen."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from vault_pipeline.llm.backends.base import Answer, Backend, BackendError, Request
from vault_pipeline.llm.settings import IdeasSettings

INSTALL_HINT = ("the vllm backend needs vLLM, which is not installed: "
                "pip install 'research-idea-vault[vllm]' on a machine with a supported GPU, "
                "or choose backend=openai (a `vllm serve` endpoint) or extractive")


def require_vllm() -> None:
    if importlib.util.find_spec("vllm") is None:
        raise BackendError(INSTALL_HINT)


class VLLMBackend(Backend):
    name = "vllm"

    def __init__(self, model: str, *, engine_args: dict[str, Any] | None = None,
                 max_tokens: int = 8192, temperature: float = 0.2, top_p: float = 0.95,
                 seed: int | None = 0) -> None:
        require_vllm()
        super().__init__(model)
        self.engine_args = dict(engine_args or {})
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.seed = seed
        self._llm: Any = None

    @classmethod
    def from_settings(cls, settings: IdeasSettings) -> VLLMBackend:
        model = cls.model_of(settings, "the vllm backend needs a model (a Hugging Face id or a "
                                       "local path): set `model` or VAULT_IDEAS_MODEL")
        return cls(model, engine_args=settings.vllm_engine_args, **settings.sampling())

    def _engine(self) -> Any:
        if self._llm is None:
            from vllm import LLM

            self._llm = LLM(model=self.model, **self.engine_args)
        return self._llm

    def sampling_params(self, request: Request) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        return SamplingParams(max_tokens=self.max_tokens, temperature=self.temperature,
                              top_p=self.top_p, seed=self.seed,
                              structured_outputs=StructuredOutputsParams(json=request.schema))

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        if not requests:
            return []
        llm = self._engine()
        try:
            outputs = llm.chat([list(r.messages) for r in requests],
                               sampling_params=[self.sampling_params(r) for r in requests],
                               use_tqdm=False)
        except Exception as exc:  # noqa: BLE001 - the engine's errors vary; keep the batch
            return [Answer(r.custom_id, None, None, error=f"vLLM engine error: {exc}")
                    for r in requests]
        answers = []
        for request, output in zip(requests, outputs, strict=True):
            completion = output.outputs[0]
            answers.append(Answer(request.custom_id, completion.text, completion.finish_reason,
                                  len(output.prompt_token_ids or []),
                                  len(completion.token_ids or [])))
        return answers

    def close(self) -> None:
        self._llm = None
