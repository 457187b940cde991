"""Which paper a PDF is, read from its content when its name and origin say nothing: the
arXiv stamp in its margin, a DOI on its first page, or its title (and first author) as the
vault's `papers` or OpenReview `submissions` know them. The clues are read in the worker
that converts the file (``content_clues``, from the open document: the main process never
parses a PDF), kept with the attempt, and matched here against the vault's metadata.

Written by hand: matching a title against a catalogue is a normalised-key lookup, and the
stamp and DOI are two regular expressions; no library does this for a vault's own tables."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import polars as pl

from vault_pipeline.ids import ArxivId, parse_arxiv_id

# How a document's paper was found; ``None`` in `documents` when nothing matched.
BY_ORIGIN, BY_NAME, BY_FORUM = "origin", "name", "forum"
BY_STAMP, BY_DOI, BY_TITLE, BY_SUBMISSION = "arxiv_stamp", "doi", "title", "submission_title"
_STAMP = re.compile(
    r"arXiv:\s?((?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?)")
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
MIN_TITLE_CHARS = 16  # a shorter normalised title ("introduction") identifies nothing
OPENING_WORDS = 3  # a title's first words, to look it up from a page's text
PAGE_WORDS = 150  # words opening a first page in which a known title is looked for (past
# them, a title is more likely a cited one)
TITLE_LINES = 4  # lines of the largest size on the first page that form its title
SUPERSCRIPT = 0.8  # of a line's size: smaller spans raised above it are marks
RAISED = 0.15  # of a line's size: how far above its baseline a mark's baseline sits


def title_key(text: str) -> str:
    """A title for matching: accents, case, spacing and punctuation aside (and TeX's
    dotless ``ı`` under an accent, ``art\u00b4\u0131culo``, read as ``i``)."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text.lower() if ch.isalnum()).replace("\u0131", "i")


def title_key_expr(column: str) -> pl.Expr:
    """``title_key`` as a Polars expression, to filter a table by the keys wanted."""
    return _key_of(pl.col(column))


def _key_of(text: pl.Expr) -> pl.Expr:
    return text.str.normalize("NFKD").str.to_lowercase() \
        .str.replace_all(r"[^\p{L}\p{N}]", "").str.replace_all("\u0131", "i", literal=True)


def opening_key_expr(column: str) -> pl.Expr:
    """The key of a title's first ``OPENING_WORDS`` words as a Polars expression (what
    ``Catalog.by_opening`` is keyed by), to load only the titles a page may hold."""
    words = pl.col(column).str.replace_all(r"\s+", " ").str.strip_chars().str.split(" ")
    opening = words.list.head(OPENING_WORDS).list.join(" ")
    return _key_of(opening)


def word_runs(words: list[str], longest: int) -> set[str]:
    """The keys of every run of one to ``longest`` consecutive words."""
    return {key for i in range(len(words)) for n in range(1, longest + 1)
            if (key := title_key(" ".join(words[i:i + n])))}


def page_openings(text: str) -> set[str]:
    """The keys of every run of one to ``OPENING_WORDS`` words opening a first page's
    ``PAGE_WORDS`` words: a known title written there opens with one of them."""
    return word_runs(text.split()[:PAGE_WORDS], OPENING_WORDS)


def page_names(text: str) -> set[str]:
    """The keys of every run of one to three words on a page, one of which a surname must
    open (``Krishnan`` is not in ``Radhakrishnan``; ``van der Berg`` is three words; a
    mark may follow: ``Krishnana,c,∗,1``)."""
    return word_runs(text.split(), 3)


def named(author: str, names: set[str]) -> bool:
    """Whether the author's surname opens one of a page's ``names`` (page_names)."""
    family = surname(author)
    return bool(family) and any(name.startswith(family) for name in names)


def surname(author: str) -> str:
    """The family name of ``Jane Q. Doe`` or ``Doe, Jane``, for matching."""
    name = author.split(",")[0] if "," in author else (author.split() or [""])[-1]
    return title_key(name)


@dataclass(frozen=True)
class Clues:
    """What the first page says about the paper (any of them may be missing)."""

    arxiv: str | None = None  # the stamp's id with its version, as printed
    doi: str | None = None
    title: str | None = None
    text: str = ""  # the first page's text (for the first author), not stored

    def to_json(self) -> str | None:
        """The clues as stored with the attempt (the first page's start for the author)."""
        data = {"arxiv": self.arxiv, "doi": self.doi, "title": self.title,
                "head": self.text[:2000] or None}
        return json.dumps({k: v for k, v in data.items() if v}) if any(data.values()) \
            else None

    @classmethod
    def from_json(cls, text: str | None) -> Clues:
        if not text:
            return cls()
        data = json.loads(text)
        return cls(data.get("arxiv"), data.get("doi"), data.get("title"),
                   data.get("head") or "")


def clean_doi(doi: str) -> str:
    return doi.rstrip(".,;)]}").lower()


def content_clues(doc) -> Clues:
    """The clues of an open PDF: the stamp and DOI from its first two pages' text, the
    title from the largest lines of its first page (or its metadata title)."""
    if not doc.page_count:
        return Clues()
    first = doc[0].get_text()
    text = first + ("\n" + doc[1].get_text() if doc.page_count > 1 else "")
    stamp = _STAMP.search(text)
    doi = _DOI.search(text)
    return Clues(arxiv=stamp.group(1) if stamp else None,
                 doi=clean_doi(doi.group(1)) if doi else None,
                 title=_largest_lines(doc[0]) or (doc.metadata or {}).get("title") or None,
                 text=first)


