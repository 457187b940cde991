"""The postfiltered search answers exactly what the prefiltered query answers, on an IVF
index and on an exact one, for filters that pass many rows and filters that pass few."""

from __future__ import annotations

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lancedb.index import IvfFlat

from vault_pipeline.access import filtered_search
from vault_pipeline.access.filtered_search import PassRates

ROWS, DIM = 3_000, 16
COLUMNS = ["arxiv_id", "view", "year"]


@pytest.fixture(scope="module", params=["exact", "ivf"])
def table(request, tmp_path_factory):
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(ROWS, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    data = pa.table({
        "arxiv_id": [f"p{i // 5}" for i in range(ROWS)],
        "view": [("problem", "challenge", "gap", "idea", "proposal")[i % 5] for i in range(ROWS)],
        "year": rng.integers(1990, 2026, ROWS),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)})
    db = lancedb.connect(tmp_path_factory.mktemp("filtered"))
    made = db.create_table("t", data)
    if request.param == "ivf":
        made.create_index("vector", config=IvfFlat(distance_type="dot", num_partitions=16))
    return made


def prefiltered(table, vectors, where, depth) -> list[list[tuple]]:
    found = filtered_search._query(table, vectors, where, depth, COLUMNS, "dot", 4, True)
    return [[(r["arxiv_id"], r["view"]) for r in rows] for rows in found]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), year=st.integers(1989, 2027),
       views=st.sampled_from(["'problem'", "'problem', 'challenge'", "'gap'"]),
       depth=st.integers(1, 60), queries=st.integers(1, 5))
def test_answers_are_the_prefilters(table, seed, year, views, depth, queries) -> None:
    vectors = np.random.default_rng(seed).normal(size=(queries, DIM)).astype(np.float32)
    where = f"year < {year} AND view IN ({views})"
    rates = PassRates()
    for _ in range(2):  # the first guess of the pass rate, then the measured one
        got = filtered_search.search(table, vectors, where, depth, COLUMNS, "dot", 4, rates)
        assert [[(r["arxiv_id"], r["view"]) for r in rows] for rows in got] == \
            prefiltered(table, vectors, where, depth)


def test_a_filter_that_passes_few_rows_goes_to_the_prefilter() -> None:
    rates = PassRates()
    assert rates.fetch("f", 20) == 120  # 20 / 0.25 * 1.5
    rates.observe("f", 1_000, 1)
    for _ in range(30):
        rates.observe("f", 1_000, 1)
    assert rates.fetch("f", 20) is None
    rates.observe("g", 100, 100)
    assert rates.fetch("g", 20) == 30
