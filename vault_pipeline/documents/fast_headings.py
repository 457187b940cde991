"""Which lines of a PDF are headings, from every signal the file has: its outline (where
there is one, its titles are the headings, matched with or without their numbers), the
numbering (``1.``, ``2.1``, ``I.``, ``A.``), capitals, weight, size and font against the
body text's, and position (a heading opens its block; a run-in heading, ``METHODS Search
strategy`` or ``V. CONCLUSION While ...``, is split from the paragraph it leads). Running
headers never reach these rules: furniture.py takes them out first. Author and affiliation
blocks of the first page are told apart from prose here too (they are kept out of the body).

Written by hand: no library reads headings from a PDF's fonts without a layout model, which
costs more than the whole fast conversion (fast_pdf.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from vault_pipeline.documents.fast_layout import Block, Line, normalize_title

HEADING_MAX_CHARS = 150
HEADING_MAX_LINES = 3
RUN_IN_MAX_WORDS = 12
BACK_MATTER_CHARS = 20  # ``Acknowledgements:`` on a line of its own, not a sentence
WORDY = 0.5  # of a numbered heading's characters (spaces aside) that are letters
LARGER = 0.9  # points above the body size that make a line a heading
SMALLER = 1.5  # points below the body size a numbered bold heading may be set in
MARK = 0.85  # of a line's size: a trailing run set smaller is a footnote mark
ROMAN = r"(?:X{0,3})(?:IX|IV|V?I{0,3})"
# ``3.2 Setup``, ``3.2. Setup``, ``A.1 Proofs``, ``IV. RESULTS``, ``B. Data``, ``A Proofs``.
_NUMBERED = re.compile(
    rf"^(?:(?P<arabic>\d{{1,2}}(?:\.\d{{1,2}})*)\.?|(?P<roman>{ROMAN})\.|"
    r"(?P<letter>[A-Z])(?P<sub>(?:\.\d{1,2})*)\.?)\s+(?P<rest>\S.*)$")
_SENTENCE_END = re.compile(r"[.!?:;)\]\"”,]\s*$")
_AFFILIATION = re.compile(
    r"@|\b(?:universit\w*|institut\w*|department|dept\.|laborator\w*|school of|college|"
    r"faculty|centre|center for|research|inc\.|corporation|ltd|gmbh|academy|hospital|"
    r"observatory|foundation|google|microsoft|amazon|meta|ibm|nvidia)\b", re.IGNORECASE)
_PARTICLES = {"and", "of", "de", "van", "von", "der", "da", "di", "la", "le", "du", "the",
              "for", "in", "at", "et", "al", "y"}
_ABSTRACT_KEYS = {"abstract", "summary", "introduction"}
_BACK_MATTER = {"references", "bibliography", "acknowledgements", "acknowledgments",
                "acknowledgement", "acknowledgment"}
# ``Appendix A. Proofs``, ``APPENDIX B: DATA``, ``Annexe C: Discours``: the outline lists
# ``A Proofs`` or ``Proofs``.
_APPENDIX = re.compile(r"^(?:appendix|appendices|annexe?|anhang|appendice|ap[eé]ndice)\s+"
                       r"([A-Z])\s*[.:]?\s+(?=\S)", re.IGNORECASE)
_CITED = re.compile(r"\s*\[\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\]\s*$")
# A footnote mark glued to a run-in heading's last word (``Version Number4. The ...``).
_FOOTNOTE_MARK = re.compile(r"(?<=[^\W\d_])\d{1,2}([.:]?)$")


def _bare(key: str) -> str:
    """An outline key without its leading section number (``1introduction``)."""
    return key.lstrip("0123456789") or key


def _appendix(text: str) -> tuple[str, str] | None:
    """(letter, title) of an appendix heading's text, its citation mark aside."""
    match = _APPENDIX.match(text)
    if match is None:
        return None
    return match.group(1).upper(), _CITED.sub("", text[match.end():])


