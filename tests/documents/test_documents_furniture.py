"""Page furniture: what repeats at one height, sits at a page's edge, or is a stamp, goes;
the running text stays."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.documents.furniture import (
    furniture,
    furniture_key,
    is_noise,
    is_notice,
    line_numbers,
    strip_stamps,
    title_top,
)

HEIGHT = 792.0


@dataclass
class L:
    text: str
    bbox: tuple[float, float, float, float]
    horizontal: bool = True
    size: float = 10.0


def _page(number: int, header: str = "Original article") -> list[L]:
    return [L(f"{header}", (72, 30, 300, 40)),
            L(f"Body line {'abcdefgh'[number]} of the paper, which goes on.", (72, 300, 540, 310)),
            L("Results", (72, 320, 120, 330)),  # a heading, not repeated at one height
            L(str(number + 1), (300, 760, 310, 770))]


def test_running_headers_and_page_numbers_go_body_and_headings_stay() -> None:
    pages = [_page(n) for n in range(6)]
    pages[3][2] = L("Results", (72, 500, 120, 510))  # the same words elsewhere stay
    drop = furniture(pages, [HEIGHT] * 6, body=10.0)
    assert all(0 in d and 3 in d and 1 not in d for d in drop)
    assert all(2 not in d for d in drop[:3])


def test_a_running_header_with_a_page_number_is_one_header() -> None:
    pages = [[L(f"{n + 2} Trilling et al.", (72, 30, 300, 40)),
              L(f"Text of page {'abcde'[n]}.", (72, 300, 540, 310))] for n in range(5)]
    assert all(d == {0} for d in furniture(pages, [HEIGHT] * 5))


def test_banners_at_the_edge_and_rotated_margin_stamps_go() -> None:
    page = [L("Journal of Examples 12 (2019) 123-145. doi:10.1000/xyz", (72, 760, 540, 770)),
            L("www.journal.example.org", (72, 20, 300, 30)),
            L("arXiv:1707.04066v1 [astro-ph.EP] 13 Jul 2017", (10, 200, 30, 600),
              horizontal=False),
            L("A line of the body that mentions www.example.org.", (72, 300, 540, 310)),
            L("Another body line.", (72, 320, 540, 330))]
    assert furniture([page], [HEIGHT]) == [{0, 1, 2}]


def test_a_stamp_glued_to_a_heading_is_cut_out() -> None:
    assert strip_stamps("I. INTRODUCTION arXiv:0908.0001v1 [astro-ph.CO] 1 Aug 2009") == \
        "I. INTRODUCTION"
    assert strip_stamps("arXiv:hep-th/9901001v2 [hep-th] 3 Jan 1999") == ""
    assert is_noise("arXiv:2101.00001v1 [cs.CL] 1 Jan 2021")
    assert is_noise("Downloaded from https://academic.example.com/ by guest on 1 May 2020")
    assert is_noise("2.1 Setup . . . . . . . . . . . 14")
    assert not is_noise("We use arXiv:2101.00001 as the source of the data.")
    assert is_notice("Permission to make digital or hard copies of all or part of this work")
    assert not is_notice("We had permission to use the data.")


@given(st.text(max_size=60), st.integers(0, 999), st.integers(0, 999))
def test_the_key_of_a_header_ignores_its_page_number(text: str, a: int, b: int) -> None:
    assert furniture_key(f"{text} {a}") == furniture_key(f"{text} {b}")


@given(st.text(max_size=80))
def test_cutting_stamps_never_adds_text_and_is_idempotent(text: str) -> None:
    cut = strip_stamps(text)
    assert len(cut) <= len(text) and strip_stamps(cut) == cut


def _numbered_draft(x0: float, x1: float, first: int = 38) -> list[tuple[str, tuple]]:
    lines = []
    for k in range(6):
        y = 70.0 + 12 * k
        lines.append((f"Body text of line {k} goes on here.", (51, y, 562, y + 9)))
        lines.append((str(first + k), (x0, y + 3, x1, y + 8)))
    return lines


def test_a_drafts_line_numbers_in_the_margin_go() -> None:
    left = _numbered_draft(21, 29)
    assert line_numbers(left) == {1, 3, 5, 7, 9, 11}
    right = _numbered_draft(570, 578)
    assert line_numbers(right) == {1, 3, 5, 7, 9, 11}


def test_numbers_inside_the_text_or_out_of_order_stay() -> None:
    inside = _numbered_draft(300, 308)  # a column of a table, not the margin
    assert line_numbers(inside) == set()
    shuffled = [(text, box) if not text.isdigit() else (str(90 - int(text)), box)
                for text, box in _numbered_draft(21, 29)]
    assert line_numbers(shuffled) == set()
    assert line_numbers(_numbered_draft(21, 29)[:6]) == set()  # three are not a column


def test_a_first_page_banner_above_the_title_goes() -> None:
    page = [L("Annals of Mathematics 160 (2008), 17–46", (150, 90, 460, 100), size=9.0),
            L("https://doi.org/10.4007/annals.2008.160.1.12", (150, 102, 460, 112), size=9.0),
            L("Sample Paper for the aomart Class", (150, 130, 460, 146), size=14.0),
            L("Results of 2008, 17 (3): 46 are in www.example.org.", (72, 300, 540, 310))]
    assert title_top(page, body=10.0) == 130
    assert furniture([page], [HEIGHT], body=10.0) == [{0, 1}]
    assert furniture([page[2:]], [HEIGHT], body=10.0) == [set()]


def test_a_copyright_in_small_print_goes_anywhere() -> None:
    page = [L("The class was commissioned by Annals of Mathematics.", (131, 672, 356, 680),
              size=8.0),
            L("© 2008–2020 Boris Veytsman.", (131, 682, 356, 690), size=8.0),
            L("The symbol © 2008 in running text stays.", (72, 300, 540, 310))]
    assert furniture([page], [HEIGHT], body=10.0) == [{1}]


def test_acms_issn_and_price_line_is_a_notice() -> None:
    assert is_notice("0004-5411/2018/8-ART111 $15.00")
    assert not is_notice("0004 results were found in 2018.")


def test_authors_notes_and_elseviers_footer_are_furniture() -> None:
    assert is_notice("Email addresses: J.Migchielsen@elsevier.com (Jos Migchielsen)")
    assert is_notice("∗Corresponding author")
    assert is_notice("Authors’ addresses: Ben Trovato, trovato@corporation.com")
    assert not is_notice("The corresponding authors of the survey were asked twice.")
    assert is_noise("Preprint submitted to Elsevier June 8, 2018")
    assert not is_noise("We show a preprint submitted to the server in 2018.")


def test_a_stray_mark_left_of_the_text_does_not_hide_the_line_numbers() -> None:
    lines = [*_numbered_draft(21, 29), ("·", (5, 400, 8, 404))]
    lines += [(f"More text {k}.", (51, 500 + 12 * k, 562, 509 + 12 * k)) for k in range(20)]
    assert line_numbers(lines) == {1, 3, 5, 7, 9, 11}


def test_a_banner_over_several_lines_goes_from_the_edge_up_to_the_text() -> None:
    """Res Philosophica's first-page foot: the banner line sits just above the edge zone,
    over its DOI and copyright lines; the body line above it, set apart, stays."""
    page = [L("the last line of the body, citing Vol. 3 of a work.", (72, 560, 540, 570)),
            L("Res Philosophica, Vol. 90, No. 1-2, January 2012, pp. 1-11", (91, 602, 333, 610)),
            L("https://doi.org/10.11612/resphil.A31245", (142, 612, 283, 620)),
            L("© 2012 Res Philosophica", (283, 622, 371, 630))]
    assert furniture([page], [648.0]) == [{1, 2, 3}]
    apart = [page[0], page[1], L("https://doi.org/10.1/x", (142, 632, 283, 640))]
    assert furniture([apart], [648.0]) == [{2}]  # the banner line is too far from it
