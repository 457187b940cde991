"""The review-paradigm study's summary inputs (seed 001): a vanilla and an objective summary
of each sampled paper's full text, made by the summarizer backend (by default the run's own;
`extractive` copies the paper's sentences, offline) with versioned prompts, through
`run_batch` inside the incremental runner: cached by input hash in `eval_summaries`, so
every run with the same summarizer reuses them and a killed run resumes."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, model_validator

from vault_pipeline.errors import VaultError
from vault_pipeline.evalruns.metering import Metered, RunReport
from vault_pipeline.evalruns.prompting import load_prompt, render
from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.ideas.backends import Backend, Request, make_backend
from vault_pipeline.ideas.backends.extractive import SUMMARY_SCHEMA
from vault_pipeline.ideas.decompose import now, run_batch
from vault_pipeline.ideas.extractive_summary import VERSION as EXTRACTIVE_VERSION
from vault_pipeline.integrity.gate import NEVER, FieldPolicy, Gate
from vault_pipeline.llm.batches import StageTables, run_incremental
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.llm.prompting import Prompt
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.schemas import EVAL_SUMMARIES, EVAL_SUMMARY_FAILURES
from vault_pipeline.store.paths import VaultPaths

KINDS = ("vanilla", "objective")
PROMPTS = {"vanilla": "summary_vanilla.v1", "objective": "summary_objective.v1"}
TABLES = StageTables(EVAL_SUMMARIES, EVAL_SUMMARY_FAILURES, "summary_id", "evalruns_summaries",
                     keep_unrequested=True)
HEADINGS = ("background", "method", "results", "limitations")
# Summaries report results (the study's do): the integrity gate holds back none of them.
_OPEN = Gate(FieldPolicy(re.compile(""), NEVER, NEVER))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VanillaSummary(_Strict):
    summary: str = Field(min_length=1)


class ObjectiveSummary(_Strict):
    background: str | None
    method: str | None
    results: str | None
    limitations: str | None

    @model_validator(mode="after")
    def _something(self) -> ObjectiveSummary:
        if not any((getattr(self, h) or "").strip() for h in HEADINGS):
            raise ValueError("every heading is empty")
        return self


MODELS: dict[str, type[BaseModel]] = {"vanilla": VanillaSummary, "objective": ObjectiveSummary}


def summary_text(kind: str, answer: dict) -> str:
    """The summary as the evaluator reads it: one paragraph, or one line per heading."""
    if kind == "vanilla":
        return " ".join(answer["summary"].split())
    return "\n".join(f"{h.capitalize()}: {' '.join(answer[h].split())}" for h in HEADINGS
                     if (answer.get(h) or "").strip())


def _paper(summary_id: str, row: dict) -> PaperInput:
    """The sampled paper as the summarizer reads it: title, abstract and the set's full text
    (already cleaned and cut; the title and abstract when no full text converted)."""
    title, abstract = row["title"] or "", row["abstract"] or ""
    body = row["full_text"] if row["full_text_source"] != "abstract_only" else None
    return PaperInput(summary_id, " ".join(title.split()), " ".join(abstract.split()), body,
                      None, row["full_text_source"], row.get("full_text_note"))


def input_hash(paper: PaperInput, kind: str, prompt: Prompt, backend: Backend,
               generation: str) -> str:
    """Paper text, kind, prompt file, backend, model and generation settings (for the
    extractive backend, the summary rules' version instead of a prompt's effect)."""
    rules = EXTRACTIVE_VERSION if not backend.uses_prompt else ""
    payload = json.dumps([paper.title, paper.abstract, paper.text, kind, prompt.version,
                          prompt.sha256, backend.name, backend.model, generation, rules],
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def build_summaries(paths: VaultPaths, settings: EvalRunSettings, sample: pl.DataFrame,
                    kinds: tuple[str, ...], report: RunReport,
                    backend: Backend | None = None,
                    log: Callable[[str], object] = print,
                    ideas: IdeasSettings | None = None) -> dict[str, dict[str, str]]:
    """Every summary of ``kinds`` for the sample, made where the cache has none: the
    summary text by kind, then forum id (a quarantined one is absent). ``ideas``: the
    `[ideas]` section the run was given (the defaults when called alone)."""
    kinds = tuple(k for k in kinds if k in KINDS)
    if not kinds or sample.is_empty():
        return {k: {} for k in kinds}
    ideas = ideas or IdeasSettings()
    summarizer = settings.summarizer_settings(ideas)
    engine = backend or make_backend(summarizer)
    generation = summarizer.generation_key()
    prompts = {k: load_prompt(PROMPTS[k]) for k in kinds}
    requests, units, cells = [], {}, {}  # units: each summary's own columns, by input hash
    for kind in kinds:
        for row in sample.sort("forum_id").iter_rows(named=True):
            summary_id = f"{row['forum_id']}:{kind}:{engine.name}/{engine.model}"
            paper = _paper(summary_id, row)
            text = paper.markdown(summarizer.max_input_chars)
            messages = render(prompts[kind], {"input": text})
            key = input_hash(paper, kind, prompts[kind], engine, generation)
            requests.append(Request(key, paper, messages, MODELS[kind].model_json_schema(),
                                    f"{SUMMARY_SCHEMA}{kind}"))
            units[key] = {"summary_id": summary_id, "input_hash": key,
                          "forum_id": row["forum_id"], "kind": kind, "backend": engine.name,
                          "model": engine.model, "prompt_version": prompts[kind].version,
                          "prompt_sha256": prompts[kind].sha256,
                          "source": row["full_text_source"]}
            cells[key] = ("summary", kind)
    metered = Metered(engine, cells, report)
    # the run's prices are the evaluator's: they price the summaries it writes itself
    evaluator = settings.backend_settings(ideas, 0)
    own = (summarizer.backend, summarizer.model) == (evaluator.backend, evaluator.model)
    price = settings.cost if own else (lambda _in, _out: None)

    def summarize(batch: list[Request]) -> tuple[list[dict], list[dict]]:
        records, failures = [], []
        for kind in kinds:
            asked = [r for r in batch if units[r.custom_id]["kind"] == kind]
            if not asked:
                continue
            started = time.perf_counter()
            outcome = run_batch(metered, asked, prompts[kind], summarizer.max_retries,
                                lambda _: _OPEN, MODELS[kind])
            report.timed(("summary", kind), time.perf_counter() - started)
            for done in outcome.accepted:
                answer = done.record.model_dump()
                text = summary_text(kind, answer)
                records.append(_row(done.request.custom_id, done.attempts) | {
                    "summary": text, "answer": json.dumps(answer, sort_keys=True),
                    "words": len(text.split()), "created_at": now()})
            for bad in outcome.rejected:
                failures.append(_row(bad.request.custom_id, bad.attempts) | {
                    "reason": bad.reasons[-1], "reasons": bad.reasons,
                    "raw_answer": bad.answer.text, "failed_at": now()})
        return records, failures

    def _row(key: str, attempts: int) -> dict:
        return units[key] | {"attempts": attempts} | metered.spent(key, price)

    try:
        _check_budget(paths, settings, requests, summarizer.retry_failures)
        counts = run_incremental(paths, TABLES, requests, summarize,
                                 batch_size=summarizer.batch_size,
                                 retry_failures=summarizer.retry_failures, log=log,
                                 label=f"summaries ({engine.name}/{engine.model})",
                                 unit="summaries", action="write")
    finally:
        if backend is None:
            engine.close()
    report.summaries_made += counts.processed
    report.summaries_reused += counts.reused
    made = paths.store.read(EVAL_SUMMARIES).filter(
        pl.col("input_hash").is_in(list(units)))
    out: dict[str, dict[str, str]] = {k: {} for k in kinds}
    for forum, kind, text in made.select("forum_id", "kind", "summary").rows():
        out[kind][forum] = text
    missing = len(requests) - sum(len(v) for v in out.values())
    report.summaries_missing += missing
    if missing:
        log(f"summaries: {missing} quarantined (see eval_summary_failures); those papers "
            "are left out of that summary input")
    return out


def _check_budget(paths: VaultPaths, settings: EvalRunSettings, requests: list[Request],
                  retry_failures: bool) -> None:
    """Summaries count against the run's call budget: refuse before asking any."""
    if settings.call_budget is None or not requests:
        return
    done = set(paths.store.read(EVAL_SUMMARIES).get_column("input_hash").to_list())
    if not retry_failures:
        done |= set(paths.store.read(EVAL_SUMMARY_FAILURES).get_column("input_hash")
                    .to_list())
    new = sum(r.custom_id not in done for r in requests)
    if new > settings.call_budget:
        raise VaultError(f"evaluation run {settings.run_id}: {new} new summaries exceed the "
                         f"call budget of {settings.call_budget}; raise `call_budget` or "
                         "run fewer inputs")
