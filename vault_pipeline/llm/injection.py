"""Instruction-like sentences inside paper text (prompt injection): never copied into a
record or a view, whatever the backend, because views become prompts of later agents."""

from __future__ import annotations

import re

_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior"
    r"|above|earlier|preceding|your|system)\s+(?:instructions?|prompts?|rules|directions)"
    r"|\byou are (?:now )?(?:an? |the )?(?:ai|assistant|language model|llm|chatbot|reviewer)"
    r"|\b(?:system|developer) prompt\b|\bnew instructions?\b|\bas an ai\b"
    r"|^\s*(?:assistant|system|user)\s*:"
    r"|\b(?:output|respond with|reply with|print|return) (?:only |exactly )?(?:the following"
    r"|this json|the json|\{)"
    r"|\bgive (?:this|the) paper (?:a )?(?:high|positive|perfect)"
    r"|\bdo not (?:mask|remove|redact)\b",
    re.IGNORECASE,
)


def looks_like_instruction(sentence: str) -> bool:
    """True for a sentence that addresses a model rather than a reader of the paper."""
    return bool(_INSTRUCTION.search(sentence))
