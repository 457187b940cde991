"""PDF to Markdown from PyMuPDF's own structured text (``page.get_text("dict")``): the fast
path. pymupdf4llm spends most of its time in Python per character (its table finder turns
every character into a dictionary); here a page is read once as blocks, lines and spans
(fonts, sizes, flags), which MuPDF builds in C, and the structure is rebuilt from them:

- headings from font statistics (the body size is the most common size by characters; a
  short block set larger, or all bold, is a heading) and from the PDF outline where there is
  one (its titles give the level); numbering (``3.2``) gives the level otherwise;
- reading order: on a page with two columns (text on both sides of the x-midline), the
  blocks of each band between full-width blocks are read left column first, then right;
- footnotes and other small print read after the page's text;
- paragraphs joined over lines, columns and pages when a sentence runs on; words hyphenated
  at a line end joined again; ligatures expanded by MuPDF (no ``TEXT_PRESERVE_LIGATURES``);
- bulleted lists as Markdown items; math kept as the text the PDF holds;
- tables: on a page with a ``Table N`` caption, a group of horizontal rules next to it
  (booktabs) is a table, rebuilt from the pieces of text inside (fast_tables.py); its
  Markdown replaces the table's blocks. PyMuPDF's own finder needs its layout model to see
  booktabs tables (no vertical rules), at 0.5-1 CPU s a page: more than the rest of the
  conversion of a whole paper.

References and appendix are split off, captions, citations and running headers dropped by
the shared cleaning, as for every converter. Measured in benchmarks/README.md."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from vault_pipeline.documents.fast_tables import (
    Piece,
    captioned,
    horizontal_rules,
    rule_groups,
    table_markdown,
)
from vault_pipeline.documents.outcome import Converted
from vault_pipeline.documents.pdf import ALL, OFF, RULED, PdfLimits, check_table_mode, convert_pdf
from vault_pipeline.pipeline.lazy import lazy_import

pymupdf = lazy_import("pymupdf")  # about 0.35 s: loaded on first use, not with the definitions

FAST_VERSION = "2"  # 2: tables from rules and pieces; lines not merged across rows
# Images are not collected (no TEXT_PRESERVE_IMAGES), ligatures are expanded (no
# TEXT_PRESERVE_LIGATURES); text outside the page box is cut.
HEADING_MAX_CHARS = 150
HEADING_MAX_LINES = 3
LARGER = 0.9  # points above the body size that make a line a heading
SMALLER = 0.5  # points below the body size of small print (footnotes, table cells)
COLUMN_TOLERANCE = 0.02  # of the page width: how far a column block may reach past the midline
FULL_WIDTH = 0.6  # of the page width: a block this wide crossing the midline spans columns
COLUMN_SHARE = 0.1  # of the page's text height: each column must hold this much
BULLETS = "•◦▪‣∙●○■□➢►–"
_NUMBERED = re.compile(r"^(?:(\d+(?:\.\d+)*)\.?|[A-Z](?:\.\d+)+\.?)\s+\S")
_TABLE_CAPTION = re.compile(r"^\s*(?:table|tab\.)\s*[A-Z]?\d+", re.IGNORECASE)
_CAPTION = re.compile(r"^\s*(?:table|tab\.|figure|fig\.)\s*[A-Z]?\d+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:;)\]\"”]\s*$")


def converter_version(tables: str = RULED) -> str:
    """The version a fast conversion is reused under: each table mode gives its own text
    (``all`` also takes rule groups with no caption beside them)."""
    options = {OFF: ", tables off", ALL: ", tables without captions"}.get(tables, "")
    return f"pymupdf-fast {FAST_VERSION} (PyMuPDF {pymupdf.VersionBind}{options})"


@dataclass
class Line:
    """One visual line: the pieces MuPDF splits a justified line into, joined again."""

    text: str
    size: float
    bold: bool
    bbox: tuple[float, float, float, float]
    horizontal: bool = True  # rotated text (a margin stamp) is never a heading
    pieces: tuple[Piece, ...] = ()  # the runs MuPDF split the line into (table cells)


@dataclass
class Block:
    lines: list[Line]
    bbox: tuple[float, float, float, float]
    table: str | None = None  # Markdown of a table found here instead of lines


def normalize_title(text: str) -> str:
    """A heading's text for matching against the outline: letters and digits only."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def join_lines(lines: Sequence[str]) -> str:
    """Lines of one paragraph as one string: a word hyphenated at a line end is joined
    (``repre-`` + ``sentation``), a compound already holding a hyphen keeps it
    (``state-of-the-`` + ``art``), ``pre-`` + ``and post-`` stays apart; other lines are
    joined with a space."""
    out = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if not out:
            out = line
            continue
        word = out.rsplit(" ", 1)[-1]
        hyphenated = len(word) > 2 and word.endswith("-") and word[-2].isalpha() and \
            line[0].islower() and line.split(" ", 1)[0] not in ("and", "or", "to")
        if hyphenated and "-" in word[:-1]:
            out += line  # a compound broken at one of its own hyphens
        elif hyphenated:
            out = out[:-1] + line
        else:
            out = f"{out} {line}"
    return out


