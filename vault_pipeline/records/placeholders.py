"""Placeholders are absence, not content: "Not stated", "N/A", "unknown", "none given" in a
record field become null (or a dropped list item), so that a view built from nothing is
seen as empty, never indexed and never a target."""

from __future__ import annotations

import re
from typing import Any

_PLACEHOLDER = re.compile(
    r"^\W*(?:n/?a|none|null|nil|unknown|unspecified|not applicable|tbd|\.\.\.|-+|—"
    r"|(?:this is |it is |is )?(?:not|never|no(?:thing)?) (?:(?:explicitly|clearly|directly"
    r"|further|otherwise) )?(?:stated|given|specified|mentioned|described|provided|reported"
    r"|available|discussed|applicable|known)\b.*"
    r"|no (?:\w+ ){0,3}(?:is|are|was|were) (?:explicitly )?(?:stated|given|specified"
    r"|mentioned|described|provided|reported)\b.*"
    r"|(?:the )?(?:paper|authors|text|abstract) (?:does|do) not (?:state|say|specify|mention"
    r"|describe|provide|give|report|discuss)\b.*"
    r"|withheld\b.*)\W*$",
    re.IGNORECASE)


def is_placeholder(text: str | None) -> bool:
    """Whether a text says only that something is missing."""
    return text is None or not text.strip() or bool(_PLACEHOLDER.match(text.strip()))


def nullify(value: Any) -> Any:
    """The same structure with every placeholder string as None and placeholder list items
    dropped (a dict whose every text is a placeholder is dropped from its list too)."""
    if isinstance(value, str):
        return None if is_placeholder(value) else value
    if isinstance(value, list):
        items = [nullify(v) for v in value]
        return [v for v in items if v is not None and not _empty_object(v)]
    if isinstance(value, dict):
        return {k: nullify(v) for k, v in value.items()}
    return value


def _empty_object(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    texts = [v for v in value.values() if isinstance(v, str)]
    return bool(value) and not texts and all(
        v is None or v == [] for v in value.values())
