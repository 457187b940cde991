"""arXiv search API and full-text downloads against a local replay server; the raw kinds
the live clients add (OpenReview, Semantic Scholar, e-prints); the harvest config."""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
from pathlib import Path

import polars as pl
import pytest

from testing.sources_replay import ReplayServer, Reply, data, harvest_context
from vault_pipeline.errors import RawFormatError, VaultError
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.detect import detect
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.sources import arxiv_api, fulltext
from vault_pipeline.sources.settings import FulltextScope, load_config

SAMPLE = Path(__file__).parents[2] / "vault_pipeline" / "sample" / "raw"
RECORDED = json.loads((SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json").read_text())
ATOM_PAGE = RECORDED["body"]


def test_the_recorded_search_page_is_replayed_and_stored(vault_paths) -> None:
    with ReplayServer() as server:
        server.add("/api/query", Reply(body=ATOM_PAGE), search_query="all:testing")
        with harvest_context(vault_paths, server) as ctx:
            report = arxiv_api.ArxivSearch(ctx, sort_by="relevance").run("all:testing", 10)
        query = server.log[0].query
        assert (query["start"], query["max_results"], query["sortBy"]) == ("0", "10",
                                                                         "relevance")
    assert (report.entries, report.total_results, report.pages) == (10, 214881, 1)
    build_papers(vault_paths)
    assert pl.read_parquet(vault_paths.table("papers")).height == 10


def _entry(n: int) -> str:
    return (f"<entry><id>http://arxiv.org/abs/2601.{n:05d}v1</id><title>Paper {n}</title>"
            f"<updated>2026-01-02T00:00:00Z</updated><published>2026-01-02T00:00:00Z</published>"
            f"<summary>Abstract {n}.</summary><author><name>A. Writer</name></author>"
            f'<category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/></entry>')


def _feed(total: int, entries: list[int]) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"><title>q</title>'
            f"<opensearch:totalResults>{total}</opensearch:totalResults>"
            + "".join(_entry(n) for n in entries) + "</feed>")


def test_a_query_past_the_ceiling_is_split_into_date_windows(vault_paths) -> None:
    """Ceiling 10 and pages of 4 stand in for arXiv's 30,000 and 2,000."""
    def answer(seen) -> Reply:
        query, start = seen.query["search_query"], int(seen.query["start"])
        size = int(seen.query["max_results"])
        windows = re.findall(r"submittedDate:\[(\d+) TO", query)
        total = 16 if not windows else 8
        base = 0 if not windows or windows[0] < "2009" else 100
        return Reply(body=_feed(total, [base + n for n in range(start, min(start + size,
                                                                               total))]))

    with ReplayServer() as server:
        server.add("/api/query", answer)
        with harvest_context(vault_paths, server, arxiv={"result_ceiling": 10,
                                                          "page_size": 4}) as ctx:
            report = arxiv_api.ArxivSearch(ctx).run("cat:cs.LG", 12)
        sizes = [int(s.query["max_results"]) for s in server.log]
    assert report.probes == 3 and len(report.windows) == 2
    assert "split into 2 submission-date windows" in report.notes[0]
    assert max(sizes) <= 4 and report.entries == 12
    assert all(int(s.query["start"]) < 10 for s in server.log)


def test_id_lists_are_normalised_chunked_and_asked_once(vault_paths) -> None:
    with ReplayServer() as server:
        server.add("/api/query", Reply(body=(Path(__file__).parents[1] / "data" /
                                             "atom_old_style.xml").read_bytes()))
        with harvest_context(vault_paths, server, arxiv={"ids_per_request": 2}) as ctx:
            report = arxiv_api.fetch_ids(ctx, ["arXiv:hep-th/9901001v2", "0704.0001",
                                               "https://arxiv.org/abs/2202.12139v1", "nope"])
            again = arxiv_api.fetch_ids(ctx, ["hep-th/9901001"])
        assert [s.query["id_list"] for s in server.log] == [
            "hep-th/9901001,0704.0001", "2202.12139"]
    assert report.invalid == ["nope"] and again.skipped_known == 1


def _pdf() -> bytes:
    return b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def _eprint() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        body = b"\\documentclass{article}\\begin{document}Hi\\end{document}"
        info = tarfile.TarInfo("main.tex")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


def test_full_text_lands_under_names_the_documents_stage_reads(vault_paths) -> None:
    RawZone(vault_paths).import_paths([SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json"])
    build_papers(vault_paths)
    scope = FulltextScope(categories=("cs.SE",), published_from=None, max_per_run=100)
    with ReplayServer() as server:
        server.add("/pdf/2202.12139v1", Reply(body=_pdf(), content_type="application/pdf"))
        server.add("/e-print/2202.12139v1", Reply(body=_eprint(),
                                                  content_type="application/gzip"))
        with harvest_context(vault_paths, server) as ctx:
            items = fulltext.plan(ctx, scope, ids=["2202.12139", "2204.08348"])
            report = fulltext.fetch(ctx, items)
            # 2204.08348 is not served (404): recorded, not asked again
            assert [i.stem for i in fulltext.plan(ctx, scope, ids=["2202.12139",
                                                                   "2204.08348"])] == []
            assert len(fulltext.plan(ctx, scope, ids=["2204.08348"], retry_failed=True)) == 2
    assert report.fetched == 2 and len(report.failed) == 2
    stored = {f.original_name: f for f in RawZone(vault_paths).files(["pdf", "eprint"])}
    assert set(stored) == {"2202.12139v1.pdf", "arXiv-2202.12139v1.tar.gz"}
    assert stored["2202.12139v1.pdf"].origin == f"{server.url}/pdf/2202.12139v1"
    assert stored["arXiv-2202.12139v1.tar.gz"].kind == "eprint"


def test_old_style_ids_name_files_without_slashes() -> None:
    assert fulltext.file_stem("hep-th/9901001", 2) == "hep-th_9901001v2"
    single = gzip.compress(b"\\documentclass{article}")
    assert fulltext.eprint_name("arXiv-hep-th_9901001v2", single) == \
        "arXiv-hep-th_9901001v2.gz"
    assert fulltext.eprint_name("arXiv-x", _pdf()) == "arXiv-x.pdf"


@pytest.mark.parametrize(("name", "kind", "records"), [
    ("openreview_notes_p1.json", "openreview_notes", 2),
    ("openreview_group.json", "openreview_groups", 1),
    ("s2_batch.json", "s2_papers", 3)])
def test_service_pages_are_recognised_by_content(tmp_path, name, kind, records) -> None:
    path = tmp_path / "anything.bin"
    path.write_bytes(data(name))
    found = detect(path)
    assert (found.kind, found.records) == (kind, records)


@pytest.mark.parametrize(("body", "reason"), [
    (data("openreview_429.json"), "OpenReview error RateLimitError"),
    (data("s2_error.json"), "Semantic Scholar error"),
    (data("s2_429.json"), "Semantic Scholar error"),
    (data("s2_batch.json")[:100], "malformed JSON"),
    (b'[{"title": "no id"}]', "not a Semantic Scholar paper"),
    (gzip.compress(b"just some bytes", mtime=0), "nor an arXiv e-print")])
def test_error_envelopes_and_broken_bodies_are_kept_out(tmp_path, body, reason) -> None:
    path = tmp_path / "x"
    path.write_bytes(body)
    with pytest.raises(RawFormatError, match=reason):
        detect(path)


def test_config_file_then_environment(tmp_path, monkeypatch) -> None:
    config = tmp_path / "harvest.toml"
    config.write_text('[arxiv]\noai_url = "http://mirror.example/oai"\ninterval_s = 5\n'
                      '[arxiv.fulltext]\ncategories = ["cs.CL"]\npublished_until = 2026-02-01\n'
                      '[[openreview.venues]]\nid = "ICLR.cc/2023/Conference"\napi = 1\n')
    monkeypatch.setenv("VAULT_ARXIV_INTERVAL", "7.5")
    settings = load_config(None, config)
    assert settings.arxiv.oai_url == "http://mirror.example/oai"
    assert settings.arxiv.interval_s == 7.5
    assert settings.arxiv.fulltext.categories == ("cs.CL",)
    assert str(settings.arxiv.fulltext.published_until) == "2026-02-01"
    assert [(v.id, v.api) for v in settings.openreview.venues] == [
        ("ICLR.cc/2023/Conference", 1)]


@pytest.mark.parametrize(("text", "reason"), [
    ('[s2]\napi_key = "abc"\n', "secrets come from the environment"),
    ('[arxiv]\noai_ulr = "x"\n',
     r"unknown harvest.arxiv settings: \['oai_ulr'\], in harvest.toml \[arxiv\]"),
    ('[arxiv]\ninterval_s = "soon"\n', "interval_s")])
def test_bad_config_is_refused(tmp_path, text, reason) -> None:
    config = tmp_path / "harvest.toml"
    config.write_text(text)
    with pytest.raises(VaultError, match=reason):
        load_config(None, config)
