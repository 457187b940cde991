"""Polite HTTP: every request goes through its service's shared request clock, is retried when
the server says so (503/429 with ``Retry-After``, OpenReview's ``resetTime``) or on other 5xx
and network errors with exponential backoff and jitter, and gives up after a bounded number of
attempts with an error naming the URL and the last status. Headers are never logged (they
carry API keys and tokens).

The server is not trusted: redirects are followed only within their origin or to the
source's allow-list (a secret header never leaves the origin it was meant for), every body is
capped while it streams, compressed and decompressed (:mod:`.response`), and a response
records the URL it finally came from.

One retry loop serves two HTTP stacks: httpx for the clients written here, and a requests
adapter for openreview-py, whose own session we route through the same clock and policy."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol
from urllib.parse import urljoin

import httpx
import requests
import urllib3
from requests.adapters import HTTPAdapter

from vault_pipeline.sources.limiter import SharedRateLimiter
from vault_pipeline.sources.response import (
    ACCEPT_ENCODING,
    CHUNK,
    HarvestError,
    ResponseRefused,
    TransientError,
    may_follow,
    origin,
    read_body,
)
from vault_pipeline.sources.settings import ResponseLimits, RetrySettings

log = logging.getLogger(__name__)

RETRY_AFTER_STATUSES = {429, 503}
DECODED = {"content-encoding", "content-length"}  # the body handed on is decoded here


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
    a descriptive User-Agent, the response limits. ``secrets`` (headers such as an API key)
    go only to ``secret_origins`` (the service's own URLs), never along a redirect to
    another origin; ``redirect_origins`` are the other origins a redirect may lead to."""

    def __init__(self, limiter: SharedRateLimiter, policy: RetrySettings, user_agent: str,
                 headers: Mapping[str, str] | None = None,
                 counter: RequestCounter | None = None, limits: ResponseLimits | None = None,
                 secrets: Mapping[str, str] | None = None, secret_origins: Sequence[str] = (),
                 redirect_origins: Sequence[str] = ()):
        self.limiter = limiter
        self.policy = policy
        self.counter = counter or RequestCounter()
        self.limits = limits or ResponseLimits()
        self._secrets = dict(secrets or {})
        self._secret_origins = {origin(u) for u in secret_origins}
        self._redirect_origins = tuple(redirect_origins)
        self._client = httpx.Client(
            headers={"User-Agent": user_agent, "Accept-Encoding": ACCEPT_ENCODING,
                     **(headers or {})},
            timeout=httpx.Timeout(policy.timeout_s),
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            follow_redirects=False,  # followed here, within bounds
        )

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        secrets = self._secrets if origin(url) in self._secret_origins else {}
        headers = {**secrets, **kwargs.pop("headers", {})}

        def send() -> httpx.Response:
            try:
                request = self._client.build_request(method, url, headers=headers, **kwargs)
                return self._exchange(request)
            except httpx.TransportError as exc:
                raise TransientError(f"{type(exc).__name__}: {exc}") from exc

        described = httpx.URL(url, params=kwargs.get("params"))
        return send_politely(send, self.limiter, self.policy, f"{method} {described}",
                             self.counter)

    def _exchange(self, request: httpx.Request) -> httpx.Response:
        """One request with the redirects it may follow, its final body read by one deadline
        (``timeout_s``: httpx's timeouts bound each read, so a server trickling a byte a
        second would otherwise hold the service's request slot, and every other harvest of
        it, for as long as it likes). The response's URL is the one the body came from.

        The body is read inside the slot on purpose: arXiv asks for one connection at a
        time and for its interval between the end of one request and the start of the next,
        and a body still streaming is a request still in flight. What the slot may cost the
        others is bounded instead: at most the deadline plus one read in progress when it
        passes, after which the request counts as a transient failure and is retried in a
        later slot."""
        deadline = time.monotonic() + self.policy.timeout_s
        first = request.url
        for _hop in range(self.limits.max_redirects + 1):
            response = self._client.send(request, stream=True)
            try:
                following = response.next_request
                if following is None:
                    body = read_body(response.iter_raw(),
                                     response.headers.get("content-encoding"),
                                     response.headers.get("content-length"),
                                     self.limits.max_bytes, deadline,
                                     f"{request.method} {request.url}",
                                     self.policy.timeout_s)
            finally:
                response.close()
            if following is None:
                headers = [(k, v) for k, v in response.headers.multi_items()
                           if k.lower() not in DECODED]
                return httpx.Response(response.status_code, headers=headers, content=body,
                                      request=request)
            request = self._redirect(request, following, first)
        raise ResponseRefused(f"{request.method} {first}: more than "
                              f"{self.limits.max_redirects} redirects; refused")

    def _redirect(self, request: httpx.Request, following: httpx.Request,
                  first: httpx.URL) -> httpx.Request:
        """The next hop, if it may be taken, without the secrets when it leaves their
        origin."""
        if not may_follow(str(request.url), str(following.url), self._redirect_origins):
            raise ResponseRefused(
                f"{request.method} {first}: redirected to {following.url}, another origin; "
                "refused (a source's `redirect_origins` setting allows one)")
        if origin(str(following.url)) != origin(str(first)):
            for name in self._secrets:
                following.headers.pop(name, None)
        return following

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


