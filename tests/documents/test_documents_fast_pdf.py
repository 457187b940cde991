"""The fast structured PDF path: headings, reading order and cleaning on real papers (the
shared fixture PDFs, ``../shared/fixtures/pdfs`` next to the repository: their licenses are
the authors', so they are read in place, never copied here), and its pure helpers."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import SAMPLE
from vault_pipeline.documents.cleaning import clean_document, heading_title
from vault_pipeline.documents.convert import FAST, PDF, Settings, Task, convert_task
from vault_pipeline.documents.fast_layout import Block, Line
from vault_pipeline.documents.fast_pdf import converter_version as fast_version
from vault_pipeline.documents.fast_pdf import (
    join_lines,
    normalize_title,
    pdf_to_markdown_fast,
    reading_order,
    side_by_side,
)
from vault_pipeline.documents.fast_tables import Piece
from vault_pipeline.documents.outcome import OK
from vault_pipeline.documents.pdf import ALL, OFF, RULED

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "pdfs"
needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason="the real fixture papers (../shared/fixtures/pdfs next to "
                                  "the repository) are not on this machine")
FAST_SETTINGS = replace(Settings(), pdf_converter=FAST)


@cache
def markdown_of(name: str) -> str:
    return pdf_to_markdown_fast((FIXTURES / name).read_bytes()).markdown


def headings(markdown: str) -> set[str]:
    return {normalize_title(title) for line in markdown.split("\n")
            if line.startswith("#") and (title := heading_title(line))}


@needs_fixtures
@pytest.mark.parametrize("name", ["2203.00130v1.pdf", "2302.07302v1.pdf"])
def test_outline_top_level_titles_are_markdown_headings(name: str) -> None:
    with pymupdf.open(FIXTURES / name) as doc:
        top = [title for level, title, *_ in doc.get_toc() if level == 1]
    found = headings(markdown_of(name))
    missing = [title for title in top if normalize_title(title) not in found]
    assert len(top) >= 9 and len(missing) <= 1, missing


@needs_fixtures
def test_headings_from_fonts_without_an_outline() -> None:
    markdown = markdown_of("2020.acl-main.447.pdf")
    assert markdown.startswith("# S2ORC: The Semantic Scholar Open Research Corpus\n")
    for heading in ("## Abstract", "## 1 Introduction", "### 2.1 Processing PDFs",
                    "## References", "## A Background & Terminology"):
        assert f"\n{heading}\n" in markdown


@needs_fixtures
def test_two_column_reading_order_follows_the_columns() -> None:
    markdown = markdown_of("2020.acl-main.447.pdf")
    # A sentence continues on the next line of its column, not across the page.
    assert "Yet, existing corpora are not without their limitations. Some cover a small " \
        "number of papers" in markdown
    # A paragraph leaves the bottom of the left column for the top of the right one.
    left_end = markdown.index("Digital archives like arXiv")
    right_top = markdown.index("PubMed Central,3 CiteSeerX")
    next_left = markdown.index("Yet, existing corpora")
    assert left_end < right_top < next_left


@needs_fixtures
def test_fast_conversion_in_a_worker_cleans_and_splits(tmp_path: Path) -> None:
    task = Task("f" * 64, PDF, str(FIXTURES / "2020.acl-main.447.pdf"), str(tmp_path),
                FAST_SETTINGS)
    result = convert_task(task)
    assert result.status == OK, result.error
    assert "## 1 Introduction" in result.text and result.n_pages == 15
    assert "(Tang et al., 2008)" not in result.text and "Open Academic Graph" in result.text
    assert "\n*Figure 1: Inline citations and references to figures and tables are annotated" \
        in result.text  # a caption kept apart, marked as one
    assert "allenai.org" not in result.text  # the authors' addresses are not the body
    assert result.references and "Waleed Ammar" in result.references
    assert result.appendix and "PDF filters" in result.appendix
    assert "ﬁ" not in result.text and "limi- tations" not in result.text


def test_sample_pdf_converts_with_the_fast_path(tmp_path: Path) -> None:
    result = convert_task(Task("s" * 64, PDF, str(SAMPLE / "2204.08348v3.pdf"), str(tmp_path),
                               FAST_SETTINGS))
    assert result.status == OK, result.error
    assert "## 1 Introduction" in result.text
    assert "|features-service|18|1,688|" in result.text  # a grid table: each cell's border
    assert "RESTler" not in result.text and "RESTler" in result.references


def test_switching_the_converter_changes_the_attempt_key() -> None:
    fast, default = FAST_SETTINGS.converter(PDF), Settings(pdf_converter="pymupdf4llm")
    assert fast[0] == "pymupdf-fast" and default.converter(PDF)[0] == "pymupdf4llm"
    assert fast[1] != default.converter(PDF)[1]
    with pytest.raises(ValueError, match="pdf_converter"):
        Settings(pdf_converter="ocr")


def test_join_lines_repairs_line_end_hyphens_only() -> None:
    assert join_lines(["a repre-", "sentation of", "state-of-the-", "art work"]) == \
        "a representation of state-of-the-art work"
    assert join_lines(["see Section-", "Two"]) == "see Section- Two"


_words = st.text(alphabet="abcXY-", min_size=1, max_size=8)


@given(st.lists(st.lists(_words, min_size=1, max_size=5).map(" ".join), max_size=6))
def test_join_lines_keeps_every_letter_in_order(lines: list[str]) -> None:
    joined = join_lines(lines)

    def letters(text: str) -> str:
        return "".join(ch for ch in text if ch.isalpha())

    assert letters(joined) == letters("".join(lines))
    assert joined.count("-") >= sum(line.count("-") for line in lines) - len(lines)
    assert "\n" not in joined


_coordinate = st.floats(min_value=0, max_value=600, allow_nan=False)


@given(st.lists(st.tuples(_coordinate, _coordinate, _coordinate, _coordinate), max_size=30))
def test_reading_order_is_a_permutation(raw: list[tuple[float, float, float, float]]) -> None:
    boxes = [(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)) for x0, y0, x1, y1 in raw]
    assert sorted(reading_order(boxes, 600.0)) == list(range(len(boxes)))


def test_reading_order_two_columns_and_a_full_width_band() -> None:
    boxes = [(50, 100, 290, 200), (310, 100, 550, 200), (50, 210, 290, 300),
             (310, 210, 550, 300), (50, 320, 550, 400), (50, 420, 290, 500),
             (310, 420, 550, 500)]
    assert reading_order(boxes, 600.0) == [0, 2, 1, 3, 4, 5, 6]
    single = [(50, 100, 550, 200), (50, 210, 200, 230), (50, 240, 550, 300)]
    assert reading_order(single, 600.0) == [0, 1, 2]


@needs_fixtures
def test_booktabs_tables_are_markdown_tables_with_their_captions_apart() -> None:
    markdown = markdown_of("2023.eacl-main.121.pdf")
    assert "|Raw human evaluation data released|2 / 44|" in markdown
    assert "|Dataset|COARSE|FINE|\n|---|---|---|\n|SQuALITY|18.5|6.8|" in markdown
    # Two tables of one width stacked in a column: the caption between them stays text.
    assert not any(line.startswith("|Table 4:") for line in markdown.split("\n"))
    assert "|SuperPAL (2021)|0.61|0.68|0.77|" in markdown


@needs_fixtures
def test_a_line_under_a_subscript_is_not_merged_into_it() -> None:
    # "(Fsumm ∈ {0, 1...k}), ... def-" reaches down to the next line; its hyphen is joined.
    assert "based on the faithfulness definition provided earlier." in \
        markdown_of("2023.eacl-main.121.pdf")


@needs_fixtures
def test_citations_wrapped_over_lines_of_a_real_paper_are_dropped(tmp_path: Path) -> None:
    with pymupdf.open(FIXTURES / "2020.acl-main.447.pdf") as doc:
        plain = "\n".join(page.get_text() for page in doc)
    assert "(Teufel et al., 2006; Qazvinian and\nRadev, 2008;" in plain  # wrapped in the PDF
    assert "(Saier and F¨arber, 2020)" in plain  # an accent drawn as its own glyph
    result = convert_task(Task("w" * 64, PDF, str(FIXTURES / "2020.acl-main.447.pdf"),
                               str(tmp_path), FAST_SETTINGS))
    assert "citation context-based paper summarization." in result.text
    assert "Qazvinian" not in result.text and "(Saier and" not in result.text
    assert "Saier and Färber derived from arXiv" in result.text  # narrative: names kept


def test_each_table_mode_has_its_own_version() -> None:
    versions = {fast_version(mode) for mode in (RULED, ALL, OFF)}
    assert len(versions) == 3


def test_loading_the_definitions_does_not_load_pymupdf() -> None:
    """PyMuPDF (about a third of a second) is loaded by the first conversion, not by every
    `vault materialize` or code-server start."""
    import subprocess
    import sys

    code = ("import sys, vault_pipeline.definitions\n"
            "print('LOADED' if 'pymupdf.mupdf' in sys.modules else 'LIGHT')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-1] == "LIGHT"


def _journal_pdf() -> bytes:
    """Four pages in a journal's dress: a running header, a banner with the journal's web
    address, a rotated arXiv stamp in the margin, page numbers, a drop cap, a run-in heading
    in capitals, a ``Downloaded from`` footer and a caption."""
    doc = pymupdf.open()
    words = ["the", "model", "is", "trained", "on", "the", "data", "and", "tested", "on",
             "held", "out", "papers"]
    for number in range(4):
        page = doc.new_page()
        page.insert_text((72, 40), "Original article", fontsize=9)
        page.insert_text((300, 40), "www.journal.example.org", fontsize=9)
        page.insert_text((300, 770), str(number + 1), fontsize=9)
        page.insert_text((72, 770), f"Downloaded from https://journal.example.org/{number} "
                                    "by guest", fontsize=7)
        page.insert_text((30, 600), "arXiv:0908.0001v1 [astro-ph.CO] 1 Aug 2009",
                         fontsize=12, rotate=90)
        y = 120.0
        if number == 0:
            page.insert_text((72, 90), "A Study of Things Set in Print", fontsize=18)
            page.insert_text((72, 150), "O", fontsize=30)
            page.insert_text((95, 132), "ver the past decade, models grew in size.", fontsize=10)
            page.insert_text((95, 146), "They now read whole papers at once.", fontsize=10)
            y = 180.0
        if number == 1:
            page.insert_text((72, y), "METHODS", fontsize=10, fontname="hebo")
            page.insert_text((125, y), "We performed a search of the literature.", fontsize=10)
            y += 14
            page.insert_text((72, y + 10), "Figure 1: The search, step by step.", fontsize=9)
            y += 40
        for i in range(12):
            page.insert_text((72, y), " ".join(words[(i + number) % 5:]) + ".", fontsize=10)
            y += 14
    return doc.tobytes()


def test_furniture_drop_caps_and_run_in_headings_in_a_journal_layout() -> None:
    markdown = pdf_to_markdown_fast(_journal_pdf()).markdown
    for furniture in ("Original article", "www.journal", "Downloaded from", "arXiv:0908"):
        assert furniture not in markdown, furniture
    assert "\n4\n" not in markdown and not markdown.startswith("1\n")
    assert "Over the past decade, models grew in size." in markdown  # the drop cap rejoined
    assert "# O\n" not in markdown
    assert "\n## METHODS\n\nWe performed a search of the literature." in markdown
    cleaned = clean_document(markdown).text
    assert "\n*Figure 1: The search, step by step.*\n" in cleaned


def test_a_row_labelled_table_is_no_caption() -> None:
    from vault_pipeline.documents.fast_pdf import _CAPTION, _TABLE_CAPTION

    assert _TABLE_CAPTION.match("Table 3: Evaluating CoreRecipe") and _CAPTION.match("Fig. 2.")
    assert _CAPTION.match("Table 12 Results by model")
    assert not _TABLE_CAPTION.match("Table 97.3 58.6 73.2") and not _CAPTION.match("Table 1.5 2")


def test_a_paragraph_cut_after_a_function_word_runs_on() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "The mass is measured in the", fontsize=10)
    page.insert_text((72, 160), "H channel of the two detectors.", fontsize=10)
    page.insert_text((72, 220), "A new paragraph starts here.", fontsize=10)
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    assert "The mass is measured in the H channel of the two detectors.\n\nA new" in markdown


def test_a_paragraph_runs_on_past_the_footnotes_of_its_page() -> None:
    doc = pymupdf.open()
    first = doc.new_page()
    for k in range(12):
        first.insert_text((72, 100 + 14 * k), "The body text of the first page goes on here.",
                          fontsize=10)
    first.insert_text((72, 280), "The coherence of the condensate is thus", fontsize=10)
    first.insert_text((72, 700), "1This is the first author footnote.", fontsize=7)
    second = doc.new_page()
    second.insert_text((72, 100), "effectively broken by the escaping photons.", fontsize=10)
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    assert "condensate is thus effectively broken by the escaping photons." in markdown
    assert "1This is the first author footnote." in markdown


def test_a_drafts_line_numbers_are_not_glued_to_its_lines() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    for k in range(8):
        page.insert_text((60, 100 + 14 * k), f"Line {'abcdefgh'[k]} of the running text.",
                         fontsize=10)
        page.insert_text((24, 100 + 14 * k), str(26 + k), fontsize=5)
    page.insert_text((60, 240), "1. INTRODUCTION", fontsize=10, fontname="hebo")
    page.insert_text((24, 240), "34", fontsize=5)
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    assert any(line.startswith("#") and line.endswith(" 1. INTRODUCTION")
               for line in markdown.split("\n"))
    assert not any(str(n) in markdown for n in range(26, 35))


def test_a_sections_first_words_in_small_capitals_are_no_second_heading() -> None:
    """jmlr sets ``5 Floats`` and then the section's first word, ``Floats,``, in the
    heading's font: the outline's ``Floats`` matches it, but the sentence goes on in
    lowercase; an appendix heading and a lone ``References`` are headings."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "1 Introduction", fontsize=12, fontname="hebo")
    page.insert_text((72, 100), "We study things in print and in the wild here.", fontsize=10)
    page.insert_text((72, 130), "2 Floats", fontsize=12, fontname="hebo")
    page.insert_text((72, 150), "Floats,", fontsize=10, fontname="hebo")
    page.insert_text((72, 164), "such as figures, are moving objects of the page.", fontsize=10)
    page.insert_text((72, 200), "Appendix A. First Appendix", fontsize=12, fontname="hebo")
    page.insert_text((72, 220), "This is the first appendix of the paper.", fontsize=10)
    doc.set_toc([[1, "1 Introduction", 1, 70], [1, "2 Floats", 1, 120],
                 [1, "First Appendix", 1, 190]])
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    titles = [line for line in markdown.split("\n") if line.startswith("#")]
    assert "## 2 Floats" in titles and not any("Floats," in t for t in titles)
    assert any(t.endswith("Appendix A. First Appendix") for t in titles)
    assert "such as figures" in markdown


