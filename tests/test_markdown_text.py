"""Metadata in Markdown and HTML outputs reads as text: rendered as GitHub would (CommonMark
with raw HTML allowed, GFM tables, by markdown-it-py), a value is one cell holding exactly
that text, and no tag of its own survives."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import vault_pipeline.markdown_text as md
from vault_pipeline.datasets.card import data_card
from vault_pipeline.datasets.card_facts import CardFacts
from vault_pipeline.evalruns.render import Table, Text, markdown, to_html
from vault_pipeline.evalsets.cards import _nested_table
from vault_pipeline.overview.html import render
from vault_pipeline.overview.summary import Overview
from vault_pipeline.store.sql_output import markdown as sql_markdown

HOSTILE = "<script>alert('l')</script>"
TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}


class _Page(HTMLParser):
    """The tags of a rendered page and the text of each table cell."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._cell = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag in ("td", "th"):
            self.cells.append("")
            self._cell = True

    def handle_endtag(self, tag: str) -> None:
        self._cell = self._cell and tag not in ("td", "th")

    def handle_data(self, data: str) -> None:
        if self._cell:
            self.cells[-1] += data


def rendered(text: str) -> _Page:
    page = _Page()
    page.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(text))
    page.close()
    return page


def _as_shown(value: str) -> str:
    """What a cell may differ by: its line breaks and runs of spaces (one line, trimmed),
    and NUL, which CommonMark shows as U+FFFD."""
    return " ".join(md._BREAKS.sub(" ", value).replace("\0", "\ufffd").split())


@settings(max_examples=300)
@given(st.text())
def test_any_text_is_one_cell_of_exactly_that_text(value: str) -> None:
    page = rendered(md.table(("h",), [(value,)]))
    assert set(page.tags) <= TABLE_TAGS
    assert len(page.cells) == 2
    assert " ".join(page.cells[1].split()) == _as_shown(value)


@settings(max_examples=200)
@given(st.text())
def test_inline_text_and_code_make_no_markup(value: str) -> None:
    for made in (md.text(value), md.code(value)):
        page = rendered(f"before {made} after")
        assert set(page.tags) <= {"p", "code"}, (value, made)


def _manifest() -> dict:
    return {"files": [{"path": "gap_finder/train.parquet", "bytes": 10, "table": "x"}],
            "provenance": {"index": {"embedder": "<b>bold</b>"},
                           "split_classifier": [{"classifier": "rules"}]},
            "cutoff": "2025-01-01", "seed": 7, "project_version": "0.1.0",
            "created_at": "2026-12-01T00:00:00Z",
            "evaluation": {"excluded_from_training": ["<i>2401.00001</i>"]}}


def _facts(license_value: str) -> CardFacts:
    """An export's facts whose metadata (model, prompt version, license) is hostile."""
    return CardFacts(rows={"gap_finder/train": 1, "splits": 3},
                     sizes={"gap_finder/train.parquet": 10}, split_counts={"vault": 3},
                     views=[{"views_backend": "openai", "views_model": HOSTILE,
                             "views_prompt_version": "v1|v2", "rows": 1}],
                     licenses=[{"license": license_value, "rows": 3}], evaluation_marked=1)


def test_a_card_never_carries_markup_from_the_metadata() -> None:
    card = data_card(_manifest(), _facts(f"| {HOSTILE} |"))
    assert "<script" not in card and "<b>" not in card and "<i>" not in card
    page = rendered(card.split("---", 2)[2])  # without the YAML header
    assert "script" not in page.tags and "b" not in page.tags and "i" not in page.tags
    assert f"| {HOSTILE} |" in page.cells  # the license reads as written, in one cell
    assert HOSTILE in page.cells and "v1|v2" in page.cells


def test_eval_tables_and_cards_escape_their_cells() -> None:
    blocks = [Table(["model"], [[HOSTILE]]), Text("plain")]
    assert "<script" not in markdown(blocks, lambda f: f.name)
    assert "<script" not in to_html(blocks, "t")
    nested = _nested_table("Labels by venue", {"ICLR|2025": {HOSTILE: 3}})
    page = rendered(nested)
    assert "script" not in page.tags and f"ICLR|2025 / {HOSTILE}" in page.cells


def test_sql_markdown_escapes_cells() -> None:
    out = sql_markdown(["title", "authors"], [(HOSTILE, ["a|b", "c"])])
    page = rendered(out)
    assert "script" not in page.tags
    assert page.cells == ["title", "authors", HOSTILE, '["a|b", "c"]']


def test_the_report_page_escapes_every_value() -> None:
    overview = Overview(home=HOSTILE, built_at="now", papers=1, by_year=[("2025", 1)],
                        by_category=[(HOSTILE, 1)], splits=[], documents=[], integrity=[],
                        integrity_run=HOSTILE, cutoff=HOSTILE, missing=[HOSTILE])
    assert "<script" not in render(overview)
