"""The tools' one JSON encoder writes and round-trips an answer exactly as the standard
library with `default=str` would (dates as ISO days), including what orjson refuses."""

from __future__ import annotations

import json
from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_pipeline.access.wire import dumps, encode, jsonable

leaves = (st.none() | st.booleans() | st.integers() | st.text(max_size=8)
          | st.integers(min_value=2**64, max_value=2**80)
          | st.floats(allow_nan=False, allow_infinity=False) | st.dates(min_value=date(1990, 1, 1)))
answers = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded CI core
@given(answers)
def test_jsonable_is_the_json_round_trip(value) -> None:
    assert jsonable(value) == json.loads(json.dumps(value, default=str))


def test_a_search_answers_dates_as_days() -> None:
    hit = {"results": [{"id": "2401.00001", "published": date(2024, 1, 2), "score": 0.5}]}
    assert jsonable(hit) == {"results": [{"id": "2401.00001", "published": "2024-01-02",
                                          "score": 0.5}]}


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers)
def test_the_encoding_reads_back_as_the_standard_librarys(value) -> None:
    expected = json.loads(json.dumps(value, default=str))
    assert json.loads(encode(value)) == expected
    assert json.loads(dumps(value, sort_keys=True)) == expected


def test_sorted_keys_and_non_ascii_text_are_kept() -> None:
    assert dumps({"b": "é", "a": 1}, sort_keys=True) == '{"a":1,"b":"é"}'


def test_a_float_json_lacks_is_null_not_an_invalid_literal() -> None:
    assert dumps({"a": float("inf"), "b": float("nan")}) == '{"a":null,"b":null}'
    assert jsonable([float("-inf")]) == [None]
