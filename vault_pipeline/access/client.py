"""Finding and asking a running `vault serve`, with the standard library only: a one-shot
`vault search` must not import the web stack (or Polars) just to ask the server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vault_pipeline.errors import VaultError

SERVE_FILE = "serve.json"


def serve_file(home: Path) -> Path:
    """Where a running server leaves its address."""
    return home / SERVE_FILE


def ask_running(home: Path, params: dict[str, Any], timeout: float = 5.0) -> list[dict] | None:
    """The hits of a search from a server running on this vault; None when there is none
    (or it did not answer), so the caller searches itself."""
    import urllib.error
    import urllib.parse
    import urllib.request

    marker = serve_file(home)
    try:
        found = json.loads(marker.read_text())
        os.kill(int(found["pid"]), 0)  # a server that died leaves its file behind
    except (OSError, ValueError, KeyError, TypeError):
        return None
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    try:
        with urllib.request.urlopen(f"{found['url']}/api/search?{query}",
                                    timeout=timeout) as response:
            return json.loads(response.read())["hits"]
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]
        except (ValueError, KeyError, TypeError):
            message = str(exc)
        raise VaultError(message) from None
    except (OSError, ValueError, KeyError):
        return None
