"""The ideas stage's per-paper work in the project's isolated pool
(:mod:`vault_pipeline.executors.isolation`): each paper is decomposed, judged and masked in a worker
process under a time limit and a memory cap, so a pathological paper (a decomposition that
hangs, an input that exhausts memory, a crash in native code) becomes one quarantined
`llm_failures` row with its reason while every other paper completes.

Only backends that do their work in this process (``Backend.in_process``: the extractive
one) are isolated: an LLM backend's work happens in its server or engine, bounded by its own
HTTP timeout and ``max_input_chars``, and its engine or connection pool cannot be copied into
each worker."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from vault_pipeline.executors.isolation import IsolatedPool, PoolSettings
from vault_pipeline.ideas.decompose import BatchOutcome, run_batch
from vault_pipeline.integrity.gate import paper_gate
from vault_pipeline.llm.backends.base import Backend, Request
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.llm.prompting import Prompt
from vault_pipeline.pipeline.counters import Counters


@dataclass
class Tally(Counters, counts=("retried", "leaky_answers", "masked_findings", "tokens_in",
                              "tokens_out", "new_failures")):
    """What one batch adds to the stage's report: papers that needed more than one answer,
    papers with at least one leaky answer, leaks masked out of accepted answers, tokens, and
    papers that failed every answer."""

    @classmethod
    def of(cls, outcome: BatchOutcome) -> Tally:
        return cls(
            retried=sum(1 for a in outcome.accepted if a.attempts > 1)
            + sum(1 for r in outcome.rejected if r.attempts > 1),
            leaky_answers=sum(1 for a in outcome.accepted if a.leaky)
            + sum(1 for r in outcome.rejected
                  if any("measured results" in x for x in r.reasons)),
            masked_findings=sum(len(a.removed) for a in outcome.accepted),
            tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out,
            new_failures=len(outcome.rejected))


WORKER = "worker "  # how the reason of a paper whose worker failed begins


def limits_of(settings: PoolSettings) -> str:
    """The limits a worker ran under, written into a worker failure's reason."""
    return f"(timeout_s {settings.timeout_s:g}, memory_mb {settings.memory_mb})"


def retry_under(settings: PoolSettings) -> Callable[[str], bool]:
    """Which quarantined reasons are asked again: a worker's failure under other limits
    (a longer timeout, more memory), as the documents stage retries a timed-out file."""
    limits = limits_of(settings)
    return lambda reason: reason.startswith(WORKER) and limits not in reason


@dataclass(frozen=True)
class PaperJob:
    """One paper for a worker: everything `run_batch` needs, picklable."""

    backend: Backend
    request: Request
    prompt: Prompt
    max_retries: int
    prompt_version: str


@dataclass
class PaperResult:
    """What comes back from a worker: the paper's rows and tally, or why it has none."""

    records: list[dict] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    error: str | None = None  # the worker timed out, died or could not answer

    @classmethod
    def failed(cls, status: str, message: str, _duration_ms: int) -> PaperResult:
        return cls(error=f"{status}: {message}")


def decompose_paper(job: PaperJob) -> PaperResult:
    """Runs in a worker: one paper through `run_batch`, as table rows."""
    from vault_pipeline.ideas.requests import outcome_rows

    outcome = run_batch(job.backend, [job.request], job.prompt, job.max_retries,
                        lambda r: paper_gate(r.paper, offline_judge=True))
    records, failures = outcome_rows(outcome, job.backend, job.prompt_version)
    return PaperResult(records, failures, Tally.of(outcome))


def isolated_batches(pool: IsolatedPool[PaperJob, PaperResult], jobs: Sequence[PaperJob]
                     ) -> Iterator[tuple[PaperJob, PaperResult]]:
    """Each job's result, in the order the jobs were given."""
    results = dict(((job.request.custom_id, result) for job, result in pool.map(jobs)))
    for job in jobs:
        yield job, results[job.request.custom_id]


def warm_up() -> None:
    """Runs once per worker, outside any paper's time limit: one small paper through the
    extractive path loads what the first paper would otherwise pay for (imports, rules,
    the gate's classifier)."""
    from vault_pipeline.ideas.backends.extractive import ExtractiveBackend
    from vault_pipeline.ideas.requests import build_requests
    from vault_pipeline.llm.prompting import load_prompt
    from vault_pipeline.llm.settings import IdeasSettings

    backend, prompt = ExtractiveBackend(), load_prompt()
    paper = PaperInput("0000.00000", "Warm-up", "We propose a method. It improves results.",
                       None, None, "abstract_only", None)
    [request] = build_requests([paper], backend, prompt, IdeasSettings())
    decompose_paper(PaperJob(backend, request, prompt, 0, "none"))


def paper_pool(settings: PoolSettings) -> IsolatedPool[PaperJob, PaperResult]:
    return IsolatedPool(settings, decompose_paper, PaperResult.failed, warm_up)
