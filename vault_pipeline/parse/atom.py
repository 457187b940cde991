"""arXiv search API responses (Atom 1.0 with arXiv extensions), bare or wrapped in a recorded
``{url, status_code, body}`` JSON object. An API error comes back as a feed whose single
entry has an ``/api/errors`` id; that is a file-level error, not a paper."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from vault_pipeline.errors import RawFormatError
from vault_pipeline.ids import parse_arxiv_id
from vault_pipeline.parse.common import ParseReject, iso_date
from vault_pipeline.parse.xml_stream import iter_elements, text_of

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
SOURCE = "arxiv_api"


def parse_atom(stream: IO[bytes]) -> Iterator[dict | ParseReject]:
    for entry in iter_elements(stream, f"{ATOM}feed", {f"{ATOM}entry"}):
        if isinstance(entry, ParseReject):
            yield entry
            continue
        entry_id = text_of(entry.find(f"{ATOM}id")) or ""
        if "/api/errors" in entry_id:
            message = " ".join((text_of(entry.find(f"{ATOM}summary")) or "").split())
            raise RawFormatError(f"arXiv API error feed: {message or entry_id}")
        published = iso_date(text_of(entry.find(f"{ATOM}published")))
        updated = iso_date(text_of(entry.find(f"{ATOM}updated")))
        categories = [c.get("term") for c in entry.findall(f"{ATOM}category") if c.get("term")]
        primary = entry.find(f"{ARXIV}primary_category")
        yield {
            "raw_id": entry_id or None,
            "title": text_of(entry.find(f"{ATOM}title")),
            "abstract": text_of(entry.find(f"{ATOM}summary")),
            "authors": [
                name for a in entry.findall(f"{ATOM}author")
                if (name := text_of(a.find(f"{ATOM}name")))
            ],
            "categories": categories or None,
            "primary_category": primary.get("term") if primary is not None else None,
            "published": published,
            "updated": updated,
            "versions": entry_versions(entry_id, published, updated),
            "doi": text_of(entry.find(f"{ARXIV}doi")),
            "journal_ref": text_of(entry.find(f"{ARXIV}journal_ref")),
            "comments": text_of(entry.find(f"{ARXIV}comment")),
            "license": None,
            "source": SOURCE,
            "position": entry.sourceline,
        }


def entry_versions(entry_id: str, published, updated) -> list[dict] | None:
    """The versions an entry dates: v1 (``published``) and the entry's own version
    (``updated``: an answer for ``IDvK`` describes version K, its title and abstract too);
    None when the id carries no version."""
    try:
        version = parse_arxiv_id(entry_id).version
    except ValueError:
        return None
    if not version or published is None:
        return None
    if version == 1:
        return [{"version": 1, "created": published}]
    return [{"version": 1, "created": published}, {"version": version, "created": updated}]
