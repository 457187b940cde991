"""Property: whatever the id, the date and the path, a session with a cutoff and a target
never reaches a paper outside its world - one computed here from the fixture's own dates
and titles - and an id outside it reads exactly as an unknown one."""

from __future__ import annotations

import json
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from testing.splits_vault import CUTOFF, view_text
from tests.access.world_vault import ALL, paper_dates
from vault_pipeline.access.api import Vault
from vault_pipeline.access.export_world import session_vault
from vault_pipeline.access.serve import create_app
from vault_pipeline.datasets.export import _vault_tables
from vault_pipeline.evalsets.citation_windows import title_ratio

IDS = [p.arxiv_id for p in ALL]
TITLES = {p.arxiv_id: p.title for p in ALL}
RAW_IDS = st.one_of(st.sampled_from(IDS), st.sampled_from(IDS).map(lambda i: f"{i}v2"),
                    st.sampled_from(IDS).map(lambda i: f"arXiv:{i}"),
                    st.sampled_from(["2999.99999", "hep-th/9901001", "", "'; DROP", "0"]),
                    st.text(max_size=12))
DAYS = st.dates(min_value=date(2023, 6, 1), max_value=date(2027, 1, 1))
TARGETS = st.one_of(st.none(), st.sampled_from(IDS))
PATHS = ["get_paper", "read_paper", "citations", "cited_by", "prior_art", "mechanisms",
         "api_papers", "api_views", "api_search", "http_paper", "http_search", "export"]
QUERIES = st.sampled_from([view_text(p, v) for p in ALL for v in ("challenge",
                                                                  "problem_setting")])


def expected_world(as_of: date, target: str | None) -> set[str]:
    day = min(as_of, CUTOFF)
    seen = {i for i, (_, held) in paper_dates().items() if held is not None and held < day}
    if target is not None:
        seen -= {target} | {i for i in seen if title_ratio(TITLES[i], TITLES[target]) >= 0.8}
    return seen


def canonical(raw: str) -> str | None:
    from vault_pipeline.ids import parse_arxiv_id

    try:
        return parse_arxiv_id(raw).id
    except ValueError:
        return None


@pytest.fixture(scope="module")
def faces(world_paths, tmp_path_factory):
    vault = Vault(world_paths.home)
    export = tmp_path_factory.mktemp("export")  # the retrievable vault of an export
    papers, views = _vault_tables(world_paths, world_paths.store.read_required("splits"), set())
    (export / "vault").mkdir()
    papers.write_parquet(export / "vault" / "papers.parquet")
    views.write_parquet(export / "vault" / "views.parquet")
    (export / "manifest.json").write_text(json.dumps({"cutoff": CUTOFF.isoformat()}))
    with TestClient(create_app(world_paths.home, warm=False)) as client:
        yield vault, client, export


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(raw=RAW_IDS, as_of=DAYS, target=TARGETS, path=st.sampled_from(PATHS), query=QUERIES)
def test_no_path_leaves_the_world(faces, raw, as_of, target, path, query) -> None:
    vault, client, export = faces
    world = expected_world(as_of, target)
    inside = canonical(raw) in world
    session = vault.toolbox.session(as_of, target)
    cut = {"as_of": as_of.isoformat(), **({"target": target} if target else {})}
    if path in ("get_paper", "read_paper", "citations", "cited_by"):
        tool, extra = {"get_paper": ("get_paper", {}), "read_paper": ("read_paper", {}),
                       "citations": ("get_citations", {"direction": "references"}),
                       "cited_by": ("get_citations", {"direction": "cited_by"})}[path]
        answer = session.call(tool, {"id": raw, **extra})
        if not raw or len(raw) > 64:
            assert answer["error"] == "bad_arguments"
            return
        if inside:
            assert answer.get("error") in (None, "no_full_text")
            assert {p["id"] for p in answer.get("papers", [])} <= world
        else:
            assert answer == {"error": "not_found", "message": f"no paper {raw!r} in this vault"}
    elif path in ("prior_art", "mechanisms"):
        answer = (session.search_prior_art(query, query, k=20) if path == "prior_art" else
                  session.search_mechanisms(query, exclude_fields=[], k=20))
        assert {hit["id"] for hit in answer["results"]} <= world
        assert len(answer["results"]) == min(20, len(world))
    elif path == "api_papers":
        if canonical(raw) is None:
            return
        assert set(vault.at(as_of, target).papers([raw])["arxiv_id"]) == (
            {canonical(raw)} & world)
    elif path == "api_views":
        if canonical(raw) is None:
            return
        shown = vault.at(as_of, target).views(raw)
        assert (shown.height > 0) == inside
    elif path == "api_search":
        hits = vault.at(as_of, target).search(query, k=30, mode="vector")
        assert set(hits["arxiv_id"]) <= world
    elif path == "export":
        title = TITLES.get(target) if target else None
        papers, views = session_vault(export, as_of, target, title)
        assert set(papers["arxiv_id"]) == world and set(views["arxiv_id"]) <= world
    elif path == "http_paper":
        if canonical(raw) is None or "/" in raw:
            return
        response = client.get(f"/api/papers/{raw}", params=cut)
        assert (response.status_code == 200) == inside
    else:
        hits = client.get("/api/search", params={"q": query, "k": 30, **cut}).json()["hits"]
        assert {h["arxiv_id"] for h in hits} <= world