def reading_order(boxes: Sequence[tuple[float, float, float, float]], width: float) -> list[int]:
    """Indices of ``boxes`` (x0, y0, x1, y1) in reading order. On a two-column page (text on
    both sides of the x-midline, each side at least ``COLUMN_SHARE`` of the text height),
    full-width boxes cut the page into bands and each band is read left column, then right
    column; a narrow box crossing the midline (a wide equation) goes with the column of its
    centre. Otherwise top to bottom, left to right."""
    by_position = sorted(range(len(boxes)), key=lambda i: (boxes[i][1], boxes[i][0]))
    mid = width / 2
    tolerance = width * COLUMN_TOLERANCE
    side: dict[int, str] = {}
    for i, (x0, _y0, x1, _y1) in enumerate(boxes):
        if x1 <= mid + tolerance:
            side[i] = "left"
        elif x0 >= mid - tolerance:
            side[i] = "right"
        elif x1 - x0 >= width * FULL_WIDTH:
            side[i] = "full"
        else:
            side[i] = "left" if (x0 + x1) / 2 < mid else "right"
    heights = Counter[str]()
    for i, (_x0, y0, _x1, y1) in enumerate(boxes):
        heights[side[i]] += max(y1 - y0, 0.0)
    total = sum(heights.values())
    if not total or min(heights["left"], heights["right"]) < COLUMN_SHARE * total:
        return by_position
    order: list[int] = []
    band: list[int] = []

    def flush() -> None:
        order.extend(sorted((i for i in band if side[i] == "left"), key=by_position.index))
        order.extend(sorted((i for i in band if side[i] == "right"), key=by_position.index))
        band.clear()

    for i in by_position:
        if side[i] == "full":
            flush()
            order.append(i)
        else:
            band.append(i)
    flush()
    return order


def _visual_lines(block: dict) -> list[Line]:
    """MuPDF splits a justified line at wide spaces into several lines on one baseline;
    join those (left to right) into one visual line. Pieces side by side only: a line under
    a taller one (a subscript reaching down) is the next line, not a piece of it."""
    rows: list[list[dict]] = []
    for line in sorted(block["lines"], key=lambda ln: (ln["bbox"][3], ln["bbox"][0])):
        if not any(span["text"].strip() for span in line["spans"]):
            continue
        x0, _y0, x1, y1 = line["bbox"]
        height = line["bbox"][3] - line["bbox"][1]
        if rows and abs(rows[-1][-1]["bbox"][3] - y1) <= max(height, 1.0) * 0.4 and \
                all(x0 >= other["bbox"][2] - 1 or x1 <= other["bbox"][0] + 1
                    for other in rows[-1]):
            rows[-1].append(line)
        else:
            rows.append([line])
    lines = []
    for row in rows:
        row.sort(key=lambda ln: ln["bbox"][0])
        spans = [span for line in row for span in line["spans"]]
        text = " ".join("".join(span["text"] for span in line["spans"]).strip() for line in row)
        chars = Counter[float]()
        bold = 0
        for span in spans:
            n = len(span["text"].strip())
            chars[round(span["size"] * 2) / 2] += n
            if span["flags"] & pymupdf.TEXT_FONT_BOLD or "bold" in span["font"].lower():
                bold += n
        total = sum(chars.values())
        bbox = (min(ln["bbox"][0] for ln in row), min(ln["bbox"][1] for ln in row),
                max(ln["bbox"][2] for ln in row), max(ln["bbox"][3] for ln in row))
        pieces = tuple(Piece(*ln["bbox"], "".join(span["text"] for span in ln["spans"]))
                       for ln in row)
        lines.append(Line(text=re.sub(r"\s+", " ", text).strip(),
                          size=chars.most_common(1)[0][0] if chars else 0.0,
                          bold=total > 0 and bold >= 0.9 * total, bbox=bbox,
                          horizontal=all(abs(ln["dir"][1]) < 0.1 for ln in row),
                          pieces=pieces))
    return [line for line in lines if line.text]


