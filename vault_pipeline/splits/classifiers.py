"""Who decides whether a post-cutoff paper is methodological: the extractive rules
(:mod:`.kinds`, the default) or an LLM through the ideas stage's backends (`openai`, `vllm`,
`batch_file`), asked with a versioned prompt and a JSON schema. An LLM answer that is not
usable is asked once more, then recorded as `unclassified` with the reason: the paper is
excluded for this run, said so, and asked again on the next."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from vault_pipeline.errors import VaultError
from vault_pipeline.ideas.backends import Backend, Request, make_backend
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.splits.kinds import KINDS, PaperKind, classify
from vault_pipeline.splits.kinds import name as kind_version

PROMPT_VERSION = "paper_kind.v1"
UNCLASSIFIED = "unclassified"
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["kind", "evidence"],
    "properties": {"kind": {"type": "string", "enum": list(KINDS)},
                   "evidence": {"type": "string"}},
}


@dataclass(frozen=True)
class ClassifierInput:
    arxiv_id: str
    title: str
    abstract: str
    record: dict[str, Any] | None


def input_sha256(classifier_name: str, paper: ClassifierInput) -> str:
    """Identity of one verdict: the classifier and everything it reads of the paper."""
    payload = json.dumps([classifier_name, paper.title, paper.abstract, _summary(paper.record)],
                         ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


class ExtractiveClassifier:
    def __init__(self) -> None:
        self.name = kind_version()  # cues + model weights: a change re-classifies every paper

    def __call__(self, batch: Sequence[ClassifierInput]) -> list[PaperKind]:
        return [classify(p.title, p.abstract, p.record) for p in batch]


def _summary(record: dict[str, Any] | None) -> dict[str, Any]:
    if not record:
        return {}
    novelty = record.get("key_novelty") or {}
    return {"thesis": record.get("thesis"), "key_novelty": novelty.get("name"),
            "method": (record.get("method") or {}).get("flow")}


def _prompt() -> str:
    folder = resources.files("vault_pipeline.splits") / "prompts"
    return (folder / f"{PROMPT_VERSION}.md").read_text(encoding="utf-8")


class LLMClassifier:
    """Asks the configured LLM backend, one request per paper, batched."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.name = f"llm:{backend.name}:{backend.model}:{PROMPT_VERSION}"
        self.system = _prompt()

    def request(self, paper: ClassifierInput) -> Request:
        data = json.dumps({"title": paper.title, "abstract": paper.abstract,
                           **_summary(paper.record)}, ensure_ascii=False)
        data = data.replace("</paper", "<\\/paper")
        user = (f"Classify paper {paper.arxiv_id} from what follows.\n<paper>\n{data}\n"
                f"</paper>")
        given = PaperInput(paper.arxiv_id, paper.title, paper.abstract, None, None,
                           "abstract_only", "classification")
        return Request(input_sha256(self.name, paper), given,
                       ({"role": "system", "content": self.system},
                        {"role": "user", "content": user}), ANSWER_SCHEMA, "paper_kind")

    def _parse(self, text: str | None, error: str | None) -> PaperKind | str:
        """A verdict, or why the answer cannot be used."""
        if error or text is None:
            return error or "no answer"
        try:
            answer = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"answer is not JSON ({exc.msg})"
        if not isinstance(answer, dict) or answer.get("kind") not in KINDS:
            return f"answer has no valid kind: {text[:80]!r}"
        evidence = str(answer.get("evidence") or "no evidence given").strip()
        return PaperKind(answer["kind"], f"LLM: {evidence[:200]}", self.name)

    def __call__(self, batch: Sequence[ClassifierInput]) -> list[PaperKind]:
        requests = {p.arxiv_id: self.request(p) for p in batch}
        verdicts: dict[str, PaperKind | str] = {}
        pending = list(batch)
        for _attempt in range(1 if self.backend.deterministic else 2):
            if not pending:
                break
            answers = {a.custom_id: a for a in self.backend.generate(
                [requests[p.arxiv_id] for p in pending])}
            for paper in pending:
                answer = answers.get(requests[paper.arxiv_id].custom_id)
                verdicts[paper.arxiv_id] = (self._parse(answer.text, answer.error)
                                            if answer else "no answer")
            pending = [p for p in pending if isinstance(verdicts[p.arxiv_id], str)]
        return [v if isinstance(v := verdicts[p.arxiv_id], PaperKind)
                else PaperKind(UNCLASSIFIED, f"LLM answer unusable: {v}", self.name)
                for p in batch]


def make_classifier(choice: str, ideas: IdeasSettings):
    """`extractive`, `llm` (the ideas stage's backend: ``ideas``, the section the stage
    ``uses``) or `auto` (llm when that backend is an LLM, else extractive)."""
    if choice == "auto":
        choice = "extractive" if ideas.backend == "extractive" else "llm"
    if choice == "extractive":
        return ExtractiveClassifier()
    if ideas.backend == "extractive":
        raise VaultError("classifier 'llm' needs an LLM backend for the ideas stage "
                         "(VAULT_IDEAS_BACKEND=openai, vllm or batch_file)")
    return LLMClassifier(make_backend(ideas))
