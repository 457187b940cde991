"""`vault report`: the overview as one self-contained HTML page (inline CSS and SVG charts,
nothing fetched), to open from disk, mail or attach to a ticket. Each chart has its figures
in a table under it, for copying and for screen readers."""

from __future__ import annotations

from html import escape
from pathlib import Path

from vault_pipeline.overview import charts
from vault_pipeline.overview.summary import Overview
from vault_pipeline.store.atomic import atomic_path

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #111827; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta { color: #6b7280; } .missing { color: #92400e; }
section { border-top: 1px solid #e5e7eb; }
details { margin: .3rem 0 1rem; } summary { cursor: pointer; color: #374151; }
table { border-collapse: collapse; margin-top: .4rem; }
td, th { padding: .15rem .8rem .15rem 0; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
svg { max-width: 100%; height: auto; }
"""


def _table(items: list[tuple[str, float]], label: str, percent: bool) -> str:
    rows = "".join(f"<tr><td>{escape(k)}</td><td class='n'>"
                   f"{f'{v:.2%}' if percent else f'{v:,}'}</td></tr>" for k, v in items)
    value = "rate" if percent else "rows"
    return (f"<details><summary>figures</summary><table><tr><th>{escape(label)}</th>"
            f"<th>{value}</th></tr>{rows}</table></details>")


def _section(title: str, svg: str, items: list[tuple[str, float]], label: str,
             note: str = "", percent: bool = False) -> str:
    note_html = f"<p class='meta'>{escape(note)}</p>" if note else ""
    return (f"<section><h2>{escape(title)}</h2>{note_html}{svg}"
            f"{_table(items, label, percent) if items else ''}</section>")


def render(overview: Overview) -> str:
    """The page, as text."""
    sections = [
        _section("Papers by year of first version",
                 charts.columns(overview.by_year, "Papers by year"), overview.by_year, "year",
                 f"{overview.papers:,} papers"),
        _section("Papers by primary category",
                 charts.bars(overview.by_category, "Papers by primary category"),
                 overview.by_category, "category"),
        _section("Split sizes", charts.bars(overview.splits, "Papers by split"),
                 overview.splits, "split",
                 f"cutoff {overview.cutoff}" if overview.cutoff else ""),
        _section("Document statuses", charts.bars(overview.documents, "Documents by status"),
                 overview.documents, "status"),
        _section("Leak and quarantine rates",
                 charts.bars(overview.integrity, "Integrity rates", percent=True),
                 overview.integrity, "rate", (f"integrity report of {overview.integrity_run}"
                                              if overview.integrity_run else ""),
                 percent=True),
    ]
    missing = (f"<p class='missing'>not built yet: {escape(', '.join(overview.missing))}</p>"
               if overview.missing else "")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>Research Idea Vault: {escape(overview.home)}</title>"
            f"<style>{STYLE}</style></head><body><h1>Research Idea Vault</h1>"
            f"<p class='meta'>{escape(overview.home)} · {escape(overview.built_at)}</p>"
            f"{missing}{''.join(sections)}</body></html>\n")


def write(overview: Overview, out: Path) -> Path:
    """Write the page atomically; return where."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        Path(tmp).write_text(render(overview), encoding="utf-8")
    return out
