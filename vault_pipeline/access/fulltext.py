"""A paper's full text as `read_paper` hands it out: Markdown sections, and pages of a
bounded size cut at paragraph breaks, so that no answer carries a whole paper."""

from __future__ import annotations

import re

PAGE_CHARS = 4_000  # a page of read_paper: about a thousand tokens
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def pages(text: str, size: int = PAGE_CHARS) -> list[str]:
    """``text`` cut into pages of at most ``size`` characters, at a paragraph break where
    one falls in the page's second half."""
    out, start = [], 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = text.rfind("\n\n", start + size // 2, end)
            end = cut if cut > start else end
        out.append(text[start:end].strip("\n"))
        start = end
    return [p for p in out if p] or [""]


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, text) of each Markdown section; text before the first heading is
    `(untitled)`."""
    marks = list(_HEADING.finditer(text))
    out = []
    if not marks or marks[0].start() > 0:
        head = text[: marks[0].start()] if marks else text
        if head.strip():
            out.append(("(untitled)", head))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.append((mark.group(1), text[mark.start():end]))
    return out
