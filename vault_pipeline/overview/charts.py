"""Bar charts as self-contained SVG text: no plotting library to import, no file beside the
page, the same picture in `vault report` and in the Dagster UI (as a data URI in Markdown).
Values are drawn to scale from zero; every bar carries its value, so nothing is read off an
axis."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape

FONT = "font-family='system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif'"
BAR = "#4c78a8"
MUTED = "#6b7280"


def _value(value: float, percent: bool) -> str:
    if percent:
        return f"{value:.1%}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _nothing_yet(top: int) -> str:
    """What an empty chart shows."""
    return f"<text x='8' y='{top + 14}' fill='{MUTED}' font-size='13' {FONT}>nothing yet</text>"


def bars(items: Sequence[tuple[str, float]], title: str, *, percent: bool = False,
         width: int = 640) -> str:
    """Horizontal bars, one per (label, value), in the given order (categories, rates)."""
    label_w = min(260, 12 + 7 * max((len(label) for label, _ in items), default=4))
    row, top = 22, 34
    height = top + row * max(len(items), 1) + 10
    top_value = max((v for _, v in items), default=0) or 1
    span = width - label_w - 80
    parts = [_open(width, height, title)]
    if not items:
        parts.append(_nothing_yet(top))
    for i, (label, value) in enumerate(items):
        y = top + i * row
        w = max(0.0, value / top_value * span)
        parts.append(
            f"<text x='{label_w - 8}' y='{y + 14}' text-anchor='end' font-size='12' {FONT}>"
            f"{escape(str(label))}</text>"
            f"<rect x='{label_w}' y='{y + 3}' width='{w:.1f}' height='{row - 6}' fill='{BAR}'>"
            f"<title>{escape(str(label))}: {_value(value, percent)}</title></rect>"
            f"<text x='{label_w + w + 6:.1f}' y='{y + 14}' font-size='12' fill='{MUTED}' "
            f"{FONT}>{_value(value, percent)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def columns(items: Sequence[tuple[str, float]], title: str, *, width: int = 640,
            height: int = 220) -> str:
    """Vertical columns in the given order (years along the axis, every label that fits)."""
    top, bottom, left = 34, 28, 8
    plot_h = height - top - bottom
    n = max(len(items), 1)
    step = (width - 2 * left) / n
    top_value = max((v for _, v in items), default=0) or 1
    every = max(1, round(40 / step))  # a label every ~40 px
    parts = [_open(width, height, title)]
    if not items:
        parts.append(_nothing_yet(top))
    for i, (label, value) in enumerate(items):
        x = left + i * step
        h = value / top_value * plot_h
        y = top + plot_h - h
        parts.append(
            f"<rect x='{x + step * 0.1:.1f}' y='{y:.1f}' width='{step * 0.8:.1f}' "
            f"height='{h:.1f}' fill='{BAR}'><title>{escape(str(label))}: "
            f"{_value(value, False)}</title></rect>")
        if len(items) <= 24 and value:
            parts.append(f"<text x='{x + step / 2:.1f}' y='{y - 3:.1f}' text-anchor='middle' "
                         f"font-size='10' fill='{MUTED}' {FONT}>{_value(value, False)}</text>")
        if i % every == 0:
            parts.append(f"<text x='{x + step / 2:.1f}' y='{height - 10}' "
                         f"text-anchor='middle' font-size='11' {FONT}>"
                         f"{escape(str(label))}</text>")
    parts.append(f"<line x1='{left}' x2='{width - left}' y1='{top + plot_h}' "
                 f"y2='{top + plot_h}' stroke='{MUTED}' stroke-width='1'/></svg>")
    return "".join(parts)


def _open(width: int, height: int, title: str) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(title)}'>"
            f"<text x='8' y='20' font-size='14' font-weight='600' {FONT}>"
            f"{escape(title)}</text>")


def markdown_image(svg: str, title: str) -> str:
    """The chart as Markdown the Dagster UI renders (an image with a data URI)."""
    data = base64.b64encode(svg.encode()).decode()
    return f"![{title}](data:image/svg+xml;base64,{data})"
