"""`vault serve`: the vault behind a small HTTP JSON API and one web page.

A one-shot `vault search` must import the index library and load the model on every call;
a long-lived process pays that once, so each search costs only the query itself. The API is
read-only (the same sealed DuckDB connection as `vault sql`, the same search function); the
page is one static HTML file that calls it. While it runs, the server leaves its address in
``<data root>/serve.json`` so that `vault search` on the same vault asks it instead of
starting cold."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from vault_pipeline.access.api import Vault
from vault_pipeline.access.client import serve_file
from vault_pipeline.errors import VaultError
from vault_pipeline.store.paths import VaultPaths

MAX_ROWS = 1_000  # rows a SQL answer or a page of papers carries at most


NOSNIFF = {"X-Content-Type-Options": "nosniff"}  # JSON is never taken for a page


def _json(data: Any, status: int = 200) -> Response:
    body = json.dumps(data, default=str, ensure_ascii=False)
    return Response(body, status_code=status, media_type="application/json",
                    headers=NOSNIFF)


def _int(request: Request, name: str, default: int, low: int = 1, high: int = MAX_ROWS) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise VaultError(f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise VaultError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _answer(handler: Callable[[Vault, Request], Any]):
    """A JSON endpoint: user errors are a 400 with their one line, never a stack."""
    def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        try:
            data = handler(request.app.state.vault, request)
        except VaultError as exc:
            return _json({"error": str(exc)}, 400)
        took = round((time.perf_counter() - started) * 1000, 2)
        return _json({**data, "ms": took})
    return endpoint


def _within(vault: Vault, request: Request) -> Vault:
    """The vault as this request's session sees it: ``as_of`` and ``target`` narrow the
    server's own cutoff, never widen it."""
    params = request.query_params
    return vault.at(params.get("as_of") or None, params.get("target") or None)


def _search(vault: Vault, request: Request) -> dict:
    params = request.query_params
    text = params.get("q", "")
    vault = _within(vault, request)
    hits = vault.search(text, k=_int(request, "k", 10, high=100),
                        view=params.get("view") or None, before=params.get("before") or None,
                        same_field=params.get("same_field") or None,
                        other_fields=params.get("other_fields") or None,
                        mode=params.get("mode") or "hybrid")
    return {"query": text, "hits": hits.to_dicts()}


def _paper(vault: Vault, request: Request) -> dict:
    arxiv_id = request.path_params["arxiv_id"]
    vault = _within(vault, request)
    found = vault.papers([arxiv_id])
    if found.is_empty():
        raise VaultError(f"no paper {arxiv_id!r} in the vault")
    return {"paper": found.to_dicts()[0], "views": vault.views(arxiv_id).to_dicts()}


def _papers(vault: Vault, request: Request) -> dict:
    limit = _int(request, "limit", 20)
    offset = _int(request, "offset", 0, low=0, high=10**9)
    vault = _within(vault, request)
    if vault.world is not None:
        shown = vault.world.filter(vault.world.catalog.frame)
        frame = (shown.sort(["published", "arxiv_id"], descending=[True, False])
                 .slice(offset, limit).select("arxiv_id", "published", "primary_category",
                                              "title"))
        return {"papers": frame.to_dicts(), "offset": offset}
    frame = vault.sql("SELECT arxiv_id, published, primary_category, title FROM papers "
                      f"ORDER BY published DESC, arxiv_id LIMIT {limit} OFFSET {offset}")
    return {"papers": frame.to_dicts(), "offset": offset}


def _tables(vault: Vault, request: Request) -> dict:
    _within(vault, request)._whole("/api/tables")
    return {"tables": [{"name": name, "rows": vault.paths.store.rows(name)}
                       for name in vault.tables()]}


def _sql(vault: Vault, request: Request) -> dict:
    frame = _within(vault, request).sql(request.query_params.get("q", ""))
    return {"columns": frame.columns, "rows": frame.head(MAX_ROWS).rows(),
            "truncated": frame.height > MAX_ROWS}


def page_policy(page: str) -> str:
    """The page's Content-Security-Policy: its one inline script runs (by its hash) and no
    other, nothing is loaded from elsewhere. The script puts every value from the vault in
    the page as text (``textContent``); should a paper's title ever reach the page as HTML,
    a script in it would still not run."""
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest())
                      .decode() + "'" for s in scripts)
    return (f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")


def _page(request: Request) -> HTMLResponse:
    page = (resources.files("vault_pipeline") / "templates" / "serve.html").read_text(
        encoding="utf-8")
    return HTMLResponse(page, headers={"Content-Security-Policy": page_policy(page),
                                       **NOSNIFF})


def create_app(home: str | os.PathLike[str] | None = None, warm: bool = True,
               on_ready: Callable[[], None] | None = None,
               on_stop: Callable[[], None] | None = None, as_of: str | None = None,
               target: str | None = None, query_encoder: str = "model") -> Starlette:
    """The web app over one vault; ``warm`` loads the index and the model at start-up, so
    the first search is as fast as the others; ``on_ready`` runs once that is done,
    ``on_stop`` at shutdown (uvicorn ends the process by the signal right after). With
    ``as_of`` (and ``target``) every endpoint answers within that session's world, and
    the agent tools are served under `/api/tools/` (`access.tools_http`); their search
    texts are embedded by ``query_encoder`` (`Toolbox`)."""
    from vault_pipeline.access.tools import Toolbox
    from vault_pipeline.access.tools_http import ToolService, routes

    vault = Vault(home)
    # one toolbox per server: every face shares it
    vault._toolbox = Toolbox(vault.paths, coalesce=True, query_encoder=query_encoder)
    vault = vault.at(as_of, target)
    tools = ToolService(vault.toolbox, within=vault.world)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        if warm:
            with contextlib.suppress(VaultError):  # no index yet: searches will say so
                vault.search("warm up", k=1)
            with contextlib.suppress(VaultError):
                tools.toolbox.warm()
        if on_ready is not None:
            on_ready()
        yield
        tools.shutdown()
        if on_stop is not None:
            on_stop()

    app = Starlette(routes=[
        Route("/", _page),
        Route("/api/search", _answer(_search)),
        Route("/api/papers", _answer(_papers)),
        Route("/api/papers/{arxiv_id:path}", _answer(_paper)),
        Route("/api/tables", _answer(_tables)),
        Route("/api/sql", _answer(_sql)),
        *routes(),
    ], lifespan=lifespan)
    app.state.vault = vault
    app.state.tools = tools
    return app


def run(home: str | os.PathLike[str] | None, host: str, port: int, as_of: str | None = None,
        target: str | None = None, query_encoder: str = "model") -> None:
    """Serve until interrupted. The socket is bound first (a busy port is a one-line error),
    and the address is published in ``serve.json`` only once searches are warm; ``as_of``
    and ``target`` cut every answer (see `create_app`)."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise VaultError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    port = listener.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}"
    marker = serve_file(VaultPaths.from_env(home).existing().home)

    def ready() -> None:
        marker.write_text(json.dumps({"url": url, "pid": os.getpid()}))
        print(f"serving {marker.parent} on {url} (Ctrl+C to stop)", flush=True)

    def stop() -> None:
        marker.unlink(missing_ok=True)

    app = create_app(home, on_ready=ready, on_stop=stop, as_of=as_of, target=target,
                     query_encoder=query_encoder)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[listener])
    finally:
        stop()
