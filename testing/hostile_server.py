"""Routes of a local server that answers as a hostile or broken one would (on a
:class:`ReplayServer`, 127.0.0.1): redirects to another origin and in a loop, a body far
larger than announced or with none announced (an endless chunked stream), a gzip bomb, an
encoding nobody asked for, a trickle. The server logs what each request carried, so a test
sees what a client sent where."""

from __future__ import annotations

import itertools
import time
import zlib
from collections.abc import Iterator

from testing.sources_replay import ReplayServer, Reply

BLOCK = b"\0" * (1 << 20)


def gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MiB of zeros, gzip-compressed (about a thousandth of that)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return b"".join([*(packer.compress(BLOCK) for _ in range(megabytes)), packer.flush()])


def _blocks(count: int | None) -> Iterator[bytes]:
    return itertools.repeat(BLOCK) if count is None else itertools.repeat(BLOCK, count)


def _trickle() -> Iterator[bytes]:
    for _ in range(100_000):  # a byte every 50 ms: 80 minutes
        time.sleep(0.05)
        yield b"x"


def add_hostile_routes(server: ReplayServer, other: str, bomb_mb: int = 64) -> None:
    """The hostile answers, by path; ``other`` is the origin the redirects point to."""
    bomb = gzip_bomb(bomb_mb)
    packed = zlib.compress(b"<feed>packed</feed>" * 100, wbits=zlib.MAX_WBITS | 16)
    raw_deflate = zlib.compress(b"<feed>raw deflate</feed>", wbits=-zlib.MAX_WBITS)
    routes = {
        "/ok": Reply(body="<feed>fine</feed>"),
        "/same-origin": Reply(302, headers={"Location": "/ok"}),
        "/other-origin": Reply(302, headers={"Location": f"{other}/ok"}),
        "/other-origin-307": Reply(307, headers={"Location": f"{other}/ok"}),
        "/loop": Reply(302, headers={"Location": "/loop"}),
        "/gzip": Reply(body=packed, headers={"Content-Encoding": "gzip"}),
        "/deflate-raw": Reply(body=raw_deflate, headers={"Content-Encoding": "deflate"}),
        "/bomb": Reply(body=bomb, headers={"Content-Encoding": "gzip"}),
        "/brotli": Reply(body=b"\x0b\x02\x80hello\x03", headers={"Content-Encoding": "br"}),
        "/announced-huge": Reply(headers={"Content-Length": str(200 * 10**6)},
                                 stream=lambda: _blocks(200)),
        "/huge": Reply(headers={"Connection": "close"}, stream=lambda: _blocks(200)),
        "/endless": Reply(stream=lambda: _blocks(None), chunked=True),
        "/trickle": Reply(stream=_trickle, chunked=True),
        "/trickle-length": Reply(headers={"Content-Length": "100000"}, stream=_trickle),
    }
    for path, reply in routes.items():
        for method in ("GET", "POST"):
            server.add(path, reply, method=method)
