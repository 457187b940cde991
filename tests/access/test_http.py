"""The HTTP face under `vault serve`: sessions, calls, batches, the log, bounded input, and
the older endpoints under a cutoff."""

from __future__ import annotations

import json

import polars as pl
import pytest
from starlette.testclient import TestClient

from tests.access.world_vault import NEAR_DUPLICATE, TARGET
from vault_pipeline.access.serve import create_app
from vault_pipeline.access.tools_http import MAX_BODY

PRIOR = {"problem_setting": "Setting: expert routing.", "challenge": "tokens are dropped"}


@pytest.fixture
def client(world_paths):
    with TestClient(create_app(world_paths.home, warm=False)) as client:
        yield client


def open_session(client, **body) -> str:
    response = client.post("/api/tools/sessions", json=body)
    assert response.status_code == 201, response.text
    return response.json()["session_id"]


def test_session_call_batch_close(client, world_paths) -> None:
    sid = open_session(client, as_of="2026-01-01", target=TARGET, session_id="http-1")
    answer = client.post("/api/tools/call", json={"session_id": sid, "tool":
                                                  "search_prior_art", "arguments": PRIOR})
    assert answer.status_code == 200
    assert NEAR_DUPLICATE not in [h["id"] for h in answer.json()["results"]]
    hidden = client.post("/api/tools/call", json={"session_id": sid, "tool": "get_paper",
                                                  "arguments": {"id": NEAR_DUPLICATE}})
    unknown = client.post("/api/tools/call", json={"session_id": sid, "tool": "get_paper",
                                                   "arguments": {"id": "2999.00001"}})
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.json()["message"].replace(NEAR_DUPLICATE, "X") == \
        unknown.json()["message"].replace("2999.00001", "X")
    batch = client.post("/api/tools/batch", json={"calls": [
        {"session_id": sid, "tool": "search_prior_art", "arguments": PRIOR},
        {"session_id": sid, "tool": "get_paper", "arguments": {"id": "2401.00001"}}]})
    assert batch.status_code == 200
    first, second = batch.json()["answers"]
    assert sorted(first) == ["results"] and second["id"] == "2401.00001"
    assert client.post("/api/tools/close", json={"session_id": sid}).json()["calls"] == 5
    client.app.state.tools.flush()
    log = pl.read_parquet(world_paths.table("tool_calls")).filter(
        pl.col("session_id") == "http-1")
    assert log["seq"].to_list() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(("path", "body", "status"), [
    ("/api/tools/call", b"{not json", 400),
    ("/api/tools/call", b"[1, 2]", 400),
    ("/api/tools/call", json.dumps({"session_id": "nope", "tool": "get_paper",
                                    "arguments": {"id": "x"}}).encode(), 404),
    ("/api/tools/call", b"x" * (MAX_BODY + 1), 413),
    ("/api/tools/batch", json.dumps({"calls": []}).encode(), 400),
    ("/api/tools/batch", json.dumps({"calls": [{"session_id": "s"}] * 300}).encode(), 413),
    ("/api/tools/sessions", json.dumps({"as_of": "2025"}).encode(), 400),
    ("/api/tools/sessions", json.dumps({"as_of": 2025}).encode(), 400),
    ("/api/tools/sessions", json.dumps({"target": "not an id"}).encode(), 400),
])
def test_bad_requests_are_clean_4xx(client, path: str, body: bytes, status: int) -> None:
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert set(response.json()) == {"error", "message"}


def test_bad_arguments_are_400(client) -> None:
    sid = open_session(client)
    for arguments in ({"id": 1}, {"id": "x", "more": 2}, None, "text"):
        response = client.post("/api/tools/call", json={"session_id": sid, "tool": "get_paper",
                                                        "arguments": arguments})
        assert response.status_code == 400, arguments
    response = client.post("/api/tools/call", json={"session_id": sid, "tool": "drop",
                                                    "arguments": {}})
    assert response.status_code == 400


def test_schema_endpoint(client) -> None:
    from vault_pipeline.access import specs

    assert client.get("/api/tools/schema").json()["tools"] == specs.openai_tools()


def test_older_endpoints_under_a_cutoff(client) -> None:
    cut = {"as_of": "2026-01-01", "target": TARGET}
    assert client.get(f"/api/papers/{NEAR_DUPLICATE}").status_code == 200
    hidden = client.get(f"/api/papers/{NEAR_DUPLICATE}", params=cut)
    assert hidden.status_code == 400 and "no paper" in hidden.json()["error"]
    hits = client.get("/api/search", params={"q": "expert routing drops tokens", **cut}).json()
    assert hits["hits"] and NEAR_DUPLICATE not in {h["arxiv_id"] for h in hits["hits"]}
    listed = client.get("/api/papers", params={**cut, "limit": 100}).json()["papers"]
    assert NEAR_DUPLICATE not in {p["arxiv_id"] for p in listed} and listed
    assert client.get("/api/sql", params={"q": "SELECT 1", **cut}).status_code == 400
    assert client.get("/api/tables", params=cut).status_code == 400


def test_a_server_cutoff_cannot_be_widened(world_paths) -> None:
    app = create_app(world_paths.home, warm=False, as_of="2024-03-01", target=TARGET)
    with TestClient(app) as client:
        sid = open_session(client, as_of="2030-01-01")
        answer = client.post("/api/tools/call", json={"session_id": sid, "tool": "get_paper",
                                                      "arguments": {"id": "2405.00005"}})
        assert answer.status_code == 404  # published 2025: after the server's cutoff
        assert client.get("/api/papers/2405.00005", params={"as_of": "2030-01-01"}
                          ).status_code == 400
        assert client.get("/api/sql", params={"q": "SELECT 1"}).status_code == 400
