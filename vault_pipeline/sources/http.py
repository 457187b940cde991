"""Polite HTTP: every request goes through its service's shared request clock, is retried when
the server says so (503/429 with ``Retry-After``, OpenReview's ``resetTime``) or on other 5xx
and network errors with exponential backoff and jitter, and gives up after a bounded number of
attempts with an error naming the URL and the last status. Headers are never logged (they
carry API keys and tokens).

One retry loop serves two HTTP stacks: httpx for the clients written here, and a requests
adapter for openreview-py, whose own session we route through the same clock and policy."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx
import requests
from requests.adapters import HTTPAdapter

from vault_pipeline.errors import VaultError
from vault_pipeline.sources.limiter import SharedRateLimiter
from vault_pipeline.sources.settings import RetrySettings

log = logging.getLogger(__name__)

RETRY_AFTER_STATUSES = {429, 503}


class HarvestError(VaultError):
    """A request that failed for good (after the bounded retries), or a bad response."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class TransientError(Exception):
    """A network-level failure worth retrying (connection reset, timeout)."""


class _Response(Protocol):
    status_code: int
    headers: Mapping[str, str]
    content: bytes


def retry_after_seconds(response: _Response, now: datetime | None = None) -> float | None:
    """How long the server asked us to wait: ``Retry-After`` (seconds or an HTTP date), or the
    ``details.resetTime`` of an OpenReview ``RateLimitError`` body; None if it did not say."""
    now = now or datetime.now(UTC)
    header = response.headers.get("retry-after")
    if header:
        header = header.strip()
        if header.isdigit():
            return float(header)
        try:
            return max(0.0, (parsedate_to_datetime(header) - now).total_seconds())
        except (TypeError, ValueError):
            pass
    try:
        body = json.loads(response.content[:65536])
        reset = body["details"]["resetTime"]
        when = datetime.fromisoformat(str(reset).replace("Z", "+00:00"))
        return max(0.0, (when - now).total_seconds())
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class RequestCounter:
    """Requests actually sent (every attempt), for reports and benchmarks."""

    sent: int = 0
    retried: int = 0


def send_politely(send: Callable[[], Any], limiter: SharedRateLimiter, policy: RetrySettings,
                  describe: str, counter: RequestCounter | None = None,
                  jitter: Callable[[float, float], float] = random.uniform) -> Any:
    """Run ``send`` (one HTTP exchange, body fully read) inside the service's request slot,
    retrying as the policy says; return the first response with a status below 400."""
    counter = counter or RequestCounter()
    last, last_status = "no response", None
    for attempt in range(1, policy.max_attempts + 1):
        wait: float | None = None
        with limiter.slot():
            counter.sent += 1
            try:
                response = send()
            except TransientError as exc:
                response, last, last_status = None, f"network error: {exc}", None
            if response is not None:
                status = last_status = response.status_code
                if status < 400:
                    return response
                last = f"HTTP {status}"
                if status in RETRY_AFTER_STATUSES:
                    wait = retry_after_seconds(response)
                    if wait is not None and wait > policy.max_wait_s:
                        raise HarvestError(f"{describe}: HTTP {status}, server asks to wait "
                                           f"{wait:.0f} s (more than {policy.max_wait_s:.0f} s);"
                                           " rerun later, the cursor is kept", status)
                elif status < 500:
                    raise HarvestError(f"{describe}: HTTP {status}{_brief(response)}", status)
            if wait is None:
                backoff = min(policy.backoff_max_s, policy.backoff_base_s * 2 ** (attempt - 1))
                wait = jitter(backoff / 2, backoff)
            if attempt < policy.max_attempts:
                limiter.defer(wait)
        if attempt < policy.max_attempts:
            counter.retried += 1
            log.warning("%s: %s, retry %d/%d in %.1f s", describe, last, attempt,
                        policy.max_attempts - 1, wait)
    raise HarvestError(f"{describe}: gave up after {policy.max_attempts} attempts ({last})",
                       last_status)


