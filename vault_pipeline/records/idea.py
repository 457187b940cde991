"""The six-part idea record of the InnoEval evaluation sets (seed 000): TLDR, motivation,
research question, method, experimental setting, expected results. Defined once as a pydantic
model: it gives the JSON schema sent to LLM backends, validates every answer, and defines the
`idea` struct column of the evaluation tables (via :mod:`vault_pipeline.records.arrow`).

Like the vault's masked record, it states what the authors set out to do and to test, never
what they found: `expected_results` is a prediction in planning voice ("should", "we expect"),
and the leak checker of the vault rejects any field that states a measured result. Method,
experimental setting and expected results may be null where the submission does not say
(InnoEval treats the last three parts as optional)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vault_pipeline.records.arrow import arrow_type
from vault_pipeline.records.masked import Text
from vault_pipeline.records.placeholders import nullify

SCHEMA_VERSION = "idea-record/2"
PLANNING_FIELDS = frozenset({"expected_results"})  # hypothetical by construction


class IdeaRecord(BaseModel):
    """One research idea, results withheld."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tldr: Text = Field(description="The basic idea in one or two sentences, no results.")
    motivation: Text = Field(description="Why the problem matters and what prior work "
                                         "leaves open.")
    research_question: Text = Field(description="The question the work sets out to answer.")
    method: str | None = Field(description="How the idea works: the approach, its "
                                           "components and their roles; null if not stated.")
    experimental_setting: str | None = Field(
        description="The planned evaluation: tasks, datasets, baselines, metrics; a plan, "
                    "not a result; null if not stated.")
    expected_results: str | None = Field(
        description="What should be observed if the idea works, as a prediction; never a "
                    "measured result; null if not stated.")

    @model_validator(mode="before")
    @classmethod
    def _placeholders_are_absence(cls, data: object) -> object:
        return nullify(data) if isinstance(data, dict) else data


IDEA_FIELDS: tuple[str, ...] = tuple(IdeaRecord.model_fields)
NULLABLE_FIELDS = frozenset({"method", "experimental_setting", "expected_results"})


def idea_json_schema() -> dict:
    return IdeaRecord.model_json_schema()


def idea_arrow_type():
    """The Arrow struct of an `idea` column."""
    return arrow_type(IdeaRecord)