def test_a_publishers_statement_mostly_furniture_goes_as_a_whole() -> None:
    """IJDC's first-page foot: a three-line statement whose last two lines carry the
    publisher, ISSN and web address, over the journal's footer at the page's edge."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "A Title of the Paper Here", fontsize=18)
    for i in range(10):
        page.insert_text((72, 120 + 14 * i), "The body of the paper says what it does here.",
                         fontsize=10)
    for y, text in ((717, "The Journal of Examples is an international journal committed to"),
                    (728, "the advancement of examples. It is published by the University"),
                    (739, "of Somewhere. ISSN: 1746-8256. URL: http://www.ex.net/"),
                    (762, "Copyright rests with the authors, under a Creative Commons licence."),
                    (773, "For details please see http://creativecommons.org/licenses/by/4.0/"),
                    (800, "Journal of Examples 2020, Vol. 1, Iss. 1, 1-4.")):
        page.insert_text((72, y), text, fontsize=8)
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    assert "The body of the paper" in markdown
    assert "committed to" not in markdown and "ISSN" not in markdown


def heading_lines(doc: pymupdf.Document) -> list[str]:
    """The Markdown heading lines the fast path makes of ``doc``."""
    return [line for line in pdf_to_markdown_fast(doc.tobytes()).markdown.split("\n")
            if line.startswith("#")]


def _body(page: pymupdf.Page, y: float, lines: int = 4, text: str = "") -> float:
    for k in range(lines):
        page.insert_text((72, y), text or f"The running text of the paper goes on, line {k}.",
                         fontsize=10)
        y += 14
    return y + 10


def test_numbered_bold_headings_a_size_smaller_are_headings_with_their_next_line() -> None:
    """REVTeX sets ``II. MATH AND EQUATIONS`` bold and a size below the body, and breaks a
    long one over two lines in its font (``THE LINE BREAK WAS FORCED``)."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = _body(page, 80)
    page.insert_text((72, y), "I. FIRST-LEVEL HEADING:", fontsize=9, fontname="hebo")
    page.insert_text((72, y + 11), "THE LINE BREAK WAS FORCED via", fontsize=9, fontname="hebo")
    y = _body(page, y + 30)
    page.insert_text((72, y), "II. MATH AND EQUATIONS", fontsize=9, fontname="hebo")
    _body(page, y + 20)
    titles = heading_lines(doc)
    assert any(t.endswith("I. FIRST-LEVEL HEADING: THE LINE BREAK WAS FORCED via")
               for t in titles), titles
    assert any(t.endswith("II. MATH AND EQUATIONS") for t in titles), titles


