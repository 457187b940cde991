"""The harvest client against servers that misbehave on purpose (testing/hostile_server.py,
on 127.0.0.1): redirects leave their origin only to an allowed one and never carry a secret
there, bodies are capped while they stream (as sent and decompressed), memory stays bounded,
and every refusal is one line naming the URL."""

from __future__ import annotations

import dataclasses
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from testing.hostile_server import add_hostile_routes
from testing.sources_replay import ReplayServer
from vault_pipeline.sources.context import HarvestContext
from vault_pipeline.sources.http import PoliteAdapter, PoliteClient
from vault_pipeline.sources.limiter import SharedRateLimiter
from vault_pipeline.sources.response import HarvestError, ResponseRefused
from vault_pipeline.sources.settings import HarvestConfig, ResponseLimits, RetrySettings

ONE_TRY = RetrySettings(max_attempts=1, timeout_s=5)
SMALL = ResponseLimits(max_response_mb=1)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[ReplayServer, ReplayServer]]:
    """Two origins: the source's server, and the other one its redirects point to."""
    with ReplayServer() as other, ReplayServer() as server:
        add_hostile_routes(server, other.url)
        add_hostile_routes(other, server.url)
        yield server, other


def _client(tmp_path: Path, limits: ResponseLimits = SMALL, policy: RetrySettings = ONE_TRY,
            **kwargs: object) -> PoliteClient:
    return PoliteClient(SharedRateLimiter(tmp_path / "clocks", "arxiv", 0.0), policy,
                        "research-idea-vault/test", limits=limits, **kwargs)


