"""The reference artifacts of the producer roles, defined once as pydantic models, as the
source study (IdeaScientist) defines them: the gap finder's gaps, the innovator's candidate,
and the report writer's report (the results-masked record itself).

The same models give the JSON schema sent to LLM backends, validate every answer (reference
or generation: :mod:`.rewards`), and fix the citation set of each artifact. Fields a paper
may not say are nullable: the extractive backend fills what the record states and leaves the
rest null, never a placeholder."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from vault_pipeline.ids import normalize_arxiv_id
from vault_pipeline.integrity.gate import FieldPolicy
from vault_pipeline.records.masked import MaskedRecord, Stated, Text, _Strict
from vault_pipeline.records.placeholders import nullify

ARTIFACTS_VERSION = "role-artifacts/1"
MAX_GAPS_PER_AXIS = 2

# The study's fixed list of methodological flaws a gap can name.
GAP_CATEGORIES = ("missing mechanism", "algorithmic limitation", "wrong inductive bias",
                  "credit-assignment flaw", "training-objective mismatch",
                  "representation limitation", "scalability limit")
NOVELTY_TYPES = ("new topic", "recombination of distant concepts",
                 "reinforcing a weak connection")
GapCategory = Literal["missing mechanism", "algorithmic limitation", "wrong inductive bias",
                      "credit-assignment flaw", "training-objective mismatch",
                      "representation limitation", "scalability limit"]
NoveltyType = Literal["new topic", "recombination of distant concepts",
                      "reinforcing a weak connection"]


class _Artifact(_Strict):
    @model_validator(mode="before")
    @classmethod
    def _placeholders_are_absence(cls, data: object) -> object:
        return nullify(data) if isinstance(data, dict) else data


class NearMiss(_Artifact):
    arxiv_id: Text = Field(description="Vault id of a prior paper (before the cutoff) that "
                                       "comes close to closing the gap.")
    lacks: Stated = Field(description="What that paper is missing; null if not known.")


class Gap(_Artifact):
    prior_methods: Text = Field(description="X: what prior methods do.")
    via: Stated = Field(description="Y: the mechanism they do it with.")
    unresolved: Text = Field(description="Z: the methodological problem Y leaves unresolved "
                                         "(never its solution).")
    near_misses: list[NearMiss] = Field(description="Near-miss vault papers and what each "
                                                    "lacks.")
    category: GapCategory | None = Field(description="The flaw, from the fixed list; null "
                                                     "when it cannot be told.")
    why_it_matters: Stated = Field(description="Why closing the gap matters.")
    evidence_route: Stated = Field(description="Observable evidence that a future method "
                                               "closes the gap.")


class ChallengeAxis(_Artifact):
    axis: Text = Field(description="The challenge axis (one aspect of what fails).")
    prior_work: Stated = Field(description="Mechanism-level summary of prior work on it.")
    gaps: list[Gap] = Field(max_length=MAX_GAPS_PER_AXIS,
                            description=f"At most {MAX_GAPS_PER_AXIS} gaps, each contrastive.")


class Gaps(_Artifact):
    """The gap finder's artifact (gaps.md): no solution in it."""

    axes: list[ChallengeAxis] = Field(min_length=1, description="One entry per axis.")


class Candidate(_Artifact):
    """The innovator's artifact: one candidate block."""

    intuition: Text = Field(description="One-sentence intuition.")
    gap: Text = Field(description="The gap it attacks.")
    source_paper_id: Stated = Field(description="Vault id of the source inspiration (another "
                                                "sub-field, before the cutoff).")
    source_inspiration: Stated = Field(description="What the source paper contributes.")
    borrowed_mechanism: Stated = Field(description="The mechanism borrowed from it.")
    novelty_type: NoveltyType | None = Field(description="One of the three novelty types.")
    mapping: Stated = Field(description="Plain-language mapping onto the target problem: no "
                                        "pseudocode, formulas, architectures or "
                                        "hyperparameters.")
    why_it_could_work: Stated = Field(description="Why it could work.")
    key_assumption: Stated = Field(description="The assumption that must hold.")
    nearest_difference: Stated = Field(description="How it differs from the nearest "
                                                   "same-domain work.")
    main_risk: Stated = Field(description="The risk most likely to sink it.")


ARTIFACT_MODELS: dict[str, type[BaseModel]] = {"gap_finder": Gaps, "innovator": Candidate,
                                               "report_writer": MaskedRecord}
ARTIFACT_NAMES = {"gap_finder": "gaps", "innovator": "candidate", "report_writer": "report"}

# Ids and labels are not claims; the gaps are the problem the innovator must solve, so
# every gap text is a problem field (no solution, no method name).
_IDS = r"^(?:.*\.)?(?:arxiv_id|source_paper_id|category|novelty_type)$"
GAPS_POLICY = FieldPolicy(re.compile(_IDS), re.compile(r"(?!x)x"), re.compile(r"^axes\b"))
CANDIDATE_POLICY = FieldPolicy(re.compile(_IDS), re.compile(r"(?!x)x"), re.compile(r"(?!x)x"))


def artifact_citations(role: str, artifact: dict[str, Any] | None) -> list[str]:
    """The ids an artifact cites (before resolving against the vault), sorted."""
    if not artifact:
        return []
    ids: list[str | None] = []
    if role == "gap_finder":
        ids = [m.get("arxiv_id") for a in artifact.get("axes") or []
               for g in a.get("gaps") or [] for m in g.get("near_misses") or []]
    elif role == "innovator":
        ids = [artifact.get("source_paper_id")]
    elif role == "report_writer":
        ids = [r.get("arxiv_id") for r in artifact.get("references") or []]
    return sorted({_normal(i) for i in ids if isinstance(i, str) and i.strip()})


def _normal(text: str) -> str:
    """The version-less id; a text that is no arXiv id is kept as given (it will not
    resolve, which the validity gate reports)."""
    try:
        return normalize_arxiv_id(text.strip())
    except ValueError:
        return text.strip()