def test_a_drop_cap_set_in_its_headings_block_is_rejoined() -> None:
    """ASAE's ``Introduction`` over a drop cap ``T`` that MuPDF puts in the heading's block:
    the letter opens ``his document ...``, and the heading stays a heading."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "A Title of the Paper Here", fontsize=18)
    page.insert_text((72, 130), "Introduction", fontsize=14, fontname="hebo")
    page.insert_text((72, 170), "T", fontsize=30)
    page.insert_text((94, 150), "his document, when compared to source code, instructs.",
                     fontsize=10)
    page.insert_text((94, 164), "someone on the use of a style file for writing papers.",
                     fontsize=10)
    _body(page, 190)
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    assert "## Introduction" in markdown.split("\n")
    assert "This document, when compared" in markdown


def test_a_large_capitals_heading_over_lowercase_text_is_a_heading() -> None:
    """``CONCLUSION`` set larger than the body over ``this is the paragraph ...``: only a
    heading in the body's size can be a sentence's first words (jmlr)."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "A Title of the Paper Here", fontsize=18)
    page.insert_text((72, 120), "INTRODUCTION", fontsize=12, fontname="hebo")
    y = _body(page, 140)
    page.insert_text((72, y), "FIRST MAIN TOPIC", fontsize=12, fontname="hebo")
    y = _body(page, y + 20)
    page.insert_text((72, y), "CONCLUSION", fontsize=12, fontname="hebo")
    _body(page, y + 20, 2, "this is the paragraph of the conclusion, in lowercase.")
    titles = heading_lines(doc)
    assert {"## INTRODUCTION", "## FIRST MAIN TOPIC", "## CONCLUSION"} <= set(titles), titles


