"""Page furniture of a PDF, found before any structure is read: running headers and footers
(the same text, digits aside, at the same height on several pages), page numbers, margin
stamps (arXiv's rotated ``arXiv:1707.04066v1 [astro-ph.EP] 13 Jul 2017``, wherever it is set
and whatever it is glued to), journal banners and footers at a page's top or bottom edge
(a web address, a DOI, a copyright, volume and pages), ``Downloaded from`` lines and dot
leaders, and a draft's line numbers in the margin. Each rule works on the lines the fast
path has already read, so it costs one pass.

Written by hand: these are rules about scholarly page layout, which no library offers."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from itertools import pairwise
from typing import Protocol

EDGE = 0.07  # of the page height: a line this close to the top or bottom is at the edge
SAME_HEIGHT = 12.0  # points: a running header sits at the same height on every page
MAX_FURNITURE_CHARS = 160
MIN_PAGES = 3  # pages a running header or footer appears on (2 in a document of <= 4 pages)
TITLE_ABOVE_BODY = 3.0  # points: a first-page title is set at least this much larger
MIN_LINE_NUMBERS = 5  # lone numbers in one margin column that make it a draft's line numbers
COLUMN_SLACK = 3.0  # points: how far the edges of one column of line numbers may wander
LINE_GAP = 1.5  # line heights: a banner's lines are set no further apart than this

ARXIV_STAMP = re.compile(
    r"\s*arXiv:\s?(?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\s*"
    r"(?:\[[\w.\-]+\]\s*)?(?:\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})?\s*")
_PAGE_NUMBER = re.compile(
    r"^\s*(?:page\s+)?[-–—]?\s*(?:\d{1,4}|[ivxlc]{1,7})\s*[-–—]?\s*(?:(?:of|/)\s*\d{1,4})?\s*$",
    re.IGNORECASE)
_DOWNLOADED = re.compile(r"\bdownloaded\s+from\b|\baccessed\s+on\b.*\bhttps?://",
                         re.IGNORECASE)
# Elsevier's first-page footer, set at the foot of the text, not of the page.
_SUBMITTED = re.compile(r"^\s*preprint submitted to\b", re.IGNORECASE)
_DOT_LEADER = re.compile(r"(?:\.\s?){6,}|(?:…\s?){3,}")
# What a journal's banner or footer carries and running text at a page's edge does not.
_BANNER = re.compile(
    r"https?://|\bwww\.|\bdoi\s?:|\b10\.\d{4,9}/\S+|©|\(c\)\s*(?:19|20)\d\d|\bcopyright\b|"
    r"\bissn\b|\bjournal homepage\b|\bvol(?:ume)?\.?\s*\d+|\bpp\.\s*\d+|\bno\.\s*\d+\s*[,(]|"
    r"\b(?:19|20)\d\d\s*[,;]\s*\d+\s*\(\d+\)|\b\d+\s*\(\d+\)\s*[:,]\s*\d+|"
    r"\ball rights reserved\b|\blicen[cs]e\b|\bpublished (?:online|by)\b|\breceived:?\s|"
    r"\bpreprint submitted to\b",
    re.IGNORECASE)

# A copyright line in small print, wherever it is set (a first-page footnote of the title).
_COPYRIGHT = re.compile(r"©\s*(?:19|20)\d\d|\bcopyright\s*(?:©|\(c\))\s*(?:19|20)\d\d",
                        re.IGNORECASE)

# The opening of a block that is a publisher's notice as a whole (ACM's first-page footer),
# or the authors' notes under it (``Email addresses:``, ``Authors' addresses:``).
_NOTICE = re.compile(
    r"^\s*[∗*†‡§¶]?\s*(?:e-?mail address(?:es)?:|authors?[’'] addresses?:|corresponding author\b|"
    r"permission to make digital or hard copies|acm reference format|ccs concepts|"
    r"publication rights licensed|this work is licensed under|©\s*(?:19|20)\d\d|"
    r"copyright\s*(?:©|\(c\))?\s*(?:19|20)\d\d|downloaded from|"
    r"\d{4}-\d{3}[\dx]/(?:19|20)\d\d/)", re.IGNORECASE)  # ``0004-5411/2018/8-ART111 $15.00``


def is_notice(first_line: str) -> bool:
    """Whether a block opening with this line is a publisher's notice (dropped whole)."""
    return bool(_NOTICE.match(first_line))


