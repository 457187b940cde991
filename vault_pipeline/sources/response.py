"""What one harvest response may cost, enforced while it streams: a body is read in chunks,
decompressed chunk by chunk with a bound on each step's output (so a gzip bomb never
inflates in memory), and refused as soon as it passes the size cap, compressed or not; the
whole exchange must end by its deadline. Redirects are followed only within an origin (or to
the source's allow-list), and secrets never leave the origin they were meant for.

Written here rather than taken from httpx or urllib3: both decode a whole network chunk at
once (a 64 KiB chunk of a bomb is 64 MiB), and neither caps a body's size."""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

from vault_pipeline.errors import VaultError


class HarvestError(VaultError):
    """A request that failed for good (after the bounded retries), or a bad response."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status

    @property
    def item_specific(self) -> bool:
        """The fault of this one item (a 4xx but 429, a response refused), not of the
        service: a harvest records it and goes on with the next item."""
        return isinstance(self, ResponseRefused) or (
            self.status is not None and 400 <= self.status < 500 and self.status != 429)


class ResponseRefused(HarvestError):
    """A response past what a harvest accepts (too large, redirected away, not asked for)."""


class TransientError(Exception):
    """A network-level failure worth retrying (connection reset, timeout)."""


ACCEPT_ENCODING = "gzip, deflate"
"""All a harvest asks for: the encodings decoded here with bounded memory."""
CHUNK = 1 << 16


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the port filled in for http and https."""
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def may_follow(source: str, target: str, allowed: Iterable[str] = ()) -> bool:
    """A redirect from ``source`` to ``target`` stays within the origin (or only upgrades it
    to https on the same host), or goes to an origin the source allows."""
    here, there = origin(source), origin(target)
    upgrade = here[0] == "http" and there == ("https", here[1], 443)
    return there == here or upgrade or there in {origin(a) for a in allowed}


class _Inflater:
    """gzip or zlib-wrapped deflate (raw deflate as a fallback), each step bounded."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 32)
        self._started = False

    def feed(self, data: bytes, room: int) -> Iterator[bytes]:
        """The decoded bytes of ``data``, in pieces of at most ``room + 1`` bytes in all: one
        byte past the room is enough to know the body is too large."""
        try:
            out = self._z.decompress(data, room + 1)
        except zlib.error:
            if self._started or self.encoding != "deflate":
                raise
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
            out = self._z.decompress(data, room + 1)
        self._started = True
        yield out
        room -= len(out)
        while self._z.unconsumed_tail and room >= 0:
            out = self._z.decompress(self._z.unconsumed_tail, room + 1)
            room -= len(out)
            yield out


def read_body(chunks: Iterable[bytes], encoding: str | None, length: str | None,
              max_bytes: int, deadline: float, describe: str, seconds: float) -> bytes:
    """The decoded body of a response streamed as raw ``chunks``: refused (one line naming
    ``describe``) past ``max_bytes`` before or after decoding, or past ``deadline`` (the
    exchange's ``seconds``)."""
    cap = f"{max_bytes / 2**20:g} MiB (harvest.limits.max_response_mb)"
    if length and length.strip().isdigit() and int(length) > max_bytes:
        raise ResponseRefused(f"{describe}: the server announces {int(length):,} bytes, more "
                              f"than {cap}; refused")
    coding = (encoding or "identity").strip().lower()
    if coding == "x-gzip":
        coding = "gzip"
    if coding not in {"identity", "gzip", "deflate"}:
        raise ResponseRefused(f"{describe}: content encoding {encoding!r} was not asked for "
                              f"(only {ACCEPT_ENCODING}); refused")
    inflater = _Inflater(coding) if coding != "identity" else None
    raw = size = 0
    parts: list[bytes] = []
    for chunk in chunks:
        raw += len(chunk)
        if raw > max_bytes:
            raise ResponseRefused(f"{describe}: body larger than {cap}; refused")
        try:
            pieces = inflater.feed(chunk, max_bytes - size) if inflater else (chunk,)
            for piece in pieces:
                size += len(piece)
                if size > max_bytes:
                    raise ResponseRefused(f"{describe}: body decompresses to more than {cap}"
                                          "; refused")
                parts.append(piece)
        except zlib.error as exc:
            raise TransientError(f"broken {coding} body ({exc})") from None
        if time.monotonic() > deadline:
            raise TransientError(f"no whole response within {seconds:g} s (the server sends "
                                 "too slowly)")
    return b"".join(parts)

