"""Semantic Scholar batch responses as received (``POST /paper/batch``: a JSON list aligned
with the requested ids, ``null`` for an id S2 does not know) into citation-count rows and
reference rows. An error envelope (``{"error": ...}``, ``{"message": ...}``) is refused at the
raw zone's door."""

from __future__ import annotations

from datetime import date
from typing import Any

from .errors import RawFormatError
from .ids import parse_arxiv_id

S2_KIND = "s2_papers"


def classify(payload: Any) -> tuple[str, int] | None:
    """(kind, records) of a Semantic Scholar batch response; None if it is not one."""
    if isinstance(payload, dict) and ("error" in payload or set(payload) <= {"message", "code"}):
        detail = payload.get("error") or payload.get("message")
        raise RawFormatError(f"Semantic Scholar error: {detail}")
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


def parse_batch(payload: list, read_at: date, raw_sha256: str
                ) -> tuple[list[dict], list[dict], list[dict]]:
    """(count rows, citation rows, reference reads) of one batch response. A reference read
    says which papers had their references listed in this response (an empty list counts)."""
    counts, citations, reads = [], [], []
    for paper in payload:
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
        for reference in paper["references"]:
            cited_arxiv, cited_doi = _ids(reference or {})
            citations.append({
                "citing_s2_id": paper["paperId"], "citing_arxiv_id": arxiv, "citing_doi": doi,
                "cited_s2_id": (reference or {}).get("paperId"), "cited_arxiv_id": cited_arxiv,
                "cited_doi": cited_doi, "read_at": read_at, "raw_sha256": raw_sha256,
            })
    return counts, citations, reads
