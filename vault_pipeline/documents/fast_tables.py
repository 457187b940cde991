"""Tables for the fast PDF path, built from the text it has already read.

Most papers set tables in the booktabs style: three or more horizontal rules of the same
width (top, under the header, bottom) and no vertical ones. PyMuPDF's ``lines_strict``
finder sees no cells there without its layout model, and the layout model costs about
0.5-1 CPU s a page (it renders the page and runs two ONNX models); its ``text`` strategy
re-reads every character of the page and drops the spaces inside cells. Here a table is
found from the page's vector graphics only (``get_cdrawings``: a group of at least
``MIN_RULES`` rules sharing their left and right ends, next to a ``Table N`` caption), and
its rows and columns are rebuilt from the pieces MuPDF already split each text line into
at wide gaps: a row is a baseline, a column the x-range the pieces of the fullest rows take.
Milliseconds a page; the text of every cell is kept, so nothing is lost where the grid is
guessed wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vault_pipeline.pipeline.lazy import lazy_import

pymupdf = lazy_import("pymupdf")  # about 0.35 s: loaded on first use, not with the definitions

MIN_RULES = 3  # booktabs: top, header and bottom rules
MIN_WIDTH = 0.15  # of the page width: a shorter stroke is a figure's, not a table's rule
RULE_HEIGHT = 2.0  # points: a filled rectangle this thin is a rule
SAME_END = 3.0  # points: rules of one table start and end within this of each other
CAPTION_GAP = 50.0  # points between a table's outer rule and its caption (a table note between)


@dataclass(frozen=True)
class Piece:
    """A run of text MuPDF kept together on one baseline (a cell, in a table)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str


def horizontal_rules(page: pymupdf.Page) -> list[tuple[float, float, float]]:
    """(x0, y, x1) of every horizontal stroke or thin filled rectangle of table width."""
    rules = []
    for path in page.get_cdrawings():
        for item in path["items"]:
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                if abs(y1 - y0) <= 1.0:
                    rules.append((min(x0, x1), (y0 + y1) / 2, max(x0, x1)))
            elif item[0] == "re":
                rect = pymupdf.Rect(item[1])
                if rect.height <= RULE_HEIGHT:
                    rules.append((rect.x0, rect.y0, rect.x1))
    return [r for r in merged(rules) if r[2] - r[0] >= MIN_WIDTH * page.rect.width]


