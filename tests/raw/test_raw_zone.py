"""Raw zone import: recognition by content, checks at the door, immutability."""

import gzip
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import DATA, SAMPLE
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.store.paths import VaultPaths


def _import(paths: VaultPaths, *files: Path):
    return RawZone(paths).import_paths(list(files))


def test_recognised_by_content_not_name(vault_paths: VaultPaths, tmp_path: Path) -> None:
    disguised = tmp_path / "in"
    disguised.mkdir()
    shutil.copy(SAMPLE / "arxiv-single.xml", disguised / "page.json")
    shutil.copy(SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json", disguised / "feed.txt")
    (disguised / "snap.bin").write_bytes(
        gzip.compress((SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_bytes()))
    (disguised / "paper.dat").write_bytes(b"junk before header\n%PDF-1.7\n%\xe2\xe3\n")
    report = _import(vault_paths, disguised)
    kinds = {r.original_name: (r.kind, r.wrapper) for r in report.added}
    assert kinds == {
        "page.json": ("oai_pmh", None),
        "feed.txt": ("arxiv_api", "recorded_http"),
        "snap.bin": ("arxiv_snapshot", "gzip"),
        "paper.dat": ("pdf", None),
    }
    assert report.rejected == []


@pytest.mark.parametrize(("content", "reason"), [
    (b"", "empty file"),
    ("Grüße, keine Daten".encode("latin-1"), "not UTF-8"),
    (b"<html><body>hello</body></html>", "neither an arXiv Atom feed nor OAI-PMH"),
    (b'{"hello": "world"}', "not an arXiv Atom feed"),
    (b"plain text notes", "not an arXiv Atom feed"),
])
def test_unrecognised_files_are_kept_out(vault_paths: VaultPaths, tmp_path: Path,
                                         content: bytes, reason: str) -> None:
    path = tmp_path / "file"
    path.write_bytes(content)
    report = _import(vault_paths, path)
    assert report.added == []
    assert len(report.rejected) == 1 and reason in report.rejected[0][1]


@pytest.mark.parametrize(("name", "reason"), [
    ("atom_error_feed.xml", "arXiv API error feed: incorrect id format"),
    ("oai_error_badresumptiontoken.xml", "OAI-PMH error badResumptionToken"),
    ("oai_error_norecordsmatch.xml", "OAI-PMH error noRecordsMatch"),
])
def test_error_envelopes_are_kept_out(vault_paths: VaultPaths, name: str, reason: str) -> None:
    report = _import(vault_paths, DATA / name)
    assert report.added == [] and reason in report.rejected[0][1]


def test_truncated_xml_and_http_error_recordings(vault_paths: VaultPaths, tmp_path: Path) -> None:
    page = (DATA / "oai_arxivraw_listrecords.xml").read_bytes()
    (tmp_path / "cut.xml").write_bytes(page[: len(page) // 2])
    (tmp_path / "rec400.json").write_text(json.dumps({
        "url": "https://export.arxiv.org/api/query?id_list=1234.12345", "status_code": 400,
        "body": (DATA / "atom_error_feed.xml").read_text()}))
    report = _import(vault_paths, tmp_path)
    reasons = dict((Path(p).name, r) for p, r in report.rejected)
    assert "malformed XML" in reasons["cut.xml"] and "line" in reasons["cut.xml"]
    assert "recorded HTTP 400" in reasons["rec400.json"]
    logged = pl.read_parquet(vault_paths.table("import_rejects"))
    assert sorted(Path(p).name for p in logged.get_column("path")) == ["cut.xml", "rec400.json"]


def test_immutable_and_idempotent(vault_paths: VaultPaths) -> None:
    zone = RawZone(vault_paths)
    first = zone.import_paths([SAMPLE])
    stored = {r.sha256: zone.absolute(r).stat().st_mtime_ns for r in first.added}
    second = zone.import_paths([SAMPLE])
    sample_files = len(list(SAMPLE.iterdir()))
    assert len(first.added) == sample_files and second.added == []
    assert {r.sha256 for r in second.already_present} == set(stored)
    assert {r.sha256: zone.absolute(r).stat().st_mtime_ns for r in zone.files()} == stored
    for record in zone.files():
        assert record.path.endswith(zone.absolute(record).name)
        assert record.sha256 in record.path
    manifest = zone.manifest()
    assert manifest.height == manifest.get_column("sha256").n_unique() == sample_files


def test_a_folder_import_never_follows_a_link_out_of_it(vault_paths: VaultPaths,
                                                        tmp_path: Path) -> None:
    outside = tmp_path / "private"
    (outside / "deep").mkdir(parents=True)
    shutil.copy(SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json", outside / "secret.xml")
    (outside / "deep" / "paper.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\n")
    given = tmp_path / "given"
    (given / "sub").mkdir(parents=True)
    shutil.copy(SAMPLE / "arxiv-single.xml", given / "sub" / "page.xml")
    (given / "out.xml").symlink_to(outside / "secret.xml")
    (given / "up.xml").symlink_to(Path("..") / "private" / "secret.xml")
    (given / "outdir").symlink_to(outside / "deep", target_is_directory=True)
    (given / "same.xml").symlink_to(Path("sub") / "page.xml")  # inside: taken
    report = _import(vault_paths, given)
    assert len(report.added) == 1 and len(report.already_present) == 1  # page.xml, twice
    refused = dict(report.rejected)
    assert set(refused) == {str(given / "out.xml"), str(given / "up.xml")}
    assert all("outside" in reason and "not followed" in reason for reason in refused.values())
    stored = RawZone(vault_paths).files()
    assert all("private" not in (r.origin or "") for r in stored)
    rejects = pl.read_parquet(vault_paths.tables / "import_rejects.parquet")
    assert rejects["sha256"].null_count() == 2  # the outside file is not even read
