"""Harvest cursors: small JSON files under the data root that say how far a listing got
(the next resumption token, the next start index, the last note id). Each is rewritten
atomically right after a page is safely in the raw zone, so a crash resumes at the first page
not yet stored: nothing is skipped, and a page fetched twice is stored once (content-addressed)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from vault_pipeline.store.atomic import atomic_write_bytes


def cursor_key(*parts: object) -> str:
    """A readable, file-safe key; long or odd parts get a short hash."""
    text = "__".join(str(p) for p in parts if p not in (None, ""))
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", text)
    if len(safe) > 120 or safe != text:
        safe = f"{safe[:100]}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    return safe


class CursorStore:
    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def load(self, key: str) -> dict[str, Any]:
        try:
            return json.loads(self.path(key).read_text())
        except FileNotFoundError:
            return {}

    def save(self, key: str, state: dict[str, Any]) -> None:
        atomic_write_bytes(self.path(key), json.dumps(state, indent=1, default=str).encode())

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.json"))
