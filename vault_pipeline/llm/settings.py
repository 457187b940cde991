"""Settings of the ideas stage, resolved like every stage's
(:mod:`vault_pipeline.pipeline.settings`):
defaults, `[ideas]` in `vault.toml`, `VAULT_IDEAS_<FIELD>`, the run config. The backend is one
value (`backend`). The API key is read from the environment variable named by `api_key_env`,
never from config or files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from vault_pipeline.executors.isolation import PoolSettings
from vault_pipeline.pipeline.settings import StageSettings

STAGE = "ideas"
# Papers a worker of the isolated pool decomposes before it is replaced. Starting one (the
# interpreter, the imports, the offline judge's warm-up) costs about 1.3 CPU s: at the
# pool's default of 100 items that was half the stage's CPU (36.9 against 18.6 ms a paper,
# the same tables: benchmarks/bench_ideas_workers.py); the pool's memory cap and per-paper
# timeout hold either way.
WORKER_PAPERS = 1000


@dataclass(frozen=True)
class IdeasSettings(StageSettings):
    SECTION = STAGE

    backend: str = "extractive"
    """Who decomposes papers: `extractive` (offline rules), `openai` (any OpenAI-compatible server),
    `vllm` (offline engine) or `batch_file`."""
    model: str | None = None  # default per backend: extractive → its rule version
    """Model name for the backend; unset: the backend's default (extractive: its rule version)."""
    prompt: str = "decompose.v2"
    """Prompt file of the decomposition (under ideas/prompts, without `.md`)."""
    # OpenAI-compatible endpoint
    base_url: str = "http://127.0.0.1:8000/v1"
    """OpenAI-compatible endpoint of the `openai` backend."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the API key (never read from config or files)."""
    concurrency: int = 8
    """Requests in flight at once to the endpoint."""
    timeout_s: float = 300.0
    """Seconds one request may take."""
    http_retries: int = 5
    """Retries of a request after a transient HTTP failure."""
    backoff_s: float = 1.0
    """First wait between retries, in seconds, doubled each time."""
    strict_schema: bool = True
    """Ask the server for JSON constrained to the record schema."""
    # generation
    max_tokens: int = 8192
    """Most tokens the model may generate per paper."""
    temperature: float = 0.2
    """Sampling temperature."""
    top_p: float = 0.95
    """Nucleus sampling mass."""
    seed: int | None = 0
    """Sampling seed passed to the model (unset: none)."""
    max_input_chars: int = 30_000
    """Characters of a paper's text sent to the model."""
    # vLLM offline engine arguments, as JSON (e.g. {"tensor_parallel_size": 2})
    vllm_engine_args: dict[str, Any] = field(default_factory=dict)
    """vLLM engine arguments as JSON, e.g. {"tensor_parallel_size": 2}."""
    # validation and work
    max_retries: int = 2  # re-asks after an invalid or leaky answer
    """Re-asks after an invalid or leaky answer before the paper is quarantined."""
    llm_judge: bool = True  # LLM backends: a judge pass over each record's sentences
    """LLM backends: a judge pass over each record's sentences for leaked results."""
    batch_size: int = 64
    """Papers per batch (one journal entry each)."""
    retry_failures: bool = False  # re-run papers quarantined with the same inputs
    """Run again the papers quarantined with the same inputs."""
    batch_output: str | None = None  # batch_file backend: a `vllm run-batch` output file
    """`batch_file` backend: the output file of a `vllm run-batch`."""
    # bounded workers of in-process backends (extractive): one paper per task
    workers: int = 0  # 0: one per core
    """Workers of the in-process (extractive) backend, one paper per task; 0: one per core."""
    paper_timeout_s: float = 300.0  # a paper past it is killed and quarantined
    """Seconds a paper may take in its worker before it is killed and quarantined."""
    worker_threads: int = 0  # 0: each worker's share of the cores
    """Threads each worker's models may use (ONNX Runtime, BLAS); 0: the cores divided
    among the workers, as more threads than cores made the stage 1.5 times slower."""
    memory_mb: int = 2048  # 0: no cap
    """Address space in MB one paper may add to its warmed-up worker (models loaded); 0: no
    cap."""

    def generation_key(self) -> str:
        """What changes an LLM's answer besides model and prompt: part of the input hash."""
        if self.backend == "extractive":
            return ""
        return json.dumps({**self.sampling(), "max_input_chars": self.max_input_chars},
                          sort_keys=True)

    def sampling(self) -> dict[str, Any]:
        """How an LLM backend samples its answers (the `openai` and `vllm` backends' arguments)."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature,
                "top_p": self.top_p, "seed": self.seed}

    def pool(self) -> PoolSettings:
        """The isolated pool one paper's decomposition runs in (ideas/isolated.py)."""
        return PoolSettings(workers=self.workers, timeout_s=self.paper_timeout_s,
                            memory_mb=self.memory_mb or None, max_tasks=WORKER_PAPERS,
                            threads=self.worker_threads)