def page_blocks(page: pymupdf.Page) -> list[Block]:
    blocks = []
    flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE
    for block in page.get_text("dict", flags=flags)["blocks"]:
        if block["type"] != 0:
            continue
        lines = _visual_lines(block)
        if lines:
            blocks.append(Block(lines=lines, bbox=tuple(block["bbox"])))
    return blocks


def _inside(box: tuple[float, float, float, float], area: pymupdf.Rect) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return area.x0 <= cx <= area.x1 and area.y0 <= cy <= area.y1


def with_tables(page: pymupdf.Page, blocks: list[Block], captions: bool = True) -> list[Block]:
    """Replace the blocks inside each group of table rules (next to a ``Table N`` caption
    where ``captions``) by the table's Markdown; blocks stay as text where no table forms."""
    boxes = [b.bbox for b in blocks if b.table is None and _CAPTION.match(b.lines[0].text)]
    areas = rule_groups(horizontal_rules(page), boxes)
    if captions:
        areas = captioned(areas, [b.bbox for b in blocks
                                  if b.table is None and _TABLE_CAPTION.match(b.lines[0].text)])
    found = []
    for area in areas:
        inside = pymupdf.Rect(area.x0 - 1, area.y0 - 1, area.x1 + 1, area.y1 + 1)
        markdown = table_markdown([piece for b in blocks if b.table is None
                                   and _inside(b.bbox, inside)
                                   for line in b.lines for piece in line.pieces])
        if markdown:
            found.append((inside, markdown))
    if not found:
        return blocks
    kept = [b for b in blocks if not any(_inside(b.bbox, area) for area, _ in found)]
    return kept + [Block(lines=[], bbox=tuple(area), table=markdown) for area, markdown in found]


def body_size(pages: list[list[Block]]) -> float:
    """The most common font size, counted in characters: the size of the running text."""
    sizes = Counter[float]()
    for blocks in pages:
        for block in blocks:
            for line in block.lines:
                sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


@dataclass(frozen=True)
class Styles:
    """What the document's fonts and outline say a heading looks like."""

    body: float
    title: float  # the largest size on the first page
    outline: dict[str, int]  # normalised outline title -> level (1 = top)

    def is_heading_line(self, line: Line) -> bool:
        return line.horizontal and (line.size >= self.body + LARGER
                                    or (line.bold and line.size >= self.body - 0.5))

    def level(self, text: str, size: float, first_page: bool) -> int | None:
        """The Markdown level of a heading with this text, or None if it is not one."""
        outlined = self.outline.get(normalize_title(text))
        if outlined is not None:
            return min(outlined + 1, 6)
        if first_page and size >= self.title and size >= self.body + 3:
            return 1
        number = _NUMBERED.match(text)
        if not any(ch.isalpha() for ch in text) or text.endswith(("-", ",")) or "@" in text \
                or (_SENTENCE_END.search(text) and not number):
            return None
        if self.outline and not number:
            return None  # the outline lists the unnumbered headings there are
        if number:
            depth = (number.group(1) or "x.").count(".")
            return min(depth + 2, 6)
        return 2 if size >= self.body + LARGER else 3


def document_styles(doc: pymupdf.Document, pages: list[list[Block]]) -> Styles:
    outline: dict[str, int] = {}
    for level, title, *_ in doc.get_toc(simple=True):
        outline.setdefault(normalize_title(title), level)
    outline.pop("", None)
    first = [line.size for block in pages[0] for line in block.lines
             if line.horizontal] if pages else []
    return Styles(body=body_size(pages), title=max(first, default=0.0), outline=outline)