def _brief(response: _Response) -> str:
    text = response.content[:200].decode("utf-8", errors="replace").strip()
    return f": {' '.join(text.split())}" if text else ""


class PoliteClient:
    """An httpx client for one service: one connection, the shared clock, the retry policy,
    a descriptive User-Agent."""

    def __init__(self, limiter: SharedRateLimiter, policy: RetrySettings, user_agent: str,
                 headers: Mapping[str, str] | None = None,
                 counter: RequestCounter | None = None):
        self.limiter = limiter
        self.policy = policy
        self.counter = counter or RequestCounter()
        self._client = httpx.Client(
            headers={"User-Agent": user_agent, **(headers or {})},
            timeout=httpx.Timeout(policy.timeout_s),
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            follow_redirects=True,
        )

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        def send() -> httpx.Response:
            try:
                return self._read_by_deadline(self._client.build_request(method, url, **kwargs))
            except httpx.TransportError as exc:
                raise TransientError(f"{type(exc).__name__}: {exc}") from exc

        described = httpx.URL(url, params=kwargs.get("params"))
        return send_politely(send, self.limiter, self.policy, f"{method} {described}",
                             self.counter)

    def _read_by_deadline(self, request: httpx.Request) -> httpx.Response:
        """The whole exchange within ``timeout_s``: httpx's timeouts bound each read, so a
        server trickling a byte a second would otherwise hold the service's request slot
        (and every other harvest of it) for as long as it likes.

        The body is read inside the slot on purpose: arXiv asks for one connection at a
        time and for its interval between the end of one request and the start of the next,
        and a body still streaming is a request still in flight. Releasing the slot at the
        headers would let a second harvest open a second connection. What the slot may cost
        the others is bounded instead: at most the deadline plus one read in progress when it
        passes (httpx's read timeout, ``timeout_s`` again), after which the request counts as
        a transient failure and is retried in a later slot."""
        deadline = time.monotonic() + self.policy.timeout_s
        response = self._client.send(request, stream=True)
        try:
            chunks = []
            for chunk in response.iter_raw():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise TransientError(f"no whole response within {self.policy.timeout_s:g} s "
                                         "(the server sends too slowly)")
        finally:
            response.close()
        return httpx.Response(response.status_code, headers=response.headers,
                              content=b"".join(chunks), request=request)

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PoliteAdapter(HTTPAdapter):
    """A requests transport adapter with the same clock and policy, mounted on openreview-py's
    session in place of its own urllib3 retries (which wait at most 120 s on a 429, not until
    the reset time the server gives)."""

    def __init__(self, limiter: SharedRateLimiter, policy: RetrySettings,
                 counter: RequestCounter | None = None):
        super().__init__(max_retries=0, pool_connections=1, pool_maxsize=1)
        self.limiter = limiter
        self.policy = policy
        self.counter = counter or RequestCounter()

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        kwargs["timeout"] = kwargs.get("timeout") or self.policy.timeout_s
        kwargs["stream"] = True

        def attempt() -> requests.Response:
            try:
                response = super(PoliteAdapter, self).send(request, **kwargs)
                deadline = time.monotonic() + self.policy.timeout_s
                chunks = []
                for chunk in response.raw.stream(1 << 16, decode_content=True):
                    chunks.append(chunk)
                    if time.monotonic() > deadline:  # see PoliteClient._read_by_deadline
                        response.close()
                        raise TransientError(f"no whole response within "
                                             f"{self.policy.timeout_s:g} s")
                response._content = b"".join(chunks)  # read inside the slot, by the deadline
                return response
            except (requests.ConnectionError, requests.Timeout) as exc:
                raise TransientError(f"{type(exc).__name__}") from exc

        return send_politely(attempt, self.limiter, self.policy,
                             f"{request.method} {request.url}", self.counter)
