"""A paper's Markdown split into classified sections of paragraphs (markdown-it-py parses;
tables and code never become prose). Used by the extractive backend to find where the
problem, the method, the related work and the limitations are written."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

# Section kinds, checked in order against the heading (numbering stripped, lower case).
_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("abstract", re.compile(r"^abstract\b")),
    ("limitations", re.compile(r"limitation|threats to validity|failure (?:modes|cases)"
                               r"|broader impact|shortcoming")),
    ("related", re.compile(r"related (?:work|literature|research)|prior work|previous work"
                           r"|background|literature review|state of the art")),
    ("experiments", re.compile(r"experiment|evaluation|results|empirical|benchmark|ablation"
                               r"|case stud|user stud|simulation|numerical|performance")),
    ("problem", re.compile(r"problem|preliminar|formulation|setting|setup|set-up|\bnotation"
                           r"|definition|task")),
    ("introduction", re.compile(r"introduction|motivation|overview")),
    ("discussion", re.compile(r"conclusion|discussion|future work|summary|outlook")),
    ("method", re.compile(r"method|approach|model|architecture|framework|algorithm|design"
                          r"|proposed|training|learning|system|technique|our |theory|analysis")),
]
_NUMBERING = re.compile(r"^\s*(?:[0-9IVXA-H]+(?:\.[0-9]+)*\.?|appendix [A-Z])\s+",
                        re.IGNORECASE)


def heading_kind(heading: str) -> str:
    text = _NUMBERING.sub("", heading).strip().lower()
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return "other"


@dataclass
class Section:
    heading: str
    level: int
    kind: str
    paragraphs: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)  # headings of sub-sections


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _inline_text(content: str) -> str:
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", content)  # images
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = re.sub(r"[*_`]{1,3}", "", text)  # emphasis and code marks
    return " ".join(text.split())


def split_sections(markdown: str) -> list[Section]:
    """Sections in document order; text before any heading goes to a `preamble`.

    A sub-section of unknown kind takes its parent's kind (`3.2 Encoder` under `3 Method`)."""
    sections = [Section("preamble", 0, "other")]
    stack: list[Section] = []
    tokens = _parser().parse(markdown)
    skip_depth = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "table_open":
            skip_depth += 1
        elif token.type == "table_close":
            skip_depth -= 1
        elif skip_depth:
            pass
        elif token.type == "heading_open":
            level = int(token.tag[1:])
            title = _inline_text(tokens[i + 1].content)
            while stack and stack[-1].level >= level:
                stack.pop()
            kind = heading_kind(title)
            if kind == "other" and stack:
                kind = stack[-1].kind
            if stack:
                stack[-1].children.append(title)
            section = Section(title, level, kind)
            sections.append(section)
            stack.append(section)
            i += 2
        elif token.type == "inline":
            text = _inline_text(token.content)
            if text:
                sections[-1].paragraphs.append(text)
        elif token.type in ("fence", "code_block"):
            sections[-1].code.append(token.content.strip("\n"))
        i += 1
    return [s for s in sections if s.paragraphs or s.code or s.children]


def of_kind(sections: list[Section], *kinds: str) -> list[Section]:
    return [s for s in sections if s.kind in kinds]
