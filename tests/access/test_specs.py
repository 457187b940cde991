"""The OpenAI function-calling file: shipped as generated, valid JSON Schema, and what the
tools validate with."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from vault_pipeline.access import specs


def test_shipped_file_is_the_generated_one() -> None:
    assert specs.shipped() == specs.render(), "run `vault tools schema > <the file>`"


@pytest.mark.parametrize("tool", json.loads(specs.render()), ids=lambda t: t["function"]["name"])
def test_each_definition_is_a_valid_function(tool: dict) -> None:
    assert tool["type"] == "function" and set(tool["function"]) == {"name", "description",
                                                                     "parameters"}
    assert len(tool["function"]["description"]) > 40
    parameters = tool["function"]["parameters"]
    Draft202012Validator.check_schema(parameters)
    assert parameters["type"] == "object" and parameters["additionalProperties"] is False
    assert all(p.get("description") or p.get("enum") or name in ("k", "page")
               for name, p in parameters["properties"].items())
    assert "$defs" not in json.dumps(parameters) and "anyOf" not in json.dumps(parameters)


GOOD = {"search_prior_art": {"problem_setting": "a", "challenge": "b", "k": 3},
        "search_mechanisms": {"challenge": "b", "exclude_fields": ["cs.LG"]},
        "get_paper": {"id": "2401.00001"},
        "read_paper": {"id": "2401.00001", "section": "Method", "page": 2},
        "get_citations": {"id": "2401.00001", "direction": "cited_by"}}
BAD = [("search_prior_art", {"problem_setting": "a"}), ("search_prior_art",
        {"problem_setting": "a", "challenge": "b", "k": 51}), ("get_paper", {"id": ""}),
       ("get_paper", {"id": 1}), ("read_paper", {"id": "x", "page": 0}),
       ("get_citations", {"id": "x", "direction": "sideways"}),
       ("search_mechanisms", {"challenge": "x" * 8_001}), ("get_paper", {"id": "x", "y": 1})]


@pytest.mark.parametrize("name", list(GOOD))
def test_schema_and_model_accept_the_same(name: str) -> None:
    Draft202012Validator(specs.parameters(name)).validate(GOOD[name])
    specs.validate(name, GOOD[name])


@pytest.mark.parametrize(("name", "arguments"), BAD)
def test_schema_and_model_refuse_the_same(name: str, arguments: dict) -> None:
    assert not Draft202012Validator(specs.parameters(name)).is_valid(arguments)
    with pytest.raises(specs.ArgumentError) as caught:
        specs.validate(name, arguments)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(name)