def numbering(text: str) -> tuple[int, str] | None:
    """(depth, title) of a numbered heading text: ``2.1 Data`` is (2, ``Data``), ``IV. X``
    is (1, ``X``), ``B. Data`` and ``B.1 Data`` are appendix or subsection levels, and
    ``Appendix A: Data`` is a top level."""
    appendix = _appendix(text)
    if appendix is not None and appendix[1][:1].isupper() and _wordy(appendix[1]):
        return 1, appendix[1]
    match = _NUMBERED.match(text)
    if match is None or (not match.group("rest")[0].isupper() and \
            not match.group("rest")[0].isdigit()) or not _wordy(match.group("rest")):
        return None
    if match.group("arabic"):
        return match.group("arabic").count(".") + 1, match.group("rest")
    if match.group("roman"):
        return 1, match.group("rest")
    if match.group("sub"):
        return match.group("sub").count(".") + 1, match.group("rest")
    # ``A Proofs`` opens an appendix; ``A. Data`` is a subsection (IEEE, revtex).
    return (2 if text[1] == "." else 1), match.group("rest")


def _wordy(text: str) -> bool:
    """A word or mostly letters: a title, not a row of a matrix (``1 ¹)) · · · 0 0
    É(r(y, x¦¹))``)."""
    if re.search(r"[^\W\d_]{3,}", text):
        return True
    chars = [ch for ch in text if not ch.isspace()]
    return sum(ch.isalpha() for ch in chars) >= WORDY * len(chars)


def unmarked(line: Line) -> Line:
    """A heading line without the footnote mark set small after it (ASME's ``... WITH
    asmeconf.bst`` and a raised ``3``), so that it matches the outline's title."""
    last = line.runs[-1] if line.runs else None
    if last is None or len(line.runs) < 2 or last.size >= MARK * line.size or \
            not re.fullmatch(r"\s*[\d∗*†‡§,]{1,4}\s*", last.text):
        return line
    return replace(line, text=line.text[:-len(last.text)].rstrip() or line.text,
                   runs=line.runs[:-1])


def uncited(text: str) -> str:
    """A heading without the citation mark set after it (ASME's ``6.1 The newtxmath and
    mathalpha Packages [10, 11]``): the mark cites, it is no part of the title."""
    return _CITED.sub("", text) or text


def is_back_matter(text: str) -> bool:
    """``References`` or ``Acknowledgements:`` on a line of its own, not a sentence naming
    them: a heading in any style, so the list under it is split off; capitalised (a
    description list's ``bibliography`` option or ``\\bibliography`` is no heading)."""
    return len(text) <= BACK_MATTER_CHARS and text.lstrip()[:1].isupper() and \
        normalize_title(text) in _BACK_MATTER


def is_caps(text: str) -> bool:
    """Set in capitals (``INTRODUCTION``, ``II. THE MODEL``): four letters or more, no
    lowercase letter."""
    letters = [ch for ch in text if ch.isalpha()]
    return len(letters) >= 4 and all(ch.isupper() for ch in letters)


