"""A scripted evaluator on the local OpenAI-compatible test server: answers each task of the
evaluation runs (and their summaries) by its schema name, with the faults a real evaluator
shows: invalid JSON (valid when asked again), a refusal (always), an HTTP 500 on the first
ask (with ``fail``), ties, and a position bias (pairs: always A); it keeps the tokens it
billed."""

from __future__ import annotations

import hashlib
import json
import re

from testing.ideas_server import Reply, ScriptedServer, completion


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


class EvaluatorServer(ScriptedServer):
    """``refuse`` / ``garble`` / ``fail``: every n-th prompt (by digest) is refused / answered
    with invalid JSON on its first ask / answered HTTP 500 the first time it is asked."""

    def __init__(self, refuse: int = 17, garble: int = 5, fail: int = 0) -> None:
        super().__init__()
        self.refuse, self.garble, self.fail = refuse, garble, fail
        self.seen: dict[int, int] = {}  # asks per prompt
        self.billed = [0, 0]  # prompt and completion tokens of every answer it gave

    def key_of(self, body: dict) -> str:
        return body["response_format"]["json_schema"]["name"]

    def calls(self) -> int:
        return sum(len(v) for v in self.requests.values())

    def reply_for(self, key: str, body: dict) -> Reply:
        user = body["messages"][1]["content"]
        digest = _digest(user)
        self.seen[digest] = asks = self.seen.get(digest, 0) + 1
        if self.fail and digest % self.fail == 1 and asks == 1:
            return Reply(500, {"error": {"message": "upstream overloaded"}})
        if digest % self.refuse == 0:
            reply = Reply(200, completion("I cannot evaluate submissions, sorry."))
        elif digest % self.garble == 0 and len(body["messages"]) == 2:
            reply = Reply(200, completion('{"rating": 7, "better": '))
        else:
            reply = Reply(200, completion(json.dumps(self.answer(key, user, digest))))
        usage = reply.body["usage"]  # type: ignore[index]
        self.billed[0] += usage["prompt_tokens"]
        self.billed[1] += usage["completion_tokens"]
        return reply

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
