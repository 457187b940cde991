"""Data in Markdown: every value that comes from a paper, a server or a setting goes into a
card or report through here, so it reads as the text it is and never as markup (an HTML tag,
a table cell boundary, a link, emphasis) in GitHub's, the Hub's or Dagster's renderer.

HTML's own characters become entities (they are HTML inside Markdown, and an entity is text
in every renderer), the inline markers of CommonMark are backslash-escaped, and line breaks
become spaces (a value is one cell, one line)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKERS = re.compile(r"([\\`*\[|~#!]|(?<![^\W_])_|_(?![^\W_]))")
"""Backslash-escaped: what opens code, emphasis, a link or image, a cell, strikethrough; an
underscore only where it could (inside a word, as in `arxiv_id`, it never emphasises)."""
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def text(value: object) -> str:
    """``value`` as inline Markdown text (None as empty)."""
    if value is None:
        return ""
    shown = _BREAKS.sub(" ", str(value)).replace("\0", "\ufffd")
    shown = "".join(_ENTITIES.get(c, c) for c in shown)
    return _MARKERS.sub(r"\\\1", shown).strip()


def code(value: object) -> str:
    """``value`` as a code span (for names and ids), fenced past any backticks inside."""
    shown = _BREAKS.sub(" ", "" if value is None else str(value))
    longest = max((len(m) for m in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[object]],
          align: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured table; every header and cell escaped with :func:`text`."""
    rule = [{"right": "---:", "center": ":---:"}.get(a, "---")
            for a in (align or ["left"] * len(header))]
    lines = ["| " + " | ".join(text(h) for h in header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(text(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
