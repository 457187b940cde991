"""A scripted evaluator on the local OpenAI-compatible test server: answers each task of the
evaluation runs (and their summaries) by its schema name, with the faults a real evaluator
shows: invalid JSON (valid when asked again), a refusal (always), ties, and a position bias
(pairs: always A)."""

from __future__ import annotations

import hashlib
import json
import re

from testing.ideas_server import Reply, ScriptedServer, completion


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


class EvaluatorServer(ScriptedServer):
    """``refuse`` / ``garble``: every n-th prompt (by digest) is refused / answered with
    invalid JSON on its first ask."""

    def __init__(self, refuse: int = 17, garble: int = 5) -> None:
        super().__init__()
        self.refuse, self.garble = refuse, garble

    def key_of(self, body: dict) -> str:
        return body["response_format"]["json_schema"]["name"]

    def calls(self) -> int:
        return sum(len(v) for v in self.requests.values())

    def reply_for(self, key: str, body: dict) -> Reply:
        user = body["messages"][1]["content"]
        digest = _digest(user)
        if digest % self.refuse == 0:
            return Reply(200, completion("I cannot evaluate submissions, sorry."))
        if digest % self.garble == 0 and len(body["messages"]) == 2:
            return Reply(200, completion('{"rating": 7, "better": '))
        return Reply(200, completion(json.dumps(self.answer(key, user, digest))))

    @staticmethod
    def answer(task: str, user: str, digest: int) -> dict:
        count = re.search(r"these (\d+) ", user)
        n = int(count.group(1)) if count else 2
        if task == "eval_summary_vanilla":
            return {"summary": f"Scripted vanilla summary {digest % 1000}: the paper's "
                    "contribution, method, results and impact."}
        if task == "eval_summary_objective":
            return {"background": f"Scripted background {digest % 1000}.",
                    "method": "Scripted method.", "results": "Scripted results.",
                    "limitations": None}
        if task in ("eval_direct", "eval_anchor"):
            return {"rating": 1 + digest % 10}
        if task == "eval_group":
            return {"ratings": [{"id": i, "rating": 1 + (digest + i) % 10}
                                for i in range(1, n + 1)]}
        if task in ("eval_elo", "eval_swiss"):
            return {"better": ("A", "B", "tie")[digest % 3]}
        if task == "eval_idea_point3":
            return {"label": "Reject"}
        if task == "eval_idea_point2":
            return {"label": ("Reject", "Accept")[digest % 2]}
        if task == "eval_idea_pair":
            return {"better": "A"}  # position-biased
        return {"best": 1, "ranking": list(range(n, 0, -1))}