class LineLike(Protocol):
    text: str
    bbox: tuple[float, float, float, float]
    horizontal: bool


def furniture_key(text: str) -> str:
    """What stays the same of a running header from page to page: letters, digits as ``#``."""
    return re.sub(r"\d+", "#", "".join(ch for ch in text.lower() if ch.isalnum() or ch == " ")
                  ).replace(" ", "")


def strip_stamps(text: str) -> str:
    """``I. INTRODUCTION arXiv:0908.0001v1 [astro-ph.CO] 1 Aug 2009`` loses the stamp."""
    if "arXiv:" not in text:
        return text
    return re.sub(r"\s{2,}", " ", ARXIV_STAMP.sub(" ", text)).strip()


def is_noise(text: str) -> bool:
    """A line that is furniture wherever it stands: a ``Downloaded from`` notice, a row of
    dot leaders, a lone arXiv stamp, ``Preprint submitted to Elsevier``."""
    return bool(_DOWNLOADED.search(text) or _DOT_LEADER.search(text)
                or _SUBMITTED.match(text)) or \
        (("arXiv:" in text) and not strip_stamps(text))


def furniture(pages: Sequence[Sequence[LineLike]], heights: Sequence[float],
              body: float = 0.0) -> list[set[int]]:
    """Per page, the indices of its lines that are furniture (see the module docstring).
    ``pages`` holds each page's lines, ``heights`` each page's height; ``body`` is the body
    font size (a banner is never set larger than the body)."""
    edge: list[dict[int, str]] = []  # page -> line index -> "top" / "bottom"
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    where: dict[tuple[str, str], list[float]] = defaultdict(list)
    for number, (lines, height) in enumerate(zip(pages, heights, strict=True)):
        zones: dict[int, str] = {}
        top = max(height * EDGE, title_top(lines, body) if number == 0 else 0.0)
        for i, line in enumerate(lines):
            _x0, y0, _x1, y1 = line.bbox
            zone = "top" if y1 <= top else "bottom" if y0 >= height * (1 - EDGE) \
                else "mid"
            zones[i] = zone
            if len(line.text) <= MAX_FURNITURE_CHARS:
                key = (furniture_key(line.text), zone)
                if key[0]:
                    seen[key].add(number)
                    where[key].append(y0)
        edge.append(zones)
    min_pages = MIN_PAGES if len(pages) > 4 else 2
    out: list[set[int]] = []
    for number, lines in enumerate(pages):
        drop = set()
        for i, line in enumerate(lines):
            zone = edge[number][i]
            key = (furniture_key(line.text), zone)
            repeated = len(line.text) <= MAX_FURNITURE_CHARS and bool(key[0]) and \
                len(seen[key]) >= min_pages and (zone != "mid" or _same_height(where[key]))
            at_edge = zone != "mid" and bool(_PAGE_NUMBER.match(line.text) or (
                _BANNER.search(line.text) and (not body or _size(line) <= body + 0.6)))
            margin = not line.horizontal and zone == "mid" and _is_margin(line, lines)
            small_print = bool(body) and _size(line) < body - 0.5 and \
                bool(_COPYRIGHT.search(line.text))
            if is_noise(line.text) or repeated or at_edge or margin or small_print:
                drop.add(i)
        out.append(_grown(drop, lines, edge[number], body))
    return out


