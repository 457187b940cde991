"""The `role_artifacts` table: for every target, the reference artifact of each producer role
(gaps, candidate, report), reconstructed from the paper through the ideas backends, judged by
the integrity gate in the one batch driver (:func:`~vault_pipeline.ideas.decompose.run_batch`)
and quarantined with the reason when it cannot be accepted.

The report is the target's masked record (gated again). With the extractive backend the gaps
and the candidate are filled from what the record states, plus near-miss papers found by
retrieval over the vault (the target's cited vault papers first); the rest is null. With an
LLM backend the versioned prompts `gaps.vN` and `candidate.vN` read the paper, its record and
the vault papers it may cite."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import polars as pl

from vault_pipeline.datasets.artifacts import (
    ARTIFACT_MODELS,
    ARTIFACT_NAMES,
    ARTIFACTS_VERSION,
    CANDIDATE_POLICY,
    GAPS_POLICY,
    artifact_citations,
)
from vault_pipeline.datasets.training import cited_ids
from vault_pipeline.ideas.backends import Backend, make_backend
from vault_pipeline.ideas.build import read_inputs
from vault_pipeline.ideas.decompose import BatchOutcome, findings_rows, now, run_batch
from vault_pipeline.ids import normalize_arxiv_id
from vault_pipeline.index.exclusion import excluded_for
from vault_pipeline.integrity.gate import FieldPolicy, gate_key, paper_gate
from vault_pipeline.integrity.llm_judge import judge_for
from vault_pipeline.integrity.method import method_terms
from vault_pipeline.integrity.source import STOP_WORDS
from vault_pipeline.llm.backends.base import Answer, Request
from vault_pipeline.llm.inputs import PaperInput, input_hash
from vault_pipeline.llm.prompting import load_prompt
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.pipeline.settings import CUTOFF
from vault_pipeline.records.masked import RECORD_FIELDS
from vault_pipeline.schemas import ROLE_ARTIFACT_FAILURES, ROLE_ARTIFACTS, SPLITS, TableSchema
from vault_pipeline.splits.assign import TARGET_SPLITS
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.inputs import clean_views, views_wide
from vault_pipeline.store.paths import VaultPaths

PROMPTS = {"gap_finder": "gaps.v1", "innovator": "candidate.v1"}
POLICIES: dict[str, FieldPolicy | None] = {"gap_finder": GAPS_POLICY,
                                           "innovator": CANDIDATE_POLICY,
                                           "report_writer": None}  # None: the record's
NEAR_MISSES = 3
OTHER_FIELDS = 5  # source candidates for the innovator, one per other sub-field
_WORD = re.compile(r"[a-z][a-z\-]{3,}")


@dataclass(frozen=True)
class VaultPaper:
    arxiv_id: str
    title: str
    archive: str  # the sub-field: the primary category's archive (cs, q-bio, hep-th)
    text: str  # what retrieval matches: its problem and solution views


@dataclass
class Target:
    paper: PaperInput
    split: str
    record: dict[str, Any]
    record_provenance: dict[str, str]
    views: dict[str, str | None]
    archive: str
    cited_in_vault: list[str]
    same_field: list[VaultPaper] = field(default_factory=list)
    other_fields: list[VaultPaper] = field(default_factory=list)
    excluded: set[str] = field(default_factory=set)  # never retrieved for it (itself, retitled)


@dataclass
class ArtifactsReport(Counters, counts=("targets", "artifacts", "quarantined", "reused",
                                        "asked")):
    """Targets, artifacts written and quarantined; ``reused``: artifacts or failures kept
    from an earlier run (same input hash); ``asked``: requests sent to a backend this run."""

    by_role: dict[str, int] = field(default_factory=dict)
    without_record: list[str] = field(default_factory=list)


def _words(text: str | None) -> set[str]:
    return {w for w in _WORD.findall((text or "").lower()) if w not in STOP_WORDS}


def nearest(query: str, pool: Sequence[VaultPaper], k: int,
            one_per_archive: bool = False) -> list[VaultPaper]:
    """The ``k`` vault papers sharing most content words with ``query`` (at least two),
    ties by id; one per sub-field for cross-field search."""
    wanted = _words(query)
    scored = sorted(((len(wanted & _words(p.text)), p.arxiv_id, p) for p in pool),
                    key=lambda t: (-t[0], t[1]))
    out: list[VaultPaper] = []
    seen: set[str] = set()
    for score, _, paper in scored:
        if score < 2 or len(out) == k:
            break
        if one_per_archive and paper.archive in seen:
            continue
        seen.add(paper.archive)
        out.append(paper)
    return out


def _archive(category: str | None) -> str:
    return (category or "").split(".")[0]


def _resolve(ids: Sequence[str | None], keys: dict[str, str], vault: set[str]) -> list[str]:
    """Vault ids among citation keys or ids (a key resolves through the record's
    references)."""
    out = []
    for raw in ids:
        if not raw:
            continue
        value = keys.get(raw.strip(), raw.strip())
        try:
            value = normalize_arxiv_id(value)
        except ValueError:
            continue
        if value in vault and value not in out:
            out.append(value)
    return out


_CATEGORY_CUES = (("credit assignment", "credit-assignment flaw"),
                  ("inductive bias", "wrong inductive bias"),
                  ("objective", "training-objective mismatch"),
                  ("representation", "representation limitation"),
                  ("scal", "scalability limit"), ("quadratic", "scalability limit"))


def _category(text: str) -> str | None:
    """A category only where the gap's own words name it; null otherwise."""
    lowered = text.lower()
    return next((label for cue, label in _CATEGORY_CUES if cue in lowered), None)


