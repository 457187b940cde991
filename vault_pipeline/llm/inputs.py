"""What the ideas stage reads: one :class:`PaperInput` per paper, from the `papers` and
`documents` tables. A paper without a usable document is decomposed from its title and
abstract alone, and says so (``source = abstract_only`` with the reason).

A paper published before the cutoff and revised after it is read in the version the vault
holds (:mod:`vault_pipeline.papers.versions`): that version's title and abstract where a source gave
them, else none (its document's full text alone, and the note says why); with neither, it is
withheld rather than decomposed from the later text."""

from __future__ import annotations

import hashlib
import json
import re
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
    version: int | None = None  # arXiv version the text describes, where known

    def markdown(self, max_chars: int | None = None) -> str:
        """The document as one Markdown text: title, abstract, then the body if any."""
        parts = [f"# {self.title}"] if self.title else []
        if self.abstract:
            parts += ["## Abstract", self.abstract]
        if self.text:
            body = self.text if max_chars is None else self.text[:max_chars]
            parts.append(body)
        return "\n\n".join(parts)

    def content_hash(self) -> str:
        """sha256 of everything the decomposition reads from the paper."""
        payload = json.dumps([self.arxiv_id, self.title, self.abstract, self.text,
                              self.references, self.source, list(self.categories),
                              *([self.version] if self.version is not None else [])],
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
    wanted = [c for c in ("arxiv_id", "version", "source", "status", "text", "references",
                          "error")
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


def _first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of a converted text, without Markdown heading marks: the
    title as that version of the paper prints it."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return line.lstrip("#").strip()[:limit]


_ABSTRACT = re.compile(r"(?ims)^(?:#+\s*|\*\*)?abstract\b[*:.\s—-]*(.+?)(?=\n\s*#|\n\s*\n|\Z)")


def _own_abstract(text: str, limit: int = 5_000) -> str:
    """The abstract as a converted text prints it (under an `Abstract` heading or after
    the word opening a paragraph), or empty."""
    match = _ABSTRACT.search(text)
    return " ".join(match.group(1).split())[:limit] if match else ""


@dataclass(frozen=True)
class Withheld:
    """A pre-cutoff paper not decomposed: only a version after the cutoff has text."""

    arxiv_id: str
    reason: str


def _held(versions: pl.DataFrame | None) -> dict[str, dict]:
    """The revised pre-cutoff papers, with the version held and its metadata."""
    if versions is None:
        return {}
    return {r["arxiv_id"]: r for r in versions.filter("revised").iter_rows(named=True)}


def load_inputs(papers: pl.DataFrame, documents: pl.DataFrame | None,
                versions: pl.DataFrame | None = None,
                withheld: list[Withheld] | None = None) -> list[PaperInput]:
    """Join papers with their documents; every paper yields one input, except a revised
    pre-cutoff paper with no text of its held version (``versions``: see
    :func:`vault_pipeline.papers.versions.vault_versions`), listed in ``withheld`` instead."""
    docs = _ok_documents(documents)
    have_table = documents is not None
    held = _held(versions)
    out = []
    cols = ["arxiv_id", "title", "abstract"]
    cols += [c for c in ("categories", "latest_version") if c in papers.columns]
    for row in papers.select(cols).sort("arxiv_id").iter_rows(named=True):
        doc = docs.get(row["arxiv_id"])
        note = _abstract_only_note(doc, have_table)
        full = note is None and doc is not None
        title, abstract, version = row["title"], row["abstract"], row.get("latest_version")
        kept, late = held.get(row["arxiv_id"]), False
        if kept is not None:
            title, abstract, version = kept["title"], kept["abstract"], kept["version"]
            read = doc.get("version") if doc else None
            if full and (read is None or version is None or read > version):
                full, late = False, True  # built at another cutoff, or of unknown version
                note = (f"document of v{read or '?'}, not of v{version or '?'}, the last "
                        "version before the cutoff")
            if abstract is None and not full:
                if withheld is not None:
                    withheld.append(Withheld(row["arxiv_id"], "; ".join(
                        n for n in (kept["note"], note) if n)))
                continue
            if abstract is None:
                title = title or _first_line(doc["text"])
                abstract = _own_abstract(doc["text"])
                note = (f"{kept['note']}: its title and abstract read from the full text of "
                        f"v{doc['version']}")
        out.append(PaperInput(
            arxiv_id=row["arxiv_id"],
            title=" ".join((title or "").split()),
            abstract=" ".join((abstract or "").split()),
            text=doc["text"] if full else None,
            references=(doc.get("references") if doc and not late else None) or None,
            source=doc["source"] if full else ABSTRACT_ONLY,
            note=note,
            categories=tuple(row.get("categories") or ()),
            version=doc.get("version") if full else version,
        ))
    return out
