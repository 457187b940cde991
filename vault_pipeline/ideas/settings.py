"""Settings of the ideas stage, resolved like every stage's (:mod:`vault_pipeline.config`):
defaults, `[ideas]` in `vault.toml`, `VAULT_IDEAS_<FIELD>`, the run config. The backend is one
value (`backend`). The API key is read from the environment variable named by `api_key_env`,
never from config or files."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import config
from ..isolation import PoolSettings

STAGE = "ideas"


@dataclass(frozen=True)
class IdeasSettings:
    backend: str = "extractive"
    model: str | None = None  # default per backend: extractive → its rule version
    prompt: str = "decompose.v2"
    # OpenAI-compatible endpoint
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    timeout_s: float = 300.0
    http_retries: int = 5
    backoff_s: float = 1.0
    strict_schema: bool = True
    # generation
    max_tokens: int = 8192
    temperature: float = 0.2
    top_p: float = 0.95
    seed: int | None = 0
    max_input_chars: int = 30_000
    # vLLM offline engine arguments, as JSON (e.g. {"tensor_parallel_size": 2})
    vllm_engine_args: dict[str, Any] = field(default_factory=dict)
    # validation and work
    max_retries: int = 2  # re-asks after an invalid or leaky answer
    llm_judge: bool = True  # LLM backends: a judge pass over each record's sentences
    batch_size: int = 64
    retry_failures: bool = False  # re-run papers quarantined with the same inputs
    batch_output: str | None = None  # batch_file backend: a `vllm run-batch` output file
    # bounded workers of in-process backends (extractive): one paper per task
    workers: int = 0  # 0: one per core
    paper_timeout_s: float = 300.0  # a paper past it is killed and quarantined
    memory_mb: int = 2048  # address-space cap of each worker; 0: no cap

    @classmethod
    def resolve(cls, overrides: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None,
                home: Path | None = None) -> IdeasSettings:
        """Run config value if set, else the lower layers (see the module docstring)."""
        return config.resolve(cls, STAGE, home=home, run_config=overrides, environ=environ)

    def generation_key(self) -> str:
        """What changes an LLM's answer besides model and prompt: part of the input hash."""
        if self.backend == "extractive":
            return ""
        return json.dumps({"max_tokens": self.max_tokens, "temperature": self.temperature,
                           "top_p": self.top_p, "seed": self.seed,
                           "max_input_chars": self.max_input_chars}, sort_keys=True)

    def pool(self) -> PoolSettings:
        """The isolated pool one paper's decomposition runs in (ideas/isolated.py)."""
        return PoolSettings(workers=self.workers, timeout_s=self.paper_timeout_s,
                            memory_mb=self.memory_mb or None)

    def replace(self, **changes: Any) -> IdeasSettings:
        return dataclasses.replace(self, **changes)
