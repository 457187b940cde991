"""Streaming XML: lxml iterparse with the element tree pruned behind each record, so memory
stays flat on OAI-PMH pages of any size, and hostile XML (entities, network) is refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from lxml import etree

from vault_pipeline.errors import RawFormatError
from vault_pipeline.parse.common import ParseReject


def text_of(element: etree._Element | None) -> str | None:
    """All text inside an element (nested markup flattened), or None."""
    if element is None:
        return None
    value = "".join(element.itertext())
    return value if value.strip() else None


def iter_elements(
    stream: IO[bytes], root_tag: str, record_tags: set[str]
) -> Iterator[etree._Element | ParseReject]:
    """Yield each finished element whose tag is in ``record_tags``.

    Raises RawFormatError when the document root is not ``root_tag``. A syntax error (a
    truncated page, say) ends the stream with a ParseReject naming the line, after every
    record that came before it."""
    events = etree.iterparse(
        stream,
        events=("start", "end"),
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
    )
    depth = 0
    try:
        for event, element in events:
            if event == "start":
                if depth == 0 and element.tag != root_tag:
                    raise RawFormatError(f"root element is <{element.tag}>, expected <{root_tag}>")
                depth += 1
                continue
            depth -= 1
            if element.tag in record_tags:
                yield element
                element.clear(keep_tail=False)
                parent = element.getparent()
                if parent is not None:
                    while element.getprevious() is not None:
                        del parent[0]
    except etree.XMLSyntaxError as exc:
        line = exc.position[0] if exc.position else None
        yield ParseReject(line, None, f"malformed XML (truncated or invalid): {exc.msg}",
                          whole_file=True)
