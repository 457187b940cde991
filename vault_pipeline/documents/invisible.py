"""Drop text a reader cannot see before a PDF is converted: white or fully transparent text,
fonts too small to read, and render-mode-3 (invisible) text. Hidden text is a known
prompt-injection vector ("ignore previous instructions...") and never part of the paper.

Exceptions, so real text survives: white text over a filled shape or an image (a label on a
dark box) is visible and kept; invisible text on a page with no visible text is the OCR layer
of a scan and is kept. Dropping is done with PyMuPDF redactions (text only: images and
drawings untouched) on the in-memory document; the file on disk is never changed."""

from __future__ import annotations

from dataclasses import dataclass

from vault_pipeline.pipeline.lazy import lazy_import

pymupdf = lazy_import("pymupdf")  # loaded on first use, not with the definitions

MIN_FONT_SIZE = 2.0  # points; footnote sub/superscripts are about 5 pt
WHITE = 0.95  # every colour component this light or lighter counts as white (paper colour)
RENDER_INVISIBLE = 3


@dataclass(frozen=True)
class Hidden:
    """Characters dropped, by why."""

    white: int = 0
    tiny: int = 0
    invisible: int = 0

    @property
    def total(self) -> int:
        return self.white + self.tiny + self.invisible


def is_white(color: tuple[float, ...] | None) -> bool:
    """Gray, RGB or CMYK colour that is (nearly) the colour of paper."""
    if not color:
        return False
    if len(color) == 4:  # CMYK: no ink
        return all(c <= 1 - WHITE for c in color)
    return all(c >= WHITE for c in color)


def _painted_rects(page: pymupdf.Page) -> list[pymupdf.Rect]:
    """Areas covered by images or non-white filled shapes (where white text is legible)."""
    rects = [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()]
    rects += [pymupdf.Rect(d["rect"]) for d in page.get_drawings()
              if d.get("fill") is not None and not is_white(d["fill"])]
    return rects


def _over_paint(bbox: pymupdf.Rect, painted: list[pymupdf.Rect]) -> bool:
    # ``&`` builds a new rectangle (``Rect.intersect`` would shrink ``rect`` in place).
    return any((rect & bbox).get_area() >= 0.5 * bbox.get_area() for rect in painted)


def _hidden_spans(page: pymupdf.Page) -> tuple[list[tuple[str, dict]], bool]:
    """Spans to drop with the reason, and whether the page has any visible text."""
    hidden: list[tuple[str, dict]] = []
    visible = False
    for span in page.get_texttrace():
        if not span["chars"]:
            continue
        if span["type"] == RENDER_INVISIBLE:
            hidden.append(("invisible", span))
        elif span["opacity"] == 0 or (span["type"] == 0 and is_white(span["color"])):
            hidden.append(("white", span))
        elif span["size"] < MIN_FONT_SIZE:
            hidden.append(("tiny", span))
        else:
            visible = True
    return hidden, visible


def drop_hidden_text(doc: pymupdf.Document) -> Hidden:
    """Redact hidden text on every page of ``doc`` (in memory); return what was dropped."""
    counts = {"white": 0, "tiny": 0, "invisible": 0}
    for page in doc:
        hidden, visible = _hidden_spans(page)
        if not hidden:
            continue
        painted: list[pymupdf.Rect] | None = None
        marked = False
        for reason, span in hidden:
            if reason == "invisible" and not visible:
                continue  # the OCR text layer of a scanned page
            if reason == "white":
                painted = _painted_rects(page) if painted is None else painted
                if _over_paint(pymupdf.Rect(span["bbox"]), painted):
                    continue
            for char in span["chars"]:
                page.add_redact_annot(_char_core(pymupdf.Rect(char[3])))
            counts[reason] += sum(1 for char in span["chars"] if chr(char[0]).strip())
            marked = True
        if marked:
            page.apply_redactions(images=pymupdf.PDF_REDACT_IMAGE_NONE,
                                  graphics=pymupdf.PDF_REDACT_LINE_ART_NONE,
                                  text=pymupdf.PDF_REDACT_TEXT_REMOVE)
    return Hidden(**counts)


def _char_core(bbox: pymupdf.Rect) -> pymupdf.Rect:
    """The middle of a character's box: redacting only that spares overlapping neighbours."""
    cx, cy = (bbox.x0 + bbox.x1) / 2, (bbox.y0 + bbox.y1) / 2
    dx, dy = max(bbox.width / 4, 0.01), max(bbox.height / 4, 0.01)
    return pymupdf.Rect(cx - dx, cy - dy, cx + dx, cy + dy)
