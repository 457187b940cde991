"""PDF conversion: real structure out of the sample papers, a status for every bad file."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from tests.conftest import SAMPLE
from vault_pipeline.documents.cleaning import clean_document
from vault_pipeline.documents.convert import PDF, PYMUPDF4LLM, Settings, Task, convert_task
from vault_pipeline.documents.invisible import drop_hidden_text
from vault_pipeline.documents.outcome import CORRUPT, EMPTY, ENCRYPTED, OK, TOO_LARGE
from vault_pipeline.documents.pdf import ALL, OFF, RULED, PdfLimits, pdf_to_markdown, ruled_pages


def _pdf(text: str = "Hello sections and text.") -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), text, fontsize=11)
    return doc.tobytes()


def _task(path: Path, tmp_path: Path) -> Task:
    """A task for pymupdf4llm, which this module tests (the fast path has its own tests)."""
    return Task("k" * 64, PDF, str(path), str(tmp_path / "scratch"),
                Settings(pdf_converter=PYMUPDF4LLM))


def test_sample_paper_converts_with_sections_and_without_references(tmp_path: Path) -> None:
    result = convert_task(_task(SAMPLE / "2204.08348v3.pdf", tmp_path))
    assert result.status == OK, result.error
    assert "Automated Test Generation for REST APIs" in result.text
    for heading in ("## 1 Introduction", "## 2 Tools and Services", "## 3 Study Design"):
        assert heading in result.text
    assert "|features-service|18|1,688|" in result.text.replace(" ", "")
    assert "RESTler" not in result.text and "RESTler" in result.references
    assert "\n*Table 2: Services in the study.*\n" in result.text  # captions kept, marked
    assert "Tool Versions" in result.appendix
    assert result.n_pages == 1 and result.n_chars == len(result.text)


def test_hidden_prompt_injection_is_dropped_and_counted(tmp_path: Path) -> None:
    result = convert_task(_task(SAMPLE / "2405.13786v1.pdf", tmp_path))
    assert result.status == OK
    assert "Ignore all previous instructions" not in result.text
    assert result.hidden_chars > 100 and "white" in result.notes
    assert "## 1 Introduction" in result.text


def test_white_text_on_a_dark_box_is_kept() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(70, 200, 400, 240), color=(0, 0, 0), fill=(0, 0, 0))
    page.insert_text((80, 225), "White label on black box", fontsize=11, color=(1, 1, 1))
    page.insert_text((80, 300), "hidden words", fontsize=11, color=(1, 1, 1))
    page.insert_text((80, 320), "tiny words", fontsize=0.8)
    hidden = drop_hidden_text(doc)
    assert (hidden.white, hidden.tiny) == (11, 9)
    assert page.get_text().strip() == "White label on black box"


def test_encrypted_pdf(tmp_path: Path) -> None:
    target = tmp_path / "locked.pdf"
    pymupdf.open("pdf", _pdf()).save(target, encryption=pymupdf.PDF_ENCRYPT_AES_256,
                                     user_pw="secret", owner_pw="owner")
    result = convert_task(_task(target, tmp_path))
    assert result.status == ENCRYPTED and "password" in result.error
    assert result.text is None


def test_owner_password_only_still_converts() -> None:
    doc = pymupdf.open("pdf", _pdf("Readable although encrypted."))
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner")
    assert "Readable although encrypted." in pdf_to_markdown(data).markdown


def test_garbage_before_the_header_is_skipped() -> None:
    converted = pdf_to_markdown(b"JUNK" * 50 + _pdf("Text after junk."))
    assert "Text after junk." in converted.markdown
    assert "skipped 200 bytes before %PDF-" in converted.notes


def test_broken_xref_is_repaired() -> None:
    data = _pdf("Text behind a broken table.").replace(b"startxref", b"startxrXX")
    converted = pdf_to_markdown(data)
    assert "Text behind a broken table." in converted.markdown
    assert any("repaired" in note for note in converted.notes)


@pytest.mark.parametrize(("data", "status"), [
    (b"", EMPTY),
    (b"%PDF-1.7\n" + b"\x00garbage" * 20, CORRUPT),
    (b"not a pdf at all", CORRUPT),
])
def test_unusable_bytes_get_a_status(tmp_path: Path, data: bytes, status: str) -> None:
    target = tmp_path / "bad.pdf"
    target.write_bytes(data)
    result = convert_task(_task(target, tmp_path))
    assert result.status == status and result.error


def test_truncated_pdf_is_corrupt_or_empty_never_ok(tmp_path: Path) -> None:
    data = (SAMPLE / "2202.12139v1.pdf").read_bytes()
    target = tmp_path / "cut.pdf"
    target.write_bytes(data[: len(data) // 3])
    result = convert_task(_task(target, tmp_path))
    assert result.status in {CORRUPT, EMPTY} or (result.status == OK and result.text)


def test_page_without_text_is_empty() -> None:
    doc = pymupdf.open()
    doc.new_page().draw_rect(pymupdf.Rect(10, 10, 100, 100), fill=(0, 0, 1))
    with pytest.raises(Exception) as caught:
        pdf_to_markdown(doc.tobytes())
    assert getattr(caught.value, "status", None) == EMPTY


def test_page_limit() -> None:
    doc = pymupdf.open()
    for _ in range(5):
        doc.new_page()
    with pytest.raises(Exception) as caught:
        pdf_to_markdown(doc.tobytes(), PdfLimits(max_pages=3))
    assert getattr(caught.value, "status", None) == TOO_LARGE


def test_cleaned_pdf_keeps_the_table_of_numbers(tmp_path: Path) -> None:
    converted = pdf_to_markdown((SAMPLE / "2202.12139v1.pdf").read_bytes())
    text = clean_document(converted.markdown).text.replace(" ", "")
    assert "|ResNet-50|50|25.6|500|" in text


def _page_with(draw) -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Some body text.")
    draw(page)
    return doc


def test_ruled_pages_finds_pages_that_may_hold_a_ruled_table() -> None:
    def grid(page: pymupdf.Page) -> None:
        for y in (100, 120, 140):
            page.draw_line((72, y), (300, y))
        for x in (72, 180, 300):
            page.draw_line((x, 100), (x, 140))

    def footnote_rule(page: pymupdf.Page) -> None:
        page.draw_line((72, 700), (200, 700))

    assert ruled_pages(_page_with(grid)) == [True]
    assert ruled_pages(_page_with(footnote_rule)) == [False]
    assert ruled_pages(_page_with(lambda page: None)) == [False]


def test_tables_on_ruled_pages_only_give_the_text_of_tables_on_every_page() -> None:
    for path in sorted(SAMPLE.rglob("*.pdf")):
        data = path.read_bytes()
        ruled = pdf_to_markdown(data, tables=RULED).markdown
        assert ruled == pdf_to_markdown(data, tables=ALL).markdown, path.name
        assert "|ResNet-50|" in ruled.replace(" ", "") or "2202.12139" not in path.name


def test_table_mode_is_checked_up_front() -> None:
    with pytest.raises(ValueError, match="tables must be one of"):
        Settings(tables="sometimes")
    llm = Settings(pdf_converter=PYMUPDF4LLM)
    assert Settings(tables=OFF, pdf_converter=PYMUPDF4LLM).converter(PDF) != llm.converter(PDF)
    # pymupdf4llm's ``ruled`` skips only pages where no table can be found: the same text.
    assert Settings(tables=ALL, pdf_converter=PYMUPDF4LLM).converter(PDF) == llm.converter(PDF)
