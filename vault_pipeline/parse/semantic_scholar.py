"""Semantic Scholar responses as received into citation-count rows and reference rows:
``POST /paper/batch`` (a JSON list aligned with the requested ids, ``null`` for an id S2 does
not know), ``GET /paper/{id}`` (one paper with its nested ``references``),
``GET /paper/search/match`` (the one paper whose title is closest to a query,
``{data: [paper]}``) and pages of
``/paper/{id}/references`` or ``/citations`` (``{offset, next?, data: [{citedPaper}|
{citingPaper}]}``; ``next`` absent on the last page). A page names the paper it lists for
only in its URL, so its rows come from the origin the harvest stored it under; a page
imported without one gives counts only. An error envelope (``{"error": ...}``,
``{"message": ...}``) is refused at the raw zone's door.

Each citation row carries the list it came from (``list_key``: ``references:<id>`` or
``citations:<id>``) so that the build takes every page of a list's newest read together."""

from __future__ import annotations

import re
from datetime import date
from typing import Any
from urllib.parse import unquote, urlsplit

from vault_pipeline.errors import RawFormatError
from vault_pipeline.ids import parse_arxiv_id

S2_KIND = "s2_papers"


PAGE_ITEMS = ("citedPaper", "citingPaper")  # /paper/{id}/references, /paper/{id}/citations


def is_page(payload: Any) -> bool:
    """A page of ``/paper/{id}/references`` or ``/citations``: ``{offset, next?, data}``."""
    return (isinstance(payload, dict) and "offset" in payload
            and isinstance(payload.get("data"), list)
            and all(isinstance(item, dict) and any(k in item for k in PAGE_ITEMS)
                    for item in payload["data"]))


def is_title_match(payload: Any) -> bool:
    """An answer of ``/paper/search/match``: ``{data: [{paperId, title, matchScore, ...}]}``
    (S2's single closest title; "Title match not found" is a 404, never stored)."""
    return (isinstance(payload, dict) and "offset" not in payload
            and isinstance(payload.get("data"), list) and len(payload["data"]) > 0
            and all(isinstance(item, dict) and isinstance(item.get("paperId"), str)
                    for item in payload["data"]))


def classify(payload: Any) -> tuple[str, int] | None:
    """(kind, records) of a Semantic Scholar response (a batch list, one paper from
    ``/paper/{id}``, a references or citations page); None if it is not one."""
    if isinstance(payload, dict) and ("error" in payload or set(payload) <= {"message", "code"}):
        detail = payload.get("error") or payload.get("message")
        raise RawFormatError(f"Semantic Scholar error: {detail}")
    if isinstance(payload, dict) and isinstance(payload.get("paperId"), str):
        return S2_KIND, 1
    if is_page(payload) or is_title_match(payload):
        return S2_KIND, len(payload["data"])
    if not isinstance(payload, list):
        return None
    for position, item in enumerate(payload):
        if item is not None and not (isinstance(item, dict) and "paperId" in item):
            raise RawFormatError(f"JSON list item {position} is not a Semantic Scholar paper "
                                 "(no paperId)")
    return S2_KIND, len(payload)


_LISTING = re.compile(r"/paper/(?P<id>[^/]+)/(?P<kind>references|citations)/?$")


def listing_of(origin: str | None) -> tuple[str, str] | None:
    """(kind, paper id as requested) of a references or citations page's URL."""
    if not origin:
        return None
    found = _LISTING.search(unquote(urlsplit(origin).path))
    return (found["kind"], found["id"]) if found else None


def _requested(paper_id: str) -> tuple[str, str | None]:
    """(S2 id, arXiv id) of the id a page was requested by: ``ARXIV:<id>`` also names the
    arXiv id (the S2 id column then keeps the id as requested)."""
    if paper_id.upper().startswith("ARXIV:"):
        try:
            return paper_id, parse_arxiv_id(paper_id[6:]).id
        except ValueError:
            return paper_id, None
    return paper_id, None


def _date(value: Any) -> date | None:
    """A paper's ``publicationDate`` (``YYYY-MM-DD``), when S2 gives a valid one."""
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _ids(paper: dict) -> tuple[str | None, str | None]:
    external = paper.get("externalIds") or {}
    arxiv = external.get("ArXiv")
    try:
        arxiv = parse_arxiv_id(arxiv).id if arxiv else None
    except ValueError:
        arxiv = None
    doi = external.get("DOI")
    return arxiv, doi.lower() if isinstance(doi, str) else None


