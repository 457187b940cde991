"""A small OpenAI-compatible server on 127.0.0.1 for the `openai` backend's tests: it replays
scripted responses (recorded answers, 429, 500, slow) per paper and keeps every request."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ANSWERS = Path(__file__).parents[1] / "tests" / "data" / "ideas" / "answers"


def completion(content: str, finish_reason: str = "stop") -> dict:
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}}


@dataclass
class Reply:
    status: int = 200
    body: dict | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @classmethod
    def answer(cls, name: str, finish_reason: str = "stop") -> Reply:
        return cls(200, completion((ANSWERS / name).read_text(), finish_reason))


class ScriptedServer:
    """Replies are scripted per arXiv id (found in the user message); the last one repeats."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Reply]] = {}
        self.requests: dict[str, list[dict]] = defaultdict(list)
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                key = server.key_of(body)
                with server.lock:
                    server.requests[key].append(body)
                    reply = server.reply_for(key, body)
                time.sleep(reply.delay_s)
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = (payload or "").encode()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def reply_for(self, key: str, body: dict) -> Reply:
        """The next scripted reply for ``key`` (the last one repeats)."""
        script = self.scripts.get(key) or [Reply.answer("valid.json")]
        return script.pop(0) if len(script) > 1 else script[0]

    def key_of(self, body: dict) -> str:
        user = body["messages"][1]["content"]
        for key in self.scripts:
            if f"paper {key} " in user:
                return key
        return "default"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
