"""The evaluation runs' versioned prompt files (`prompts/<name>.v<N>.md`, read like the
ideas stage's) and their rendering: `{{field}}` replaced, JSON braces left as they are."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from vault_pipeline.llm.prompting import Prompt, read_sections


def load_prompt(version: str) -> Prompt:
    sections, sha = read_sections(version, ("system", "user", "repair"),
                                  package="vault_pipeline.evalruns", folder="prompts")
    return Prompt(version, sections["system"], sections["user"], sections["repair"], sha)


def prompt_versions() -> list[str]:
    root = resources.files("vault_pipeline.evalruns") / "prompts"
    return sorted(p.name.removesuffix(".md") for p in root.iterdir() if p.name.endswith(".md"))


def render(prompt: Prompt, fields: Mapping[str, str]) -> tuple[dict[str, str], ...]:
    user = prompt.user
    for name, value in fields.items():
        user = user.replace("{{" + name + "}}", value)
    return ({"role": "system", "content": prompt.system}, {"role": "user", "content": user})