def _largest_lines(page) -> str | None:
    sized: list[tuple[float, float, float, str]] = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", ()):
            if abs(line["dir"][1]) > 0.1:
                continue  # a rotated margin stamp
            if not line["spans"]:
                continue
            main = max(line["spans"], key=lambda span: span["size"])
            size = main["size"]
            # Marks set small above the line (``title⋆,⋆⋆``) are no part of it; a subscript
            # (``a_b``) is.
            text = "".join(span["text"] for span in line["spans"]
                           if span["size"] >= SUPERSCRIPT * size
                           or span["origin"][1] >= main["origin"][1] - RAISED * size).strip()
            if text:
                sized.append((size, round(line["bbox"][1]), line["bbox"][0], text))
    if not sized:
        return None
    top = max(size for size, _y, _x, _t in sized)
    lines = sorted((y, x, t) for size, y, x, t in sized if size >= top - 0.5)[:TITLE_LINES]
    return " ".join(t for _y, _x, t in lines) or None


@dataclass(frozen=True)
class Match:
    arxiv_id: str | None
    version: int | None
    forum_id: str | None
    method: str


@dataclass
class Catalog:
    """The vault's papers and submissions by DOI and by title (see ``identify``)."""

    by_doi: dict[str, str] = field(default_factory=dict)
    by_title: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    forum_by_title: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    # The key of a title's first OPENING_WORDS words -> the whole keys of the titles that
    # open so: to find a known title anywhere in a first page's text.
    by_opening: dict[str, set[str]] = field(default_factory=dict)

    def _add_opening(self, title: str, key: str) -> None:
        opening = title_key(" ".join(title.split()[:OPENING_WORDS]))
        if opening:
            self.by_opening.setdefault(opening, set()).add(key)

    @classmethod
    def build(cls, papers: Iterable[tuple[str, str | None, str | None, list[str] | None]],
              submissions: Iterable[tuple[str, str | None, list[str] | None]] = ()) -> Catalog:
        """From (arxiv_id, doi, title, authors) and (forum_id, title, authors) rows."""
        catalog = cls()
        for arxiv_id, doi, title, authors in papers:
            if doi:
                catalog.by_doi[clean_doi(doi)] = arxiv_id
            key = title_key(title or "")
            if len(key) >= MIN_TITLE_CHARS:
                catalog.by_title.setdefault(key, []).append((arxiv_id, list(authors or [])))
                catalog._add_opening(title or "", key)
        for forum_id, title, authors in submissions:
            key = title_key(title or "")
            if len(key) >= MIN_TITLE_CHARS:
                catalog.forum_by_title.setdefault(key, []).append((forum_id, list(authors or [])))
                catalog._add_opening(title or "", key)
        return catalog

    def titles_in_text(self, text: str) -> list[str]:
        """Keys of the known titles written out in ``text`` (a first page), longest first:
        where the title is not the page's largest line (a journal banner set larger, a
        logo's raised letters read as marks), it is still in the page's words."""
        page = title_key(" ".join(text.split()[:PAGE_WORDS]))
        found = {key for opening in page_openings(text)
                 for key in self.by_opening.get(opening, ()) if key in page}
        return sorted(found, key=len, reverse=True)

    def _title_candidates(self, clues: Clues) -> Iterator[str]:
        """Title keys to look up, the largest lines' first; the page's words are searched
        only when those name nothing."""
        yield from title_windows(clues.title or "")
        yield from self.titles_in_text(clues.text)

    def identify(self, clues: Clues) -> Match | None:
        """The paper the clues name, by the first that holds: the arXiv stamp, a DOI the
        vault knows, the title of one known paper whose first author is on the page (or
        that has no authors recorded), then the same against OpenReview submissions; the
        title from the page's largest lines first, then any known title in its words."""
        if clues.arxiv:
            try:
                found: ArxivId = parse_arxiv_id(clues.arxiv)
                return Match(found.id, found.version, None, BY_STAMP)
            except ValueError:
                pass
        if clues.doi and clues.doi in self.by_doi:
            return Match(self.by_doi[clues.doi], None, None, BY_DOI)
        names: set[str] | None = None  # the page's names, read once a title is known
        for key in self._title_candidates(clues):
            for table, method in ((self.by_title, BY_TITLE),
                                  (self.forum_by_title, BY_SUBMISSION)):
                known = table.get(key, ())
                if not known:
                    continue
                names = page_names(clues.text) if names is None else names
                hits = [ident for ident, authors in known
                        if not authors or named(authors[0], names)]
                if len(hits) == 1:
                    if method == BY_TITLE:
                        return Match(hits[0], None, None, method)
                    return Match(None, None, hits[0], method)
        return None


def title_windows(title: str) -> list[str]:
    """Keys to look the title clue up by, longest first: the whole clue, then the clue less
    words at its end or its start, as long as ``MIN_TITLE_CHARS`` remain. The largest lines
    of a first page may hold more than the title: an article number set as large (ACM's
    ``111``), an ``ABSTRACT`` heading in the title's font (AASTeX)."""
    words = title.split()
    keys = {title_key(" ".join(words[i:j])): j - i
            for i in range(len(words)) for j in range(len(words), i, -1)
            if i == 0 or j == len(words)}
    return sorted((k for k in keys if len(k) >= MIN_TITLE_CHARS), key=len, reverse=True)