@dataclass(frozen=True)
class Styles:
    """What the document's fonts and outline say a heading looks like."""

    body: float
    title: float  # the largest size on the first page
    outline: dict[str, int]  # normalised outline title -> level (1 = top)
    body_font: str = ""
    bare: dict[str, int] = field(default_factory=dict)  # outline keys without numbers
    # normalised outline title -> the first page (0-based) an entry of it points to
    pages: dict[str, int] = field(default_factory=dict)

    def listed_later(self, text: str, page: int) -> bool:
        """Whether the outline puts this heading on a later page: here it is an entry of
        the table of contents (``3 Conclusion`` on the contents page) or a word that only
        spells a later section's title (an option ``bibliography`` before ``2.5
        Bibliography``), not the heading."""
        key = normalize_title(text)
        return self.pages.get(key, self.pages.get(_bare(key), -1)) > page

    def outlined(self, text: str) -> int | None:
        """The outline level of a heading text, matched with or without its number, its
        ``Appendix A:`` prefix or a trailing citation mark."""
        candidates = [text, _CITED.sub("", text)]
        appendix = _appendix(text)
        if appendix is not None:
            candidates += [appendix[1], f"{appendix[0]} {appendix[1]}"]
        for candidate in candidates:
            key = normalize_title(candidate)
            if not key:
                continue
            found = self.outline.get(key)
            if found is None:
                found = self.bare.get(_bare(key))
            if found is not None:
                return found
        return None

    def is_heading_line(self, line: Line) -> bool:
        """Set apart from the body: larger, bold, or (numbered or in capitals) in a font of
        its own (``1. INTRODUCTION`` in AASTeX, ``A. Data`` in italics in IEEE)."""
        if not line.horizontal:
            return False
        if line.size >= self.body + LARGER or (line.bold and line.size >= self.body - 0.5):
            return True
        own_font = bool(self.body_font) and line.font != self.body_font
        if (line.bold or own_font) and line.size >= self.body - SMALLER \
                and len(line.text) <= HEADING_MAX_CHARS and numbering(line.text) is not None:
            return True  # REVTeX's ``II. MATH AND EQUATIONS``, bold and a size smaller
        return line.size >= self.body - 0.5 and len(line.text) <= HEADING_MAX_CHARS and (
            (is_caps(line.text) and (own_font or numbering(line.text) is not None))
            or (own_font and numbering(line.text) is not None))

    def level(self, text: str, size: float, first_page: bool) -> int | None:
        """The Markdown level of a heading with this text, or None if it is not one."""
        if text.startswith("\\"):
            return None  # ``\\bibliography`` in a manual: a macro written out, not a title
        outlined = self.outlined(text)
        if outlined is not None:
            return min(outlined + 1, 6)
        if first_page and size >= self.title and size >= self.body + 1.5 and \
                any(ch.isalpha() for ch in text):
            return 1  # (ACM's article number ``111`` is set as large: no title)
        number = numbering(text)
        if is_back_matter(text):
            return 2 if size >= self.body + LARGER or is_caps(text) else 3  # ``References:``
        if not any(ch.isalpha() for ch in text) or text.endswith(("-", ",")) or "@" in text \
                or (_SENTENCE_END.search(text) and not number) or len(text) > HEADING_MAX_CHARS:
            return None
        if self.outline and not number and normalize_title(text) not in _ABSTRACT_KEYS and \
                not is_back_matter(text):
            return None  # the outline lists the unnumbered headings there are
        if number:
            if number[1].rstrip().endswith(".") and not is_caps(number[1]):
                return None  # ``1. We propose ...``: an item, not a heading (``ETC.`` is)
            return min(number[0] + 1, 6)
        return 2 if size >= self.body + LARGER or is_caps(text) else 3


def body_style(pages: Sequence[Sequence[Block]]) -> tuple[float, str]:
    """The most common font size and font, counted in characters: the running text's."""
    sizes = Counter[float]()
    fonts = Counter[str]()
    for blocks in pages:
        for block in blocks:
            for line in block.lines:
                sizes[line.size] += len(line.text)
                fonts[line.font] += len(line.text)
    return (sizes.most_common(1)[0][0] if sizes else 0.0,
            fonts.most_common(1)[0][0] if fonts else "")


def document_styles(toc: Sequence[Sequence], pages: Sequence[Sequence[Block]]) -> Styles:
    """The styles of a document from its outline (``doc.get_toc()``) and its pages."""
    outline: dict[str, int] = {}
    listed: dict[str, int] = {}
    for level, title, page, *_ in toc:
        key = normalize_title(title)
        outline.setdefault(key, level)
        if page >= 1:
            for listed_as in (key, _bare(key)):  # ``2.5 Bibliography`` or ``Bibliography``
                listed[listed_as] = min(page - 1, listed.get(listed_as, page))
    outline.pop("", None)
    first = [line.size for block in pages[0] for line in block.lines
             if line.horizontal] if pages else []
    body, font = body_style(pages)
    bare = {}
    for key, level in outline.items():
        bare.setdefault(_bare(key), level)
    return Styles(body=body, title=max(first, default=0.0), outline=outline, body_font=font,
                  bare=bare, pages=listed)


