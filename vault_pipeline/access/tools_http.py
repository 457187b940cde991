"""The agent tools over HTTP, under `vault serve`: sessions opened with their cutoff and
target, single calls and batched calls (one search batch across many trajectories), every
call answered by the same `Session.call` as the Python and MCP faces.

Bounded: a body over ``MAX_BODY`` bytes is a 413 before it is read whole, a batch over
`tools.MAX_BATCH` calls a 413, malformed JSON or arguments the schemas refuse a 400, an
unknown session a 404; nothing a client sends is a 500."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from vault_pipeline.access import log, specs, wire
from vault_pipeline.access.tools import MAX_BATCH, STATUS, ToolError, call_batch
from vault_pipeline.errors import VaultError

if TYPE_CHECKING:
    from vault_pipeline.access.tools import CallRecord, Session, Toolbox
    from vault_pipeline.access.world import World

MAX_BODY = 1 << 20  # 1 MiB: 256 calls of 4,000-character texts
MAX_SESSIONS = 4_096  # open at once; the oldest is closed (its log kept) beyond that
FLUSH_ROWS = 10_000  # closed sessions' calls are written to `tool_calls` in bulk


def _json(data: Any, status: int = 200) -> Response:
    return Response(wire.encode(data), status_code=status, media_type="application/json")


def _error(code: str, message: str, status: int) -> Response:
    return _json({"error": code, "message": message}, status)


class ToolService:
    """Open sessions and the calls waiting to be logged, for one server."""

    def __init__(self, toolbox: Toolbox, within: World | None = None) -> None:
        self.toolbox = toolbox
        self.within = within  # the server's own cutoff and target: every session is under it
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.pending: list[CallRecord] = []
        self.lock = threading.Lock()

    def open(self, body: dict) -> Session:
        for name in ("as_of", "target", "session_id", "target_title"):
            if body.get(name) is not None and not isinstance(body[name], str):
                raise ToolError("bad_arguments", f"{name} must be a string")
        session = self.toolbox.session(body.get("as_of"), body.get("target"),
                                       body.get("session_id"), body.get("target_title"),
                                       within=self.within)
        with self.lock:
            if session.session_id in self.sessions:
                raise ToolError("session_exists", f"session {session.session_id!r} is open", 409)
            self.sessions[session.session_id] = session
            while len(self.sessions) > MAX_SESSIONS:
                _, oldest = self.sessions.popitem(last=False)
                self.pending += oldest.calls
        return session

    def get(self, session_id: Any) -> Session:
        with self.lock:
            session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise ToolError("unknown_session", f"no open session {session_id!r}", 404)
        return session

    def close(self, session_id: str) -> int:
        session = self.get(session_id)
        with self.lock:
            self.sessions.pop(session_id, None)
            self.pending += session.calls
            due = len(self.pending) >= FLUSH_ROWS
        if due:
            self.flush()
        return len(session.calls)

    def flush(self) -> int:
        """Write the closed sessions' calls (and, at shutdown, the open ones')."""
        with self.lock:
            rows, self.pending = self.pending, []
        return log.append(self.toolbox.paths.store, rows)

    def shutdown(self) -> None:
        with self.lock:
            for session in self.sessions.values():
                self.pending += session.calls
            self.sessions.clear()
        self.flush()


async def _body(request: Request) -> Any:
    """The JSON body, refused when larger than MAX_BODY (read in chunks, never whole)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise ToolError("too_large", f"the body is over {MAX_BODY} bytes", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ToolError("too_large", f"the body is over {MAX_BODY} bytes", 413)
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks) or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ToolError("bad_json", "the body is not JSON", 400) from None


def _endpoint(handler):
    async def endpoint(request: Request) -> Response:
        service: ToolService = request.app.state.tools
        try:
            body = await _body(request) if request.method == "POST" else None
            if request.method == "POST" and not isinstance(body, dict):
                raise ToolError("bad_json", "the body must be a JSON object", 400)
            import anyio.to_thread

            data, status = await anyio.to_thread.run_sync(handler, service, body)
        except ToolError as exc:
            return _error(exc.code, exc.message, exc.status)
        except VaultError as exc:
            return _error("bad_arguments", str(exc), 400)
        return _json(data, status)
    return endpoint


def _schema(service: ToolService, body: None) -> tuple[Any, int]:
    return {"tools": specs.openai_tools()}, 200


def _open(service: ToolService, body: dict) -> tuple[Any, int]:
    session = service.open(body)
    return {"session_id": session.session_id, "as_of": session.world.as_of.isoformat(),
            "target": session.world.target}, 201


def _status(answer: dict) -> int:
    return STATUS.get(answer["error"], 400) if "error" in answer else 200


def _call(service: ToolService, body: dict) -> tuple[Any, int]:
    session = service.get(body.get("session_id"))
    answer = session.call(body.get("tool"), body.get("arguments"))  # type: ignore[arg-type]
    return answer, _status(answer)


def _batch(service: ToolService, body: dict) -> tuple[Any, int]:
    calls = body.get("calls")
    if not isinstance(calls, list) or not calls:
        raise ToolError("bad_arguments", "calls must be a non-empty list", 400)
    if len(calls) > MAX_BATCH:
        raise ToolError("batch_too_large", f"a batch holds at most {MAX_BATCH} calls, "
                                           f"not {len(calls)}", 413)
    resolved = []
    for i, item in enumerate(calls):
        if not isinstance(item, dict):
            raise ToolError("bad_arguments", f"calls[{i}] must be an object", 400)
        resolved.append((service.get(item.get("session_id")), item.get("tool"),
                         item.get("arguments")))
    answers = call_batch(resolved)
    return {"answers": answers}, 200


def _close(service: ToolService, body: dict) -> tuple[Any, int]:
    return {"session_id": body.get("session_id"),
            "calls": service.close(body.get("session_id"))}, 200  # type: ignore[arg-type]


def routes() -> list[Route]:
    return [
        Route("/api/tools/schema", _endpoint(_schema), methods=["GET"]),
        Route("/api/tools/sessions", _endpoint(_open), methods=["POST"]),
        Route("/api/tools/call", _endpoint(_call), methods=["POST"]),
        Route("/api/tools/batch", _endpoint(_batch), methods=["POST"]),
        Route("/api/tools/close", _endpoint(_close), methods=["POST"]),
    ]
