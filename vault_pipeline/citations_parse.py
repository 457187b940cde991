"""Semantic Scholar responses as received into citation-count rows and reference rows:
``POST /paper/batch`` (a JSON list aligned with the requested ids, ``null`` for an id S2 does
not know), ``GET /paper/{id}`` (one paper with its nested ``references``) and pages of
``/paper/{id}/references`` or ``/citations`` (their listed papers give counts). An error
envelope (``{"error": ...}``, ``{"message": ...}``) is refused at the raw zone's door."""

from __future__ import annotations

from datetime import date
from typing import Any

from .errors import RawFormatError
from .ids import parse_arxiv_id

S2_KIND = "s2_papers"


PAGE_ITEMS = ("citedPaper", "citingPaper")  # /paper/{id}/references, /paper/{id}/citations


def is_page(payload: Any) -> bool:
    """A page of ``/paper/{id}/references`` or ``/citations``: ``{offset, next?, data}``."""
    return (isinstance(payload, dict) and "offset" in payload
            and isinstance(payload.get("data"), list)
            and all(isinstance(item, dict) and any(k in item for k in PAGE_ITEMS)
                    for item in payload["data"]))


def classify(payload: Any) -> tuple[str, int] | None:
    """(kind, records) of a Semantic Scholar response (a batch list, one paper from
    ``/paper/{id}``, a references or citations page); None if it is not one."""
    if isinstance(payload, dict) and ("error" in payload or set(payload) <= {"message", "code"}):
        detail = payload.get("error") or payload.get("message")
        raise RawFormatError(f"Semantic Scholar error: {detail}")
    if isinstance(payload, dict) and isinstance(payload.get("paperId"), str):
        return S2_KIND, 1
    if is_page(payload):
        return S2_KIND, len(payload["data"])
    if not isinstance(payload, list):
        return None
    for position, item in enumerate(payload):
        if item is not None and not (isinstance(item, dict) and "paperId" in item):
            raise RawFormatError(f"JSON list item {position} is not a Semantic Scholar paper "
                                 "(no paperId)")
    return S2_KIND, len(payload)


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
    if is_page(payload):
        listed = [item.get("citedPaper") or item.get("citingPaper") for item in payload["data"]]
        return [{k: v for k, v in paper.items() if k not in ("references", "citations")}
                for paper in listed if isinstance(paper, dict)]
    return [payload]


def parse_batch(payload: list | dict, read_at: date, raw_sha256: str
                ) -> tuple[list[dict], list[dict], list[dict]]:
    """(count rows, citation rows, reference reads) of one response (see :func:`papers_of`).
    A reference read says which papers had their references listed in this response (an
    empty list counts); each reference keeps its position and title, resolved or not."""
    counts, citations, reads = [], [], []
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
        reads.append({"citing_s2_id": paper["paperId"], "read_at": read_at,
                      "raw_sha256": raw_sha256})
        for position, reference in enumerate(paper["references"]):
            reference = reference or {}
            cited_arxiv, cited_doi = _ids(reference)
            citations.append({
                "citing_s2_id": paper["paperId"], "citing_arxiv_id": arxiv, "citing_doi": doi,
                "cited_s2_id": reference.get("paperId"), "cited_arxiv_id": cited_arxiv,
                "cited_doi": cited_doi, "cited_position": position,
                "cited_title": reference.get("title"), "read_at": read_at,
                "raw_sha256": raw_sha256,
            })
    return counts, citations, reads
