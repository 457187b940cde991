"""The five tools in a session's world, their log, and batches."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.access.world_vault import NEAR_DUPLICATE, REVISED, TARGET
from vault_pipeline.access import log
from vault_pipeline.access.fulltext import pages, sections
from vault_pipeline.access.tools import call_batch

SETTING = "Setting: expert routing. Inputs: tokens. Outputs: expert assignments."
CHALLENGE = "expert routing drops tokens when load is uneven across experts"


@pytest.fixture
def session(toolbox):
    return toolbox.session("2026-01-01", TARGET, session_id="rollout-1")


def ids(answer: dict) -> list[str]:
    return [hit["id"] for hit in answer["results"]]


def test_prior_art_never_returns_the_target_or_its_duplicate(toolbox, session) -> None:
    free = toolbox.session("2026-01-01")
    assert NEAR_DUPLICATE in ids(free.search_prior_art(SETTING, CHALLENGE, k=10))
    found = ids(session.search_prior_art(SETTING, CHALLENGE, k=10))
    assert found and NEAR_DUPLICATE not in found and TARGET not in found
    assert found[0] == "2405.00005"  # the other expert-routing paper
    assert len(found) == len(set(found))  # one result per paper


def test_search_respects_as_of(toolbox) -> None:
    early = toolbox.session("2024-03-01")
    found = ids(early.search_prior_art(SETTING, CHALLENGE, k=10))
    assert set(found) == {"2401.00001", "2402.00002"}


def test_mechanisms_leave_out_the_fields(session) -> None:
    answer = session.search_mechanisms("latency when scoring many candidates", k=10)
    assert answer["results"]
    assert all(hit["primary_category"] != "cs.LG" for hit in answer["results"])  # target's
    own = session.search_mechanisms("latency", exclude_fields=["cs.IR", "cs"], k=10)
    assert {hit["primary_category"] for hit in own["results"]} <= {"q-bio.NC", "hep-th",
                                                                      "stat.ML", "math.OC"}
    bad = session.search_mechanisms("latency", exclude_fields=["not a field!"])
    assert bad["error"] == "bad_arguments"


def test_get_paper_record_and_views(session) -> None:
    paper = session.get_paper("arXiv:2401.00001v3")
    assert paper["id"] == "2401.00001" and paper["title"].startswith("Two-Stage")
    assert sorted(paper["views"]) == ["challenge", "intuition", "problem_setting",
                                      "proposal", "research_gap"]


def test_out_of_world_ids_read_as_unknown(toolbox, session) -> None:
    unknown = session.get_paper("2999.99999")
    for hidden in (TARGET, NEAR_DUPLICATE, "2604.00010"):  # target, duplicate, post-cutoff
        for tool in ("get_paper", "read_paper", "get_citations"):
            answer = session.call(tool, {"id": hidden})
            assert answer == {k: v.replace("2999.99999", hidden) for k, v in unknown.items()}
    early = toolbox.session("2025-09-01")
    assert early.get_paper(REVISED)["error"] == "not_found"  # held version not yet written


def test_read_paper_pages_and_sections(session) -> None:
    first = session.read_paper("2401.00001")
    assert first["sections"] == ["Introduction", "Method", "Discussion"]
    assert first["pages"] >= 3 and len(first["text"]) <= 4_000
    method = session.read_paper("2401.00001", section="method", page=2)
    assert method["section"] == "method" and "cheap filter" in method["text"]
    assert session.read_paper("2401.00001", section="3")["text"].startswith("# Discussion")
    assert session.read_paper("2401.00001", page=999)["error"] == "no_page"
    assert session.read_paper("2401.00001", section="Nope")["error"] == "no_section"
    assert session.read_paper("2402.00002")["error"] == "no_full_text"
    assert session.read_paper(REVISED)["text"] == "# Only\n\nThe v2 text."


def test_citations_stay_inside_the_world(session) -> None:
    refs = session.get_citations("2401.00001")
    assert [p["id"] for p in refs["papers"]] == ["2402.00002"]  # not the target nor its dup
    cited_by = session.get_citations("2401.00001", direction="cited_by")
    assert [p["id"] for p in cited_by["papers"]] == ["2512.00006", REVISED]
    assert session.get_citations("2405.00005")["papers"] == []  # its only edge: post-cutoff


def test_bad_arguments_are_one_line_answers(session) -> None:
    assert session.call("get_paper", {"id": 3})["error"] == "bad_arguments"
    assert session.call("get_paper", {"id": "x", "extra": 1})["error"] == "bad_arguments"
    assert session.call("search_prior_art", {"problem_setting": "a", "challenge": "b",
                                             "k": 0})["error"] == "bad_arguments"
    assert session.call("nope", {})["error"] == "bad_arguments"
    assert session.call("get_paper", "not an object")["error"] == "bad_arguments"


def test_batch_answers_as_single_calls(toolbox) -> None:
    a = toolbox.session("2026-01-01", TARGET)
    b = toolbox.session("2024-03-01")
    calls = [(a, "search_prior_art", {"problem_setting": SETTING, "challenge": CHALLENGE}),
             (b, "search_prior_art", {"problem_setting": SETTING, "challenge": CHALLENGE}),
             (a, "get_paper", {"id": "2402.00002"}), (b, "get_paper", {"id": "2405.00005"}),
             (a, "search_mechanisms", {"challenge": "latency"})]
    batched = call_batch(calls)
    singles = [session.call(tool, args) for session, tool, args in calls]
    assert [ids(x) if "results" in x else x for x in batched] == \
        [ids(x) if "results" in x else x for x in singles]
    assert batched[3]["error"] == "not_found"


def test_every_answer_is_json_as_every_face_carries_it(toolbox) -> None:
    """Search answers skip the JSON round trip the other answers take (`wire.jsonable`):
    each must already be what that round trip would give, dates as ISO days included."""
    from vault_pipeline.access import wire

    session = toolbox.session("2026-01-01")
    answers = call_batch([
        (session, "search_prior_art", {"problem_setting": SETTING, "challenge": CHALLENGE}),
        (session, "search_mechanisms", {"challenge": "latency"}),
        (session, "get_paper", {"id": "2402.00002"}),
        (session, "get_citations", {"id": "2402.00002"})])
    assert all(answer["results"] for answer in answers[:2])
    for answer in answers:
        assert answer == wire.jsonable(answer) and type(answer) is dict
        assert json.loads(json.dumps(answer)) == answer
    assert all(isinstance(hit["published"], str) and hit["published"][4] == "-"
               for answer in answers[:2] for hit in answer["results"])


def test_calls_are_logged_for_trainers(toolbox, world_paths) -> None:
    session = toolbox.session("2026-01-01", TARGET, session_id="rollout-7")
    found = session.search_prior_art(SETTING, CHALLENGE, k=3)
    session.get_paper(TARGET)
    frame = session.log_frame()
    assert frame["seq"].to_list() == [0, 1]
    assert frame["tool"].to_list() == ["search_prior_art", "get_paper"]
    assert frame["error"].to_list() == [None, "not_found"]
    assert frame["paper_ids"].to_list()[0] == ids(found)
    assert (frame["ms"] > 0).all() and frame["target"].unique().to_list() == [TARGET]
    assert log.append(world_paths.store, session.calls) == 2
    table = pl.read_parquet(world_paths.table("tool_calls"))
    assert log.seen_ids(table, "rollout-7") == set(ids(found))


def test_pages_cut_at_paragraphs() -> None:
    text = "\n\n".join(["word " * 300] * 10)
    cut = pages(text)
    assert all(len(p) <= 4_000 for p in cut) and "".join(cut).replace("\n", "") == \
        text.replace("\n", "")
    assert pages("") == [""]
    assert sections("no heading") == [("(untitled)", "no heading")]


def test_the_log_bounds_the_citation_reward(toolbox) -> None:
    from vault_pipeline.datasets.rewards import citation_f1

    session = toolbox.session("2026-01-01", TARGET, session_id="rollout-9")
    seen = ids(session.search_prior_art(SETTING, CHALLENGE, k=2))
    shown = log.seen_ids(session.log_frame(), "rollout-9")
    cited = [*seen, "2403.00003"]  # one id the agent never retrieved
    assert shown == set(seen)
    assert citation_f1([c for c in cited if c in shown], seen) == 1.0


def test_the_static_query_encoder_keeps_to_the_sessions_world(world_paths) -> None:
    from vault_pipeline.access.tools import Toolbox
    from vault_pipeline.errors import VaultError

    box = Toolbox(world_paths, query_encoder="static")
    early = ids(box.session("2024-03-01").search_prior_art(SETTING, CHALLENGE, k=10))
    assert early and set(early) <= {"2401.00001", "2402.00002"}
    found = ids(box.session("2026-01-01", TARGET).search_prior_art(SETTING, CHALLENGE, k=10))
    assert found and TARGET not in found and NEAR_DUPLICATE not in found
    assert list((world_paths.home / "index" / "graph").glob("query-v*.npz"))  # kept for reuse
    with pytest.raises(VaultError, match="query encoder 'bm25'"):
        Toolbox(world_paths, query_encoder="bm25")


def test_a_batch_walks_once_for_each_distinct_search(toolbox, monkeypatch) -> None:
    """Trajectories of one target repeat their first searches: a batch walks the graph once
    per distinct text and filter, and each session still gets its own answer."""
    graph = toolbox.graph()
    walked = []
    real = graph.nearest
    monkeypatch.setattr(graph, "nearest",
                        lambda queries, where, depth: walked.append(len(queries))
                        or real(queries, where, depth))
    args = {"problem_setting": SETTING, "challenge": CHALLENGE}
    rollouts = [toolbox.session("2026-01-01", TARGET) for _ in range(6)]
    other = toolbox.session("2026-01-01")  # no target: the same filter, nothing hidden
    calls = [(s, "search_prior_art", args) for s in rollouts] + [
        (other, "search_prior_art", args),
        (rollouts[0], "search_prior_art", {**args, "challenge": "latency of routing"})]
    answers = call_batch(calls)
    assert walked == [2]
    single = rollouts[1].call("search_prior_art", args)
    assert all(ids(a) == ids(single) for a in answers[:6])
    assert TARGET not in ids(answers[0]) and ids(answers[6]) != ids(answers[0])


def test_the_graph_is_tuned_once_for_the_toolboxs_own_encoder(world_paths, monkeypatch) -> None:
    """The walk's depth depends on the query encoder: a toolbox tunes its graph with the
    encoder that embeds its searches, once, before its first search."""
    from vault_pipeline.access.tools import Toolbox
    from vault_pipeline.access.vector_graph import VectorGraph

    tuned = []
    monkeypatch.setattr(VectorGraph, "tune",
                        lambda self, encoder, folder: tuned.append((encoder, folder)) or {})
    box = Toolbox(world_paths)
    args = {"problem_setting": SETTING, "challenge": CHALLENGE}
    session = box.session("2026-01-01")
    assert "results" in session.call("search_prior_art", args)
    session.call("search_mechanisms", {"challenge": CHALLENGE})
    assert [(e, f.name) for e, f in tuned] == [(box.query_model(), "graph")]