def _raw_chunks(raw: urllib3.HTTPResponse) -> Iterator[bytes]:
    """The body as it arrives, undecoded: each chunk of a chunked body, else each read
    (never waiting for a whole buffer to fill, so the deadline is checked as bytes come)."""
    if raw.chunked and raw.supports_chunked_reads():
        yield from raw.read_chunked(CHUNK, decode_content=False)
        return
    while chunk := raw.read1(CHUNK, decode_content=False):
        yield chunk


class PoliteAdapter(HTTPAdapter):
    """A requests transport adapter with the same clock, policy and limits, mounted on
    openreview-py's session in place of its own urllib3 retries (which wait at most 120 s on
    a 429, not until the reset time the server gives). requests follows redirects through
    the adapter, hop by hop: a hop that would leave its origin (and ``redirect_origins``) is
    refused here."""

    def __init__(self, limiter: SharedRateLimiter, policy: RetrySettings,
                 counter: RequestCounter | None = None, limits: ResponseLimits | None = None,
                 redirect_origins: Sequence[str] = ()):
        super().__init__(max_retries=0, pool_connections=1, pool_maxsize=1)
        self.limiter = limiter
        self.policy = policy
        self.counter = counter or RequestCounter()
        self.limits = limits or ResponseLimits()
        self.redirect_origins = tuple(redirect_origins)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        kwargs["timeout"] = kwargs.get("timeout") or self.policy.timeout_s
        kwargs["stream"] = True
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        describe = f"{request.method} {request.url}"

        def attempt() -> requests.Response:
            try:
                response = super(PoliteAdapter, self).send(request, **kwargs)
                try:
                    self._read(request, response, describe)
                finally:
                    response.close()
                return response
            except (requests.ConnectionError, requests.Timeout,
                    urllib3.exceptions.HTTPError) as exc:
                raise TransientError(f"{type(exc).__name__}") from exc

        return send_politely(attempt, self.limiter, self.policy, describe, self.counter)

    def _read(self, request: requests.PreparedRequest, response: requests.Response,
              describe: str) -> None:
        """Check a redirect, or read the body within the limits (inside the slot, by the
        deadline: see :meth:`PoliteClient._exchange`)."""
        if response.is_redirect:
            target = urljoin(str(request.url), response.headers["location"])
            if not may_follow(str(request.url), target, self.redirect_origins):
                raise ResponseRefused(f"{describe}: redirected to {target}, another origin; "
                                      "refused (a source's `redirect_origins` setting allows "
                                      "one)")
            response._content = b""
            return
        deadline = time.monotonic() + self.policy.timeout_s
        response._content = read_body(
            _raw_chunks(response.raw),
            response.headers.get("content-encoding"), response.headers.get("content-length"),
            self.limits.max_bytes, deadline, describe, self.policy.timeout_s)
        for name in DECODED:
            response.headers.pop(name, None)
