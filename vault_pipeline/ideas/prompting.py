"""Versioned prompt files inside the package (`prompts/<name>.v<N>.md`), loaded once and
rendered without `str.format` (JSON braces in the text stay as they are)."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib import resources

DEFAULT_PROMPT = "decompose.v2"
_SECTION = re.compile(r"^## (system|user|repair)\s*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_MARKER = re.compile(r"</?\s*paper\b", re.IGNORECASE)


@dataclass(frozen=True)
class Prompt:
    version: str  # the file name without .md, e.g. decompose.v1
    system: str
    user: str
    repair: str
    sha256: str  # of the file, recorded so an edit without a version bump is visible

    def messages(self, arxiv_id: str, paper_text: str) -> list[dict[str, str]]:
        """System and user messages for one paper; the paper cannot close its markers."""
        fenced = _MARKER.sub(lambda m: m.group().replace("<", "‹"), paper_text)
        user = self.user.replace("{{arxiv_id}}", arxiv_id).replace("{{paper}}", fenced)
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": user}]

    def repair_messages(self, messages: list[dict[str, str]], answer: str,
                        reason: str) -> list[dict[str, str]]:
        """The conversation again, with the rejected answer and why it was rejected."""
        return [*messages[:2], {"role": "assistant", "content": answer},
                {"role": "user", "content": self.repair.replace("{{reason}}", reason)}]


def available() -> list[str]:
    folder = resources.files("vault_pipeline.ideas") / "prompts"
    return sorted(p.name.removesuffix(".md") for p in folder.iterdir()
                  if p.name.endswith(".md"))


@functools.lru_cache(maxsize=8)
def load_prompt(version: str = DEFAULT_PROMPT) -> Prompt:
    """Load ``prompts/<version>.md``; a clear error names the versions there are."""
    path = resources.files("vault_pipeline.ideas") / "prompts" / f"{version}.md"
    if not path.is_file():
        raise ValueError(f"no prompt {version!r}; available: {', '.join(available())}")
    raw = path.read_text(encoding="utf-8")
    body = _COMMENT.sub("", raw)
    pieces = _SECTION.split(body)
    sections = {pieces[i]: pieces[i + 1].strip() for i in range(1, len(pieces) - 1, 2)}
    missing = {"system", "user", "repair"} - set(sections)
    if missing:
        raise ValueError(f"prompt {version} lacks sections {sorted(missing)}")
    if "{{paper}}" not in sections["user"]:
        raise ValueError(f"prompt {version}: the user section has no {{{{paper}}}}")
    return Prompt(version, sections["system"], sections["user"], sections["repair"],
                  hashlib.sha256(raw.encode()).hexdigest())
