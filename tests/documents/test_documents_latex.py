"""E-prints: safe unpacking (nothing outside the scratch folder, bombs stopped) and LaTeX to
Markdown with the paper's structure."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from tests.conftest import SAMPLE
from vault_pipeline.documents.archive import ArchiveLimits, unpack_eprint
from vault_pipeline.documents.convert import LATEX, Settings, Task, convert_task
from vault_pipeline.documents.outcome import OK, TOO_LARGE, UNSUPPORTED, ConversionError
from vault_pipeline.raw.detect import detect

MAIN = (r"\documentclass{article}\title{Safe}\begin{document}\maketitle"
        r"\section{Intro}Text of the paper.\input{sec}\end{document}")


def _tar_gz(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return gzip.compress(raw.getvalue())


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_hostile_members_are_skipped_and_nothing_lands_outside(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    eprint = tmp_path / "hostile.tar.gz"
    eprint.write_bytes(_tar_gz([
        ("main.tex", MAIN.encode()),
        ("sec.tex", b"\\section{More}Second section."),
        ("../escaped.tex", b"owned"),
        ("../../escaped2.tex", b"owned"),
        (str(tmp_path / "absolute.tex"), b"owned"),
        _link("link_out", "/etc/passwd"),
        _link("hard_out", "../escaped_hard", tarfile.LNKTYPE),
        _link("dir_link", str(tmp_path)),
    ]))
    before = set(tmp_path.rglob("*"))
    unpacked = unpack_eprint(eprint, scratch / "src")
    created = set(tmp_path.rglob("*")) - before
    assert all(path.is_relative_to(scratch) for path in created)
    assert not (tmp_path / "escaped.tex").exists() and not (tmp_path / "absolute.tex").exists()
    assert not any(p.is_symlink() for p in created)
    assert len(unpacked.skipped) >= 5
    assert {p.name for p in unpacked.files} >= {"main.tex", "sec.tex"}

    result = convert_task(Task("h" * 64, LATEX, str(eprint), str(scratch), Settings()))
    assert result.status == OK, result.error
    assert "## Intro" in result.text and "Second section." in result.text
    assert "skipped unsafe members" in result.notes and "owned" not in result.text


def test_gzip_bomb_is_stopped_at_the_limit(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as handle:
        block = b"\0" * (1 << 20)
        for _ in range(64):
            handle.write(block)
    assert bomb.stat().st_size < 200_000
    with pytest.raises(ConversionError) as caught:
        unpack_eprint(bomb, tmp_path / "out", ArchiveLimits(max_unpacked_bytes=8 << 20))
    assert caught.value.status == TOO_LARGE and "gzip bomb" in str(caught.value)
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) < 10 << 20


def test_member_count_and_size_limits(tmp_path: Path) -> None:
    many = tmp_path / "many.tar.gz"
    many.write_bytes(_tar_gz([(f"f{i}.tex", b"x") for i in range(20)]))
    with pytest.raises(ConversionError, match="more than 10 members"):
        unpack_eprint(many, tmp_path / "a", ArchiveLimits(max_members=10))
    big = tmp_path / "big.tar.gz"
    big.write_bytes(_tar_gz([("big.tex", b"y" * 5000)]))
    with pytest.raises(ConversionError, match="over the limit"):
        unpack_eprint(big, tmp_path / "b", ArchiveLimits(max_member_bytes=1000))


def test_sample_eprint_converts_with_structure(tmp_path: Path) -> None:
    path = SAMPLE / "arXiv-2202.12139v1.tar.gz"
    result = convert_task(Task("s" * 64, LATEX, str(path), str(tmp_path), Settings()))
    assert result.status == OK, result.error
    text = result.text
    assert text.startswith("# Testing Deep Learning Models")
    for heading in ("## Abstract", "## Introduction", "## Method", "## Conclusion"):
        assert heading in text
    assert "Vision-based systems increasingly delegate" in text  # from \input{sections/intro}
    assert "$$\n\\mathcal{L}(\\theta)" in text and "\\label" not in text
    assert "| ResNet-50 | 50 | 25.6 | 500 |" in text
    assert "cite" not in text and "The comparison protocol" not in text  # captions out
    assert "DeepXplore" in result.references and "DeepXplore" not in text
    assert "Budget Accounting" in result.appendix
    assert list(tmp_path.iterdir()) == []  # scratch cleaned up


def test_single_gzipped_tex(tmp_path: Path) -> None:
    result = convert_task(Task("t" * 64, LATEX, str(SAMPLE / "1401.2122v5.gz"), str(tmp_path),
                               Settings()))
    assert result.status == OK
    assert "## Contact vector fields" in result.text and "A comment" not in result.text
    assert "Dunajski" in result.references


def test_eprint_without_main_file_is_unsupported(tmp_path: Path) -> None:
    eprint = tmp_path / "figs.tar.gz"
    eprint.write_bytes(_tar_gz([("fig.tex", b"\\begin{tikzpicture}\\end{tikzpicture}")]))
    result = convert_task(Task("u" * 64, LATEX, str(eprint), str(tmp_path / "s"), Settings()))
    assert result.status == UNSUPPORTED and "main file" in result.error


def test_broken_gzip_is_corrupt(tmp_path: Path) -> None:
    eprint = tmp_path / "cut.tar.gz"
    eprint.write_bytes((SAMPLE / "arXiv-2202.12139v1.tar.gz").read_bytes()[:600])
    result = convert_task(Task("v" * 64, LATEX, str(eprint), str(tmp_path / "s"), Settings()))
    assert result.status == "corrupt"


def test_importer_recognises_eprints_by_content() -> None:
    assert detect(SAMPLE / "arXiv-2202.12139v1.tar.gz").kind == "eprint"
    assert detect(SAMPLE / "1401.2122v5.gz").kind == "eprint"
    assert detect(SAMPLE / "2204.08348v3.pdf").kind == "pdf"
