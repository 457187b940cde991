"""The six-part idea record of every submission in scope, through the vault's own LLM
backends (`extractive` offline default, `openai`, `vllm`, `batch_file`; chosen and configured
exactly as in the ideas stage), prompt files and leak checker.

- LLM backends answer the versioned prompt `idea_extract.v2` under the record's JSON schema;
  an answer that is not valid JSON, breaks the schema or states a measured result is asked
  again with the reason, then (if only its leaks are wrong) masked sentence by sentence, and
  otherwise quarantined in `eval_idea_failures`, never dropped.
- The extractive backend builds the vault's results-masked record of the submission (the
  same sentence picker and leak checks as the ideas stage) and reads the six parts from it:
  thesis -> TLDR, why it matters -> motivation, the problem statement -> research question,
  method flow -> method, evaluation plan -> experimental setting, falsifiable predictions ->
  expected results.

Incremental like the ideas stage: each submission's input hash (text, backend, model, prompt,
schema, settings) is the unit of work; a hash with a record or a failure is not asked again,
and finished batches are checkpointed so a crashed run resumes."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import polars as pl

from vault_pipeline.evalsets.inputs import OPENREVIEW_PDF, forum_documents, usable
from vault_pipeline.ideas.backends import Backend, make_backend
from vault_pipeline.ideas.decompose import (
    Accepted,
    BatchOutcome,
    Rejected,
    findings_rows,
    run_batch,
)
from vault_pipeline.integrity.gate import NEVER, FieldPolicy, Gate, gate_key, paper_gate
from vault_pipeline.integrity.llm_judge import judge_for
from vault_pipeline.llm.backends.base import Answer, Request
from vault_pipeline.llm.batches import BatchRows, IncrementalCounts, StageTables, run_incremental
from vault_pipeline.llm.inputs import ABSTRACT_ONLY, PaperInput, input_hash, load_inputs
from vault_pipeline.llm.prompting import load_prompt
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.records.idea import PLANNING_FIELDS, SCHEMA_VERSION, IdeaRecord
from vault_pipeline.schemas import EVAL_IDEA_FAILURES, EVAL_IDEAS
from vault_pipeline.store.paths import VaultPaths

NO_ARXIV_NOTE = "no arXiv match for this submission, so no full text: title and abstract only"


@dataclass
class ExtractionReport(IncrementalCounts,
                       counts=("submissions", "leaky_answers", "masked_findings")):
    backend: str
    model: str
    prompt_version: str
    by_source: dict[str, int] = field(default_factory=dict)


def submission_inputs(forums: pl.DataFrame, documents: pl.DataFrame | None
                      ) -> list[PaperInput]:
    """One input per submission (keyed by forum id): the full text of its own OpenReview
    PDF, else of its arXiv match, where the documents stage converted one
    (:func:`~.inputs.forum_documents`), else its title and abstract, saying why."""
    papers = forums.select(arxiv_id="forum_id", title=pl.col("title").fill_null(""),
                           abstract=pl.col("abstract").fill_null(""))
    found = forum_documents(forums, documents)
    docs = None
    if found is not None:
        docs = found.with_columns(
            arxiv_id=pl.col("forum_id"),
            source=pl.when((pl.col("full_text_from") == "openreview") & usable())
            .then(pl.lit(OPENREVIEW_PDF)).otherwise(pl.col("source"))).drop("forum_id")
    unmatched = set(forums.filter(pl.col("arxiv_id").is_null()).get_column("forum_id"))
    return [dataclasses.replace(p, note=NO_ARXIV_NOTE)
            if p.arxiv_id in unmatched and p.source == ABSTRACT_ONLY
            and p.note in ("no documents row", "no documents table") else p
            for p in load_inputs(papers, docs)]


def from_masked_record(record: dict[str, Any]) -> dict[str, Any]:
    """The six parts read from a results-masked record of the vault."""
    problem = record["core_problem"]
    evaluation = record["proposed_evaluation"]
    plan = [evaluation["setting"]]
    for name in ("benchmarks", "baselines", "metrics"):
        if evaluation[name]:
            plan.append(f"{name.capitalize()}: {', '.join(evaluation[name])}.")
    predictions = " ".join(p["prediction"] for p in record["falsifiable_predictions"])
    return {
        "tldr": record["thesis"],
        "motivation": problem["why_it_matters"] or next(
            (w["open_gap"] for w in record["related_work"] if w["open_gap"]),
            problem["statement"]),
        "research_question": problem["statement"] or problem["why_it_matters"],
        "method": record["method"]["flow"],
        "experimental_setting": " ".join(p for p in plan if p) or None,
        "expected_results": predictions or None,
    }


class SixPartExtractive(Backend):
    """The extractive backend, answering with the six parts instead of the whole record."""

    uses_prompt = False
    deterministic = True

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        answers = []
        for answer in self.inner.generate(requests):
            if answer.text is None:
                answers.append(answer)
                continue
            six = from_masked_record(json.loads(answer.text))
            answers.append(dataclasses.replace(answer, text=json.dumps(six,
                                                                       ensure_ascii=False)))
        return answers

    def close(self) -> None:
        self.inner.close()


# How the six parts are read by the integrity gate: `expected_results` in planning voice.
IDEA_POLICY = FieldPolicy(NEVER, re.compile(
    "^(?:" + "|".join(sorted(PLANNING_FIELDS)) + r")$"), NEVER)


def idea_gate(paper: PaperInput, offline_judge: bool = False) -> Gate:
    """The integrity gate of one submission's six-part idea."""
    return paper_gate(paper, IDEA_POLICY, offline_judge)


