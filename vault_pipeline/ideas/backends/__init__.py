"""Backends of the ideas stage, chosen by name; heavy ones are imported only when chosen."""

from __future__ import annotations

from vault_pipeline.llm.backends.base import Answer, Backend, BackendError, Request
from vault_pipeline.llm.settings import IdeasSettings

BACKENDS = ("extractive", "openai", "vllm", "batch_file")


def make_backend(settings: IdeasSettings) -> Backend:
    """The backend named by ``settings.backend``, configured from the same settings."""
    if settings.backend == "extractive":
        from vault_pipeline.ideas.backends.extractive import ExtractiveBackend

        return ExtractiveBackend(settings.model)
    if settings.backend == "openai":
        from vault_pipeline.llm.backends.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend.from_settings(settings)
    if settings.backend == "vllm":
        from vault_pipeline.llm.backends.vllm_offline import VLLMBackend

        return VLLMBackend.from_settings(settings)
    if settings.backend == "batch_file":
        from vault_pipeline.llm.backends.batch_jsonl import BatchFileBackend

        return BatchFileBackend.from_settings(settings)
    raise BackendError(f"unknown ideas backend {settings.backend!r}; choose one of "
                       f"{', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "Answer", "Backend", "BackendError", "Request", "make_backend"]