def test_an_outline_heading_is_kept_where_only_a_code_line_opens_with_its_title() -> None:
    """ijsra sets ``caption`` in the margin, where MuPDF reads no line; the outline adds it.
    A code listing's ``1 \\captionof{table}`` further down the page is not that heading."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "1 Figures", fontsize=12, fontname="hebo")
    y = _body(page, 100)
    y = _body(page, y, 2, "If you have a table saved as a figure, change the caption.")
    page.insert_text((72, y), "1 \\captionof{table}{Put the caption here.}", fontsize=8,
                     fontname="cour")
    _body(page, y + 20)
    # An outline's destination counts up from the page's foot.
    doc.set_toc([[1, "1 Figures", 1, page.rect.height - 70],
                 [1, "caption", 1, page.rect.height - (y - 40)]])
    titles = heading_lines(doc)
    assert "## caption" in titles, titles


def test_a_contents_page_and_an_option_named_like_a_section_are_no_headings() -> None:
    """The contents page lists ``3 Conclusion`` (which the outline puts two pages on), and an
    option list names ``bibliography`` before the section ``2 Bibliography``: neither is a
    heading there, so the body is not cut at a conclusion or a bibliography too early."""
    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((72, 80), "Contents", fontsize=14, fontname="hebo")
    first.insert_text((72, 110), "1 Introduction", fontsize=10, fontname="hebo")
    first.insert_text((72, 140), "3 Conclusion", fontsize=10, fontname="hebo")
    first.insert_text((72, 180), "1 Introduction", fontsize=14, fontname="hebo")
    y = _body(first, 200)
    first.insert_text((72, y), "bibliography", fontsize=10, fontname="hebo")
    _body(first, y + 14, 2, "The option keeps the bibliography package from being loaded.")
    second = doc.new_page()
    second.insert_text((72, 80), "2 Bibliography", fontsize=14, fontname="hebo")
    _body(second, 100)
    third = doc.new_page()
    third.insert_text((72, 80), "3 Conclusion", fontsize=14, fontname="hebo")
    _body(third, 100, 3, "We conclude the documentation of the package here.")
    doc.set_toc([[1, "Contents", 1], [1, "1 Introduction", 1], [1, "2 Bibliography", 2],
                 [1, "3 Conclusion", 3]])
    markdown = pdf_to_markdown_fast(doc.tobytes()).markdown
    titles = [line for line in markdown.split("\n") if line.startswith("#")]
    assert titles.count("## 3 Conclusion") == 1 and titles.index("## 3 Conclusion") > \
        titles.index("## 2 Bibliography"), titles
    assert not any(t.endswith(" bibliography") for t in titles), titles
    assert "keeps the bibliography package" in clean_document(markdown).text


def test_a_headings_last_word_set_as_a_block_of_its_own_stays_in_it() -> None:
    """REVTeX centres ``IV. FLOATS: FIGURES, TABLES, VIDEOS,`` over ``ETC.``, which MuPDF
    reads as a block of its own: the heading is both lines, a capitals ``ETC.`` no item."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "A Title of the Paper Here", fontsize=18)
    page.insert_text((72, 100), "I. INTRODUCTION", fontsize=9, fontname="hebo")
    y = _body(page, 120)
    page.insert_text((72, y), "II. FLOATS: FIGURES, TABLES, VIDEOS,", fontsize=9,
                     fontname="hebo")
    page.insert_text((150, y + 11), "ETC.", fontsize=9, fontname="hebo")
    _body(page, y + 30)
    titles = heading_lines(doc)
    assert any(t.endswith("II. FLOATS: FIGURES, TABLES, VIDEOS, ETC.") for t in titles), titles