def _rows(outcome: BatchOutcome, backend: Backend, prompt_version: str,
          venues: dict[str, str]) -> BatchRows:
    now = datetime.now(UTC)

    def base(item: Accepted | Rejected) -> dict[str, Any]:
        paper = item.request.paper
        return {"forum_id": paper.arxiv_id, "venue_id": venues[paper.arxiv_id],
                "backend": backend.name, "model": backend.model,
                "prompt_version": prompt_version, "input_hash": item.request.custom_id,
                "input_source": paper.source, "input_note": paper.note,
                "attempts": item.attempts}

    records = [{**base(item), **item.record.model_dump(), "schema_version": SCHEMA_VERSION,
                "leaky_answer": item.leaky, "masked_findings": findings_rows(item.removed),
                "created_at": now} for item in outcome.accepted]
    failures = [{**base(item), "reason": item.reasons[-1], "reasons": item.reasons,
                 "raw_answer": item.answer.text, "finish_reason": item.answer.finish_reason,
                 "failed_at": now} for item in outcome.rejected]
    return records, failures


EVAL_IDEA_TABLES = StageTables(EVAL_IDEAS, EVAL_IDEA_FAILURES, key="forum_id",
                               scratch="evalsets_ideas", keep_unrequested=True)


def extract_ideas(paths: VaultPaths, forums: pl.DataFrame, documents: pl.DataFrame | None,
                  ideas: IdeasSettings, prompt_name: str, backend: Backend | None = None,
                  log=print) -> ExtractionReport:
    """Write `eval_ideas` and `eval_idea_failures` for ``forums`` (forum_id, venue_id, title,
    abstract, arxiv_id); the last rows of submissions out of scope this time are kept."""
    own = backend is None
    backend = backend or make_backend(ideas)
    if backend.name == "extractive" and not isinstance(backend, SixPartExtractive):
        backend = SixPartExtractive(backend)
    prompt = load_prompt(prompt_name)
    prompt_version = prompt.version if backend.uses_prompt else "none"
    report = ExtractionReport(backend.name, backend.model, prompt_version)
    venues = dict(forums.select("forum_id", "venue_id").iter_rows())

    second = judge_for(backend, ideas.llm_judge)

    def extract(batch: list[Request]) -> BatchRows:
        outcome = run_batch(backend, batch, prompt, ideas.max_retries,
                            lambda r: idea_gate(r.paper, second is None), IdeaRecord, second)
        report.leaky_answers += sum(o.leaky for o in [*outcome.accepted, *outcome.rejected])
        report.masked_findings += sum(len(o.removed) for o in outcome.accepted)
        return _rows(outcome, backend, prompt_version, venues)

    try:
        inputs = submission_inputs(forums, documents)
        schema = IdeaRecord.model_json_schema()
        key_settings = f"{ideas.generation_key()}|{gate_key(ideas.llm_judge)}"
        requests = [Request(
            input_hash(p, backend=backend.name, model=backend.model,
                       prompt_version=prompt_version, schema_version=SCHEMA_VERSION,
                       settings_key=key_settings),
            p, tuple(prompt.messages(p.arxiv_id, p.markdown(ideas.max_input_chars))
                     if backend.uses_prompt else ()), schema, "idea_record")
            for p in inputs]
        report.submissions = len(requests)
        report.by_source = dict(Counter(r.paper.source for r in requests))
        counts = run_incremental(
            paths, EVAL_IDEA_TABLES, requests, extract, batch_size=ideas.batch_size,
            retry_failures=ideas.retry_failures, log=log, label="evaluation ideas",
            unit="submissions", action=f"extract with {backend.name} ({backend.model})")
        report.add(counts)
    finally:
        if own:
            backend.close()
    return report
