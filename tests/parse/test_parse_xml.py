"""Atom and OAI-PMH parsers on real recordings and constructed edge cases."""

import io
import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import DATA, SAMPLE
from vault_pipeline.errors import RawFormatError
from vault_pipeline.parse import unwrap_recorded
from vault_pipeline.parse.atom import parse_atom
from vault_pipeline.parse.common import ParseReject
from vault_pipeline.parse.oai import parse_oai

RECORDED = SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json"


def _atom(path: Path) -> list:
    return list(parse_atom(io.BytesIO(path.read_bytes())))


def _oai(path: Path) -> list:
    return list(parse_oai(io.BytesIO(path.read_bytes())))


def test_recorded_api_page() -> None:
    rows = list(parse_atom(io.BytesIO(unwrap_recorded(RECORDED.read_bytes()))))
    assert len(rows) == 10
    first = rows[0]
    assert first["raw_id"] == "http://arxiv.org/abs/2202.12139v1"
    assert first["title"].startswith("Testing Deep Learning Models")
    assert first["categories"] == ["cs.SE", "cs.LG"]
    assert first["primary_category"] == "cs.SE"
    assert first["published"] == date(2022, 2, 24)
    assert first["authors"][0] == "Mohit Kumar Ahuja"
    assert first["journal_ref"].startswith("Artificial Intelligence in Software Testing")
    # the recording decoded UTF-8 as Latin-1 (mojibake); unwrapping repairs it
    assert rows[1]["authors"][:3] == ["Aurora Ramírez", "Mario Berrios", "José Raúl Romero"]


def test_per_element_namespaces_and_old_style_id() -> None:
    rows = _atom(DATA / "atom_old_style.xml")
    old = rows[0]
    assert old["raw_id"] == "http://arxiv.org/abs/hep-th/9901001v2"
    assert old["primary_category"] == "hep-th"
    assert old["comments"] == "12 pages"
    assert old["authors"] == ["A. Author", "B. Writer"]


def test_api_error_feed_is_a_file_error() -> None:
    with pytest.raises(RawFormatError, match=r"incorrect id format for 1234\.12345"):
        _atom(DATA / "atom_error_feed.xml")


def test_recorded_http_400_is_rejected() -> None:
    body = (DATA / "atom_error_feed.xml").read_text()
    data = json.dumps({"url": "https://export.arxiv.org/api/query?id_list=1234.12345",
                       "status_code": 400, "body": body}).encode()
    with pytest.raises(RawFormatError, match="recorded HTTP 400"):
        unwrap_recorded(data)


def test_truncated_atom_keeps_earlier_entries_and_names_the_line() -> None:
    body = unwrap_recorded(RECORDED.read_bytes())
    cut = body[: body.index(b"<entry>", body.index(b"<entry>", 5000) + 10)]
    items = list(parse_atom(io.BytesIO(cut)))
    rows = [i for i in items if isinstance(i, dict)]
    rejects = [i for i in items if isinstance(i, ParseReject)]
    assert len(rows) >= 2
    assert len(rejects) == 1 and "malformed XML" in rejects[0].reason
    assert rejects[0].position is not None


def test_oai_arxiv_get_record() -> None:
    (row,) = _oai(SAMPLE / "arxiv-single.xml")
    assert row["raw_id"] == "1401.2122"
    assert row["authors"] == ["A. Sergyeyev"]
    assert row["published"] == date(2014, 1, 9)
    assert row["updated"] == date(2017, 10, 23)
    assert row["doi"] == "10.1007/s11005-017-1013-4"
    assert row["categories"][0] == "math.AP"
    assert row["source"] == "oai_arXiv"


def test_oai_arxivraw_versions_authors_and_deleted_records() -> None:
    items = _oai(DATA / "oai_arxivraw_listrecords.xml")
    rows = [i for i in items if isinstance(i, dict)]
    rejects = [i for i in items if isinstance(i, ParseReject)]
    first, second = rows
    assert first["raw_id"] == "0704.0002v3"
    assert first["published"] == date(2007, 3, 31)
    assert first["updated"] == date(2026, 11, 2)
    assert first["authors"] == ["Ileana Streinu", "Louis Theran"]
    assert second["raw_id"] == "math.GT/0309136v1"
    assert second["authors"] == ["A. Topologist", "B. Geometer", "C. Knotter"]
    assert [r.record_id for r in rejects] == ["oai:arXiv.org:0704.9999"]
    assert "deleted" in rejects[0].reason


def test_oai_dc_record() -> None:
    (row,) = _oai(DATA / "oai_dc_listrecords.xml")
    assert row["raw_id"] == "http://arxiv.org/abs/2401.00001"
    assert row["authors"] == ["Jane Doe", "Richard Roe"]
    assert row["doi"] == "10.1000/constructed.1"
    assert row["comments"] == "9 pages"
    assert (row["published"], row["updated"]) == (date(2024, 1, 1), date(2024, 2, 10))
    assert row["license"] == "http://creativecommons.org/licenses/by/4.0/"


@pytest.mark.parametrize(("name", "code"), [
    ("oai_error_badresumptiontoken.xml", "badResumptionToken"),
    ("oai_error_norecordsmatch.xml", "noRecordsMatch"),
])
def test_oai_error_envelopes(name: str, code: str) -> None:
    with pytest.raises(RawFormatError, match=f"OAI-PMH error {code}"):
        _oai(DATA / name)


def test_wrong_root_is_a_file_error() -> None:
    with pytest.raises(RawFormatError, match="root element"):
        list(parse_oai(io.BytesIO(b"<html><body>503 Service Unavailable</body></html>")))


def test_external_entities_are_not_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    page = (DATA / "oai_dc_listrecords.xml").read_text().replace(
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file://{secret}">]>',
    ).replace("A Constructed Study", "&xxe; A Constructed Study")
    items = list(parse_oai(io.BytesIO(page.encode())))
    assert all("TOP SECRET" not in (i.get("title") or "") for i in items if isinstance(i, dict))


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400), cut=st.integers(0, 6000))
def test_oai_parser_never_crashes_on_garbage(data: bytes, cut: int) -> None:
    """Any prefix of a real page, with junk appended, yields rows, rejects or a RawFormatError."""
    page = (DATA / "oai_arxivraw_listrecords.xml").read_bytes()[:cut] + data
    try:
        items = list(parse_oai(io.BytesIO(page)))
    except RawFormatError:
        return
    assert all(isinstance(i, (dict, ParseReject)) for i in items)
