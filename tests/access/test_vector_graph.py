"""The tools' in-memory search: on a small table it answers what LanceDB's exact prefiltered
query answers for the predicates sessions build; on a graph it never returns a row outside
the filter and finds the true neighbours; its saved graph follows the table's version."""

from __future__ import annotations

from datetime import date, timedelta

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_pipeline.access import vector_graph
from vault_pipeline.access.vector_graph import VectorGraph

DIM = 16
VIEWS = ("problem_setting", "challenge", "research_gap", "intuition", "proposal")
FIELDS = ("cs.LG", "cs.CL", "q-bio.NC", "hep-th")


def rows(n: int, seed: int = 5) -> pa.Table:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cats = [[FIELDS[i % 4]] + ([FIELDS[(i + 1) % 4]] if i % 3 == 0 else [])
            for i in range(n // 5) for _ in VIEWS]
    days = rng.integers(0, 4_000, n // 5).repeat(5)
    return pa.table({
        "arxiv_id": [f"2101.{i // 5:05d}" for i in range(n)],
        "view": list(VIEWS) * (n // 5),
        "text": [f"text {i}" for i in range(n)],
        "version_created": pa.array([date(2014, 1, 1) + timedelta(days=int(d)) for d in days],
                                    pa.date32()),
        "categories": cats,
        "archives": [sorted({c.split(".")[0] for c in c_}) for c_ in cats],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)})


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    table = lancedb.connect(tmp_path_factory.mktemp("small")).create_table("t", rows(1_500))
    return table, VectorGraph.of_table(table, None)


def where_of(day: int, views: list[str], fields: list[str], hidden: list[int]) -> str:
    clause = f"version_created < date '{(date(2014, 1, 1) + timedelta(days=day)).isoformat()}'"
    clause += " AND view IN (" + ", ".join(f"'{v}'" for v in views) + ")"
    if fields:
        clause += " AND NOT (" + " OR ".join(
            f"array_has({'categories' if '.' in f else 'archives'}, '{f}')" for f in fields) + ")"
    if hidden:
        clause += " AND arxiv_id NOT IN (" + ", ".join(f"'2101.{h:05d}'" for h in hidden) + ")"
    return clause


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), day=st.integers(0, 4_100),
       views=st.lists(st.sampled_from(VIEWS), min_size=1, max_size=3, unique=True),
       fields=st.lists(st.sampled_from(["cs.LG", "cs", "hep-th", "q-bio"]), max_size=2,
                       unique=True),
       hidden=st.lists(st.integers(0, 299), max_size=4), depth=st.integers(1, 40))
def test_a_small_table_answers_as_lancedbs_exact_prefilter(small, seed, day, views, fields,
                                                           hidden, depth) -> None:
    table, graph = small
    assert graph.graph is None  # under the graph's row threshold: exact
    query = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    where = where_of(day, views, fields, hidden)
    want = (table.search(query).distance_type("dot").where(where, prefilter=True)
            .select(["arxiv_id", "view"]).limit(depth).to_arrow().to_pylist())
    got = graph.search(query[None], where, depth)[0]
    assert [(r["arxiv_id"], r["view"]) for r in got] == [(r["arxiv_id"], r["view"])
                                                         for r in want]
    for hit, row in zip(got, want, strict=True):
        assert hit["score"] == pytest.approx(1 - row["_distance"], abs=1e-5)


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph")
    table = lancedb.connect(folder).create_table("t", rows(6_000, seed=9))
    return table, VectorGraph.of_table(table, folder / "graph", min_rows=1_000), folder


def test_the_graph_keeps_to_the_filter_and_finds_the_neighbours(walked) -> None:
    _, graph, _ = walked
    assert graph.graph is not None
    graph.exact_rows = 100  # every filter below walks the graph
    queries = np.random.default_rng(1).normal(size=(40, DIM)).astype(np.float32)
    for where in (where_of(4_000, ["problem_setting", "challenge"], [], [3, 4]),
                  where_of(2_000, ["challenge"], ["cs"], [])):
        positions, _ = graph.passing(where)
        allowed = set(positions.tolist())
        found = graph.search(queries, where, 10)
        exact, _ = vector_graph._exact(graph.vectors, positions, queries, 10)
        ids = {(r["arxiv_id"], r["view"]): p for p, r in enumerate(graph.rows.to_pylist())}
        recall = []
        for hits, truth in zip(found, exact, strict=True):
            got = [ids[(h["arxiv_id"], h["view"])] for h in hits]
            assert len(got) == 10 and set(got) <= allowed
            recall.append(len(set(got) & set(truth.tolist())) / 10)
        assert np.mean(recall) >= 0.9


def test_a_filter_passing_few_rows_is_answered_exactly(walked) -> None:
    _, graph, _ = walked
    graph.exact_rows = 500
    where = where_of(300, ["proposal"], [], [])  # about 1/13 of the papers, one view
    positions, _ = graph.passing(where)
    assert 0 < len(positions) < 500
    queries = np.random.default_rng(2).normal(size=(5, DIM)).astype(np.float32)
    exact, _ = vector_graph._exact(graph.vectors, positions, queries, 7)
    texts = graph.rows.column("text").to_pylist()
    for hits, truth in zip(graph.search(queries, where, 7), exact, strict=True):
        assert [h["text"] for h in hits] == [texts[p] for p in truth]


def test_nothing_passes_or_nothing_held_gives_empty_answers(walked, tmp_path) -> None:
    _, graph, _ = walked
    assert graph.search(np.ones((2, DIM), np.float32), "view = 'none'", 5) == [[], []]
    empty = lancedb.connect(tmp_path).create_table("t", rows(0))
    assert VectorGraph.of_table(empty, tmp_path / "g").search(
        np.ones((1, DIM), np.float32), "view = 'challenge'", 5) == [[]]


def test_the_saved_graph_follows_the_table_version(walked, monkeypatch) -> None:
    table, _, folder = walked
    saved = sorted((folder / "graph").glob("*.faiss"))
    assert [p.name for p in saved] == [f"v{table.version}-6000.faiss"]
    built = []
    real = vector_graph.faiss_hnsw
    monkeypatch.setattr(vector_graph, "faiss_hnsw", lambda *a: built.append(1) or real(*a))
    VectorGraph.of_table(table, folder / "graph", min_rows=1_000)
    assert built == []  # read back, not built
    saved[0].write_bytes(b"damaged")
    again = VectorGraph.of_table(table, folder / "graph", min_rows=1_000)
    assert built == [1] and again.graph.ntotal == 6_000
    table.delete("arxiv_id = '2101.00000'")  # a new version of the table: a new graph
    VectorGraph.of_table(table, folder / "graph", min_rows=1_000)
    assert built == [1, 1]
    assert [p.name for p in (folder / "graph").glob("*.faiss")] == [
        f"v{table.version}-5995.faiss"]


def test_a_graph_of_some_views_holds_them_alone_and_answers_as_the_whole(walked,
                                                                          tmp_path) -> None:
    """The tools' graph holds only the views they search: its answers for those views are
    the whole table's, and it is saved under a name of its own."""
    table, whole, _ = walked
    views = ("problem_setting", "challenge")
    part = VectorGraph.of_table(table, tmp_path / "graph", min_rows=10_000, views=views)
    held = table.count_rows("view IN ('problem_setting', 'challenge')")
    assert len(part) == held < table.count_rows()
    assert set(part.rows.column("view").to_pylist()) == set(views)
    whole.exact_rows = part.exact_rows = 10_000  # both exact: the same answers expected
    queries = np.random.default_rng(3).normal(size=(6, DIM)).astype(np.float32)
    where = where_of(3_000, list(views), ["hep-th"], [7])
    assert part.search(queries, where, 12) == whole.search(queries, where, 12)
    assert part.search(queries, "view = 'proposal'", 5) == [[]] * 6
    assert part.name.startswith(f"v{table.version}-{held}-") and part.name != whole.name


class _Encoder:
    """Random unit vectors, one per text (seeded by the text): queries off the rows."""

    name = "fake-encoder"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.stack([np.random.default_rng(sum(map(ord, t))).normal(size=DIM)
                        for t in texts]).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_the_search_depth_is_the_smallest_reaching_the_recall_and_is_kept(walked, tmp_path,
                                                                          monkeypatch) -> None:
    """`tune` picks the first efSearch of the ladder whose recall@28 reaches the target (the
    one before it falls short), keeps it beside the graph per encoder, and the walk uses it."""
    _, graph, _ = walked
    folder = tmp_path / "graph"
    found = graph.tune(_Encoder(), folder, target=0.999)
    measured = {int(d): r for d, r in found["measured"].items()}
    assert graph.search_depth == found["depth"] == max(measured) > min(measured)
    assert measured[found["depth"]] >= 0.999
    assert all(r < 0.999 for d, r in measured.items() if d < found["depth"])
    assert [p.name for p in folder.glob("*.depth.json")] == [f"{graph.name}.depth.json"]
    calls = []
    monkeypatch.setattr(VectorGraph, "_measure_depth",
                        lambda self, e, t: calls.append(t) or {
                            "depth": 77, "target": t, "ladder": list(vector_graph.TUNING_DEPTHS)})
    assert graph.tune(_Encoder(), folder, target=0.999) == found and calls == []  # read back
    graph.tune(_Encoder(), folder, target=0.5)  # another target: measured again
    assert calls == [0.5] and graph.search_depth == 77
    (folder / f"{graph.name}.depth.json").write_text("{damaged")
    graph.tune(_Encoder(), folder, target=0.999)
    assert calls == [0.5, 0.999]
    monkeypatch.setattr(vector_graph, "TUNING_DEPTHS", (50, 60))  # another ladder: again
    graph.tune(_Encoder(), folder, target=0.999)
    assert calls == [0.5, 0.999, 0.999]
    monkeypatch.undo()
    unreachable = graph.tune(_Encoder(), None, target=1.01)
    assert unreachable["depth"] == vector_graph.TUNING_DEPTHS[-1] == graph.search_depth
    widths = []
    monkeypatch.setattr(vector_graph, "MAX_SEARCH_DEPTH", 10_000)
    real = graph.graph.search
    monkeypatch.setattr(graph.graph, "search", lambda q, k, params: widths.append(
        params.efSearch) or real(q, k, params=params))
    graph.exact_rows, graph.search_depth = 100, 333
    graph.search(_Encoder().embed(["q"]), where_of(4_000, list(VIEWS), [], []), 10)
    assert widths == [333]


def test_the_nearest_rows_as_arrays_are_the_searchs_rows(walked) -> None:
    """`nearest` gives the rows `search` shows, as positions and scores, and `texts` of
    those positions are the texts the search shows, row for row."""
    _, graph, _ = walked
    graph.exact_rows = 100
    queries = np.random.default_rng(4).normal(size=(3, DIM)).astype(np.float32)
    where = where_of(4_000, ["problem_setting", "challenge"], [], [])
    full = graph.search(queries, where, 9)
    found, scores = graph.nearest(queries, where, 9)
    assert [[(r["arxiv_id"], r["view"], r["score"]) for r in q] for q in full] == [
        [(graph.ids[p], graph.views[p], round(d, 6)) for p, d in zip(f, s, strict=True)]
        for f, s in zip(found.tolist(), scores.tolist(), strict=True)]
    assert [graph.texts(f) for f in found.tolist()] == [[r["text"] for r in q] for q in full]
    assert graph.texts([]) == []
    empty = graph.nearest(queries, "view = 'none'", 9)
    assert empty[0].shape == (3, 0) and graph.search(queries, "view = 'none'", 9) == [[]] * 3
