"""Cleaning shared by the PDF and the LaTeX paths: Markdown in, body / references / appendix
out, the way the review-paradigm study prepared papers for an LLM (line numbers, running
headers and footers and inline citation markers dropped, figure and table captions kept as
emphasised paragraphs;
references and appendices split off, kept in their own columns; whitespace normalised), then
truncation to a configurable length with the full length recorded (a related-work section
past the cut is kept).

Written by hand because these are rules about scholarly layout, which no library offers;
each rule is a small, separately tested function."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from vault_pipeline.documents.furniture import is_noise, strip_stamps
from vault_pipeline.llm.sections import heading_kind

# 7: a numbered subsection named Bibliography is no reference list; 6: captions set after
# the references kept in the body, console output's [1] kept;
# 5: a late related-work section kept past the cut; 4: captions kept, marked; 3: TeX's
# spacing accents composed
CLEANING_VERSION = "7"
DEFAULT_MAX_CHARS = 30_000

LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl",
                           "\u00a0": " ", "\u00ad": "", "\u200b": "", "\ufeff": ""})

# TeX fonts draw an accent as its own glyph beside the letter: ``F¨arber``, ``Mitrovi´c``,
# ``c¸``. The spacing accent and its combining form; the cedilla follows its letter.
_ACCENTS = {"´": "\u0301", "¨": "\u0308", "ˆ": "\u0302", "˜": "\u0303", "ˇ": "\u030c",
            "˘": "\u0306", "˚": "\u030a", "˝": "\u030b", "¯": "\u0304", "˙": "\u0307"}
_ACCENT_BEFORE = re.compile(f"([{''.join(_ACCENTS)}])\\s?([A-Za-zıȷ])")
_CEDILLA_AFTER = re.compile("([CcSsTt])\\s?¸")

# A heading: Markdown `#`s, or a line that is bold and nothing else (pymupdf4llm without its
# layout model marks headings that way).
_HEADING = re.compile(r"^(?:#{1,6}\s+(?P<md>.+?)|\*\*(?P<bold>[^*]{1,150})\*\*)\s*$")
# A reference list is a section of its own: ``7 References``, ``VII. REFERENCES``; not a
# subsection ``2.5 Bibliography`` of a text about bibliographies.
_REFERENCES = re.compile(
    r"^(?:(?:\d+|[IVX]+|[A-Z])\.?\s+)?(?:references?|bibliography|literature cited|"
    r"works cited|cited literature)\s*:?$", re.IGNORECASE)
_APPENDIX = re.compile(
    r"^(?:appendix|appendices|supplementary(?:\s+materials?)?|supplemental\s+material|"
    r"technical appendix)\b", re.IGNORECASE)

_NUMBER_LINE = re.compile(r"^\s*\d{1,5}(?:\s+\d{1,5})*\s*$")
_BOILERPLATE = re.compile(
    r"^[\s*_]*(?:preprint\.?(?:\s+under review\.?)?|under review(?: as a conference paper)?"
    r"(?: at [^\n]{0,60})?|published as a conference paper at [^\n]{0,60}|"
    r"arxiv:\s*\S+\s+\[[\w.\-]+\]\s+\d{1,2}\s+\w{3}\s+\d{4}|page \d+ of \d+)[\s*_]*$",
    re.IGNORECASE)
_CAPTION = re.compile(
    r"^[\s*_>]*(?:figure|fig\.|table|tab\.|supplementary figure)\s*[A-Z]?\d+[a-z]?"
    r"(?:\.\d+)?\s*[:.|]", re.IGNORECASE)
_PICTURE = re.compile(r"^\s*(?:!\[[^\]]*\]\([^)]*\)|\**==> picture .* <==\**)\s*$")
_NUMERIC_CITATION = re.compile(r"\s?\[(?:[1-9]\d{0,3}(?:\s*[-–,]\s*[1-9]\d{0,3})*)\]")
# A name: capitalised words, with the particles of names (``van der Maaten``, ``Queer in AI``).
_NAME = r"(?:(?:van|von|der|den|de|del|della|da|di|du|la|le)\s+)*[A-Z][\w'’\-]+" \
    r"(?:\s+(?:(?:van|von|der|den|de|del|da|di|la|le|in|of|for)\s+)*[A-Z][\w'’\-]+){0,3}"
_AUTHOR = rf"{_NAME}(?:\s+(?:and|&)\s+{_NAME}|\s+et\s+al\.?)?"
_YEARS = r"(?:19|20)\d{2}[a-z]?(?:,\s*(?:(?:19|20)\d{2}[a-z]?|[a-z]\b))*"
_AUTHOR_YEAR = re.compile(
    rf"\s?\((?:(?:e\.g\.|i\.e\.|see|cf\.)(?:,)?\s+)?{_AUTHOR},?\s+{_YEARS}"
    rf"(?:;\s*{_AUTHOR},?\s+{_YEARS})*\)")
_NARRATIVE_YEAR = re.compile(rf"(\bet al\.|\b[A-Z][\w'’\-]+)\s+\({_YEARS}\)")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([.,;:!?])")


@dataclass(frozen=True)
class Cleaned:
    """The cleaned parts of a document; ``text`` is the body, possibly truncated."""

    text: str
    references: str | None
    appendix: str | None
    n_chars: int
    truncated: bool


def heading_title(line: str) -> str | None:
    """The title of a Markdown or bold-only heading line, without emphasis; else None."""
    match = _HEADING.match(line.strip())
    if match is None:
        return None
    title = match.group("md") or match.group("bold") or ""
    return title.replace("**", "").replace("__", "").strip(" _*") or None


def section_kind(title: str, current: str) -> str:
    """Which part a heading starts: ``body``, ``references`` or ``appendix``."""
    if _REFERENCES.match(title):
        return "references"
    if _APPENDIX.match(title):
        return "appendix"
    if current in {"references", "appendix"}:
        # After the references, a new heading starts supplementary material (``A Proofs``,
        # a checklist); inside an appendix every heading stays in it.
        return "appendix"
    return "body"


def split_parts(markdown: str) -> dict[str, str]:
    """Split a document at its references and appendix headings."""
    parts: dict[str, list[str]] = {"body": [], "references": [], "appendix": []}
    current, caption_after_references = "body", False
    for line in markdown.split("\n"):
        title = heading_title(line)
        if title is not None:
            current = section_kind(title, current)
        # Figures set after the references (AASTeX manuscripts, journals' end floats): their
        # captions are the body's, not entries of the reference list.
        if current == "references" and _CAPTION.match(line):
            caption_after_references = True
        parts["body" if caption_after_references else current].append(line)
        if not line.strip():
            caption_after_references = False
    return {k: "\n".join(v) for k, v in parts.items()}


def compose_accents(text: str) -> str:
    """``F¨arber`` becomes ``Färber``: a spacing accent drawn beside its letter is composed
    with it (a name must be one word for its citation to be matched)."""
    if not any(ch in text for ch in "´¨ˆ˜ˇ˘˚˝¯˙¸"):
        return text
    text = _ACCENT_BEFORE.sub(lambda m: unicodedata.normalize(
        "NFC", m.group(2).replace("ı", "i") + _ACCENTS[m.group(1)]), text)
    return _CEDILLA_AFTER.sub(lambda m: unicodedata.normalize("NFC", m.group(1) + "\u0327"), text)


def drop_repeated_lines(lines: list[str], min_repeats: int = 3) -> list[str]:
    """Running headers and footers: short non-structural lines seen three times or more."""
    def candidate(line: str) -> bool:
        text = line.strip()
        return 0 < len(text) <= 80 and not text.startswith(("|", "#", "$")) and not \
            _HEADING.match(text)

    counts = Counter(line.strip() for line in lines if candidate(line))
    repeated = {text for text, n in counts.items() if n >= min_repeats}
    return [line for line in lines if line.strip() not in repeated]


def drop_noise_lines(lines: list[str]) -> list[str]:
    """Line and page numbers, boilerplate stamps, ``Downloaded from`` notices, dot leaders
    and picture placeholders; an arXiv stamp glued to a line is cut from it."""
    return [strip_stamps(line) for line in lines
            if not (_NUMBER_LINE.match(line) or _BOILERPLATE.match(line)
                    or _PICTURE.match(line) or is_noise(line))]


def mark_captions(text: str) -> str:
    """Figure and table captions (a paragraph that opens with ``Figure 3:`` / ``Table 2.``)
    kept, each as one emphasised Markdown paragraph (``*Table 2: Results ...*``), so that a
    reader or a later stage tells a caption from the running text."""
    paragraphs = re.split(r"\n[ \t]*\n", text)
    return "\n\n".join(caption(p) if _CAPTION.match(p.lstrip()) else p for p in paragraphs)


def caption(paragraph: str) -> str:
    """One caption paragraph as ``*...*`` (already marked ones unchanged)."""
    text = " ".join(paragraph.split())
    if text.startswith("*") and text.endswith("*") and not text.startswith("**"):
        return text
    text = text.strip("*_ ").replace("*", "\\*")
    return f"*{text}*"


def _numeric_marker(match: re.Match[str]) -> str:
    """A numeric marker cites the words around it; one opening a line before a value, not a
    word, is console output (R's ``[1] 4``, ``[1] "zoo"``), and stays."""
    start, after = match.start(), match.string[match.end():match.end() + 2].lstrip()
    opens_line = (start == 0 or match.string[start - 1] == "\n") and \
        not match.group()[0].isspace()
    return match.group() if opens_line and not after[:1].isalpha() else ""


def _drop_citations(text: str) -> str:
    text = _NUMERIC_CITATION.sub(_numeric_marker, text)
    text = _AUTHOR_YEAR.sub("", text)
    text = _NARRATIVE_YEAR.sub(r"\1", text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


_CELL_BORDER = re.compile(r"(?<!\\)\|")


def drop_table_citations(rows: list[str]) -> list[str]:
    """Parenthetical author-year markers in the cells of consecutive table rows, read down
    each column, so that one wrapped over two rows of a cell (``GPT-3 (Brown`` /
    ``et al., 2020)``) goes too; every row stays a row."""
    cells = [_CELL_BORDER.split(row) for row in rows]
    for column in range(max(len(row) for row in cells)):
        text = "\n".join(row[column] if column < len(row) else "" for row in cells)
        cleaned = _AUTHOR_YEAR.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        if cleaned != text:
            for row, cell in zip(cells, cleaned.split("\n"), strict=True):
                if column < len(row):
                    row[column] = cell
    return ["|".join(row) for row in cells]


def drop_citation_markers(text: str) -> str:
    """Numeric (``[3]``, ``[2, 5-7]``) and parenthetical author-year markers; narrative ones
    keep the names (``Smith et al. (2020) show`` becomes ``Smith et al. show``). Matched over
    a whole paragraph, so a marker wrapped over two lines (``[12,`` / ``13]``) goes too;
    display math is left alone (its paragraph is cleaned line by line) and table rows lose
    only parenthetical author-year markers (``AAN (Radev et al., 2009)``; a ``[1]`` in a cell
    may be data), matched down each column."""
    paragraphs = []
    for paragraph in re.split(r"(\n[ \t]*\n)", text):
        lines = paragraph.split("\n")
        if not any(line.lstrip().startswith(("|", "$$")) for line in lines):
            paragraphs.append(_drop_citations(paragraph))
            continue
        out: list[str] = []
        for is_table, run in itertools.groupby(lines, lambda ln: ln.lstrip().startswith("|")):
            run_lines = list(run)
            out.extend(drop_table_citations(run_lines) if is_table else
                       [ln if ln.lstrip().startswith("$$") else _drop_citations(ln)
                        for ln in run_lines])
        paragraphs.append("\n".join(out))
    return "".join(paragraphs)


_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")


def normalize_headings(lines: list[str]) -> list[str]:
    """``## **1 Introduction**`` becomes ``## 1 Introduction``; a bold-only line (how
    pymupdf4llm marks headings without its layout model) becomes a heading, its level from
    its numbering (``3.2 Setup`` is ``###``)."""
    out = []
    for line in lines:
        bold = _HEADING.match(line.strip()) if line.startswith("**") else None
        if bold and not bold.group("bold").rstrip().endswith((".", ",", ";", ":")):
            title = heading_title(line) or ""
            number = _NUMBERED.match(title)
            depth = number.group(1).count(".") if number else 0
            line = f"{'#' * min(depth + 2, 6)} {title}"
        elif line.startswith("#"):
            hashes = line.partition(" ")[0]
            title = heading_title(line)
            line = f"{hashes} {title}" if title and set(hashes) == {"#"} else line.rstrip()
        out.append(line)
    return out


def normalize_whitespace(text: str) -> str:
    """Trailing spaces, runs of spaces inside lines, and more than one blank line."""
    lines = [re.sub(r"(?<=\S)[ \t]{2,}", " ", line).rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def clean_part(text: str) -> str:
    text = compose_accents(text.translate(LIGATURES))
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = normalize_headings(drop_noise_lines(drop_repeated_lines(lines)))
    return normalize_whitespace(drop_citation_markers(mark_captions("\n".join(lines))))


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a paragraph break in the last fifth if there is
    one, else at a space."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for separator in ("\n\n", "\n", " "):
        cut = head.rfind(separator)
        if cut >= limit * 0.8:
            return head[:cut].rstrip()
    return head


_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.MULTILINE)
LATE_SHARE = 0.25  # of the limit, at most, for a related-work section kept past the cut


def _related_past(text: str, limit: int) -> tuple[int, str] | None:
    """Where the first related-work section past ``limit`` starts, and that section (up to
    the next heading of its level or above, itself cut to its share of the limit)."""
    headings = list(_MD_HEADING.finditer(text))
    for i, match in enumerate(headings):
        if match.start() < limit * (1 - LATE_SHARE) or heading_kind(match[2]) != "related":
            continue
        level = len(match[1])
        end = next((h.start() for h in headings[i + 1:] if len(h[1]) <= level), len(text))
        return match.start(), _cut(text[match.start():end].rstrip(), int(limit * LATE_SHARE))
    return None


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """Cut to at most ``limit`` characters; return (text, whether it was cut). A
    related-work section that the cut would drop (ACL-style papers put it near the end) is
    kept after the cut head, in its share of the limit: it is where the research gap is
    read, and results are seldom stated there."""
    if len(text) <= limit:
        return text, False
    late = _related_past(text, limit)
    if late is None:
        return _cut(text, limit), True
    start, section = late
    head = _cut(text[:start].rstrip(), limit - len(section) - 2)
    return f"{head}\n\n{section}", True


def clean_document(markdown: str, max_chars: int = DEFAULT_MAX_CHARS) -> Cleaned:
    """Clean a converted document and split off its references and appendix."""
    parts = split_parts(markdown)
    body = clean_part(parts["body"])
    references = normalize_whitespace(parts["references"].translate(LIGATURES)) or None
    appendix = clean_part(parts["appendix"]) or None
    text, truncated = truncate(body, max_chars)
    return Cleaned(text=text, references=references, appendix=appendix, n_chars=len(body),
                   truncated=truncated)
