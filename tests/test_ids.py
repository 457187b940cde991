"""arXiv ids: the Python parser and its Polars twin agree, and old-style ids survive."""

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_pipeline.ids import id_and_version, id_expr, normalize_arxiv_id, parse_arxiv_id

ARCHIVES = ["hep-th", "hep-ph", "math", "cs", "cond-mat", "astro-ph", "quant-ph", "gr-qc"]
new_ids = st.builds(lambda yymm, n, w: f"{yymm:04d}.{n:0{w}d}",
                    st.integers(701, 2612), st.integers(1, 9999), st.sampled_from([4, 5]))
old_ids = st.builds(lambda a, n: f"{a}/{n:07d}", st.sampled_from(ARCHIVES),
                    st.integers(1, 9_999_999))
prefixes = st.sampled_from(["", "arXiv:", "oai:arXiv.org:", "http://arxiv.org/abs/",
                            "https://arxiv.org/pdf/", "https://export.arxiv.org/abs/"])
versions = st.one_of(st.none(), st.integers(1, 40))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2202.12139v1", ("2202.12139", 1)),
        ("0704.0001", ("0704.0001", None)),
        ("hep-th/9901001", ("hep-th/9901001", None)),
        ("http://arxiv.org/abs/hep-th/9901001v2", ("hep-th/9901001", 2)),
        ("math.GT/0309136", ("math/0309136", None)),
        ("oai:arXiv.org:1401.2122", ("1401.2122", None)),
        ("https://arxiv.org/pdf/2405.13786v1", ("2405.13786", 1)),
    ],
)
def test_known_forms(text: str, expected: tuple[str, int | None]) -> None:
    assert tuple(parse_arxiv_id(text)) == expected


@pytest.mark.parametrize("text", ["", "hello", "2202.123", "hep-th/99010", "12345.12345",
                                  "2202.12139v", "../etc/passwd"])
def test_rejects_non_ids(text: str) -> None:
    with pytest.raises(ValueError, match="not an arXiv id"):
        parse_arxiv_id(text)


@given(base=st.one_of(new_ids, old_ids), prefix=prefixes, version=versions)
def test_prefix_and_version_are_stripped(base: str, prefix: str, version: int | None) -> None:
    text = f"{prefix}{base}" + (f"v{version}" if version else "")
    parsed = parse_arxiv_id(text)
    assert parsed.id == base
    assert parsed.version == version
    assert normalize_arxiv_id(parsed.id) == parsed.id  # idempotent


@given(texts=st.lists(st.one_of(st.builds(lambda p, b, v: f"{p}{b}{v}", prefixes,
                                          st.one_of(new_ids, old_ids),
                                          st.sampled_from(["", "v1", "v12"])),
                                st.text(max_size=20)), max_size=20))
def test_polars_twin_agrees(texts: list[str]) -> None:
    frame = pl.DataFrame({"x": texts}, schema={"x": pl.String}).select(
        parts=id_and_version("x"), alone=id_expr("x")).unnest("parts")
    assert frame.get_column("id").to_list() == frame.get_column("alone").to_list()
    for text, row in zip(texts, frame.iter_rows(named=True), strict=True):
        try:
            expected = parse_arxiv_id(text)
        except ValueError:
            assert row["id"] is None
        else:
            assert (row["id"], row["version"]) == tuple(expected)
