"""The deterministic parts of the source study's reward, shipped with the data: the
citation-set F1 and each role's structural validity gate. The judged parts (the
reference-free rating, the field-by-field reference-grounded score) need an LLM judge; their
field weights are here so a trainer weights the fields as the study does.

A generation is scored against its training example: `vault score FILE.jsonl --export DIR`
reads one `{"arxiv_id", "role", "generation"}` object per line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from vault_pipeline.datasets.artifacts import ARTIFACT_MODELS, MAX_GAPS_PER_AXIS, artifact_citations
from vault_pipeline.datasets.training import ROLES
from vault_pipeline.errors import VaultError
from vault_pipeline.ideas.validate import answer_object, schema_errors
from vault_pipeline.llm.backends.base import Answer

# The report's mandatory fields: a report without any of them fails the gate.
MANDATORY_REPORT = ("title", "thesis", "core_problem.statement", "problem_definition.setting",
                    "key_novelty.explanation", "method.flow", "proposed_evaluation.setting",
                    "limitations")

# The study's reference-grounded score: uniform for the gap finder, tiered for the others
# (important fields 2, optional 1). The study names the substantive decisions (core
# limitations, proposed method, evaluation design, related work); which schema fields carry
# them is this project's reading.
FIELD_WEIGHTS: dict[str, dict[str, int]] = {
    "gap_finder": {"axis": 1, "prior_work": 1, "prior_methods": 1, "via": 1, "unresolved": 1,
                   "near_misses": 1, "category": 1, "why_it_matters": 1, "evidence_route": 1},
    "innovator": {"intuition": 2, "gap": 2, "borrowed_mechanism": 2, "mapping": 2,
                  "nearest_difference": 2, "source_inspiration": 1, "novelty_type": 1,
                  "why_it_could_work": 1, "key_assumption": 1, "main_risk": 1},
    "report_writer": {"core_problem": 2, "method": 2, "proposed_evaluation": 2,
                      "related_work": 2, "limitations": 2, "title": 1, "thesis": 1,
                      "topics": 1, "key_novelty": 1, "problem_definition": 1, "key_terms": 1,
                      "model_details": 1, "differences_from_prior_work": 1,
                      "falsifiable_predictions": 1, "references": 1},
}
# r = 0.85 g (r_free + r_ref + r_cit) / 3 + 0.15 r_proc (the study's equation 2)
REWARD_MIX = {"rubric": 0.85, "process": 0.15, "free": 1 / 3, "ref": 1 / 3, "cit": 1 / 3}


def citation_f1(generated: Iterable[str], reference: Iterable[str]) -> float:
    """2|G ∩ R| / (|G| + |R|) over the two id sets; 1.0 when both are empty (nothing to
    cite, nothing cited), 0.0 when only one is."""
    g, r = set(generated), set(reference)
    if not g and not r:
        return 1.0
    return 2 * len(g & r) / (len(g) + len(r))


def _get(data: dict[str, Any], dotted: str) -> Any:
    value: Any = data
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def validity(role: str, generation: str | dict[str, Any] | list[Any],
             resolvable: set[str] | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    """The structural validity gate of ``role``: the parsed artifact (None when it is no
    legal artifact) and every reason it fails (empty: g = 1). ``resolvable``: the vault ids
    a citation may name (None: not checked)."""
    if role not in ARTIFACT_MODELS:
        raise VaultError(f"unknown role {role!r}; choose one of {', '.join(ARTIFACT_MODELS)}")
    if isinstance(generation, str):
        data, why = answer_object(Answer("generation", generation, "stop"))
        if data is None:
            # a list of candidate blocks parses too; the innovator must give one
            try:
                data = json.loads(generation)
            except json.JSONDecodeError:
                return None, [why or "not JSON"]
    else:
        data = generation
    if role == "innovator" and isinstance(data, list):
        if len(data) != 1:
            return None, [f"the innovator must give one candidate, not {len(data)}"]
        data = data[0]
    if not isinstance(data, dict):
        return None, ["the generation is not a JSON object"]
    problems: list[str] = []
    if role == "gap_finder":  # said before the schema, which also refuses it
        problems += [f"axis {i} has {len(a.get('gaps') or [])} gaps; at most "
                     f"{MAX_GAPS_PER_AXIS}" for i, a in enumerate(data.get("axes") or [])
                     if isinstance(a, dict) and len(a.get("gaps") or []) > MAX_GAPS_PER_AXIS]
    try:
        record = ARTIFACT_MODELS[role].model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        return None, [*problems, f"illegal schema: {schema_errors(exc)}"]
    if role == "gap_finder" and not any(a["gaps"] for a in record["axes"]):
        problems.append("no gap")
    if role == "report_writer":
        problems += [f"mandatory field {f} is empty" for f in MANDATORY_REPORT
                     if not _get(record, f)]
    if resolvable is not None:
        problems += [f"cited id {i} is not in the vault" for i in
                     artifact_citations(role, record) if i not in resolvable]
    return record, problems


@dataclass
class Score:
    arxiv_id: str
    role: str
    valid: bool  # the gate g
    problems: list[str]
    citation_f1: float | None  # None: no legal artifact to take citations from
    gated_citation_f1: float  # g · r_cit
    cited: list[str] = field(default_factory=list)


def score(role: str, generation: str | dict[str, Any], reference_citations: Iterable[str],
          resolvable: set[str] | None = None, arxiv_id: str = "") -> Score:
    """The gate and the citation-set F1 of one generation against its reference set."""
    record, problems = validity(role, generation, resolvable)
    cited = artifact_citations(role, record) if record is not None else []
    f1 = citation_f1(cited, reference_citations) if record is not None else None
    ok = record is not None and not problems
    return Score(arxiv_id, role, ok, problems, f1, f1 if ok and f1 is not None else 0.0,
                 cited)


def _examples(export_dir: Path) -> tuple[dict[tuple[str, str], list[str]], set[str] | None]:
    """(arxiv_id, role) → reference citation set, and the vault ids (None: the export has
    no vault, citations are not checked), from an export."""
    examples = [pl.read_parquet(f, columns=["arxiv_id", "role", "artifact_citations"])
                for role in ROLES for f in sorted((export_dir / role).glob("*.parquet"))]
    if not examples:
        raise VaultError(f"{export_dir} holds no training export (no <role>/<split>.parquet)")
    frame = pl.concat(examples)
    refs = {(a, r): list(c) for a, r, c in frame.iter_rows()}
    vault_file = export_dir / "vault" / "papers.parquet"
    vault = (set(pl.read_parquet(vault_file, columns=["arxiv_id"])["arxiv_id"].to_list())
             if vault_file.exists() else None)
    return refs, vault


def score_file(generations: Path, export_dir: Path) -> Iterator[Score]:
    """Score every line of a JSONL of generations against an export's examples."""
    refs, vault = _examples(export_dir)
    with generations.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                key = (item["arxiv_id"], item["role"])
                generation = item.get("generation", item.get("completion"))
            except (json.JSONDecodeError, KeyError, TypeError):
                raise VaultError(f"{generations}:{number}: not a JSON object with arxiv_id, "
                                 "role and generation") from None
            if key not in refs:
                raise VaultError(f"{generations}:{number}: no example for {key[0]} as "
                                 f"{key[1]} in {export_dir}")
            if generation is None:
                raise VaultError(f"{generations}:{number}: no generation")
            yield score(key[1], generation, refs[key], vault, key[0])


def as_dict(result: Score) -> dict[str, Any]:
    return asdict(result)
