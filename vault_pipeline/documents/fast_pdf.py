"""PDF to Markdown from PyMuPDF's own structured text (``page.get_text("dict")``): the fast
path. pymupdf4llm spends most of its time in Python per character (its table finder turns
every character into a dictionary); here a page is read once as blocks, lines and spans
(fonts, sizes, flags), which MuPDF builds in C, and the structure is rebuilt from them:

- page furniture first (furniture.py): running headers and footers, page numbers, margin
  stamps, journal banners and notices, dot leaders; a drop cap joined to its paragraph;
- headings from every signal (fast_headings.py): the outline (its titles wherever the text
  sets them, and a heading at each entry's destination where the text sets none), numbering,
  capitals, weight, size and font against the body, run-in headings split from their
  paragraph; a section number far out of sequence is a figure's label, not a heading;
- the title's author and affiliation blocks and the authors' addresses kept out of the body;
- reading order: on a page with two columns (text on both sides of the x-midline), the
  blocks of each band between full-width blocks are read left column first, then right;
- footnotes and other small print read after the page's text;
- paragraphs joined over lines, columns and pages when a sentence runs on (past a figure's
  caption, which stays its own paragraph); words hyphenated at a line end joined again;
  ligatures expanded by MuPDF (no ``TEXT_PRESERVE_LIGATURES``);
- bulleted lists as Markdown items; math kept as the text the PDF holds;
- tables: on a page with a ``Table N`` caption, a group of horizontal rules next to it
  (booktabs), or else the run of short cells under or over it (a ``tabular`` without
  rules), is a table, rebuilt from the pieces of text inside (fast_tables.py); its
  Markdown replaces the table's blocks. PyMuPDF's own finder needs its layout model to see
  booktabs tables (no vertical rules), at 0.5-1 CPU s a page: more than the rest of the
  conversion of a whole paper.

References and appendix are split off, citations dropped and captions marked by the shared
cleaning, as for every converter. Measured in benchmarks/README.md (bench_documents.py on
the papers it was built on, bench_pdf_styles.py on styles it was not)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from vault_pipeline.documents.fast_headings import HEADING_MAX_LINES as HEADING_LINES
from vault_pipeline.documents.fast_headings import (
    LARGER,
    Numbering,
    Styles,
    body_style,
    document_styles,
    is_affiliation,
    is_author_block,
    is_caps,
    is_contact,
    numbering,
    split_heading,
    uncited,
    unmarked,
)
from vault_pipeline.documents.fast_layout import Block, Line, Run, normalize_title
from vault_pipeline.documents.fast_tables import (
    Piece,
    captioned,
    horizontal_rules,
    rule_groups,
    table_markdown,
    unruled_area,
)
from vault_pipeline.documents.furniture import (
    furniture,
    is_notice,
    line_numbers,
    strip_stamps,
)
from vault_pipeline.documents.outcome import Converted
from vault_pipeline.documents.pdf import ALL, OFF, RULED, PdfLimits, check_table_mode, convert_pdf
from vault_pipeline.pipeline.lazy import lazy_import

pymupdf = lazy_import("pymupdf")  # about 0.35 s: loaded on first use, not with the definitions

# 13: a side-by-side caption's every piece kept; 12: captions set side by side split; 11:
# a footnote mark set small after a heading left out; 10: a citation mark after a heading
# left out; 9: a heading's last words set as a block of their own; 8: a macro written out
# is no heading; 7: contents-page entries and words spelling a later section's title are no
# headings, back-matter headings capitalised; 6: numbered headings a size smaller and their
# second lines, drop caps in a heading's block, capitals headings over lowercase text; 5:
# tables without rules under their captions, appendix and back-matter headings; 4: margin
# line numbers, first-page banners; 3: furniture, heading signals, captions apart; 2: tables
# from rules
FAST_VERSION = "13"
# Images are not collected (no TEXT_PRESERVE_IMAGES), ligatures are expanded (no
# TEXT_PRESERVE_LIGATURES); text outside the page box is cut.
SMALLER = 0.5  # points below the body size of small print (footnotes, table cells)
COLUMN_TOLERANCE = 0.02  # of the page width: how far a column block may reach past the midline
FULL_WIDTH = 0.6  # of the page width: a block this wide crossing the midline spans columns
COLUMN_SHARE = 0.1  # of the page's text height: each column must hold this much
BULLETS = "•◦▪‣∙●○■□➢►–"
# ``Table 3``, not a row labelled ``Table`` (``Table 97.3 58.6``).
_TABLE_CAPTION = re.compile(r"^\s*(?:table|tab\.)\s*[A-Z]?\d+(?!\d|\.\d+\s+\d)", re.IGNORECASE)
_CAPTION = re.compile(r"^\s*(?:table|tab\.|figure|fig\.)\s*[A-Z]?\d+(?!\d|\.\d+\s+\d)",
                      re.IGNORECASE)
_CAPTION_LABEL = re.compile(r"^\s*(?:table|tab\.|figure|fig\.)\s*[A-Z]?\d+\s*[.:|]",
                            re.IGNORECASE)
# A paragraph cut after one of these words runs on, whatever the next block opens with
# (``... in the H →γγ and`` / ``H →ZZ →4ℓ decay channels``).
_DANGLING = re.compile(r"\b(?:and|or|the|of|in|to|a|an|with|for|by|on|at|from|as|is|are|"
                       r"that|than|between|into|via)\s*$")
_SENTENCE_END = re.compile(r"[.!?:;)\]\"”]\s*$")
# What may stand before an outline title where the text sets it: its number (``2.1``,
# ``IV``, ``A``), with ``Appendix`` or ``Chapter``; not ``Example 0.1:`` before ``Starting``.
_NUMBER_PREFIX = re.compile(r"(?:appendix|chapter|section|part)?[0-9ivxlc]*[a-z]?")
DROP_CAP = 1.8  # times the body size: a lone letter this large opens the paragraph beside it
MOSTLY_FURNITURE = 2 / 3  # of a block's lines: the rest of it goes with them


def converter_version(tables: str = RULED) -> str:
    """The version a fast conversion is reused under: each table mode gives its own text
    (``all`` also takes rule groups with no caption beside them)."""
    options = {OFF: ", tables off", ALL: ", tables without captions"}.get(tables, "")
    return f"pymupdf-fast {FAST_VERSION} (PyMuPDF {pymupdf.VersionBind}{options})"


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
        fonts = Counter[str]()
        bold = 0
        runs: list[Run] = []
        for span in spans:
            n = len(span["text"].strip())
            size = round(span["size"] * 2) / 2
            chars[size] += n
            fonts[span["font"]] += n
            is_bold = bool(span["flags"] & pymupdf.TEXT_FONT_BOLD) or \
                "bold" in span["font"].lower()
            if is_bold:
                bold += n
            if runs and runs[-1].bold == is_bold and runs[-1].font == span["font"]:
                runs[-1] = Run(runs[-1].text + span["text"], is_bold, span["font"],
                               runs[-1].size)
            else:
                runs.append(Run(span["text"], is_bold, span["font"], size))
        total = sum(chars.values())
        bbox = (min(ln["bbox"][0] for ln in row), min(ln["bbox"][1] for ln in row),
                max(ln["bbox"][2] for ln in row), max(ln["bbox"][3] for ln in row))
        pieces = tuple(Piece(*ln["bbox"], "".join(span["text"] for span in ln["spans"]))
                       for ln in row)
        lines.append(Line(text=re.sub(r"\s+", " ", text).strip(),
                          size=chars.most_common(1)[0][0] if chars else 0.0,
                          bold=total > 0 and bold >= 0.9 * total, bbox=bbox,
                          horizontal=all(abs(ln["dir"][1]) < 0.1 for ln in row),
                          pieces=pieces, font=fonts.most_common(1)[0][0] if fonts else "",
                          runs=tuple(runs)))
    return [line for line in lines if line.text]


def page_blocks(page: pymupdf.Page) -> list[Block]:
    """The page's text blocks as visual lines, less a draft's line numbers in the margin."""
    blocks = []
    flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE
    raw = [block for block in page.get_text("dict", flags=flags)["blocks"]
           if block["type"] == 0]
    every = [(block, line) for block in raw for line in block["lines"]]
    numbered = line_numbers([("".join(span["text"] for span in line["spans"]),
                              tuple(line["bbox"])) for _block, line in every])
    if numbered:
        drop = {id(every[i][1]) for i in numbered}
        raw = [{**block, "lines": [ln for ln in block["lines"] if id(ln) not in drop]}
               for block in raw]
    for block in raw:
        lines = _visual_lines(block)
        if lines:
            blocks.append(Block(lines=lines, bbox=tuple(block["bbox"])))
    return blocks


def _inside(box: tuple[float, float, float, float], area: pymupdf.Rect) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return area.x0 <= cx <= area.x1 and area.y0 <= cy <= area.y1


def _caption_boxes(blocks: list[Block], pattern: re.Pattern[str]
                   ) -> list[tuple[float, float, float, float]]:
    """Where each caption lies: from its first line to the end of its block (a caption may
    open a block or follow a table's cells in one); a line inside a paragraph opening with
    ``Table 2 shows`` is no caption."""
    boxes = []
    for block in blocks:
        if block.table is not None:
            continue
        for i, line in enumerate(block.lines):
            if pattern.match(line.text) and (i == 0 or _CAPTION_LABEL.match(line.text)):
                rest = block.lines[i:]
                boxes.append((min(ln.bbox[0] for ln in rest), line.bbox[1],
                              max(ln.bbox[2] for ln in rest), block.bbox[3]))
    return boxes


def _nearest(area: pymupdf.Rect, captions: list[tuple[float, float, float, float]]
             ) -> tuple[float, float, float, float] | None:
    """The caption a ruled table belongs to: of those beside it, the nearest above or below
    (two tables stacked in a column each have theirs)."""
    near = [box for box in captions if captioned([area], [box])]
    return min(near, key=lambda box: min(abs(area.y0 - box[3]), abs(box[1] - area.y1))) \
        if near else None


def _unruled_tables(lines: list[Line], found: list[pymupdf.Rect],
                    captions: list[tuple[float, float, float, float]],
                    table_captions: list[tuple[float, float, float, float]]
                    ) -> list[tuple[pymupdf.Rect, str]]:
    """Tables set without rules (``tabular`` with no lines): the cells next to a ``Table N``
    caption that has no ruled table by it (fast_tables.unruled_area)."""
    out: list[tuple[pymupdf.Rect, str]] = []
    rows = [(line.bbox, line.pieces or (Piece(*line.bbox, line.text),)) for line in lines]
    taken = {_nearest(area, table_captions) for area in found}
    for caption in table_captions:
        if caption in taken or captioned([area for area, _ in out], [caption]):
            continue
        area = unruled_area(caption, rows, [box for box in captions if box != caption])
        if area is None or any(area.intersects(other) for other in found):
            continue
        inside = pymupdf.Rect(area.x0 - 1, area.y0 - 1, area.x1 + 1, area.y1 + 1)
        markdown = table_markdown([piece for line in lines if _inside(line.bbox, inside)
                                   for piece in line.pieces])
        if markdown:
            out.append((inside, markdown))
    return out


def with_tables(page: pymupdf.Page, blocks: list[Block], captions: bool = True) -> list[Block]:
    """Replace the lines inside each group of table rules (next to a ``Table N`` caption
    where ``captions``) by the table's Markdown; lines stay as text where no table forms.
    Lines, not blocks: MuPDF may put a table's cells and its caption in one block."""
    lines = [line for b in blocks if b.table is None for line in b.lines]
    all_captions = _caption_boxes(blocks, _CAPTION)
    table_captions = _caption_boxes(blocks, _TABLE_CAPTION)
    areas = rule_groups(horizontal_rules(page), all_captions)
    if captions:
        areas = captioned(areas, table_captions)
    found = []
    for area in areas:
        inside = pymupdf.Rect(area.x0 - 1, area.y0 - 1, area.x1 + 1, area.y1 + 1)
        markdown = table_markdown([piece for line in lines if _inside(line.bbox, inside)
                                   for piece in line.pieces])
        if markdown:
            found.append((inside, markdown))
    found += _unruled_tables(lines, [area for area, _ in found], all_captions, table_captions)
    if not found:
        return blocks
    kept = []
    for block in blocks:
        rest = block.lines if block.table is not None else \
            [ln for ln in block.lines if not any(_inside(ln.bbox, area) for area, _ in found)]
        if block.table is not None or len(rest) == len(block.lines):
            kept.append(block)
        elif rest:
            kept.append(Block.of(rest))
    return kept + [Block(lines=[], bbox=tuple(area), table=markdown) for area, markdown in found]


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
    out = [("- " if bullet or len(items) > 1 else "") + join_lines(item) for item in items]
    return [f"\\{text}" if text.startswith("#") else text for text in out]


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


def without_furniture(pages: list[list[Block]], heights: list[float],
                      body: float) -> list[list[Block]]:
    """The pages less their furniture lines (furniture.py), arXiv stamps cut out of the lines
    they are glued to; a block left with no line goes."""
    lines = [[line for block in blocks for line in block.lines] for blocks in pages]
    drop = furniture(lines, heights, body)
    out = []
    for blocks, dropped in zip(pages, drop, strict=True):
        kept_blocks, index = [], 0
        for block in blocks:
            if is_notice(block.lines[0].text):
                index += len(block.lines)
                continue
            kept = []
            for line in block.lines:
                if index not in dropped:
                    text = strip_stamps(line.text)
                    kept.append(line if text == line.text else replace(line, text=text))
                index += 1
            kept = [line for line in kept if line.text]
            if len(block.lines) - len(kept) >= MOSTLY_FURNITURE * len(block.lines) and \
                    len(block.lines) >= 2:
                continue  # a block mostly furniture is a publisher's statement as a whole
            if kept:
                kept_blocks.append(Block(lines=kept, bbox=block.bbox))
        out.append(kept_blocks)
    return out


def rejoin_drop_caps(blocks: list[Block], body: float) -> list[Block]:
    """A drop cap (``O`` set large beside ``ver the past ...``) joined to the first line of
    the block beside it; MuPDF may put the letter at the end of the block above it (a
    heading's, an abstract's)."""
    def is_cap(line: Line) -> bool:
        return len(line.text) == 1 and line.text.isalpha() and line.size >= body * DROP_CAP

    split: list[Block] = []
    for block in blocks:
        if len(block.lines) > 1 and block.table is None and is_cap(block.lines[-1]):
            rest, cap = block.lines[:-1], block.lines[-1]
            split += [Block.of(rest), Block.of([cap])]
        else:
            split.append(block)
    blocks = split
    caps = [i for i, b in enumerate(blocks) if len(b.lines) == 1 and is_cap(b.lines[0])]
    if not caps:
        return blocks
    gone = set()
    for i in caps:
        _x0, y0, x1, y1 = blocks[i].bbox
        beside = [j for j, b in enumerate(blocks) if j != i and j not in caps
                  and b.lines and b.bbox[0] >= x1 - 3 and b.bbox[0] <= x1 + 30
                  and b.lines[0].bbox[1] < y1 and b.lines[0].bbox[3] > y0]
        if beside:
            j = min(beside, key=lambda k: blocks[k].bbox[0])
            first = blocks[j].lines[0]
            blocks[j].lines[0] = replace(first, text=blocks[i].lines[0].text + first.text)
            gone.add(i)
    return [b for i, b in enumerate(blocks) if i not in gone]


def outline_anchors(doc: pymupdf.Document, pages: list[list[Block]]
                    ) -> dict[tuple[int, int], list[tuple[int, str]]]:
    """Per (page, block), the outline entries whose destination is that block: the first
    block at or below the destination point, in its column where the point gives one. An
    entry whose title the text does not set (revtex's invisible ``Abstract`` and
    ``References`` bookmarks) becomes a heading there."""
    anchors: dict[tuple[int, int], list[tuple[int, str]]] = {}
    for entry in doc.get_toc(simple=False):
        level, title, page_number = entry[0], entry[1].strip(), entry[2] - 1
        to = entry[3].get("to") if len(entry) > 3 and isinstance(entry[3], dict) else None
        if not title or to is None or not 0 <= page_number < len(pages):
            continue
        height = doc[page_number].rect.height
        y = height - float(to.y)
        x = float(to.x)
        blocks = pages[page_number]
        below = [i for i, b in enumerate(blocks) if b.bbox[3] >= y - 2
                 and (x <= 0 or b.bbox[0] - 6 <= x <= b.bbox[2] + 6)]
        if below:
            first = min(below, key=lambda i: blocks[i].bbox[1])
            anchors.setdefault((page_number, first), []).append((level, title))
    return anchors


def side_by_side(block: Block) -> list[str]:
    """A caption block's paragraphs: one, or two where a second caption starts across the
    first line (``Fig. 2. The first figure ...   Fig. 3. The second ...`` under figures set
    side by side); each line's pieces go to the caption on their side."""
    first = block.lines[0]
    starts = [piece.x0 for piece in first.pieces[1:] if _CAPTION.match(piece.text.strip())]
    if not starts:
        return [join_lines([line.text for line in block.lines])]
    cut = starts[0] - 1
    sides: tuple[list[str], list[str]] = ([], [])
    for line in block.lines:
        left: list[str] = []
        right: list[str] = []
        for piece in line.pieces or (Piece(*line.bbox, line.text),):
            # by its middle: every piece goes to one side, none is lost
            (left if (piece.x0 + piece.x1) / 2 < cut else right).append(piece.text.strip())
        for side, texts in zip(sides, (left, right), strict=True):
            if " ".join(texts).strip():
                side.append(" ".join(texts).strip())
    return [join_lines(side) for side in sides if side]


def _heading_tail(head: list[Line], following: Block) -> Line | None:
    """The last line of a heading that MuPDF set as a block of its own (REVTeX's centred
    ``IV. FLOATS: FIGURES, TABLES, VIDEOS,`` over ``ETC.``): one short line in the
    heading's font, size and weight, after a heading line that ends mid-phrase."""
    last = head[-1]
    if not last.text.rstrip().endswith((",", "-", ":")) or following.table is not None or \
            len(following.lines) != 1:
        return None
    line = following.lines[0]
    same = (line.font, line.size, line.bold) == (last.font, last.size, last.bold)
    height = max(last.bbox[3] - last.bbox[1], 1.0)  # (a line's box may overlap the next's)
    near = -0.5 * height <= line.bbox[1] - last.bbox[3] <= 1.5 * height
    return line if same and near and len(line.text) <= 40 else None


def _continued(rest: list[Line], blocks: list[Block], following: list[int]) -> bool:
    """Whether the text after a heading candidate opens in lowercase, a sentence going on
    (jmlr sets a section's first words in the heading's small capitals: ``Floats, such as
    figures ...``)."""
    if rest:
        return rest[0].text[:1].islower()
    after = [blocks[i] for i in following if blocks[i].lines and blocks[i].table is None]
    return bool(after) and after[0].lines[0].text[:1].islower()


def _opens_with(title: str, blocks: list[Block], styles: Styles) -> bool:
    """Whether one of these blocks (the rest of the page from an outline entry's
    destination, which may lie some blocks above its heading) opens with ``title``
    (numbers aside) set as a heading: the text sets the heading itself (not a code
    listing's ``1 \\captionof`` under the ``caption`` of a margin heading)."""
    want = normalize_title(title).lstrip("0123456789ivx")
    for block in blocks:
        if block.table is None and block.lines and want:
            text = normalize_title(" ".join(line.text for line in block.lines[:3]))
            at = text.find(want, 0, len(want) + 12)
            if at >= 0 and _NUMBER_PREFIX.fullmatch(text[:at]) and (
                    styles.is_heading_line(block.lines[0])
                    or normalize_title(block.lines[0].text)[at:] == want):
                return True
    return False


def render_document(doc: pymupdf.Document, tables: str = RULED) -> str:
    """The Markdown of ``doc`` (see the module docstring)."""
    check_table_mode(tables)
    pages = [page_blocks(page) for page in doc]
    body, _font = body_style(pages)
    pages = without_furniture(pages, [page.rect.height for page in doc], body)
    pages = [rejoin_drop_caps(blocks, body) for blocks in pages]
    if tables != OFF:
        for number, page in enumerate(doc):
            if tables != RULED or any(_TABLE_CAPTION.match(line.text)
                                      for b in pages[number] for line in b.lines):
                pages[number] = with_tables(page, pages[number], captions=tables == RULED)
    styles = document_styles(doc.get_toc(simple=True), pages)
    anchors = outline_anchors(doc, pages)
    out: list[str] = []
    open_at: int | None = None  # the paragraph of ``out`` that may run on into a later block
    front_matter = True  # authors and affiliations, before the abstract or first section
    sequence = Numbering()
    titled = False
    sectioned = False  # a first section (``Introduction``, ``1 ...``) has begun
    for number, (page, blocks) in enumerate(zip(doc, pages, strict=True)):
        front_matter = front_matter and number == 0
        order = reading_order([b.bbox for b in blocks], page.rect.width)
        small = footnotes(blocks, styles.body)
        read = [i for i in order if i not in small] + [i for i in order if i in small]
        place = {block: k for k, block in enumerate(order)}
        taken: set[int] = set()  # blocks already read into a heading before them
        for position, index in enumerate(read):
            if index in taken:
                continue
            block = blocks[index]
            for level, title in anchors.get((number, index), ()):
                if not _opens_with(title, [blocks[i] for i in read[position:]], styles):
                    out.append(f"{'#' * min(level + 1, 6)} {title}")
                    open_at = None
                    if normalize_title(title) in ("abstract", "summary"):
                        front_matter = False
            if block.table is not None:
                out.append(block.table)
                open_at = None
                continue
            if _CAPTION.match(block.lines[0].text):
                out.extend(side_by_side(block))
                continue  # a caption: its own paragraph; the text around it runs on past it
            titled = titled or any(line.startswith("#") for line in out[-3:])
            untitled = number == 0 and front_matter and not titled
            if untitled and len(block.lines) <= HEADING_LINES and \
                    is_caps(" ".join(line.text for line in block.lines)):
                head, rest = block.lines, []  # a title in capitals, in the body's font
            else:
                head, rest = split_heading(block, styles)
            following = place[index] + 1  # in reading order, small print included
            if head and not rest and following < len(order):
                after = _heading_tail(head, blocks[order[following]])
                if after is not None:
                    head = [*head, after]
                    taken.add(order[following])
            if head:
                head = [*head[:-1], unmarked(head[-1])]
                text = join_lines([line.text for line in head])
                size = max(line.size for line in head)
                level = styles.level(text, size, number == 0)
                if untitled and level is not None and level > 1 and is_caps(text) and \
                        len(text) >= 15 and normalize_title(text) not in ("abstract",):
                    level = 1
                outlined = styles.outlined(text) is not None
                if level is not None and outlined and styles.listed_later(text, number):
                    level = None  # a contents page's entry
                if level is not None and numbering(text) is None and \
                        size < styles.body + LARGER and \
                        _continued(rest, blocks, read[position + 1:position + 2]):
                    level = None  # a paragraph's first words in the headings' small capitals
                if level is not None and not outlined and level > 1 and \
                        not sequence.accepts(text):
                    level = None  # ``7 ATLAS and CMS``: a figure's label, out of sequence
                if level is not None and number == 0 and level > 1 and not outlined and \
                        not sectioned and is_author_block(Block(head, block.bbox)):
                    level = None  # (after the first section, ``FIRST MAIN TOPIC`` is one)
                key = normalize_title(text)
                if level is not None and (key in ("abstract", "summary", "introduction")
                                          or numbering(text) is not None):
                    front_matter = False
                    sectioned = sectioned or key not in ("abstract", "summary")
                if level is None or (front_matter and level > 1 and not outlined):
                    rest = head + rest
                elif level == 1 and out and out[-1].startswith("# "):
                    out[-1] = f"{out[-1]} {text}"  # a title set over two lines
                    open_at = None
                else:
                    out.append(f"{'#' * level} {uncited(text)}")
                    sequence.saw(text)
                    open_at = None
            if rest and number == 0 and (is_contact(Block(rest, block.bbox))
                                         or is_affiliation(Block(rest, block.bbox))):
                continue  # authors' addresses in a corner of the first page
            if rest and front_matter and is_author_block(Block(rest, block.bbox)):
                continue  # names and affiliations under the title: not the body
            if rest and len(rest) == 1 and normalize_title(rest[0].text) in ("abstract",
                                                                             "summary"):
                out.append("## Abstract")
                front_matter = False
                open_at = None
                continue
            paragraphs = _paragraphs(rest) if rest else []
            if paragraphs and index in small:
                out.extend(paragraphs)  # a footnote: the text it interrupts runs on past it
                continue
            if paragraphs and open_at is not None and (paragraphs[0][:1].islower()
                                                       or _DANGLING.search(out[open_at])):
                out[open_at] = join_lines([out[open_at], paragraphs.pop(0)])
                if not paragraphs:
                    if _SENTENCE_END.search(out[open_at]):
                        open_at = None
                    continue
            out.extend(paragraphs)
            if paragraphs:
                last = paragraphs[-1]
                open_at = len(out) - 1 if not last.startswith("- ") and \
                    not _SENTENCE_END.search(last) else None
    return "\n\n".join(out) + "\n"


def pdf_to_markdown_fast(data: bytes, limits: PdfLimits | None = None,
                         tables: str = RULED) -> Converted:
    """Convert PDF bytes to Markdown with the fast path (hidden text dropped first)."""
    check_table_mode(tables)
    return convert_pdf(data, limits or PdfLimits(), lambda doc: render_document(doc, tables))

