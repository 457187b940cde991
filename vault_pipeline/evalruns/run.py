"""One evaluation run: the units of every task, rendered into requests keyed by input hash,
asked through the ideas stage's backends with `run_batch` (re-asks, quarantine) inside the
incremental runner (cache, checkpoints, resume), then predictions and metrics."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from vault_pipeline.errors import VaultError
from vault_pipeline.evalruns.metering import Metered, RunReport, TaskStats
from vault_pipeline.evalruns.prompting import load_prompt, prompt_versions, render
from vault_pipeline.evalruns.settings import REVIEW_TASKS, EvalRunSettings
from vault_pipeline.evalruns.summaries import build_summaries
from vault_pipeline.evalruns.swiss import swiss_rounds
from vault_pipeline.evalruns.tasks import (
    ABSTRACT,
    SPECS,
    Unit,
    check_no_leak,
    input_texts,
    task_units,
)
from vault_pipeline.evalsets.similarity import topic_space, topic_text
from vault_pipeline.ideas.backends import Backend, Request, make_backend
from vault_pipeline.ideas.decompose import now, run_batch
from vault_pipeline.integrity.gate import NEVER, FieldPolicy, Gate
from vault_pipeline.llm.batches import StageTables, run_incremental
from vault_pipeline.llm.inputs import ABSTRACT_ONLY, PaperInput
from vault_pipeline.llm.prompting import Prompt
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.schemas import (
    EVAL_GROUPWISE,
    EVAL_PAIRWISE,
    EVAL_POINTWISE,
    EVAL_REVIEW_ANCHORS,
    EVAL_REVIEW_STRATIFIED,
    EVAL_RUN_CALL_FAILURES,
    EVAL_RUN_CALLS,
    TableSchema,
)
from vault_pipeline.store.paths import VaultPaths

TABLES = StageTables(EVAL_RUN_CALLS, EVAL_RUN_CALL_FAILURES, "unit_id", "evalruns",
                     keep_unrequested=True)
# Answers are ratings and choices, not claims: the integrity gate checks none of them.
_OPEN = Gate(FieldPolicy(re.compile(""), NEVER, NEVER))
SETS: dict[str, TableSchema] = {"stratified": EVAL_REVIEW_STRATIFIED,
                                "anchors": EVAL_REVIEW_ANCHORS, "pointwise": EVAL_POINTWISE,
                                "pairwise": EVAL_PAIRWISE, "groupwise": EVAL_GROUPWISE}
_NEEDS = {"direct": ("stratified",), "anchor": ("stratified", "anchors"),
          "group": ("stratified",), "elo": ("stratified",),
          "swiss": ("stratified",), "idea_point3": ("pointwise",),
          "idea_point2": ("pointwise",), "idea_pair": ("pairwise",),
          "idea_group": ("groupwise",)}


def read_sets(paths: VaultPaths, tasks: Sequence[str]) -> dict[str, pl.DataFrame]:
    needed = sorted({name for t in tasks for name in _NEEDS[t]})
    missing = [SETS[n].name for n in needed if not paths.store.exists(SETS[n])]
    if missing:
        raise VaultError(f"evaluation run: no {', '.join(missing)} table yet; materialize "
                         "the evaluation sets first (`vault materialize --select "
                         "group:evaluation`)")
    return {n: paths.store.read(SETS[n]) for n in needed}


def review_inputs(paths: VaultPaths, settings: EvalRunSettings,
                  sets: dict[str, pl.DataFrame], report: RunReport, backend: Backend | None,
                  log: Callable[[str], object], ideas: IdeasSettings
                  ) -> dict[str, dict[str, str]]:
    """What the review paradigms read of each sampled paper, per input of the run: title
    and abstract, and with each summary kind (summaries made or reused first)."""
    if not any(t in REVIEW_TASKS for t in settings.tasks):
        return {}
    sample = sets["stratified"]
    kinds = tuple(i for i in settings.inputs if i != ABSTRACT)
    made = build_summaries(paths, settings, sample, kinds, report,
                           backend=None if settings.summarizer else backend, log=log,
                           ideas=ideas)
    return {i: input_texts(sample) if i == ABSTRACT else input_texts(sample, made[i])
            for i in settings.inputs}


def build_units(paths: VaultPaths, settings: EvalRunSettings, sets: dict[str, pl.DataFrame],
                report: RunReport, texts: dict[str, dict[str, str]] | None = None
                ) -> list[Unit]:
    """Every unit of the run but Swiss rounds: each review paradigm once per input in
    ``texts`` (default: the abstract only), each idea task once."""
    if texts is None:
        texts = {ABSTRACT: input_texts(sets["stratified"])} if "stratified" in sets else {}
    units: list[Unit] = []
    for task in settings.tasks:
        similarity = None
        if task == "anchor":
            sample, anchors = sets["stratified"], sets["anchors"]
            corpus = [topic_text(t, a) for t, a in [*anchors.select("title", "abstract").rows(),
                                                   *sample.select("title", "abstract").rows()]]
            space = topic_space(paths, corpus, settings.embedder)
            report.similarity_method = space.method
            rows = list(range(anchors.height, anchors.height + sample.height))
            similarity = space.similarity(rows, list(range(anchors.height))) \
                if anchors.height and sample.height else None
            if similarity is None:
                raise VaultError("anchor rating needs anchors and a sample: the "
                                 "eval_review_anchors table is empty")
        if task in REVIEW_TASKS:
            for source, papers in texts.items():
                units += task_units(task, sets, settings, similarity, papers, source)
        else:
            made = task_units(task, sets, settings, similarity)
            report.without_idea[task] = _items(task, sets) - len(made)
            units += made
    check_no_leak(units)
    return units


def _items(task: str, sets: dict[str, pl.DataFrame]) -> int:
    """Items of an idea task's set (a group counts once)."""
    if task == "idea_group":
        return sets["groupwise"].get_column("group_id").n_unique()
    return sets["pairwise" if task == "idea_pair" else "pointwise"].height