def papers_of(payload: Any) -> list:
    """The papers a response describes in full: a batch's list, ``/paper/{id}``'s one paper,
    the papers listed on a references or citations page (their own references unknown)."""
    if isinstance(payload, list):
        return payload
    if is_title_match(payload):
        return list(payload["data"])
    if is_page(payload):
        listed = [item.get("citedPaper") or item.get("citingPaper") for item in payload["data"]]
        return [{k: v for k, v in paper.items() if k not in ("references", "citations")}
                for paper in listed if isinstance(paper, dict)]
    return [payload]


def _page_rows(payload: dict, kind: str, listed_for: str, read_at: date, raw_sha256: str
               ) -> list[dict]:
    """The citation rows of one references or citations page of ``listed_for``."""
    own_id, own_arxiv = _requested(listed_for)
    rows = []
    for index, item in enumerate(payload["data"]):
        if kind == "references":
            cited = item.get("citedPaper") or {}
            cited_arxiv, cited_doi = _ids(cited)
            rows.append({
                "citing_s2_id": own_id, "citing_arxiv_id": own_arxiv, "citing_doi": None,
                "cited_s2_id": cited.get("paperId"), "cited_arxiv_id": cited_arxiv,
                "cited_doi": cited_doi, "cited_position": (payload.get("offset") or 0) + index,
                "cited_title": cited.get("title"), "citing_date": None})
            continue
        citing = item.get("citingPaper") or {}
        if not citing.get("paperId"):  # an unresolved citing paper: nothing to join it on
            continue
        citing_arxiv, citing_doi = _ids(citing)
        rows.append({
            "citing_s2_id": citing["paperId"], "citing_arxiv_id": citing_arxiv,
            "citing_doi": citing_doi, "cited_s2_id": own_id,
            "cited_arxiv_id": own_arxiv, "cited_doi": None, "cited_position": None,
            "cited_title": None, "citing_date": _date(citing.get("publicationDate"))})
    key = f"{kind}:{listed_for}"
    return [{**row, "list_key": key, "read_at": read_at, "raw_sha256": raw_sha256}
            for row in rows]


def unresolved_citing(payload: Any) -> int:
    """Entries of a citations page whose citing paper S2 could not resolve (no row)."""
    if not is_page(payload):
        return 0
    return sum(1 for item in payload["data"] if "citingPaper" in item
               and not (item.get("citingPaper") or {}).get("paperId"))


def parse_batch(payload: list | dict, read_at: date, raw_sha256: str,
                origin: str | None = None) -> tuple[list[dict], list[dict], list[dict]]:
    """(count rows, citation rows, list reads) of one response (see :func:`papers_of`).
    A list read says which list (a paper's references, or the papers citing it) this
    response holds part or all of (an empty list counts); each reference keeps its position
    and title, resolved or not; a citing paper keeps its publication date."""
    counts: list[dict] = []
    citations: list[dict] = []
    reads: list[dict] = []
    listing = listing_of(origin) if is_page(payload) else None
    if listing is not None:
        kind, listed_for = listing
        reads.append({"list_key": f"{kind}:{listed_for}", "read_at": read_at,
                      "raw_sha256": raw_sha256, "whole": False,
                      "offset": payload.get("offset") or 0,
                      "last": payload.get("next") is None})
        citations += _page_rows(payload, kind, listed_for, read_at, raw_sha256)
    for paper in papers_of(payload):
        if paper is None or not paper.get("paperId"):
            continue
        arxiv, doi = _ids(paper)
        counts.append({
            "s2_id": paper["paperId"], "arxiv_id": arxiv, "doi": doi,
            "title": paper.get("title"), "year": paper.get("year"),
            "citation_count": paper.get("citationCount"),
            "influential_citation_count": paper.get("influentialCitationCount"),
            "reference_count": paper.get("referenceCount"),
            "read_at": read_at, "raw_sha256": raw_sha256,
        })
        if "references" not in paper or paper["references"] is None:
            continue
        key = f"references:{paper['paperId']}"
        reads.append({"list_key": key, "read_at": read_at, "raw_sha256": raw_sha256,
                      "whole": True, "offset": None, "last": True})
        citing_date = _date(paper.get("publicationDate"))
        for position, reference in enumerate(paper["references"]):
            reference = reference or {}
            cited_arxiv, cited_doi = _ids(reference)
            citations.append({
                "citing_s2_id": paper["paperId"], "citing_arxiv_id": arxiv, "citing_doi": doi,
                "cited_s2_id": reference.get("paperId"), "cited_arxiv_id": cited_arxiv,
                "cited_doi": cited_doi, "cited_position": position,
                "cited_title": reference.get("title"), "citing_date": citing_date,
                "list_key": key, "read_at": read_at, "raw_sha256": raw_sha256,
            })
    return counts, citations, reads
