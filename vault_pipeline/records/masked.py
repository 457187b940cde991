"""The results-masked record: one JSON object per paper, defined once as pydantic models.

The same models give the JSON schema sent to LLM backends (constrained decoding), validate
every answer, and define the Arrow struct columns of the `masked_records` table
(:mod:`vault_pipeline.records.arrow`). Every object forbids extra keys and every field is
required (nullable where the paper may not say), which is what strict JSON-schema modes of
OpenAI-compatible servers and vLLM's structured outputs expect."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from vault_pipeline.records.placeholders import nullify

SCHEMA_VERSION = "masked-record/2"
THESIS_MAX_WORDS = 30

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
# Where the paper may not say: null, never a "Not stated" sentence passed off as content.
Stated = Text | None

# A number standing alone (not part of a name such as GPT-4, CIFAR-10, 3D or L2).
_BARE_NUMBER = re.compile(r"(?<![\w.\-])[-+]?\d+(?:[.,]\d+)*\s*%?(?![\w\-])")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CoreProblem(_Strict):
    statement: Stated = Field(description="What fails today and why; never the solution; "
                                          "null if not stated.")
    why_it_matters: Stated = Field(
        description="Motivation and the gap in prior work (not the solution); null if not "
                    "stated.")
    failing_example: Stated = Field(description="A concrete example of the failure; null "
                                                "if the paper gives none.")


class KeyNovelty(_Strict):
    name: Stated = Field(description="Short name of the idea; null when the paper gives "
                                     "it none.")
    explanation: list[Text] = Field(
        max_length=3,
        description="Two or three plain-language bullets explaining the idea (fewer, or "
                    "none, when the paper does not explain it).")


class ProblemDefinition(_Strict):
    setting: Stated = Field(description="The formal setting of the problem, without the "
                                        "solution; null if not stated.")
    inputs: list[Text] = Field(description="What a solution receives.")
    outputs: list[Text] = Field(description="What a solution produces.")


class KeyTerm(_Strict):
    term: Text
    definition: Text


class RelatedWork(_Strict):
    sub_area: Text = Field(description="The line of prior work.")
    what_it_does: Stated = Field(description="What it does, at the level of mechanism.")
    open_gap: Stated = Field(description="What it leaves unresolved; null if not stated.")
    citations: list[Text] = Field(description="Citation keys or ids of the works meant.")


class Module(_Strict):
    name: Text
    role: Stated
    inputs: list[Text]
    outputs: list[Text]


class DesignChoice(_Strict):
    choice: Text
    reason: Stated


class Method(_Strict):
    flow: Stated = Field(description="How the method works, end to end; null if not "
                                     "stated.")
    modules: list[Module]
    structural_novelties: list[Text]
    design_choices: list[DesignChoice]
    pseudocode: str | None = Field(description="Pseudocode, where the paper has it.")
    theory: str | None = Field(description="Theory (assumptions, statements), where given.")


class Hyperparameter(_Strict):
    name: Text
    value: Text


class ModelDetails(_Strict):
    base_model: str | None
    training_method: str | None
    objectives: list[Text]
    adaptation: str | None
    hyperparameters: list[Hyperparameter]


class Difference(_Strict):
    related_method: Text
    difference: Text


class ProposedEvaluation(_Strict):
    setting: Stated = Field(description="The evaluation the authors plan: a plan, not a "
                                        "result; null if not stated.")
    benchmarks: list[Text]
    baselines: list[Text]
    metrics: list[Text]
    ablations: list[Text]


class FalsifiablePrediction(_Strict):
    tests: Text = Field(description="What the prediction tests.")
    prediction: Text = Field(description="What should be observed if the idea works.")
    refuted_if: Text = Field(description="The observation that would refute it.")


class Reference(_Strict):
    key: str | None = Field(description="Citation key or marker as in the paper.")
    title: str | None = Field(description="Title (or the reference entry) as given.")
    arxiv_id: str | None = Field(description="arXiv id, where known.")
    doi: str | None = Field(description="DOI, where known.")


class MaskedRecord(_Strict):
    """What the authors set out to do and test, with every measured result removed."""

    title: Text = Field(description="Title of the paper.")
    topics: list[Text] = Field(description="Sub-areas and focus of the paper.")
    thesis: Text = Field(description=f"One sentence, under {THESIS_MAX_WORDS} words, "
                                     "no numbers.")
    core_problem: CoreProblem = Field(
        description="What fails and why, why it matters, a concrete failing example.")
    key_novelty: KeyNovelty = Field(
        description="Short name of the idea and 2-3 plain-language explanation bullets.")
    problem_definition: ProblemDefinition = Field(
        description="Formal setting, inputs and outputs.")
    key_terms: list[KeyTerm] = Field(description="Terms the idea relies on, defined.")
    related_work: list[RelatedWork] = Field(
        description="Lines of prior work: mechanism, open gap, citations.")
    method: Method = Field(description="Flow, modules, structural novelties, design choices "
                                       "with reasons, pseudocode and theory where given.")
    model_details: ModelDetails = Field(
        description="Base model, training method, objectives, adaptation, hyperparameters.")
    differences_from_prior_work: list[Difference] = Field(
        description="Related methods and the key difference to each.")
    proposed_evaluation: ProposedEvaluation = Field(
        description="Setting, benchmarks, baselines, metrics, ablations: a plan.")
    falsifiable_predictions: list[FalsifiablePrediction] = Field(
        description="What each tests, the prediction (a metric, a direction, a condition; "
                    "never a figure), what would refute it; only predictions the paper "
                    "supports.")
    limitations: list[Text] = Field(max_length=5,
                                    description="Three to five limitations the paper states "
                                                "(fewer, or none, when it states fewer).")
    references: list[Reference] = Field(
        description="Cited works: key, title, arXiv id and DOI where known.")

    @model_validator(mode="before")
    @classmethod
    def _placeholders_are_absence(cls, data: object) -> object:
        return nullify(data) if isinstance(data, dict) else data

    @field_validator("thesis")
    @classmethod
    def _thesis_short_and_numberless(cls, value: str) -> str:
        words = len(value.split())
        if words >= THESIS_MAX_WORDS:
            raise ValueError(f"thesis has {words} words; it must have fewer than "
                             f"{THESIS_MAX_WORDS}")
        number = _BARE_NUMBER.search(value)
        if number:
            raise ValueError(f"thesis contains the number {number.group().strip()!r}")
        return value


RECORD_FIELDS: tuple[str, ...] = tuple(MaskedRecord.model_fields)


def record_json_schema() -> dict:
    """The JSON schema backends constrain their output to (pydantic's, inlined refs kept)."""
    return MaskedRecord.model_json_schema()
