"""Heading rules of the fast PDF path: numbering, capitals, fonts, run-in headings, the
sequence of section numbers, and author blocks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.documents.fast_headings import (
    Numbering,
    Styles,
    is_author_block,
    is_caps,
    numbering,
    split_heading,
)
from vault_pipeline.documents.fast_layout import Block, Line, Run

BODY = "Times-Roman"


def _line(text: str, size: float = 10.0, bold: bool = False, font: str = BODY,
          runs: tuple[Run, ...] = ()) -> Line:
    return Line(text=text, size=size, bold=bold, bbox=(72, 100, 300, 110), font=font,
                runs=runs or (Run(text, bold, font, size),))


STYLES = Styles(body=10.0, title=16.0, outline={}, body_font=BODY)


def test_numbering_patterns_give_depths() -> None:
    assert numbering("2.1 Data sets") == (2, "Data sets")
    assert numbering("3. Method") == (1, "Method")
    assert numbering("IV. EXPERIMENTS") == (1, "EXPERIMENTS")
    assert numbering("B. Ablations") == (2, "Ablations")
    assert numbering("A Proofs") == (1, "Proofs")
    assert numbering("B.2 More proofs") == (2, "More proofs")
    assert numbering("1 the result holds") is None  # lowercase: a sentence
    assert numbering("2019 was a good year") is None


def test_capitals_and_own_fonts_make_body_size_headings() -> None:
    assert STYLES.is_heading_line(_line("1. INTRODUCTION"))  # AASTeX: caps, numbered
    assert STYLES.is_heading_line(_line("A. Data", font="Times-Italic"))  # IEEE
    assert not STYLES.is_heading_line(_line("A. Data"))
    assert not STYLES.is_heading_line(_line("We describe the data in turn."))
    assert is_caps("II. THE MODEL") and not is_caps("NLP in Practice")


def test_a_run_in_heading_is_split_from_its_paragraph() -> None:
    bold = _line("METHODS Search strategy and selection were done by two of us.",
                 runs=(Run("METHODS ", True, "Times-Bold", 10.0),
                       Run("Search strategy and selection were done by two of us.", False,
                           BODY, 10.0)))
    head, rest = split_heading(Block([bold, _line("More text.")], (72, 100, 300, 120)),
                               STYLES)
    assert [h.text for h in head] == ["METHODS"]
    assert rest[0].text.startswith("Search strategy") and len(rest) == 2
    caps = _line("V. CONCLUSION While the majority of cases fail, some hold.")
    head, rest = split_heading(Block([caps], caps.bbox), STYLES)
    assert [h.text for h in head] == ["V. CONCLUSION"] and rest[0].text.startswith("While")
    plain = _line("We performed a search of the literature.")
    assert split_heading(Block([plain], plain.bbox), STYLES) == ([], [plain])


def test_an_outline_title_opening_a_paragraph_is_its_heading() -> None:
    styles = Styles(body=10.0, title=16.0, outline={"1introduction": 1}, body_font=BODY,
                    bare={"introduction": 1})
    line = _line("1. Introduction Over the past decade, models grew.")
    head, rest = split_heading(Block([line], line.bbox), styles)
    assert [h.text for h in head] == ["1. Introduction"]
    assert rest[0].text == "Over the past decade, models grew."
    assert styles.level("Introduction", 10.0, False) == 2


def test_section_numbers_out_of_sequence_are_labels() -> None:
    seen = Numbering()
    assert not seen.accepts("7 ATLAS and CMS")  # a figure's label before any section
    assert seen.accepts("1 Introduction")
    seen.saw("1 Introduction")
    assert seen.accepts("2 Method") and seen.accepts("3 Results")  # one may be missed
    seen.saw("2 Method")
    assert not seen.accepts("65 INFN") and not seen.accepts("H ZZ")


def test_author_blocks_are_not_prose() -> None:
    def block(*texts: str) -> Block:
        return Block([_line(t) for t in texts], (72, 100, 300, 140))
    assert is_author_block(block("Yusuke Shinyama Satoshi Sekine"))
    assert is_author_block(block("D. E. Trilling,1, 2, 3, ∗F. Valdes,4 L. Allen,4"))
    assert is_author_block(block("Department of Physics, Chalmers University of Technology"))
    assert not is_author_block(block("Abstract"))
    assert not is_author_block(block("1 Introduction"))
    assert not is_author_block(block("We provide an interpretation of the recent excess in "
                                     "terms of a class of models."))


@given(st.text(max_size=80))
def test_heading_rules_never_fail_on_any_text(text: str) -> None:
    numbering(text)
    is_caps(text)
    Numbering().accepts(text)
    STYLES.level(text, 10.0, False) if text else None


def test_a_numbered_row_of_a_matrix_is_no_heading() -> None:
    assert numbering("1 ¹)) · · · 0 0 É(r(y, x¦¹))") is None
    assert numbering("4 Results (2019–2020)") == (1, "Results (2019–2020)")
    assert numbering("2 AI") == (1, "AI")


def test_a_bold_line_opening_with_an_outline_title_is_cut_after_it() -> None:
    """AMS styles run a bold numbered title into its paragraph, the whole line bold."""
    styles = Styles(body=10.0, title=16.0, outline={"81boldversionsofspecialsymbols": 2},
                    body_font=BODY, bare={"boldversionsofspecialsymbols": 2})
    line = _line("8.1. Bold versions of special symbols. In the amsmath package", bold=True)
    head, rest = split_heading(Block([line], line.bbox), styles)
    assert [h.text for h in head] == ["8.1. Bold versions of special symbols"]
    assert rest[0].text == "In the amsmath package"


def test_a_number_set_as_large_as_the_title_is_no_title() -> None:
    """ACM sets the article number (``111``) on the first page in the title's size."""
    assert STYLES.level("111", 16.0, True) is None
    assert STYLES.level("The Name of the Title Is Hope", 16.0, True) == 1