def _outline_run_in(line: Line, styles: Styles) -> tuple[str, str] | None:
    """(heading, rest) of a line opening with an outline title run into its paragraph
    (``8.1. Bold versions of special symbols. In the amsmath package``)."""
    words = line.text.split()
    for k in range(min(RUN_IN_MAX_WORDS, len(words) - 1), 0, -1):
        for head in dict.fromkeys((" ".join(words[:k]),
                                   _FOOTNOTE_MARK.sub(r"\1", " ".join(words[:k])))):
            if styles.outline and styles.outlined(head) is not None and \
                    len(normalize_title(head)) >= 4:
                return head.rstrip(".: "), " ".join(words[k:])
    return None


def _run_in(line: Line, styles: Styles) -> tuple[str, str] | None:
    """(heading, rest) of a line that opens with a heading run into its paragraph: a leading
    bold or capitals run that is numbered, in capitals or an outline title, or the longest
    opening words that are an outline title."""
    outlined = _outline_run_in(line, styles)
    if outlined is not None:
        return outlined
    lead = line.runs[0].text.strip() if line.runs else ""
    if not lead or len(line.runs) < 2 or not line.text.startswith(lead):
        caps = re.match(rf"^((?:{ROMAN}\.|\d{{1,2}}(?:\.\d{{1,2}})*\.?)?\s*"
                        r"[A-Z][A-Z\-]{3,}(?:\s+[A-Z][A-Z\-]+)*)\s+([A-Z][a-z].*)$", line.text)
        if caps is None or numbering(caps.group(1)) is None:
            return None
        return caps.group(1), caps.group(2)
    rest = line.text[len(lead):].strip()
    styled = line.runs[0].bold or line.runs[0].font != styles.body_font
    if not styled or not rest or len(lead.split()) > RUN_IN_MAX_WORDS:
        return None
    bare = lead.rstrip(".: ")
    if is_caps(bare) or numbering(bare) is not None:
        return bare, rest
    return None


def split_heading(block: Block, styles: Styles) -> tuple[list[Line], list[Line]]:
    """Leading heading lines of a block (a heading MuPDF put in the block of the paragraph
    under it) and the rest; an outline title counts whatever its style; a run-in heading is
    cut from the line it opens."""
    lines = block.lines
    for n in range(min(HEADING_MAX_LINES, len(lines)), 0, -1):
        if styles.outline and styles.outlined(" ".join(ln.text for ln in lines[:n])) is not None:
            return lines[:n], lines[n:]
    cut = _outline_run_in(lines[0], styles) if lines else None
    if cut is not None:
        return _cut(lines, cut)
    if lines and is_back_matter(lines[0].text):
        return lines[:1], lines[1:]  # ``References`` (``References:``) on its own line
    def heading_line(i: int) -> bool:
        # A heading's next line in its font and size (REVTeX's ``THE LINE BREAK WAS
        # FORCED via`` under ``I. FIRST-LEVEL HEADING:``) goes on with it.
        return styles.is_heading_line(lines[i]) or (
            i > 0 and lines[i].font == lines[0].font and lines[i].size == lines[0].size
            and lines[i].bold == lines[0].bold and lines[0].font != styles.body_font)

    head = 0
    while head < len(lines) and head < HEADING_MAX_LINES and heading_line(head):
        head += 1
    if head == len(lines) or (head and not heading_line(head)):
        text = " ".join(line.text for line in lines[:head])
        # A bold line of body size opening a paragraph is a run-in sentence unless numbered
        # or in capitals.
        run_in = head < len(lines) and lines[0].size < styles.body + LARGER and \
            numbering(text) is None and not is_caps(text)
        if head and len(text) <= HEADING_MAX_CHARS and not run_in:
            return lines[:head], lines[head:]
    cut = _run_in(lines[0], styles) if lines else None
    if cut is None:
        return [], lines
    return _cut(lines, cut)