def _split_heading(block: Block, styles: Styles) -> tuple[list[Line], list[Line]]:
    """Leading heading-styled lines of a block (a heading MuPDF put in the block of the
    paragraph under it), and the rest; an outline title counts whatever its style."""
    lines = block.lines
    if styles.outline and len(lines) <= HEADING_MAX_LINES and \
            normalize_title(" ".join(line.text for line in lines)) in styles.outline:
        return lines, []
    head = 0
    while head < len(lines) and head < HEADING_MAX_LINES and styles.is_heading_line(lines[head]):
        head += 1
    if head == len(lines) or (head and not styles.is_heading_line(lines[head])):
        text = " ".join(line.text for line in lines[:head])
        # A bold line of body size opening a paragraph is a run-in sentence unless numbered.
        run_in = head < len(lines) and lines[0].size < styles.body + LARGER and \
            not _NUMBERED.match(text)
        if head and len(text) <= HEADING_MAX_CHARS and not run_in:
            return lines[:head], lines[head:]
    return [], lines


def _paragraphs(lines: list[Line]) -> list[str]:
    """A block's lines as paragraphs: a bullet starts a list item."""
    items: list[list[str]] = []
    bullet = False
    for line in lines:
        starts_item = line.text[0] in BULLETS and (len(line.text) == 1 or line.text[1] == " ")
        if starts_item or not items:
            items.append([])
            bullet = starts_item
        items[-1].append(line.text[1:].strip() if starts_item else line.text)
    return [("- " if bullet or len(items) > 1 else "") + join_lines(item) for item in items]


def footnotes(blocks: list[Block], body: float) -> set[int]:
    """Small print with no body text under it in its column (footnotes): read after the
    page's text, so that a paragraph running from one column into the next is not cut by the
    footnotes between them. Small print with text under it (an abstract, references set
    small) stays where it is."""
    def is_small(block: Block) -> bool:
        return block.table is None and max(ln.size for ln in block.lines) < body - SMALLER

    small = {i for i, block in enumerate(blocks) if is_small(block)}
    return {i for i in small if not any(
        j not in small and other.bbox[1] >= blocks[i].bbox[3]
        and other.bbox[0] < blocks[i].bbox[2] and other.bbox[2] > blocks[i].bbox[0]
        for j, other in enumerate(blocks))}


def render_document(doc: pymupdf.Document, tables: str = RULED) -> str:
    """The Markdown of ``doc`` (see the module docstring)."""
    check_table_mode(tables)
    pages = [page_blocks(page) for page in doc]
    if tables != OFF:
        for number, page in enumerate(doc):
            if tables != RULED or any(_TABLE_CAPTION.match(b.lines[0].text)
                                      for b in pages[number]):
                pages[number] = with_tables(page, pages[number], captions=tables == RULED)
    styles = document_styles(doc, pages)
    out: list[str] = []
    open_paragraph = False  # the last paragraph may run on into the next block
    front_matter = True  # authors and affiliations, set large, before the abstract
    for number, (page, blocks) in enumerate(zip(doc, pages, strict=True)):
        front_matter = front_matter and number == 0
        order = reading_order([b.bbox for b in blocks], page.rect.width)
        small = footnotes(blocks, styles.body)
        for index in [i for i in order if i not in small] + [i for i in order if i in small]:
            block = blocks[index]
            if block.table is not None:
                out.append(block.table)
                open_paragraph = False
                continue
            head, rest = _split_heading(block, styles)
            if head:
                text = join_lines([line.text for line in head])
                level = styles.level(text, max(line.size for line in head), number == 0)
                key = normalize_title(text)
                if level is not None and (key == "abstract" or key in styles.outline
                                          or _NUMBERED.match(text)):
                    front_matter = False
                if level is None or (front_matter and level > 1):
                    rest = head + rest
                elif level == 1 and out and out[-1].startswith("# "):
                    out[-1] = f"{out[-1]} {text}"  # a title set over two lines
                else:
                    out.append(f"{'#' * level} {text}")
                    open_paragraph = False
            paragraphs = _paragraphs(rest) if rest else []
            if paragraphs and open_paragraph and paragraphs[0][:1].islower():
                out[-1] = join_lines([out[-1], paragraphs.pop(0)])
            out.extend(paragraphs)
            if paragraphs:
                open_paragraph = not paragraphs[-1].startswith("- ") and \
                    not _SENTENCE_END.search(paragraphs[-1])
    return "\n\n".join(out) + "\n"


def pdf_to_markdown_fast(data: bytes, limits: PdfLimits | None = None,
                         tables: str = RULED) -> Converted:
    """Convert PDF bytes to Markdown with the fast path (hidden text dropped first)."""
    check_table_mode(tables)
    return convert_pdf(data, limits or PdfLimits(), lambda doc: render_document(doc, tables))

