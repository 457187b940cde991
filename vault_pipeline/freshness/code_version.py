"""The code version of the pipeline: one content hash of every source and prompt file of the
packages that build assets. The Dagster assets carry it as their `code_version` and the
CLI's no-op check counts it among each asset's inputs, so the UI and the CLI call the same
assets stale after a code change (and none after a checkout that changes nothing)."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

PACKAGES = ("vault_pipeline", "assets", "sensors")
SUFFIXES = frozenset({".py", ".md"})


@lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 (first 16 hex digits) over each file's path and bytes; the bundled sample is
    data, not code. Found by path, never imported (no Dagster import here)."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for file in sorted(root.rglob("*")):
            relative = file.relative_to(root)
            if file.suffix in SUFFIXES and "__pycache__" not in relative.parts \
                    and "sample" not in relative.parts:
                digest.update(f"{package}/{relative.as_posix()}\0".encode())
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]
