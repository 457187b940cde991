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
    strip_stamps,
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
