"""What the ideas stage reads: one :class:`PaperInput` per paper, from the `papers` and
`documents` tables. A paper without a usable document is decomposed from its title and
abstract alone, and says so (``source = abstract_only`` with the reason)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import polars as pl

OK_STATUS = "ok"
ABSTRACT_ONLY = "abstract_only"


@dataclass(frozen=True)
class PaperInput:
    arxiv_id: str
    title: str
    abstract: str
    text: str | None  # cleaned Markdown body with `#` headings; None when abstract-only
    references: str | None
    source: str  # latex | pdf | abstract_only
    note: str | None  # why the paper is abstract-only, when it is
    categories: tuple[str, ...] = ()

    def markdown(self, max_chars: int | None = None) -> str:
        """The document as one Markdown text: title, abstract, then the body if any."""
        parts = [f"# {self.title}", "## Abstract", self.abstract]
        if self.text:
            body = self.text if max_chars is None else self.text[:max_chars]
            parts.append(body)
        return "\n\n".join(parts)

    def content_hash(self) -> str:
        """sha256 of everything the decomposition reads from the paper."""
        payload = json.dumps([self.arxiv_id, self.title, self.abstract, self.text,
                              self.references, self.source, list(self.categories)],
                             ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()


def input_hash(paper: PaperInput, *, backend: str, model: str, prompt_version: str,
               schema_version: str, settings_key: str = "") -> str:
    """The identity of one unit of work: same hash, same answer, nothing to redo."""
    payload = "\x1f".join([paper.content_hash(), backend, model, prompt_version,
                           schema_version, settings_key])
    return hashlib.sha256(payload.encode()).hexdigest()


def _ok_documents(documents: pl.DataFrame | None) -> dict[str, dict]:
    if documents is None or documents.is_empty():
        return {}
    wanted = [c for c in ("arxiv_id", "source", "status", "text", "references", "error")
              if c in documents.columns]
    return {row["arxiv_id"]: row for row in documents.select(wanted).iter_rows(named=True)}


def _abstract_only_note(doc: dict | None, have_table: bool) -> str | None:
    if doc is None:
        return "no documents row" if have_table else "no documents table"
    if doc.get("status") != OK_STATUS:
        error = f": {doc['error']}" if doc.get("error") else ""
        return f"document status {doc.get('status')}{error}"
    if not (doc.get("text") or "").strip():
        return "document text is empty"
    if doc.get("source") == ABSTRACT_ONLY:
        return "documents row is abstract-only"
    return None


def load_inputs(papers: pl.DataFrame, documents: pl.DataFrame | None) -> list[PaperInput]:
    """Join papers with their documents; every paper yields exactly one input."""
    docs = _ok_documents(documents)
    have_table = documents is not None
    out = []
    cols = ["arxiv_id", "title", "abstract"]
    if "categories" in papers.columns:
        cols.append("categories")
    for row in papers.select(cols).sort("arxiv_id").iter_rows(named=True):
        doc = docs.get(row["arxiv_id"])
        note = _abstract_only_note(doc, have_table)
        full = note is None and doc is not None
        out.append(PaperInput(
            arxiv_id=row["arxiv_id"],
            title=" ".join((row["title"] or "").split()),
            abstract=" ".join((row["abstract"] or "").split()),
            text=doc["text"] if full else None,
            references=(doc.get("references") if doc else None) or None,
            source=doc["source"] if full else ABSTRACT_ONLY,
            note=note,
            categories=tuple(row.get("categories") or ()),
        ))
    return out