def extract_gaps(t: Target, vault: set[str]) -> dict[str, Any]:
    """The gaps the record states (its related work's open gaps, at most two), with the
    near-miss papers each cites in the vault, else the nearest same-field vault papers."""
    r = t.record
    core = r.get("core_problem") or {}
    axis = core.get("statement") or t.views.get("challenge")
    keys = {x["key"]: x["arxiv_id"] for x in r.get("references") or []
            if x.get("key") and x.get("arxiv_id")}
    gaps = []
    works = [w for w in r.get("related_work") or [] if w.get("what_it_does") and
             w.get("open_gap")]
    for w in works[:2]:
        cited = _resolve(w.get("citations") or [], keys, vault - t.excluded)
        found = cited or [p.arxiv_id for p in nearest(
            f"{w['what_it_does']} {w['open_gap']}", t.same_field, NEAR_MISSES)]
        gaps.append({"prior_methods": w["sub_area"], "via": w["what_it_does"],
                     "unresolved": w["open_gap"],
                     "near_misses": [{"arxiv_id": i, "lacks": None}
                                     for i in found[:NEAR_MISSES]],
                     "category": _category(w["open_gap"]),
                     "why_it_matters": core.get("why_it_matters"), "evidence_route": None})
    prior = " ".join(w["what_it_does"] for w in works) or None
    return {"axes": [{"axis": axis, "prior_work": prior, "gaps": gaps}] if axis else []}


def extract_candidate(t: Target, gaps: dict[str, Any]) -> dict[str, Any]:
    """The candidate the record states: its idea, the gap, the difference from the nearest
    work and the main risk; the source inspiration is not in a record, so it is null."""
    r = t.record
    novelty = r.get("key_novelty") or {}
    bullets = novelty.get("explanation") or []
    first_gap = next((g["unresolved"] for a in gaps.get("axes") or [] for g in a["gaps"]),
                     None)
    diffs = r.get("differences_from_prior_work") or []
    limits = r.get("limitations") or []
    return {"intuition": bullets[0] if bullets else r.get("thesis"),
            "gap": first_gap or (r.get("core_problem") or {}).get("statement"),
            "source_paper_id": None, "source_inspiration": None, "borrowed_mechanism": None,
            "novelty_type": None, "mapping": " ".join(bullets[1:]) or None,
            "why_it_could_work": None, "key_assumption": None,
            "nearest_difference": (f"{diffs[0]['related_method']}: {diffs[0]['difference']}"
                                   if diffs else None),
            "main_risk": limits[0] if limits else None}