def test_a_citation_mark_after_a_heading_is_no_part_of_it() -> None:
    """ASME's ``6.1 The newtxmath and mathalpha Packages [10, 11]``: the heading is the
    outline's title; the mark cites."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "6 More on Math", fontsize=12, fontname="hebo")
    y = _body(page, 100)
    page.insert_text((72, y), "6.1 The newtxmath and mathalpha Packages [10, 11]", fontsize=10,
                     fontname="hebo")
    _body(page, y + 20)
    doc.set_toc([[1, "6 More on Math", 1], [2, "6.1 The newtxmath and mathalpha Packages", 1]])
    titles = heading_lines(doc)
    assert "### 6.1 The newtxmath and mathalpha Packages" in titles, titles


def test_a_footnote_mark_set_small_after_a_heading_is_no_part_of_it() -> None:
    """ASME's ``5. REFERENCE FORMATTING WITH asmeconf.bst`` and a small raised ``3``: the
    heading is the outline's, without the mark."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "1. INTRODUCTION", fontsize=9, fontname="hebo")
    y = _body(page, 100)
    title = "2. REFERENCE FORMATTING WITH STYLES"
    page.insert_text((72, y), title, fontsize=9, fontname="hebo")
    width = pymupdf.get_text_length(title, fontname="hebo", fontsize=9)
    page.insert_text((72 + width + 0.5, y - 3), "3", fontsize=6, fontname="helv")
    _body(page, y + 20)
    doc.set_toc([[1, "1 Introduction", 1], [1, "2 Reference Formatting with Styles", 1]])
    titles = heading_lines(doc)
    assert "## 2. REFERENCE FORMATTING WITH STYLES" in titles, titles


