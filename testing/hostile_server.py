"""A local HTTP server on 127.0.0.1 that answers as a hostile or broken one would: redirects
to another origin, a body far larger than announced or none announced at all (an endless
chunked stream), a gzip bomb, a trickle. Every request it receives is logged with its
headers, so a test sees what a client sent where."""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

BLOCK = b"\0" * (1 << 20)


def gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MiB of zeros, gzip-compressed (about a thousandth of that)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return b"".join([*(packer.compress(BLOCK) for _ in range(megabytes)), packer.flush()])


@dataclass
class Seen:
    path: str
    method: str
    headers: dict[str, str]


class HostileServer:
    """Routes (paths) and what they do; ``other`` is the origin redirects point to."""

    def __init__(self, other: str | None = None, bomb_mb: int = 64) -> None:
        self.other = other
        self.log: list[Seen] = []
        self.bomb = gzip_bomb(bomb_mb)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def _serve(self) -> None:
                path = urlsplit(self.path).path
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                server.log.append(Seen(path, self.command,
                                       {k.lower(): v for k, v in self.headers.items()}))
                route = getattr(server, "route_" + path.strip("/").replace("-", "_"),
                                server.route_missing)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    route(self)  # a refusing client hangs up mid-body

            do_GET = do_POST = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def seen(self, path: str) -> list[Seen]:
        return [s for s in self.log if s.path == path]

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes,
              headers: dict[str, str] | None = None) -> None:
        handler.send_response(status)
        for key, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)

    def route_missing(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 404, b"no such route")

    def route_ok(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 200, b"<feed>fine</feed>", {"Content-Type": "application/xml"})

    def route_same_origin(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 302, b"", {"Location": "/ok"})

    def route_other_origin(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 302, b"", {"Location": f"{self.other}/ok"})

    def route_other_origin_307(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 307, b"", {"Location": f"{self.other}/ok"})

    def route_loop(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 302, b"", {"Location": "/loop"})

    def route_gzip(self, h: BaseHTTPRequestHandler) -> None:
        body = zlib.compress(b"<feed>packed</feed>" * 100, wbits=zlib.MAX_WBITS | 16)
        self._send(h, 200, body, {"Content-Encoding": "gzip"})

    def route_deflate_raw(self, h: BaseHTTPRequestHandler) -> None:
        body = zlib.compress(b"<feed>raw deflate</feed>", wbits=-zlib.MAX_WBITS)
        self._send(h, 200, body, {"Content-Encoding": "deflate"})

    def route_bomb(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 200, self.bomb, {"Content-Encoding": "gzip"})

    def route_brotli(self, h: BaseHTTPRequestHandler) -> None:
        self._send(h, 200, b"\x0b\x02\x80hello\x03", {"Content-Encoding": "br"})

    def route_announced_huge(self, h: BaseHTTPRequestHandler) -> None:
        """Announces 200 MB, then sends zeros until the client hangs up."""
        h.send_response(200)
        h.send_header("Content-Length", str(200 * 10**6))
        h.end_headers()
        for _ in range(200):
            h.wfile.write(BLOCK)

    def route_huge(self, h: BaseHTTPRequestHandler) -> None:
        """200 MB with no length announced (read until the connection closes)."""
        h.send_response(200)
        h.send_header("Connection", "close")
        h.end_headers()
        for _ in range(200):
            h.wfile.write(BLOCK)

    def route_endless(self, h: BaseHTTPRequestHandler) -> None:
        """A chunked body that never ends."""
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b"%x\r\n%s\r\n" % (len(BLOCK), BLOCK)
        while True:
            h.wfile.write(chunk)

    def route_trickle(self, h: BaseHTTPRequestHandler) -> None:
        """A chunked body of one byte every 50 ms, for ever."""
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        while True:
            h.wfile.write(b"1\r\nx\r\n")
            h.wfile.flush()
            time.sleep(0.05)

    def route_trickle_length(self, h: BaseHTTPRequestHandler) -> None:
        """A body of announced length, one byte every 50 ms."""
        h.send_response(200)
        h.send_header("Content-Length", "100000")
        h.end_headers()
        for _ in range(100000):
            h.wfile.write(b"x")
            h.wfile.flush()
            time.sleep(0.05)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