class ArtifactExtractor(Backend):
    """The extractive backend of the role artifacts: answers prepared from the record and
    the vault, one per request id (deterministic: asking again gives the same answer)."""

    name = "extractive"
    uses_prompt = False
    deterministic = True

    def __init__(self, prepared: dict[str, dict[str, Any]]) -> None:
        super().__init__(ARTIFACTS_VERSION)
        self.prepared = prepared

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        return [Answer(r.custom_id, json.dumps(self.prepared[r.custom_id], ensure_ascii=False),
                       "stop") for r in requests]


def context_text(t: Target, max_chars: int) -> str:
    """What an LLM reads: the paper, its record, and the vault papers it may cite."""
    def listing(papers: list[VaultPaper]) -> str:
        return "\n".join(f"- {p.arxiv_id} [{p.archive}] {p.title}" for p in papers) or "- none"
    return "\n\n".join([
        t.paper.markdown(max_chars),
        "## Results-masked record\n" + json.dumps(t.record, ensure_ascii=False),
        "## Vault papers of the same sub-field (near-miss candidates)\n"
        + listing(t.same_field),
        "## Vault papers of other sub-fields (source candidates)\n" + listing(t.other_fields)])


def load_targets(paths: VaultPaths) -> tuple[list[Target], set[str], list[str]]:
    """Targets with a masked record and their vault context; the vault ids; targets
    without a record."""
    splits = paths.store.read_required(SPLITS.name, ("arxiv_id", "split"))
    records = paths.store.read_optional("masked_records")
    papers = paths.store.read_required("papers", ("arxiv_id", "title"))
    views = paths.store.read_optional("views")
    targets = splits.filter(pl.col("split").is_in(TARGET_SPLITS))
    ids = targets["arxiv_id"].to_list()
    vault = set(splits.filter(pl.col("split") == VAULT)["arxiv_id"].to_list())
    wide = (views_wide(clean_views(views).views) if views is not None
            else pl.DataFrame({"arxiv_id": []}, schema={"arxiv_id": pl.String}))
    by_view = {row["arxiv_id"]: row for row in wide.iter_rows(named=True)}
    category = dict(papers.select("arxiv_id", "primary_category").iter_rows()) \
        if "primary_category" in papers.columns else {}
    titles = dict(papers.select("arxiv_id", "title").iter_rows())
    pool = [VaultPaper(i, titles.get(i, ""), _archive(category.get(i)),
                       " ".join(v or "" for k, v in row.items() if k != "arxiv_id"))
            for i, row in by_view.items() if i in vault]
    record_rows = {} if records is None else {
        row["arxiv_id"]: row for row in records.filter(pl.col("arxiv_id").is_in(ids))
        .iter_rows(named=True)}
    cited = dict(cited_ids(ids, records, paths.store.read_optional("citations")).iter_rows())
    inputs = {p.arxiv_id: p for p in read_inputs(paths, split_cutoff(paths), sorted(record_rows))}
    split_of = dict(targets.select("arxiv_id", "split").iter_rows())
    out = []
    for arxiv_id in sorted(inputs):
        row = record_rows[arxiv_id]
        view = by_view.get(arxiv_id, {})
        t = Target(inputs[arxiv_id], split_of[arxiv_id],
                   {k: row[k] for k in RECORD_FIELDS},
                   {k: row.get(k) for k in ("backend", "model", "prompt_version")},
                   {k: v for k, v in view.items() if k != "arxiv_id"},
                   _archive(category.get(arxiv_id)),
                   [c for c in cited.get(arxiv_id, []) if c in vault])
        query = f"{view.get('problem_setting') or ''} {view.get('challenge') or ''}"
        banned = excluded_for(arxiv_id, titles.get(arxiv_id),
                              ((p.arxiv_id, p.title) for p in pool))
        allowed = [p for p in pool if p.arxiv_id not in banned]  # InnoEval's self-exclusion
        t.excluded = banned
        same = [p for p in allowed if p.archive == t.archive]
        first = [p for p in same if p.arxiv_id in t.cited_in_vault]
        t.same_field = (first + [p for p in nearest(query, same, NEAR_MISSES)
                                 if p not in first])[:NEAR_MISSES]
        t.other_fields = nearest(view.get("challenge") or query,
                                 [p for p in allowed if p.archive != t.archive],
                                 OTHER_FIELDS,
                                 one_per_archive=True)
        out.append(t)
    return out, vault, sorted(set(ids) - set(record_rows))


