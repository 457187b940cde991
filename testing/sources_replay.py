"""A local HTTP server for the live-source tests: it replays recorded or constructed responses
on 127.0.0.1 and logs every request it receives (arrival time, method, path, query, headers,
body), so tests check what a client actually sent and how the requests were spaced."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

DATA = Path(__file__).parents[1] / "tests" / "data" / "sources"


@dataclass
class Seen:
    at: float
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """An answer; with ``stream``, its body is sent piece by piece as the pieces come (no
    length unless ``headers`` announce one; chunk-encoded when ``chunked``), for servers
    that send too much, for ever, or too slowly."""

    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/xml; charset=utf-8"
    stream: Callable[[], Iterable[bytes]] | None = None
    chunked: bool = False


Responder = Callable[[Seen], Reply]


@dataclass
class _Route:
    method: str
    path: str
    match: dict[str, str]
    replies: list[Reply | Responder]

    def accepts(self, seen: Seen) -> bool:
        return (seen.method == self.method and seen.path == self.path
                and all(seen.query.get(k) == v for k, v in self.match.items()))


class ReplayServer:
    """Routes are tried in order; a route serves its replies in turn, the last one forever."""

    def __init__(self) -> None:
        self.routes: list[_Route] = []
        self.log: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                parts = urlsplit(self.path)
                seen = Seen(time.time(), self.command, parts.path,
                            {k: v[-1] for k, v in parse_qs(parts.query).items()},
                            {k.lower(): v for k, v in self.headers.items()},
                            self.rfile.read(length) if length else b"")
                reply = server._reply(seen)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(reply)  # a client refusing a body hangs up in the middle

            def _send(self, reply: Reply) -> None:
                body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                if reply.stream is None:
                    self.send_header("Content-Length", str(len(body)))
                if reply.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if reply.stream is None:
                    self.wfile.write(body)
                    return
                for piece in reply.stream():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece)
                                     if reply.chunked else piece)
                    self.wfile.flush()

            do_GET = do_POST = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, path: str, *replies: Reply | Responder, method: str = "GET",
            **match: str) -> None:
        self.routes.append(_Route(method, path, match, list(replies)))

    def _reply(self, seen: Seen) -> Reply:
        with self._lock:
            self.log.append(seen)
            for route in self.routes:
                if route.accepts(seen):
                    reply = route.replies.pop(0) if len(route.replies) > 1 else route.replies[0]
                    return reply(seen) if callable(reply) else reply
        return Reply(404, f"no route for {seen.method} {seen.path} {seen.query}",
                     content_type="text/plain")

    def requests(self, path: str | None = None) -> list[Seen]:
        return [s for s in self.log if path is None or s.path == path]

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def data(name: str) -> bytes:
    return (DATA / name).read_bytes()


def gaps(seen: list[Seen]) -> list[float]:
    times = sorted(s.at for s in seen)
    return [b - a for a, b in itertools.pairwise(times)]


def spaced_requests(state_dir: str, url: str, count: int, interval: float) -> None:
    """Run in a separate process by the limiter test: ``count`` polite GETs."""
    from pathlib import Path as _Path

    from vault_pipeline.sources.http import PoliteClient
    from vault_pipeline.sources.limiter import SharedRateLimiter
    from vault_pipeline.sources.settings import RetrySettings

    limiter = SharedRateLimiter(_Path(state_dir), "arxiv", interval)
    with PoliteClient(limiter, RetrySettings(), "test-agent") as client:
        for _ in range(count):
            client.get(url)


def harvest_context(paths, server: ReplayServer, interval: float = 0.0, **sections):
    """A harvest context whose every base URL points at the replay server, given the settings
    the harvest stages use (``[splits]``, ``[evalsets]``) as their runner resolves them for
    the vault."""
    import dataclasses

    from vault_pipeline.sources.context import HarvestContext
    from vault_pipeline.sources.settings import HarvestConfig, RetrySettings
    from vault_pipeline.sources.stage import STAGES

    base = HarvestConfig()
    arxiv = dataclasses.replace(
        base.arxiv, oai_url=f"{server.url}/oai", api_url=f"{server.url}/api/query",
        pdf_url=f"{server.url}/pdf", eprint_url=f"{server.url}/e-print", interval_s=interval,
        **sections.get("arxiv", {}))
    openreview = dataclasses.replace(base.openreview, api_url=f"{server.url}/or2",
                                     api_v1_url=f"{server.url}/or1", interval_s=interval,
                                     **sections.get("openreview", {}))
    s2 = dataclasses.replace(base.s2, api_url=f"{server.url}/graph/v1", interval_s=interval,
                             **sections.get("s2", {}))
    retry = RetrySettings(max_attempts=4, backoff_base_s=0.05, backoff_max_s=0.2, max_wait_s=5)
    config = dataclasses.replace(base, arxiv=arxiv, openreview=openreview, s2=s2, retry=retry,
                                 contact="ops@example.org")
    used = {section: settings for stage in STAGES
            for section, settings in stage.used_settings(paths.home).items()}
    return HarvestContext.open(paths, config, settings=used)
