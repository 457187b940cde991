"""Tables of the fast PDF path from rules and text pieces (fast_tables.py)."""

from __future__ import annotations

from vault_pipeline.documents.fast_tables import (
    Piece,
    captioned,
    merged,
    rule_groups,
    table_markdown,
    unruled_area,
)


def test_rules_sharing_their_ends_form_a_table_area() -> None:
    rules = [(50, 100, 300), (50, 120, 300), (50, 200, 300), (50, 200.2, 300),  # drawn twice
             (60, 150, 120)]  # a shorter stroke of a figure
    areas = rule_groups(rules)
    assert [tuple(a) for a in areas] == [(50, 100, 300, 200)]
    assert rule_groups(rules[:2]) == []  # two rules are a box, not a booktabs table


def test_a_caption_between_rules_parts_two_stacked_tables() -> None:
    rules = [(50, y, 300) for y in (100, 120, 200, 260, 280, 360)]
    caption = (50, 210, 300, 250)
    assert len(rule_groups(rules)) == 1
    assert [a.y0 for a in rule_groups(rules, [caption])] == [100, 260]


def test_only_areas_next_to_a_caption_are_kept() -> None:
    areas = rule_groups([(50, y, 300) for y in (100, 120, 200)])
    assert captioned(areas, [(50, 205, 300, 215)]) == areas  # caption below
    assert captioned(areas, [(50, 80, 300, 97)]) == areas  # caption above
    assert captioned(areas, [(50, 400, 300, 410)]) == []  # far away
    assert captioned(areas, [(320, 205, 500, 215)]) == []  # the other column


def test_table_markdown_columns_from_the_fullest_rows() -> None:
    pieces = [Piece(100, 10, 160, 20, "Full"),  # a header cell spanning two columns
              Piece(10, 30, 40, 40, "Model"), Piece(100, 30, 110, 40, "P"),
              Piece(150, 30, 160, 40, "R"),
              Piece(10, 50, 40, 60, "A"), Piece(98, 50, 115, 60, "40.6"),
              Piece(148, 50, 165, 60, "38.3"),
              Piece(10, 70, 40, 80, "B | C"), Piece(150, 70, 162, 80, "1.0")]
    assert table_markdown(pieces) == ("||Full||\n|---|---|---|\n|Model|P|R|\n"
                                      "|A|40.6|38.3|\n|B \\| C||1.0|")


def test_no_table_without_two_rows_and_two_columns() -> None:
    assert table_markdown([Piece(0, 0, 10, 10, "a"), Piece(20, 0, 30, 10, "b")]) is None
    assert table_markdown([Piece(0, 0, 10, 10, "a"), Piece(0, 20, 10, 30, "b")]) is None
    assert table_markdown([]) is None


def test_cell_borders_end_to_end_are_one_rule() -> None:
    strokes = [(325, 214, 407), (406, 214.2, 460), (460.5, 214, 520), (600, 214, 650),
               (325, 230, 407)]
    assert merged(strokes) == [(325, 214, 520), (600, 214, 650), (325, 230, 407)]


def _row(y: float, *cells: tuple[float, str]) -> tuple[tuple[float, float, float, float],
                                                       tuple[Piece, ...]]:
    pieces = tuple(Piece(x, y, x + 6 * len(text), y + 10, text) for x, text in cells)
    return (pieces[0].x0, y, pieces[-1].x1, y + 10), pieces


def test_a_table_without_rules_is_the_short_cells_under_its_caption() -> None:
    caption = (200, 100, 400, 110)
    rows = [_row(125, (260, "Dataset"), (315, "Result")), _row(139, (260, "Data1"), (315, "0.12")),
            _row(153, (260, "Data2"), (315, "0.67")),
            _row(180, (100, "The next paragraph of prose runs across the whole column, well "
                            "past sixty characters."))]
    area = unruled_area(caption, rows)
    assert area is not None and (area.y0, area.y1) == (125, 163)


def test_cells_over_a_caption_set_below_its_table_are_found() -> None:
    caption = (200, 300, 400, 310)
    rows = [_row(260, (260, "A"), (315, "B")), _row(274, (260, "1"), (315, "2")),
            _row(288, (260, "3"), (315, "4"))]
    area = unruled_area(caption, rows)
    assert area is not None and (area.y0, area.y1) == (260, 298)


def test_no_unruled_table_in_prose_one_row_or_past_another_caption() -> None:
    caption = (100, 100, 400, 110)
    prose = [_row(125 + 14 * i, (100, "words of a justified line"), (260, "split at a gap of "
                                                                         "the text, long ones"))
             for i in range(3)]
    assert unruled_area(caption, [_row(125, (260, "A"), (315, "B"))]) is None
    long_pieces = [_row(125 + 14 * i, (100, "a piece of prose that is long enough"),
                        (330, "and another long piece of the same line")) for i in range(3)]
    assert unruled_area(caption, long_pieces) is None
    assert unruled_area(caption, prose) is None and unruled_area(caption, prose[:1]) is None
    next_caption = (100, 139, 400, 149)
    rows = [_row(125, (260, "A"), (315, "B")), _row(139, (100, "Table 2: Other")),
            _row(153, (260, "1"), (315, "2"))]
    assert unruled_area(caption, rows, [next_caption]) is None


def test_an_unruled_table_stops_at_a_line_holding_the_other_columns_text() -> None:
    caption = (300, 100, 500, 110)
    rows = [_row(125, (320, "A"), (380, "B")), _row(139, (60, "Hasegawa"), (320, "1"),
                                                   (380, "2")),
            _row(153, (320, "3"), (380, "4"))]
    assert unruled_area(caption, rows) is None  # its second line reaches the left column
    assert unruled_area(caption, [*rows[:1], _row(139, (320, "1"), (380, "2"))]) is not None


def test_a_description_table_of_short_labels_and_long_cells_is_a_table() -> None:
    """lme4's list of methods: a name, then a sentence-long description, wider than its
    centred caption."""
    caption = (119, 664, 484, 675)
    rows = [_row(590 + 13.5 * i, (87, name), (170, "A description of the method that runs on "
                                                   "for a while"))
            for i, name in enumerate(("refit", "refitML", "residuals", "sigma", "simulate"))]
    area = unruled_area(caption, rows)
    assert area is not None and area.x0 == 87
    prose = [_row(590 + 13.5 * i, (87 + 9 * i, "A paragraph's line split at a wide gap in"),
                  (330, "its justified text, long on both sides")) for i in range(5)]
    assert unruled_area(caption, prose) is None  # no first column at one edge


def test_a_table_note_between_the_rules_and_the_caption_keeps_them_together() -> None:
    areas = rule_groups([(81, y, 521) for y in (109, 125, 245)])
    assert captioned(areas, [(200, 288, 403, 299)]) == areas  # 43 points under the rules