def _requests(role: str, targets: list[Target], backend: Backend,
              settings: IdeasSettings) -> list[Request]:
    prompt = load_prompt(PROMPTS[role]) if role in PROMPTS and backend.uses_prompt else None
    schema = ARTIFACT_MODELS[role].model_json_schema()
    key = f"{settings.generation_key()}|{gate_key(settings.llm_judge)}|{role}"
    out = []
    for t in targets:
        context = context_text(t, settings.max_input_chars)  # paper, record, vault context
        digest = hashlib.sha256(context.encode()).hexdigest()
        custom_id = input_hash(t.paper, backend=backend.name, model=backend.model,
                               prompt_version=prompt.version if prompt else "none",
                               schema_version=ARTIFACTS_VERSION,
                               settings_key=f"{key}|{digest}")
        messages = prompt.messages(t.paper.arxiv_id, context) if prompt else []
        out.append(Request(custom_id, t.paper, tuple(messages), schema, ARTIFACT_NAMES[role]))
    return out


def _gate_for(role: str, targets: dict[str, Target], offline_judge: bool):
    policy = POLICIES[role]

    def gate(request: Request):
        base = (paper_gate(request.paper, offline_judge=offline_judge) if policy is None
                else paper_gate(request.paper, policy, offline_judge))
        record = targets[request.paper.arxiv_id].record
        return dataclasses.replace(base, terms=tuple(method_terms(record)))
    return gate


def _rows(role: str, outcome: BatchOutcome, backend: Backend, prompt_version: str,
          targets: dict[str, Target], vault: set[str]) -> tuple[list[dict], list[dict]]:
    created = now()
    artifacts, failures = [], []
    for item in outcome.accepted:
        t = targets[item.request.paper.arxiv_id]
        data = item.record.model_dump(mode="json")
        cited = artifact_citations(role, data)
        provenance = (t.record_provenance if role == "report_writer" else
                      {"backend": backend.name, "model": backend.model,
                       "prompt_version": prompt_version})
        artifacts.append({
            "arxiv_id": t.paper.arxiv_id, "role": role, "artifact": ARTIFACT_NAMES[role],
            "split": t.split, "data": json.dumps(data, ensure_ascii=False, sort_keys=True),
            "citations": [c for c in cited if c in vault],
            "unresolved_citations": [c for c in cited if c not in vault], **provenance,
            "input_hash": item.request.custom_id, "schema_version": ARTIFACTS_VERSION,
            "attempts": item.attempts, "leaky_answer": item.leaky,
            "masked_findings": findings_rows(item.removed), "created_at": created})
    for item in outcome.rejected:
        failures.append({
            "arxiv_id": item.request.paper.arxiv_id, "role": role,
            "backend": backend.name, "model": backend.model, "prompt_version": prompt_version,
            "input_hash": item.request.custom_id, "attempts": item.attempts,
            "reason": item.reasons[-1], "reasons": item.reasons, "raw_answer": item.answer.text,
            "finish_reason": item.answer.finish_reason, "failed_at": created})
    return artifacts, failures


def _without_record(ids: list[str], settings: IdeasSettings) -> list[dict]:
    """A quarantine row per role for a target that has no masked record to rebuild from."""
    reason = "no masked record for this target: materialize masked_records"
    return [{"arxiv_id": i, "role": role, "backend": settings.backend,
             "model": settings.model or "none", "prompt_version": "none", "input_hash": "none",
             "attempts": 0, "reason": reason, "reasons": [reason], "raw_answer": None,
             "finish_reason": None, "failed_at": now()}
            for i in ids for role in ARTIFACT_MODELS]


def prepared_answers(targets: list[Target], vault: set[str]) -> dict[str, dict[str, Any]]:
    """The extractive artifacts of every target, by role then arxiv id."""
    gaps = {t.paper.arxiv_id: extract_gaps(t, vault) for t in targets}
    return {"gap_finder": gaps,
            "innovator": {t.paper.arxiv_id: extract_candidate(t, gaps[t.paper.arxiv_id])
                          for t in targets},
            "report_writer": {t.paper.arxiv_id: t.record for t in targets}}