def _grown(drop: set[int], lines: Sequence[LineLike], zones: dict[int, str],
           body: float) -> set[int]:
    """A banner or footer set over several lines, grown from its lines at the page's edge
    towards the text while the next line, set close to it, is itself banner-like
    (``Res Philosophica, Vol. 90, ... pp. 1-11`` over the DOI and copyright lines)."""
    grown = set(drop)
    for zone, step in (("bottom", -1), ("top", 1)):
        order = sorted((i for i in range(len(lines)) if lines[i].horizontal),
                       key=lambda i: lines[i].bbox[1], reverse=step < 0)
        edge = [i for i in order if i in grown and zones.get(i) == zone]
        if not edge:
            continue
        last = lines[edge[0]].bbox  # the line of the banner nearest the text so far
        for i in order[order.index(edge[0]) + 1:]:
            box = lines[i].bbox
            height = max(min(box[3] - box[1], last[3] - last[1]), 1.0)
            gap = last[1] - box[3] if step < 0 else box[1] - last[3]
            if gap > LINE_GAP * height:
                break
            if i not in grown and not (_BANNER.search(lines[i].text) and
                                       (not body or _size(lines[i]) <= body + 0.6)):
                break
            grown.add(i)
            last = box
    return grown


def title_top(lines: Sequence[LineLike], body: float) -> float:
    """Where the first page's title starts (its largest text, set well above the body
    size): what lies above it is the journal's banner (``Annals of Mathematics 160 (2008),
    17–46`` and its DOI). 0 where no line stands out."""
    sized = [line for line in lines if line.horizontal and len(line.text) >= 8]
    largest = max((_size(line) for line in sized), default=0.0)
    if not body or largest < body + TITLE_ABOVE_BODY:
        return 0.0
    return min(line.bbox[1] for line in sized if _size(line) >= largest - 0.5)


def _size(line: LineLike) -> float:
    return float(getattr(line, "size", 0.0))


def _same_height(ys: list[float]) -> bool:
    """A repeated line in the middle of pages is furniture only at one height throughout
    (a sidebar banner), not a phrase the text repeats."""
    return max(ys) - min(ys) <= SAME_HEIGHT


def _is_margin(line: LineLike, lines: Sequence[LineLike]) -> bool:
    """Whether a line lies left or right of every horizontal line of its page."""
    horizontal = [ln.bbox for ln in lines if ln.horizontal]
    if not horizontal:
        return False
    left = min(b[0] for b in horizontal)
    right = max(b[2] for b in horizontal)
    return line.bbox[2] <= left + 2 or line.bbox[0] >= right - 2


_LONE_NUMBER = re.compile(r"^\s*\d{1,4}\s*$")


def line_numbers(lines: Sequence[tuple[str, tuple[float, float, float, float]]]) -> set[int]:
    """Indices of the line numbers a draft sets in its margin (AASTeX's and aomart's
    ``lineno``, review copies): lone numbers aligned in one column left or right of all
    other text on the page, counting up from top to bottom, at least ``MIN_LINE_NUMBERS``
    of them. ``lines`` are (text, bbox) of MuPDF's raw lines, before they are joined into
    visual lines (a number on a text line's baseline would be glued to it)."""
    numbers = [i for i, (text, _box) in enumerate(lines) if _LONE_NUMBER.match(text)]
    others = [box for i, (_t, box) in enumerate(lines) if i not in set(numbers)]
    if len(numbers) < MIN_LINE_NUMBERS or not others:
        return set()
    # The text's edges, a stray mark beyond them aside (a twentieth of the lines).
    stray = len(others) // 20
    left = sorted(box[0] for box in others)[stray]
    right = sorted((box[2] for box in others), reverse=True)[stray]
    out: set[int] = set()
    for edge in (0, 2):  # left-aligned (x0) or right-aligned (x1) columns
        columns: dict[int, list[int]] = defaultdict(list)
        for i in numbers:
            columns[round(lines[i][1][edge] / COLUMN_SLACK)].append(i)
        for members in columns.values():
            boxes = [lines[i][1] for i in members]
            in_margin = all(b[2] <= left + 2 for b in boxes) or all(b[0] >= right - 2
                                                                    for b in boxes)
            ordered = sorted(members, key=lambda i: lines[i][1][1])
            values = [int(lines[i][0]) for i in ordered]
            rising = all(b > a for a, b in pairwise(values))
            if len(members) >= MIN_LINE_NUMBERS and in_margin and rising:
                out.update(members)
    return out
