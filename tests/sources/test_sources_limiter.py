"""The polite client: request spacing under threads and processes, Retry-After, backoff."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from testing.sources_replay import ReplayServer, Reply, gaps, spaced_requests
from vault_pipeline.sources.http import HarvestError, PoliteClient, retry_after_seconds
from vault_pipeline.sources.limiter import SharedRateLimiter
from vault_pipeline.sources.settings import RetrySettings

INTERVAL = 0.2
FAST = RetrySettings(max_attempts=4, backoff_base_s=0.05, backoff_max_s=0.2, max_wait_s=5)


def _client(tmp_path: Path, interval: float = INTERVAL, policy: RetrySettings = FAST
            ) -> PoliteClient:
    return PoliteClient(SharedRateLimiter(tmp_path / "clocks", "arxiv", interval), policy,
                        "research-idea-vault/test (mailto:ops@example.org)")


def test_two_threads_never_ask_closer_than_the_interval(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add("/ok", Reply(body="fine"))
        clients = [_client(tmp_path), _client(tmp_path)]  # two clients, one shared clock

        def work(client: PoliteClient) -> None:
            for _ in range(4):
                client.get(f"{server.url}/ok")

        threads = [threading.Thread(target=work, args=(c,)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.log) == 8
        assert min(gaps(server.log)) >= INTERVAL * 0.97


def test_two_processes_never_ask_closer_than_the_interval(tmp_path: Path) -> None:
    spawn = multiprocessing.get_context("spawn")
    with ReplayServer() as server:
        server.add("/ok", Reply(body="fine"))
        workers = [spawn.Process(target=spaced_requests,
                                 args=(str(tmp_path / "clocks"), f"{server.url}/ok", 4, INTERVAL))
                   for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert [w.exitcode for w in workers] == [0, 0]
        assert len(server.log) == 8
        assert min(gaps(server.log)) >= INTERVAL * 0.97


def test_503_retry_after_is_honoured_and_shared(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add("/busy", Reply(503, "busy", {"Retry-After": "1"}), Reply(body="done"))
        client = _client(tmp_path)
        response = client.get(f"{server.url}/busy")
        assert response.text == "done"
        first, second = server.log
        assert second.at - first.at >= 1.0
        assert client.counter.sent == 2
        # the pause is recorded in the shared clock, so another client also waits it out
        assert "not_before" in (tmp_path / "clocks" / "arxiv.clock.json").read_text()


def test_429_openreview_reset_time_is_waited_for() -> None:
    class R:
        status_code = 429
        headers: dict[str, str] = {}  # noqa: RUF012
        content = (Path(__file__).parents[1] / "data/sources/openreview_429.json").read_bytes()

    now = datetime(2026, 11, 11, 3, 59, 58, tzinfo=UTC)
    assert retry_after_seconds(R(), now) == pytest.approx(3.0)


def test_http_date_retry_after() -> None:
    class R:
        status_code = 503
        headers = {"retry-after": "Wed, 11 Nov 2026 04:00:10 GMT"}  # noqa: RUF012
        content = b""

    assert retry_after_seconds(R(), datetime(2026, 11, 11, 4, 0, 0, tzinfo=UTC)) == 10


def test_5xx_is_retried_with_backoff_then_succeeds(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add("/flaky", Reply(500, "oops"), Reply(502, "oops"), Reply(body="ok"))
        client = _client(tmp_path, interval=0.0)
        assert client.get(f"{server.url}/flaky").text == "ok"
        assert client.counter.sent == 3 and client.counter.retried == 2


def test_retries_are_bounded(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add("/down", Reply(500, "down"))
        client = _client(tmp_path, interval=0.0)
        with pytest.raises(HarvestError, match="gave up after 4 attempts"):
            client.get(f"{server.url}/down")
        assert len(server.log) == 4


def test_client_errors_are_not_retried(tmp_path: Path) -> None:
    with ReplayServer() as server:
        client = _client(tmp_path, interval=0.0)
        with pytest.raises(HarvestError, match="HTTP 404") as error:
            client.get(f"{server.url}/missing")
        assert error.value.status == 404 and len(server.log) == 1


def test_a_retry_after_longer_than_allowed_stops_at_once(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add("/later", Reply(503, "later", {"Retry-After": "86400"}))
        with pytest.raises(HarvestError, match="rerun later"):
            _client(tmp_path, interval=0.0).get(f"{server.url}/later")
        assert len(server.log) == 1


def test_user_agent_is_descriptive(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add("/ok", Reply(body="fine"))
        _client(tmp_path, interval=0.0).get(f"{server.url}/ok")
        assert "research-idea-vault" in server.log[0].headers["user-agent"]
        assert "mailto:" in server.log[0].headers["user-agent"]
