"""What the fast PDF path reads a page into: visual lines with their fonts, and blocks of
lines, shared by the reader (fast_pdf.py), the heading rules (fast_headings.py) and the
furniture rules (furniture.py)."""

from __future__ import annotations

from dataclasses import dataclass

from vault_pipeline.documents.fast_tables import Piece


@dataclass(frozen=True)
class Run:
    """Consecutive text of one style inside a line."""

    text: str
    bold: bool
    font: str
    size: float


@dataclass
class Line:
    """One visual line: the pieces MuPDF splits a justified line into, joined again."""

    text: str
    size: float
    bold: bool
    bbox: tuple[float, float, float, float]
    horizontal: bool = True  # rotated text (a margin stamp) is never a heading
    pieces: tuple[Piece, ...] = ()  # the runs MuPDF split the line into (table cells)
    font: str = ""  # the font most of its characters are set in
    runs: tuple[Run, ...] = ()  # its text by style, in order (a run-in heading leads it)


@dataclass
class Block:
    lines: list[Line]
    bbox: tuple[float, float, float, float]
    table: str | None = None  # Markdown of a table found here instead of lines

    @classmethod
    def of(cls, lines: list[Line]) -> Block:
        """A block of some lines of another, its box theirs."""
        return cls(lines=lines, bbox=(min(ln.bbox[0] for ln in lines),
                                      min(ln.bbox[1] for ln in lines),
                                      max(ln.bbox[2] for ln in lines),
                                      max(ln.bbox[3] for ln in lines)))


def normalize_title(text: str) -> str:
    """A heading's text for matching against the outline: letters and digits only."""
    return "".join(ch for ch in text.lower() if ch.isalnum())
