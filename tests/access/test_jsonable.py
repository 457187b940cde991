"""`jsonable` turns an answer into what HTTP and MCP carry exactly as a JSON round trip with
`default=str` would (dates as ISO days), without the round trip."""

from __future__ import annotations

import json
from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_pipeline.access.tools import jsonable

leaves = (st.none() | st.booleans() | st.integers() | st.text(max_size=8)
          | st.floats(allow_nan=False) | st.dates(min_value=date(1990, 1, 1)))
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