def _cut(lines: list[Line], cut: tuple[str, str]) -> tuple[list[Line], list[Line]]:
    """The block's first line cut into its run-in heading and the paragraph's start."""
    first = lines[0]
    heading = Line(text=cut[0], size=first.size, bold=first.bold, bbox=first.bbox,
                   font=first.font)
    rest = Line(text=cut[1], size=first.size, bold=False, bbox=first.bbox, font=first.font)
    return [heading], [rest, *lines[1:]]


_EMAILS = re.compile(r"^[\s{}()\[\],;\w.+\-]*@[\w.\-]+[\s{}()\[\],;\w.+@\-]*$")


def is_contact(block: Block) -> bool:
    """Authors' e-mail addresses set apart (``{kylel, lucyw}@allenai.org``)."""
    return len(block.lines) <= 3 and bool(_EMAILS.match(" ".join(ln.text for ln in block.lines)))


def is_affiliation(block: Block) -> bool:
    """A short author block naming an institution (``Andrew Baumann, Microsoft Research``
    set in a corner of the first page, after the abstract)."""
    text = " ".join(ln.text for ln in block.lines)
    return len(block.lines) <= 3 and bool(_AFFILIATION.search(text)) and is_author_block(block)


def is_author_block(block: Block) -> bool:
    """Names and affiliations, not prose: few lowercase words (names, institutions and
    addresses are capitalised), and an affiliation, an e-mail or a superscript mark, or
    short lines with no sentence in them."""
    text = " ".join(line.text for line in block.lines)
    words = [w for w in re.findall(r"[^\W\d_][\w'’\-]*", text) if w.lower() not in _PARTICLES]
    if not words:
        return False
    lower = sum(1 for w in words if w[0].islower()) / len(words)
    if lower >= 0.3:
        return False
    numbered = _NUMBERED.match(text)
    if (numbered and not numbered.group("letter")) or normalize_title(text) in _ABSTRACT_KEYS:
        return False  # ``1 Introduction``, ``IV. Methods``: a heading (``D. E. Smith``: names)
    marked = bool(_AFFILIATION.search(text) or re.search(r"[a-z][,]?\d|[∗†‡§]", text))
    return marked or (2 <= len(words) <= 12 and not _SENTENCE_END.search(text))


class Numbering:
    """The section numbers seen so far: a numbered heading far out of sequence (``7 ATLAS
    and CMS`` before any section, ``65 INFN``) is a figure's label or a list, not a heading.
    A number may skip one (a heading missed) but not run backwards, except to restart."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}

    @staticmethod
    def _key(text: str) -> tuple[str, int] | None:
        match = _NUMBERED.match(text)
        if match is None:
            return None
        if match.group("arabic"):
            return "arabic", int(match.group("arabic").split(".")[0])
        if match.group("roman"):
            return "roman", _roman(match.group("roman"))
        return "letter", ord(match.group("letter")) - ord("A") + 1

    def accepts(self, text: str) -> bool:
        key = self._key(text)
        if key is None:
            return True
        scheme, n = key
        last = self.last.get(scheme, 0)
        return n <= last + 2 and (n >= last or n == 1)

    def saw(self, text: str) -> None:
        key = self._key(text)
        if key is not None:
            self.last[key[0]] = key[1]


def _roman(text: str) -> int:
    values = {"I": 1, "V": 5, "X": 10}
    total = 0
    for i, ch in enumerate(text):
        value = values[ch]
        total += -value if i + 1 < len(text) and values[text[i + 1]] > value else value
    return total
