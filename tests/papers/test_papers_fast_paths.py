"""The speed-ups of the `papers` build change nothing a user can see: the fast snapshot reader
agrees with the strict one (or steps aside), the cheaper whitespace pattern gives the same
text, and a build without duplicates equals one that resolves them."""

import json
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLE
from vault_pipeline.papers.build import build_papers
from vault_pipeline.parse.finalize import (
    WHITESPACE_TO_COLLAPSE,
    clean_names,
    collapse_whitespace,
    null_if_empty,
)
from vault_pipeline.parse.snapshot import SNAPSHOT_SCHEMA, _line_numbers, _read, _read_fast
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.store.paths import VaultPaths

SNAPSHOT = SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl"
WHITESPACE = " \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                    st.text(alphabet=st.characters(codec="utf-8"), max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["version", "created", "x"]), inner, max_size=3)),
    max_leaves=8)
good_versions = st.lists(st.fixed_dictionaries(
    {"version": st.sampled_from(["v1", "v2", "v10"]),
     "created": st.sampled_from(["Mon, 2 Apr 2007 19:18:42 GMT", "bad date"])}), max_size=3)
good_authors = st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=4), max_size=3)
records = st.dictionaries(
    st.sampled_from(list(SNAPSHOT_SCHEMA)),
    st.one_of(values, good_versions, good_authors, st.text(max_size=20)),
    max_size=len(SNAPSHOT_SCHEMA))
lines = st.one_of(
    records.map(json.dumps),
    records.map(lambda r: json.dumps(r, ensure_ascii=False)),
    st.sampled_from(["", "   ", "null", "[1]", '"x"', "{", '{"id": "a"} x', "\ufeff{}"]),
)


def _strict(data: bytes) -> pl.DataFrame | None:
    try:
        frame = _read(data)
    except pl.exceptions.PolarsError:
        return None
    numbers = _line_numbers(data.split(b"\n"), 1)
    return frame.with_columns(_line=pl.Series(numbers, dtype=pl.Int64))


@settings(max_examples=300, deadline=None)
@given(st.lists(lines, min_size=1, max_size=6), st.booleans())
def test_fast_reader_agrees_with_strict_reader_or_steps_aside(batch: list[str],
                                                              final_newline: bool) -> None:
    data = "\n".join(batch).encode("utf-8") + (b"\n" if final_newline else b"")
    fast = _read_fast(data, 1)
    if fast is not None:
        strict = _strict(data)
        assert strict is not None, "fast reader accepted what the strict reader refuses"
        assert fast.to_dicts() == strict.to_dicts()


def test_fast_reader_reads_the_real_sample_with_line_numbers() -> None:
    data = SNAPSHOT.read_bytes()
    fast = _read_fast(data, 7)
    assert fast is not None
    assert fast.to_dicts() == _read(data).with_columns(
        _line=pl.int_range(7, 107, dtype=pl.Int64)).to_dicts()


@given(st.text(alphabet=st.sampled_from([*WHITESPACE, "a", "b", "é"]), max_size=30))
def test_whitespace_pattern_equals_collapsing_every_run(text: str) -> None:
    series = pl.Series([text])
    assert (series.str.replace_all(WHITESPACE_TO_COLLAPSE, " ").item()
            == series.str.replace_all(r"\s+", " ").item())


@given(st.lists(st.one_of(st.none(), st.text(
    alphabet=st.sampled_from([*WHITESPACE, "\x1f", "a", "é", "\u2003"]), max_size=30)),
    min_size=1, max_size=6))
def test_ascii_fast_path_collapses_whitespace_like_the_regex(cells: list[str | None]) -> None:
    """ASCII rows take literal passes, the rest the regex; both must equal ``\\s+ → " "``."""
    frame = pl.DataFrame({"text": cells}, schema={"text": pl.String})
    got = frame.lazy().select(collapse_whitespace(pl.col("text"))).collect()
    expected = frame.select(pl.col("text").str.replace_all(r"\s+", " "))
    assert got.get_column("text").to_list() == expected.get_column("text").to_list()


@given(st.lists(st.one_of(st.none(), st.lists(
    st.one_of(st.none(), st.text(alphabet=st.sampled_from([*WHITESPACE, "x", "y"]),
                                 max_size=6)), max_size=4)), min_size=1, max_size=5))
def test_clean_list_keeps_its_meaning(cells: list) -> None:
    frame = pl.DataFrame({"names": cells}, schema={"names": pl.List(pl.String)})
    got = (frame.lazy().with_columns(names=clean_names("names"))
           .with_columns(names=null_if_empty("names")).collect().get_column("names").to_list())
    expected = []
    for cell in cells:
        cleaned = [pl.Series([n]).str.replace_all(r"\s+", " ").str.strip_chars().item()
                   for n in cell or [] if n is not None]
        kept = [n for n in cleaned if n]
        expected.append(kept or None)
    assert got == expected


def _papers(paths: VaultPaths, *files: Path) -> pl.DataFrame:
    RawZone(paths).import_paths(list(files))
    build_papers(paths)
    return pl.read_parquet(paths.table("papers")).sort("arxiv_id")


def test_build_without_duplicates_equals_build_that_resolves_them(tmp_path: Path) -> None:
    """The first build takes the no-duplicate shortcut (staging becomes the table); the
    second must resolve an older copy of one paper. Same table either way."""
    line = json.loads(SNAPSHOT.read_text().splitlines()[0])
    twin = tmp_path / "twin.jsonl"
    older = {"title": "Older twin", "doi": None, "versions": line["versions"][:1]}
    twin.write_text(json.dumps(line | older) + "\n")
    plain = _papers(VaultPaths(tmp_path / "a").ensure(), SNAPSHOT)
    resolved = _papers(VaultPaths(tmp_path / "b").ensure(), SNAPSHOT, twin)
    assert plain.equals(resolved.select(plain.columns))
    assert plain.schema == resolved.schema


def test_tie_between_lines_of_one_file_goes_to_the_first(tmp_path: Path) -> None:
    line = json.loads(SNAPSHOT.read_text().splitlines()[0])
    path = tmp_path / "dups.jsonl"
    path.write_text("\n".join(json.dumps(line | change) for change in (
        {"title": "First", "doi": None}, {"title": "Second"})) + "\n")
    (row,) = _papers(VaultPaths(tmp_path / "v").ensure(), path).to_dicts()
    assert row["title"] == "First"
    assert row["doi"] == line["doi"]  # the winner's gap filled from the other line