def split_cutoff(paths: VaultPaths) -> date:
    """The cutoff the `splits` table was built at (this stage reads it from its input, not
    from the settings of the `splits` stage)."""
    cutoffs = paths.store.read_required("splits", ["cutoff"])["cutoff"].unique()
    return cutoffs[0] if cutoffs.len() else CUTOFF


def build_role_artifacts(paths: VaultPaths, settings: IdeasSettings | None = None,
                         backend: Backend | None = None) -> ArtifactsReport:
    """Reconstruct, gate and write every target's three artifacts (or their failures)."""
    settings = settings or IdeasSettings()
    targets, vault, without = load_targets(paths)
    report = ArtifactsReport(targets=len(targets) + len(without), without_record=without)
    by_id = {t.paper.arxiv_id: t for t in targets}
    prepared = prepared_answers(targets, vault)
    own = backend is None and settings.backend != "extractive"
    llm = backend or (make_backend(settings) if own else None)
    artifacts: list[dict] = []
    failures = _without_record(without, settings)
    kept: list[pl.DataFrame] = []  # rows of an earlier run whose input hash is unchanged
    kept_failures: list[pl.DataFrame] = []
    before = paths.store.read_optional(ROLE_ARTIFACTS)
    failed_before = None if settings.retry_failures else \
        paths.store.read_optional(ROLE_ARTIFACT_FAILURES)
    try:
        for role in ARTIFACT_MODELS:
            chosen: Backend
            if llm is None or role not in PROMPTS:  # the report is the record already made
                by_request = {}
                requests = _requests(role, targets, ArtifactExtractor({}), settings)
                for request in requests:
                    by_request[request.custom_id] = prepared[role][request.paper.arxiv_id]
                chosen = ArtifactExtractor(by_request)
            else:
                chosen = llm
                requests = _requests(role, targets, chosen, settings)
            hashes = [r.custom_id for r in requests]
            old = _same_input(before, ROLE_ARTIFACTS, role, hashes)
            old_failed = _same_input(failed_before, ROLE_ARTIFACT_FAILURES, role, hashes)
            known = set(old["input_hash"]) | set(old_failed["input_hash"])
            requests = [r for r in requests if r.custom_id not in known]
            kept.append(old)
            kept_failures.append(old_failed)
            report.reused += old.height + old_failed.height
            report.asked += len(requests)
            second = judge_for(chosen, settings.llm_judge)
            prompt = load_prompt(PROMPTS.get(role, settings.prompt))
            outcome = run_batch(chosen, requests, prompt, settings.max_retries,
                                _gate_for(role, by_id, second is None),
                                ARTIFACT_MODELS[role], second)
            version = prompt.version if chosen.uses_prompt else "none"
            rows, bad = _rows(role, outcome, chosen, version, by_id, vault)
            artifacts += rows
            failures += bad
            report.by_role[role] = len(rows) + old.height
    finally:
        if own and llm is not None:
            llm.close()
    made = pl.concat([*kept, pl.DataFrame(artifacts, schema=ROLE_ARTIFACTS.polars)])
    quarantined = pl.concat([*kept_failures,
                             pl.DataFrame(failures, schema=ROLE_ARTIFACT_FAILURES.polars)])
    report.artifacts = paths.store.write(ROLE_ARTIFACTS, made.sort("arxiv_id", "role"))
    report.quarantined = paths.store.write(ROLE_ARTIFACT_FAILURES,
                                           quarantined.sort("arxiv_id", "role"))
    return report


def _same_input(frame: pl.DataFrame | None, schema: TableSchema, role: str,
                hashes: list[str]) -> pl.DataFrame:
    """Rows of an earlier run for ``role`` whose input hash is asked again: not asked twice
    (an LLM backend is not paid twice for the same artifact)."""
    if frame is None:
        return pl.DataFrame(schema=schema.polars)
    return frame.filter((pl.col("role") == role) & pl.col("input_hash").is_in(hashes))