def merged(rules: Sequence[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Strokes on one height that touch end to end as one rule: a grid table draws the
    border of each cell on its own."""
    out: list[tuple[float, float, float]] = []
    for x0, y, x1 in sorted(rules, key=lambda r: (round(r[1]), r[0])):
        if out and abs(out[-1][1] - y) <= 0.5 and x0 <= out[-1][2] + 1.5:
            out[-1] = (out[-1][0], out[-1][1], max(out[-1][2], x1))
        else:
            out.append((x0, y, x1))
    return out


def rule_groups(rules: Sequence[tuple[float, float, float]],
                captions: Sequence[tuple[float, float, float, float]] = ()) -> list[pymupdf.Rect]:
    """The area from the first to the last of each set of ``MIN_RULES`` or more rules that
    share their ends (one table's rules); a caption between two rules ends a set (two
    tables of one width stacked in a column)."""
    groups: list[list[tuple[float, float, float]]] = []

    def parted(group: list[tuple[float, float, float]], y: float) -> bool:
        return any(group[-1][1] <= box[1] and box[3] <= y and box[0] < group[0][2]
                   and box[2] > group[0][0] for box in captions)

    for rule in sorted(rules, key=lambda r: r[1]):
        for group in groups:
            if abs(group[0][0] - rule[0]) <= SAME_END and abs(group[0][2] - rule[2]) <= SAME_END \
                    and not parted(group, rule[1]):
                if abs(group[-1][1] - rule[1]) > 0.5:  # a rule drawn twice counts once
                    group.append(rule)
                break
        else:
            groups.append([rule])
    return [pymupdf.Rect(g[0][0], g[0][1], g[0][2], g[-1][1]) for g in groups
            if len(g) >= MIN_RULES]


def captioned(areas: list[pymupdf.Rect],
              captions: Sequence[tuple[float, float, float, float]]) -> list[pymupdf.Rect]:
    """The areas with a caption just above or below them, overlapping them horizontally."""
    def near(area: pymupdf.Rect, box: tuple[float, float, float, float]) -> bool:
        x0, y0, x1, y1 = box
        beside = x0 < area.x1 and x1 > area.x0
        return beside and (-SAME_END <= area.y0 - y1 <= CAPTION_GAP
                           or -SAME_END <= y0 - area.y1 <= CAPTION_GAP)

    return [area for area in areas if any(near(area, box) for box in captions)]


def _rows(pieces: Sequence[Piece]) -> list[list[Piece]]:
    rows: list[list[Piece]] = []
    for piece in sorted(pieces, key=lambda p: ((p.y0 + p.y1) / 2, p.x0)):
        middle = (piece.y0 + piece.y1) / 2
        if rows and middle <= max(p.y1 for p in rows[-1]) and \
                middle >= min(p.y0 for p in rows[-1]):
            rows[-1].append(piece)
        else:
            rows.append([piece])
    return [sorted(row, key=lambda p: p.x0) for row in rows]


def table_markdown(pieces: Sequence[Piece]) -> str | None:
    """A Markdown table from the pieces of text inside a table's rules, or None where they
    do not form at least two rows and two columns. Columns are the x-ranges of the pieces
    of the rows with the most pieces (a header cell spanning columns does not merge them);
    every other piece goes to the column it overlaps most, or the nearest."""
    rows = _rows([p for p in pieces if p.text.strip()])
    widest = max((len(row) for row in rows), default=0)
    if len(rows) < 2 or widest < 2:
        return None
    columns = [[min(row[i].x0 for row in rows if len(row) == widest),
                max(row[i].x1 for row in rows if len(row) == widest)] for i in range(widest)]

    def column_of(piece: Piece) -> int:
        def score(i: int) -> tuple[float, float]:
            x0, x1 = columns[i]
            overlap = min(piece.x1, x1) - max(piece.x0, x0)
            return overlap, -abs((piece.x0 + piece.x1) / 2 - (x0 + x1) / 2)
        return max(range(widest), key=score)

    lines = []
    for number, row in enumerate(rows):
        cells = [""] * widest
        for piece in row:
            i = column_of(piece)
            cells[i] = f"{cells[i]} {piece.text.strip()}".strip()
        lines.append("|" + "|".join(cell.replace("|", "\\|") for cell in cells) + "|")
        if number == 0:
            lines.append("|" + "|".join(["---"] * widest) + "|")
    return "\n".join(lines)


ROW_GAP = 12.0  # points between two rows of one table without rules
CELL_CHARS = 30  # a table cell's median length; a paragraph's pieces are longer
PARAGRAPH_CHARS = 60  # one piece this long is a line of prose: the table ends before it
LABEL_CHARS = 16  # a description table's first column: short labels
CAPTION_REACH = 30.0  # points beyond a caption's ends that its table's cells may reach
WIDER = 0.25  # of its caption's width: how far past each end a table's rows may reach


def _median(values: list[int]) -> int:
    return sorted(values)[len(values) // 2]


def _cells(rows: Sequence[tuple[tuple[float, float, float, float], Sequence[Piece]]]) -> bool:
    """Whether the rows' pieces read as cells: short ones, or a first column of short
    labels set at one left edge (a description table), not a paragraph's pieces."""
    cells = [p for _box, pieces in rows for p in pieces if p.text.strip()]
    if _median([len(p.text.strip()) for p in cells]) <= CELL_CHARS:
        return True
    firsts = [pieces[0] for _box, pieces in rows if len(pieces) >= 2]
    aligned = max(p.x0 for p in firsts) - min(p.x0 for p in firsts) <= SAME_END
    return aligned and _median([len(p.text.strip()) for p in firsts]) <= LABEL_CHARS


def unruled_area(caption: tuple[float, float, float, float],
                 rows: Sequence[tuple[tuple[float, float, float, float], Sequence[Piece]]],
                 stops: Sequence[tuple[float, float, float, float]] = ()
                 ) -> pymupdf.Rect | None:
    """The area of a table set without rules under (or else over) its caption: the run of
    lines next to it, each a few short pieces at wide gaps, up to the first line of prose
    or gap wider than a row's, another caption (``stops``), or a line reaching past the
    caption's column. ``rows`` are the page's lines as (bbox, pieces). None where fewer
    than two such lines of two cells or more are there: a caption alone, or prose."""
    x0, y0, x1, y1 = caption
    beside = [(box, pieces) for box, pieces in rows
              if box[0] < x1 + CAPTION_REACH and box[2] > x0 - CAPTION_REACH
              and not (box[1] >= y0 - 1 and box[3] <= y1 + 1)]
    # A table may be wider than its centred caption, never by a column's width.
    reach = max(CAPTION_REACH, WIDER * (x1 - x0))
    within = {id(pieces) for box, pieces in beside
              if box[0] >= x0 - reach and box[2] <= x1 + reach}
    below = sorted((r for r in beside if r[0][1] >= y1 - 1), key=lambda r: r[0][1])
    above = sorted((r for r in beside if r[0][3] <= y0 + 1), key=lambda r: -r[0][3])
    for run, edge, down in ((below, y1, True), (above, y0, False)):
        taken: list[tuple[tuple[float, float, float, float], Sequence[Piece]]] = []
        for box, pieces in run:
            gap = (box[1] - edge) if down else (edge - box[3])
            stopped = any(stop[1] - 1 <= box[1] and box[3] <= stop[3] + 1 and
                          box[0] < stop[2] and box[2] > stop[0] for stop in stops)
            # Only long pieces make a line of prose; a long cell beside a short one is a row
            # of a description table (``refit`` | ``A model (re)fitted to ...``).
            prose = min(len(p.text.strip()) for p in pieces) > PARAGRAPH_CHARS
            # A line reaching past the caption's column holds the other column's text too.
            if stopped or id(pieces) not in within or \
                    gap > (CAPTION_GAP if not taken else ROW_GAP) or prose:
                break
            taken.append((box, pieces))
            edge = max(edge, box[3]) if down else min(edge, box[1])
        if sum(1 for _box, pieces in taken if len(pieces) >= 2) >= 2 and _cells(taken):
            return pymupdf.Rect(min(b[0] for b, _ in taken), min(b[1] for b, _ in taken),
                                max(b[2] for b, _ in taken), max(b[3] for b, _ in taken))
    return None