def test_appendix_headings_match_their_outline_entries() -> None:
    styles = Styles(body=10.0, title=16.0, outline={"firstappendix": 1,
                                                    "aincompletezetafunction": 1},
                    body_font=BODY, bare={"firstappendix": 1, "aincompletezetafunction": 1})
    assert styles.outlined("Appendix A. First Appendix") == 1
    assert styles.outlined("Appendix A: Incomplete Zeta Function [27]") == 1
    assert styles.outlined("APPENDIX A: INCOMPLETE ZETA FUNCTION") == 1
    assert styles.outlined("Appendix B: Language Support") is None
    assert numbering("APPENDIX B: JOURNAL ABBREVIATIONS") == (1, "JOURNAL ABBREVIATIONS")
    assert numbering("Appendix A describes the data") is None  # a sentence


def test_references_alone_in_its_block_is_a_heading_whatever_its_font() -> None:
    line = _line("References")
    head, rest = split_heading(Block([line], line.bbox), STYLES)
    assert [h.text for h in head] == ["References"] and rest == []
    assert STYLES.level("References", 10.0, False) == 3
    sentence = _line("References are listed at the end.")
    assert split_heading(Block([sentence], sentence.bbox), STYLES) == ([], [sentence])


def test_a_footnote_mark_glued_to_a_run_in_outline_title_is_cut_off() -> None:
    styles = Styles(body=10.0, title=16.0, outline={"57versionnumber": 2}, body_font=BODY,
                    bare={"versionnumber": 2})
    line = _line("5.7 Version Number4. The version field may be used with a book.")
    head, rest = split_heading(Block([line], line.bbox), styles)
    assert [h.text for h in head] == ["5.7 Version Number"]
    assert rest[0].text.startswith("The version field")


def test_references_with_a_colon_over_its_first_entry_is_a_heading() -> None:
    lines = [_line("References:"), _line("Anderson, T. 1997. Kierkegaard. Macon: Mercer.")]
    head, rest = split_heading(Block(lines, lines[0].bbox), STYLES)
    assert [h.text for h in head] == ["References:"] and len(rest) == 1
    assert STYLES.level("References:", 10.0, False) == 3


def test_a_macro_written_out_is_no_heading_even_where_the_outline_names_its_word() -> None:
    """A manual's ``\\bibliography`` line under ``2.5 Bibliography``: not a second heading,
    which would cut the section's text off as a reference list."""
    styles = Styles(body=10.0, title=16.0, outline={"25bibliography": 2}, body_font=BODY,
                    bare={"bibliography": 2})
    assert styles.level("\\bibliography", 10.0, False) is None
    assert styles.level("2.5 Bibliography", 12.0, False) == 3
