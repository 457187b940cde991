"""The tools' answers as JSON: one encoder for every face (HTTP bodies, MCP results, the
trajectory log), so a value reads the same on each.

orjson, not the standard library: a batch of 64 search answers (about 230 kB) cost 16 ms to
walk into JSON types and log with `json`, and 2.2 ms with orjson. Anything JSON lacks
(dates, numpy scalars, sets) is written as ``str(value)``, as ``json.dumps(default=str)``
writes it; what orjson refuses (an integer beyond 64 bits) falls back to `json`."""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS


def encode(value: Any, sort_keys: bool = False) -> bytes:
    """UTF-8 JSON of ``value`` (non-ASCII kept as is), keys sorted when asked."""
    try:
        return orjson.dumps(value, default=str,
                            option=_OPTIONS | (orjson.OPT_SORT_KEYS if sort_keys else 0))
    except TypeError:
        return json.dumps(value, default=str, ensure_ascii=False,
                          sort_keys=sort_keys).encode()


def dumps(value: Any, sort_keys: bool = False) -> str:
    return encode(value, sort_keys).decode()


def jsonable(value: Any) -> Any:
    """``value`` as HTTP and MCP carry it: a JSON round trip (dates as ISO days)."""
    try:
        return orjson.loads(orjson.dumps(value, default=str, option=_OPTIONS))
    except TypeError:
        return json.loads(json.dumps(value, default=str))
