"""The one small interface every backend implements: a batch of requests in, a batch of
answers out (same ids, any order). Validation, retries and quarantine live above it."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from vault_pipeline.llm.inputs import PaperInput

if TYPE_CHECKING:
    from vault_pipeline.llm.settings import IdeasSettings


class BackendError(RuntimeError):
    """A backend cannot run at all (not installed, misconfigured): a clear, early error."""


@dataclass(frozen=True)
class Request:
    """One paper to decompose: chat messages for LLM backends, the paper itself for the
    extractive one, the JSON schema the answer must follow."""

    custom_id: str  # the input hash: ties the answer back to its paper and settings
    paper: PaperInput
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any] = field(repr=False)
    schema_name: str = "masked_record"


@dataclass(frozen=True)
class Answer:
    custom_id: str
    text: str | None  # raw answer as produced
    finish_reason: str | None = None  # "stop", "length" (cut off at the token limit), ...
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str | None = None  # why there is no usable text (HTTP error, engine error)
    seconds: float | None = None  # this request's own wall time (HTTP retries included)
    received_at: float | None = None  # epoch seconds it came back: the order of returns


class Backend(abc.ABC):
    name: ClassVar[str]
    uses_prompt: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False  # asking again cannot give another answer
    # its work runs in this process (not a server or engine) and it pickles: each paper is
    # then decomposed in a bounded worker (ideas/isolated.py)
    in_process: ClassVar[bool] = False

    def __init__(self, model: str) -> None:
        self.model = model

    @staticmethod
    def model_of(settings: IdeasSettings, missing: str) -> str:
        """The settings' model, or a :class:`BackendError` saying ``missing`` without one."""
        if not settings.model:
            raise BackendError(missing)
        return settings.model

    @abc.abstractmethod
    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        """Answer every request; a failed request yields an Answer with ``error`` set."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release engines and connections."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