def input_hash(unit_id: str, backend: Backend, generation: str, prompt: Prompt,
               messages: tuple[dict[str, str], ...], schema: dict) -> str:
    """The cache key of one call; the unit id (run, task, item, repeat) keeps two items
    with the same text (two identical ideas) two calls."""
    payload = json.dumps([unit_id, backend.name, backend.model, generation,
                          prompt.version, prompt.sha256, messages, schema],
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _done_hashes(paths: VaultPaths, retry_failures: bool) -> set[str]:
    done = set(paths.store.read(EVAL_RUN_CALLS).get_column("input_hash").to_list())
    if not retry_failures:
        done |= set(paths.store.read(EVAL_RUN_CALL_FAILURES).get_column("input_hash").to_list())
    return done


def run_evaluation(paths: VaultPaths, settings: EvalRunSettings,
                   backend: Backend | None = None,
                   log: Callable[[str], object] = print,
                   ideas: IdeasSettings | None = None) -> RunReport:
    """Ask every call of the run not yet answered (or quarantined), then write the
    predictions and metrics of the run. ``backend`` replaces the configured one (tests);
    ``ideas`` is the `[ideas]` section the stage ``uses`` (the defaults when called alone)."""
    from vault_pipeline.evalruns.results import write_results

    report = RunReport(settings.run_id)
    sets = read_sets(paths, settings.tasks)
    ideas = ideas or IdeasSettings()
    if backend is None and settings.backend_settings(ideas).backend == "extractive":
        raise VaultError("evaluation runs need an LLM backend (openai, vllm or batch_file), "
                         "not 'extractive' (it can write the summaries: `summarizer`)")
    texts = review_inputs(paths, settings, sets, report, backend, log, ideas)
    units = build_units(paths, settings, sets, report, texts)
    for task, left in report.without_idea.items():
        if left:
            log(f"evaluation run {settings.run_id}: {task} leaves out {left} item(s) without "
                "an idea (extraction quarantined: see the set's `idea_note`)")
    prompts = {t: load_prompt(SPECS[t].prompt) for t in settings.tasks}
    for repeat in range(settings.repeats):
        backend_settings = settings.backend_settings(ideas, repeat)
        engine = backend or make_backend(backend_settings)
        if not engine.uses_prompt:
            raise VaultError(f"evaluation runs need an LLM backend (openai, vllm or "
                             f"batch_file), not {engine.name!r}")
        ask = _Ask(paths, settings, engine, prompts, repeat, report, log, backend_settings)
        ask(units)
        if "swiss" in settings.tasks:
            for source, papers in texts.items():
                swiss_rounds(ask, papers, settings, source)
        if backend is None:
            engine.close()
    write_results(paths, settings, sets, report, texts)
    return report


@dataclass
class _Ask:
    """Asks units of one repeat: renders and keys them, checks the budget, then runs them
    through the incremental runner (answered ones are reused)."""

    paths: VaultPaths
    settings: EvalRunSettings
    engine: Backend
    prompts: dict[str, Prompt]
    repeat: int
    report: RunReport
    log: Callable[[str], object]
    backend_settings: IdeasSettings  # the repeat's

    def __call__(self, units: list[Unit]) -> list[str]:
        """Ask ``units``; their unit ids, in order."""
        settings, repeat, backend_settings = self.settings, self.repeat, self.backend_settings
        requests: list[Request] = []
        meta: dict[str, tuple[Unit, str, Prompt]] = {}
        cell_of: dict[str, tuple[str, str]] = {}
        for unit in units:
            prompt, spec = self.prompts[unit.task], SPECS[unit.task]
            messages = render(prompt, unit.fields)
            schema = spec.model.model_json_schema()
            unit_id = f"{settings.run_id}:{unit.task}:{unit.input}:{unit.item_id}:{repeat}"
            key = input_hash(unit_id, self.engine, backend_settings.generation_key(), prompt,
                             messages, schema)
            paper = PaperInput(unit_id, unit.task, "", None, None, ABSTRACT_ONLY, None)
            requests.append(Request(key, paper, messages, schema, f"eval_{unit.task}"))
            meta[key], cell_of[key] = (unit, unit_id, prompt), (unit.task, unit.input)
        self.report.units += len(requests)
        _check_budget(self.paths, settings, requests, backend_settings.retry_failures,
                      self.report.asked + self.report.summaries_made)
        metered = Metered(self.engine, cell_of, self.report)
        asker = _Asker(settings, metered, self.engine, self.prompts, meta, repeat,
                       backend_settings.max_retries, self.report)
        counts = run_incremental(self.paths, TABLES, requests, asker,
                                 batch_size=backend_settings.batch_size,
                                 retry_failures=backend_settings.retry_failures, log=self.log,
                                 label=f"evaluation run {settings.run_id} (repeat {repeat})",
                                 unit="calls", action="ask")
        self.report.reused += counts.reused
        self.report.asked += counts.processed
        return [meta[r.custom_id][1] for r in requests]

    def answers(self, unit_ids: list[str]) -> dict[str, dict]:
        """The answers of these units (a quarantined one has none)."""
        calls = self.paths.store.read(EVAL_RUN_CALLS).filter(
            pl.col("unit_id").is_in(unit_ids))
        return {u: json.loads(a) for u, a in calls.select("unit_id", "answer").rows()}


@dataclass
class _Asker:
    """One repeat's batches through ``run_batch``, one task (prompt, answer model) at a
    time, as rows of the calls and failures tables."""

    settings: EvalRunSettings
    metered: Metered
    engine: Backend
    prompts: dict[str, Prompt]
    meta: dict[str, tuple[Unit, str, Prompt]]
    repeat: int
    max_retries: int
    report: RunReport

    def __call__(self, batch: list[Request]) -> tuple[list[dict], list[dict]]:
        records, failures = [], []
        by_cell: dict[tuple[str, str], list[Request]] = defaultdict(list)
        for request in batch:
            unit = self.meta[request.custom_id][0]
            by_cell[(unit.task, unit.input)].append(request)
        for (task, source), asked in by_cell.items():
            started = time.perf_counter()
            outcome = run_batch(self.metered, asked, self.prompts[task], self.max_retries,
                                lambda _: _OPEN, SPECS[task].model)
            self.report.timed((task, source), time.perf_counter() - started)
            for done in outcome.accepted:
                key = done.request.custom_id
                records.append(self._row(key, done.attempts) | {
                    "answer": json.dumps(done.record.model_dump(), sort_keys=True),
                    "answered_at": self.metered.answered_at(key), "created_at": now()})
            for bad in outcome.rejected:
                failures.append(self._row(bad.request.custom_id, bad.attempts) | {
                    "reason": bad.reasons[-1], "reasons": bad.reasons,
                    "raw_answer": bad.answer.text, "failed_at": now()})
        return records, failures

    def _row(self, key: str, attempts: int) -> dict:
        unit, unit_id, prompt = self.meta[key]
        return {"unit_id": unit_id, "input_hash": key, "run_id": self.settings.run_id,
                "task": unit.task, "input": unit.input, "item_id": unit.item_id,
                "items": list(unit.items),
                "repeat": self.repeat, "backend": self.engine.name, "model": self.engine.model,
                "prompt_version": prompt.version, "prompt_sha256": prompt.sha256,
                "attempts": attempts} | self.metered.spent(key, self.settings.cost)


def _check_budget(paths: VaultPaths, settings: EvalRunSettings, requests: list[Request],
                  retry_failures: bool, spent: int) -> None:
    """Refuse before asking anything when the new calls would exceed the budget (``spent``:
    asked by earlier repeats of this run)."""
    if settings.call_budget is None:
        return
    done = _done_hashes(paths, retry_failures)
    new = sum(r.custom_id not in done for r in requests) + spent
    if new > settings.call_budget:
        raise VaultError(f"evaluation run {settings.run_id}: {new} new calls exceed the call "
                         f"budget of {settings.call_budget}; raise `call_budget` or run "
                         "fewer tasks")


__all__ = ["REVIEW_TASKS", "RunReport", "TaskStats", "prompt_versions", "run_evaluation"]
