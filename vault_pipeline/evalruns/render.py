"""A report as a list of blocks (headings, paragraphs, tables, figures), written either as
one self-contained HTML page (figures embedded as base64 PNG) or as Markdown with the
figures as PNG files beside it: one content, two formats."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import vault_pipeline.markdown_text as md


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str  # may hold `code` spans (kept in Markdown, <code> in HTML)


@dataclass(frozen=True)
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]  # data: escaped by each format
    empty: str = "no results"


@dataclass(frozen=True)
class Figure:
    name: str  # file stem when written beside a Markdown report
    caption: str
    png: bytes


Block = Heading | Text | Table | Figure


def markdown(blocks: Sequence[Block], image: Callable[[Figure], str]) -> str:
    """Markdown; ``image`` writes a figure where the report can link it and returns the
    link."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Text):
            parts.append(block.text)
        elif isinstance(block, Table):
            if not block.rows:
                parts.append(f"_{block.empty}_")
                continue
            parts.append(md.table(block.headers, block.rows))
        else:
            parts.append(f"![{block.caption}]({image(block)})\n\n_{block.caption}_")
    return "\n\n".join(parts) + "\n"


_CODE = re.compile(r"`([^`]+)`")
_STYLE = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:1em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}
figure{margin:1.5em 0}img{max-width:100%}figcaption{font-size:.85em;color:#555}
code{background:#f3f3f3;padding:0 .2em}"""


def _inline(text: str) -> str:
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


def to_html(blocks: Sequence[Block], title: str) -> str:
    """One page with nothing outside it: styles inline, figures as data URIs."""
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{_inline(block.text)}</h{block.level}>")
        elif isinstance(block, Text):
            body.append(f"<p>{_inline(block.text)}</p>")
        elif isinstance(block, Table):
            if not block.rows:
                body.append(f"<p><em>{html.escape(block.empty)}</em></p>")
                continue
            head = "".join(f"<th>{html.escape(h)}</th>" for h in block.headers)
            rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                           for row in block.rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        else:
            data = base64.b64encode(block.png).decode("ascii")
            body.append(f'<figure><img alt="{html.escape(block.caption)}" '
                        f'src="data:image/png;base64,{data}"><figcaption>'
                        f"{_inline(block.caption)}</figcaption></figure>")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
