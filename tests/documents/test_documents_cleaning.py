"""Cleaning shared by the PDF and LaTeX paths: what a reader of the cleaned text checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.documents.cleaning import (
    clean_document,
    compose_accents,
    drop_citation_markers,
    drop_table_citations,
    mark_captions,
    split_parts,
    truncate,
)

PAPER = """# A Title

_Preprint. Under review._

## **1 Introduction**

Models fail on shifted data [3]. Prior work tried augmentation [1, 4-6] and
adaptation (Smith et al., 2020; Lee and Park, 2019a). As Chen et al. (2021) show, it is hard.
The interval [0, 1] and the value x ∈ [0.5, 2] stay.

12

Figure 2: Accuracy of every model on every data set.

_Preprint. Under review._

## 2 Method

| Model | Score |
|---|---|
| A [1] | 0.9 |

Table 1. Results of the comparison.

_Preprint. Under review._

## References

[1] A. Author. A paper. 2020.

[2] B. Author. Another. 2021.

## A Proofs

Proof of the lemma.
"""


def test_references_and_appendix_are_split_off_not_lost() -> None:
    cleaned = clean_document(PAPER)
    assert "## 1 Introduction" in cleaned.text and "## 2 Method" in cleaned.text
    assert "A. Author" not in cleaned.text and "Proof of the lemma" not in cleaned.text
    assert cleaned.references is not None and "[1] A. Author. A paper. 2020." in cleaned.references
    assert cleaned.appendix is not None and "Proof of the lemma." in cleaned.appendix


def test_headers_line_numbers_and_citations_are_dropped_captions_kept() -> None:
    text = clean_document(PAPER).text
    assert "\n*Figure 2: Accuracy of every model on every data set.*\n" in text
    assert text.endswith("*Table 1. Results of the comparison.*") or \
        "\n*Table 1. Results of the comparison.*\n" in text
    assert "Preprint" not in text
    assert "\n12\n" not in text
    assert "[3]" not in text and "[1, 4-6]" not in text and "Smith et al., 2020" not in text
    assert "Models fail on shifted data. Prior work tried augmentation and" in text
    assert "As Chen et al. show" in text
    assert "[0, 1]" in text and "[0.5, 2]" in text  # intervals are not citations
    assert "| A [1] | 0.9 |" in text  # table rows untouched


def test_truncation_records_full_length() -> None:
    body = "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(200))
    cleaned = clean_document(body, max_chars=1_000)
    assert cleaned.truncated and len(cleaned.text) <= 1_000
    assert cleaned.n_chars > 30_000
    assert clean_document("Short text.", max_chars=1_000).truncated is False


def test_appendix_heading_before_references() -> None:
    parts = split_parts("Body\n## Appendix\nExtra\n## References\n[1] X")
    assert parts["body"].strip() == "Body"
    assert "Extra" in parts["appendix"] and "[1] X" in parts["references"]


def _kept_whole(cut: str, text: str) -> bool:
    """A prefix of the text, or a prefix then a verbatim section of it further on."""
    if text.startswith(cut):
        return True
    head, _, section = cut.partition("\n\n## ")
    while section and not (text.startswith(head) and f"## {section}" in text):
        more, _, section = section.partition("\n\n## ")
        head = f"{head}\n\n## {more}"
    return bool(section)


_SECTIONED = st.lists(st.tuples(st.sampled_from(["Introduction", "Method", "Results",
                                                 "Related work", "Background", "Discussion"]),
                                st.text(alphabet="ab .\n", max_size=300)), max_size=8)


@given(st.text(max_size=2_000), st.integers(min_value=1, max_value=500))
def test_truncate_never_exceeds_the_limit(text: str, limit: int) -> None:
    cut, truncated = truncate(text, limit)
    assert len(cut) <= limit
    assert truncated == (len(text) > limit)
    assert _kept_whole(cut, text)


@given(_SECTIONED, st.integers(min_value=40, max_value=1_500))
def test_truncate_of_sectioned_text_keeps_verbatim_parts(sections, limit: int) -> None:
    text = "\n\n".join(f"## {name}\n\n{body}" for name, body in sections)
    cut, truncated = truncate(text, limit)
    assert len(cut) <= limit and truncated == (len(text) > limit)
    assert _kept_whole(cut, text)


def test_a_late_related_work_section_survives_the_cut() -> None:
    """ACL-style papers put related work after the experiments: the gap finder reads it."""
    filler = "\n\n".join(f"Results sentence number {i} is here." for i in range(400))
    related = "Prior corpora cover one domain only, which leaves cross-domain text unserved."
    text = (f"## 1 Introduction\n\nWe study corpora.\n\n## 5 Experiments\n\n{filler}\n\n"
            f"## 7 Related work\n\n{related}\n\n## 8 Conclusion\n\nWe built it.")
    cut, truncated = truncate(text, 4_000)
    assert truncated and len(cut) <= 4_000
    assert cut.startswith("## 1 Introduction") and cut.endswith(f"## 7 Related work\n\n{related}")
    assert "## 8 Conclusion" not in cut
    short, _ = truncate(text.replace("Related work", "Appendix notes"), 4_000)
    assert "Prior corpora" not in short and text.startswith(short)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=1_000))
def test_cleaning_never_fails_and_leaves_no_blank_runs(text: str) -> None:
    cleaned = clean_document(text)
    assert "\n\n\n" not in cleaned.text
    assert cleaned.n_chars >= len(cleaned.text)


def test_author_year_list_with_prefix() -> None:
    assert drop_citation_markers("as shown (see Smith, 2019; Lee et al., 2020b).") == \
        "as shown."


def test_citation_wrapped_over_two_lines_is_dropped() -> None:
    text = ("Prior work tried augmentation [12,\n 13] and adaptation (Smith et al.,\n"
            "2020; Lee and Park, 2019a).\n\n| A [1] | 0.9 |")
    assert drop_citation_markers(text) == ("Prior work tried augmentation and adaptation."
                                           "\n\n| A [1] | 0.9 |")


@pytest.mark.parametrize(("text", "expected"), [
    ("ranges [3-5] and [3–5].", "ranges and."),
    ("lists [12, 14] and [2, 5-7].", "lists and."),
    ("two of a year (Smith et al., 2020a,b).", "two of a year."),
    ("particles (van der Maaten and Hinton, 2008).", "particles."),
    ("a group (Queer in AI et al., 2023).", "a group."),
    ("kept: x[0] and (Table 3) and [0].", "kept: x[0] and (Table 3) and [0]."),
])
def test_citation_forms_are_dropped_and_others_kept(text: str, expected: str) -> None:
    assert drop_citation_markers(text) == expected


def test_tex_spacing_accents_are_composed_so_the_citation_matches() -> None:
    assert compose_accents("F¨arber, Mitrovi´c, Do˘gan, Lourenc¸o") == \
        "Färber, Mitrović, Doğan, Lourenço"
    cleaned = clean_document("# 1 Intro\n\nAs found (Saier and F¨arber, 2020).")
    assert cleaned.text == "# 1 Intro\n\nAs found."


def test_table_cells_lose_author_year_markers_only() -> None:
    text = "| AAN (Radev et al., 2009) | [1] | 25k |\n|---|---|---|"
    assert drop_citation_markers(text) == "| AAN | [1] | 25k |\n|---|---|---|"


def test_author_year_marker_wrapped_over_two_rows_of_a_cell_is_dropped() -> None:
    rows = ["|Name|such as GPT-3 (Brown|x \\| y|", "||et al., 2020), to answer|z|", "|A||"]
    assert drop_table_citations(rows) == ["|Name|such as GPT-3|x \\| y|", "||, to answer|z|",
                                          "|A||"]


def test_a_caption_is_one_emphasised_paragraph_once() -> None:
    marked = mark_captions("Table 3: Scores\nof every *model*.\n\nFigure 1 shows the gain.")
    assert marked == "*Table 3: Scores of every \\*model\\*.*\n\nFigure 1 shows the gain."
    assert mark_captions(marked) == marked


def test_furniture_lines_and_glued_stamps_are_dropped_by_the_cleaning() -> None:
    text = clean_document("## I. INTRODUCTION arXiv:0908.0001v1 [astro-ph.CO] 1 Aug 2009\n\n"
                          "Downloaded from https://academic.example.org/ by guest\n\n"
                          "1 Introduction . . . . . . . . . . 3\n\nBody text.").text
    assert text == "## I. INTRODUCTION\n\nBody text."


def test_captions_set_after_the_references_stay_in_the_body() -> None:
    markdown = ("# T\n\n## 1 Intro\n\nBody text here.\n\n## References\n\nSmith, J. 2002, Icarus,"
                " 156, 287\n\nFigure 1. Postage stamps of the objects.\n\n100\n\n80 number"
                "\n\nFigure 2. Histogram of magnitudes.\n\nJones, K. 2003, AJ, 1, 2\n")
    cleaned = clean_document(markdown)
    assert "*Figure 1. Postage stamps of the objects.*" in cleaned.text
    assert "*Figure 2. Histogram of magnitudes.*" in cleaned.text
    assert "Jones, K." in cleaned.references and "Figure" not in cleaned.references


def test_a_numeric_marker_opening_a_line_is_console_output_not_a_citation() -> None:
    cleaned = clean_document("# T\n\n## 1 Intro\n\nR> frequency(z)\n\n[1] 4\n\n"
                             "As shown [3], it holds.\n\n[5] proposed it first.\n")
    assert "[1] 4" in cleaned.text and "[3]" not in cleaned.text and "[5]" not in cleaned.text


def test_a_subsection_named_bibliography_is_no_reference_list() -> None:
    """A manual's ``2.5 Bibliography`` says how its class cites: body, as the section after
    it; a section ``7 References`` (or ``VII. REFERENCES``) starts the list."""
    parts = split_parts("## 2 Macros\n\nText.\n\n### 2.5 Bibliography\n\nThe biblatex package "
                        "is loaded.\n\n## 3 Conclusion\n\nDone.\n\n## 7 References\n\n[1] A.")
    assert "biblatex package" in parts["body"] and "Done." in parts["body"]
    assert "[1] A." in parts["references"]
    assert "[1] B." in split_parts("## VII. REFERENCES\n\n[1] B.")["references"]