def _refused(call, *words: str) -> str:
    with pytest.raises(HarvestError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    return message


def test_a_redirect_within_the_origin_is_followed_and_the_final_url_kept(
        servers, tmp_path) -> None:
    server, _other = servers
    response = _client(tmp_path).get(f"{server.url}/same-origin")
    assert response.content == b"<feed>fine</feed>"
    assert str(response.url) == f"{server.url}/ok"


@pytest.mark.parametrize("route", ["other-origin", "other-origin-307"])
def test_a_redirect_to_another_origin_is_refused_and_never_sent(servers, tmp_path,
                                                                route) -> None:
    server, other = servers
    before = len(other.log)
    _refused(lambda: _client(tmp_path, secrets={"x-api-key": "s3cret"},
                             secret_origins=[server.url]).get(f"{server.url}/{route}"),
             f"{server.url}/{route}", "another origin", "refused")
    assert len(other.log) == before
    assert server.requests(f"/{route}")[-1].headers["x-api-key"] == "s3cret"


def test_an_allowed_origin_is_reached_without_the_secret(servers, tmp_path) -> None:
    server, other = servers
    client = _client(tmp_path, secrets={"x-api-key": "s3cret"}, secret_origins=[server.url],
                     redirect_origins=[other.url])
    response = client.post(f"{server.url}/other-origin-307", json={"ids": ["x"]})
    assert str(response.url) == f"{other.url}/ok"
    arrived = other.requests("/ok")[-1]
    assert arrived.method == "POST"  # a 307 keeps the method
    assert "x-api-key" not in arrived.headers


def test_secrets_go_only_to_their_own_origin(servers, tmp_path) -> None:
    server, other = servers
    client = _client(tmp_path, secrets={"x-api-key": "s3cret"}, secret_origins=[server.url])
    client.get(f"{other.url}/ok")
    assert "x-api-key" not in other.requests("/ok")[-1].headers


def test_the_semantic_scholar_key_stays_home(servers, tmp_path, monkeypatch,
                                             vault_paths) -> None:
    server, other = servers
    monkeypatch.setenv("S2_API_KEY", "k3y")
    base = HarvestConfig()
    config = dataclasses.replace(
        base, retry=ONE_TRY,
        s2=dataclasses.replace(base.s2, api_url=f"{server.url}/graph/v1", interval_s=0,
                               redirect_origins=(other.url,)))
    with HarvestContext.open(vault_paths, config) as ctx:
        ctx.client("s2").get(f"{server.url}/other-origin-307")
    assert server.requests("/other-origin-307")[-1].headers["x-api-key"] == "k3y"
    assert "x-api-key" not in other.requests("/ok")[-1].headers


def test_redirect_chains_are_bounded(servers, tmp_path) -> None:
    server, _other = servers
    _refused(lambda: _client(tmp_path).get(f"{server.url}/loop"), f"{server.url}/loop",
             "more than 5 redirects")


def test_compressed_bodies_are_decoded(servers, tmp_path) -> None:
    server, _other = servers
    client = _client(tmp_path)
    assert client.get(f"{server.url}/gzip").content == b"<feed>packed</feed>" * 100
    assert client.get(f"{server.url}/deflate-raw").content == b"<feed>raw deflate</feed>"
    assert server.requests("/gzip")[-1].headers["accept-encoding"] == "gzip, deflate"


def test_a_gzip_bomb_is_refused_in_bounded_memory(servers, tmp_path) -> None:
    server, _other = servers
    client = _client(tmp_path)
    tracemalloc.start()
    try:
        _refused(lambda: client.get(f"{server.url}/bomb"), f"{server.url}/bomb",
                 "decompresses to more than 1 MiB")
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20  # the bomb is 64 MiB inflated; the cap is 1 MiB


@pytest.mark.parametrize("route", ["announced-huge", "huge", "endless"])
def test_large_and_endless_bodies_are_refused_while_streaming(servers, tmp_path,
                                                              route) -> None:
    server, _other = servers
    started = time.monotonic()
    _refused(lambda: _client(tmp_path, limits=ResponseLimits()).get(f"{server.url}/{route}"),
             f"{server.url}/{route}", "MiB", "refused")
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("route", ["trickle", "trickle-length"])
def test_a_trickle_is_cut_at_the_deadline(servers, tmp_path, route) -> None:
    server, _other = servers
    slow = RetrySettings(max_attempts=1, timeout_s=0.5)
    started = time.monotonic()
    _refused(lambda: _client(tmp_path, policy=slow).get(f"{server.url}/{route}"),
             f"{server.url}/{route}", "within 0.5 s")
    session = _session(tmp_path, policy=slow)
    with pytest.raises(HarvestError, match=r"within 0\.5 s"):
        session.get(f"{server.url}/{route}")
    assert time.monotonic() - started < 10


def test_an_encoding_not_asked_for_is_refused(servers, tmp_path) -> None:
    server, _other = servers
    _refused(lambda: _client(tmp_path).get(f"{server.url}/brotli"), "'br'",
             f"{server.url}/brotli")


def _session(tmp_path: Path, policy: RetrySettings = ONE_TRY,
             **kwargs: object) -> requests.Session:
    """A requests session as openreview-py's is made polite."""
    session = requests.Session()
    adapter = PoliteAdapter(SharedRateLimiter(tmp_path / "clocks", "openreview", 0.0),
                            policy, limits=SMALL, **kwargs)
    session.mount("http://", adapter)
    session.max_redirects = SMALL.max_redirects
    return session


def test_the_requests_adapter_keeps_the_same_bounds(servers, tmp_path) -> None:
    server, other = servers
    session = _session(tmp_path)
    response = session.get(f"{server.url}/same-origin")
    assert response.url == f"{server.url}/ok" and response.content == b"<feed>fine</feed>"
    assert session.get(f"{server.url}/gzip").content == b"<feed>packed</feed>" * 100
    before = len(other.log)
    with pytest.raises(ResponseRefused, match="another origin"):
        session.get(f"{server.url}/other-origin", headers={"Authorization": "Bearer t"})
    assert len(other.log) == before
    with pytest.raises(ResponseRefused, match="decompresses to more than 1 MiB"):
        session.get(f"{server.url}/bomb")
    with pytest.raises(ResponseRefused, match="MiB"):
        session.get(f"{server.url}/endless")
    allowed = _session(tmp_path, redirect_origins=[other.url])
    assert allowed.get(f"{server.url}/other-origin").url == f"{other.url}/ok"
