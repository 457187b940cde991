"""The `vault serve` page shows vault data as text only, and runs no script but its own."""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.testclient import TestClient

from vault_pipeline.access.serve import create_app


def test_the_page_runs_only_its_own_script_and_writes_text_only(vault_paths) -> None:
    with TestClient(create_app(vault_paths.home, warm=False)) as client:
        page = client.get("/")
        api = client.get("/api/tables")
    policy = page.headers["content-security-policy"]
    (script,) = re.findall(r"<script>(.*?)</script>", page.text, flags=re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script  # every value reaches the page through textContent
    assert api.headers["x-content-type-options"] == "nosniff"
