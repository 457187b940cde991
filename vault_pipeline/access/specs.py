"""The agent tools' arguments, declared once: each tool's Pydantic model validates every call
(Python, HTTP, MCP, batches) and yields the JSON schema that the OpenAI function-calling
file and the MCP tool list carry, so no face can accept what another refuses."""

from __future__ import annotations

import json
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MAX_K = 50
MAX_TEXT = 8_000  # characters of a search text: a view is a few hundred
MAX_FIELDS = 20
SCHEMA_FILE = "tools.openai.json"

ArxivId = Annotated[str, Field(min_length=1, max_length=64,
                               description="An arXiv id as a search or citation gave it "
                                           "(e.g. `2401.00001`; a version suffix is ignored).")]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
K = Annotated[int, Field(ge=1, le=MAX_K, description="How many papers to return.")]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchPriorArt(_Args):
    """Find same-problem prior art: papers of the vault whose problem setting and challenge
    are closest to the ones given. Each result is one paper (its best-matching view)."""

    problem_setting: Text = Field(description="The problem setting: task, inputs, outputs.")
    challenge: Text = Field(description="What fails today and why it matters.")
    k: K = 10


class SearchMechanisms(_Args):
    """Find transferable mechanisms in other fields: papers whose challenge resembles the one
    given, outside the excluded arXiv categories or archives (default: the session target's
    own categories). Read a hit's intuition and proposal with get_paper."""

    challenge: Text = Field(description="The challenge, stated without field-specific terms.")
    exclude_fields: list[Annotated[str, Field(max_length=32)]] | None = Field(
        default=None, max_length=MAX_FIELDS,
        description="arXiv categories (`cs.LG`) or archives (`cs`) to leave out; omit for "
                    "the session target's categories.")
    k: K = 10


class GetPaper(_Args):
    """A paper's bibliographic record (title, authors, date, categories) and its five views
    (problem_setting, challenge, research_gap, intuition, proposal)."""

    id: ArxivId


class ReadPaper(_Args):
    """A paper's full text in bounded pages: the whole text, or one section of it (a heading
    as listed in `sections`, or its number), cut into pages; `page` counts from 1."""

    id: ArxivId
    section: Annotated[str, Field(max_length=200)] | None = Field(
        default=None, description="A section heading (or its number in `sections`).")
    page: Annotated[int, Field(ge=1, le=10_000)] = Field(default=1,
                                                         description="Page, from 1.")


class GetCitations(_Args):
    """The vault papers a paper cites (`references`) or that cite it (`cited_by`)."""

    id: ArxivId
    direction: Literal["references", "cited_by"] = "references"
    k: Annotated[int, Field(ge=1, le=200)] = 50


TOOLS: dict[str, type[_Args]] = {
    "search_prior_art": SearchPriorArt,
    "search_mechanisms": SearchMechanisms,
    "get_paper": GetPaper,
    "read_paper": ReadPaper,
    "get_citations": GetCitations,
}


class ArgumentError(ValueError):
    """A call the schemas refuse (unknown tool, missing or ill-typed argument)."""


def validate(name: str, arguments: Any) -> _Args:
    """The call's arguments as its model, or one line saying what is wrong."""
    model = TOOLS.get(name)
    if model is None:
        raise ArgumentError(f"unknown tool {name!r} ({', '.join(TOOLS)})")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError(f"{name}: arguments must be a JSON object")
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        raise ArgumentError(f"{name}: {where}: {first['msg']}") from None


def _clean(schema: Any) -> Any:
    """Pydantic's schema as function-calling wants it: no titles, an optional argument as
    its plain type (absent rather than null)."""
    if isinstance(schema, dict):
        options = schema.get("anyOf")
        if options and any(o.get("type") == "null" for o in options):
            rest = [o for o in options if o.get("type") != "null"]
            merged = {k: v for k, v in schema.items() if k != "anyOf"}
            if len(rest) == 1:
                merged.update(rest[0])
            schema = merged
            schema.pop("default", None)
        return {k: _clean(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def parameters(name: str) -> dict[str, Any]:
    """The JSON schema of a tool's arguments."""
    schema = _clean(TOOLS[name].model_json_schema())
    schema.pop("description", None)  # the function's own description says it
    schema["additionalProperties"] = False
    return schema


def description(name: str) -> str:
    return " ".join((TOOLS[name].__doc__ or "").split())


def openai_tools() -> list[dict[str, Any]]:
    """Every tool as an OpenAI function-calling definition (`tools=` of a chat request)."""
    return [{"type": "function", "function": {"name": name, "description": description(name),
                                              "parameters": parameters(name)}}
            for name in TOOLS]


def render() -> str:
    return json.dumps(openai_tools(), indent=2, ensure_ascii=False) + "\n"


def shipped() -> str:
    """The schema file shipped with the package (what a trainer loads)."""
    return (resources.files("vault_pipeline.access") / SCHEMA_FILE).read_text(encoding="utf-8")
