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


def available(package: str = "vault_pipeline.ideas", folder: str = "prompts") -> list[str]:
    root = resources.files(package) / folder
    return sorted(p.name.removesuffix(".md") for p in root.iterdir() if p.name.endswith(".md"))


def read_sections(version: str, required: tuple[str, ...],
                  package: str = "vault_pipeline.ideas",
                  folder: str = "prompts") -> tuple[dict[str, str], str]:
    """The ``## name`` sections of ``<folder>/<version>.md`` and the file's sha256; a clear
    error names the versions there are (also the role templates of the exports)."""
    path = resources.files(package) / folder / f"{version}.md"
    if not path.is_file():
        raise ValueError(f"no prompt {version!r}; available: "
                         f"{', '.join(available(package, folder))}")
    raw = path.read_text(encoding="utf-8")
    pieces = _SECTION.split(_COMMENT.sub("", raw))
    sections = {pieces[i]: pieces[i + 1].strip() for i in range(1, len(pieces) - 1, 2)}
    missing = set(required) - set(sections)
    if missing:
        raise ValueError(f"prompt {version} lacks sections {sorted(missing)}")
    return sections, hashlib.sha256(raw.encode()).hexdigest()


@functools.lru_cache(maxsize=8)
def load_prompt(version: str = DEFAULT_PROMPT) -> Prompt:
    """Load ``prompts/<version>.md``; a clear error names the versions there are."""
    sections, sha = read_sections(version, ("system", "user", "repair"))
    if "{{paper}}" not in sections["user"]:
        raise ValueError(f"prompt {version}: the user section has no {{{{paper}}}}")
    return Prompt(version, sections["system"], sections["user"], sections["repair"], sha)