def test_captions_set_side_by_side_are_two_captions() -> None:
    """PTP sets ``Fig. 2. ...`` and ``Fig. 3. ...`` under two figures side by side, on one
    baseline: two caption paragraphs, not one."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = _body(page, 80)
    page.insert_text((100, y + 20), "Fig. 2. The first figure on the left.", fontsize=9)
    page.insert_text((330, y + 20), "Fig. 3. The second figure on the right.", fontsize=9)
    _body(page, y + 50)
    paragraphs = pdf_to_markdown_fast(doc.tobytes()).markdown.split("\n\n")
    assert "Fig. 2. The first figure on the left." in paragraphs, paragraphs
    assert "Fig. 3. The second figure on the right." in paragraphs, paragraphs


def test_side_by_side_captions_lose_no_piece() -> None:
    """Every piece of a caption block goes to one of the two captions, even one that
    straddles where the second caption starts."""
    first = Line("Fig. 2. The first Fig. 3. The second", 9.0, False, (100, 100, 420, 109),
                 pieces=(Piece(100, 100, 130, 109, "Fig. 2."),
                         Piece(135, 100, 200, 109, "The first"),
                         Piece(330, 100, 360, 109, "Fig. 3."),
                         Piece(365, 100, 420, 109, "The second")))
    straddling = Line("long words", 9.0, False, (150, 111, 340, 120),
                      pieces=(Piece(150, 111, 340, 120, "long words"),))
    captions = side_by_side(Block([first, straddling], (100, 100, 420, 120)))
    assert captions[0].startswith("Fig. 2.") and captions[1].startswith("Fig. 3.")
    assert "long words" in " ".join(captions)
