"""OpenReview submission PDFs: fetched through the polite client from a local server that
answers as OpenReview does (a PDF, a 404, an HTML error page with status 200, a 429 with
Retry-After, a note's PDF edits), converted by the documents stage keyed by forum id, with
the abstract and the reason where there is no PDF, and read by the evaluation inputs."""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa
import pymupdf

from testing.sources_replay import ReplayServer, Reply, harvest_context
from vault_pipeline.documents.build import DocumentsConfig, build_documents
from vault_pipeline.documents.forums import forum_of
from vault_pipeline.documents.workers import PoolSettings
from vault_pipeline.evalsets.inputs import attach_representations
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENTS, SUBMISSIONS
from vault_pipeline.sources import openreview_pdf

VENUE = "ICLR.cc/2025/Conference"  # the default review venue
PDF_TYPE = "application/pdf"
JSON = "application/json"


def _pdf(text: str) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Sparse Routing for Long Contexts", fontsize=16)
    page.insert_text((72, 110), text, fontsize=11)
    return doc.tobytes()


def _submissions(paths, rows: list[dict]) -> None:
    full = [{"venue_id": VENUE, "review_count": 3, "raw_sha256": "0" * 64,
             "abstract": f"Abstract of {r['forum_id']}.", "title": f"Title {r['forum_id']}",
             **r} for r in rows]
    paths.store.write(SUBMISSIONS, pa.Table.from_pylist(full, schema=SUBMISSIONS.arrow))


FORUMS = [
    {"forum_id": "fOK", "pdf": "/pdf/aaa.pdf"},
    {"forum_id": "fGone", "pdf": "/pdf/bbb.pdf"},  # 404
    {"forum_id": "fHtml", "pdf": "/pdf/ccc.pdf"},  # 200 with an HTML error page
    {"forum_id": "fBusy", "pdf": "/pdf/ddd.pdf"},  # 429 Retry-After: 1, then the PDF
    {"forum_id": "fNone", "pdf": None},  # no public PDF: nothing asked
    {"forum_id": "fOther", "pdf": "/pdf/eee.pdf", "venue_id": "Other.cc/2025/Workshop"},
]


def _serve(server: ReplayServer) -> None:
    server.add("/or2/pdf", Reply(body=_pdf("The body of the accepted submission."),
                                 content_type=PDF_TYPE), id="fOK")
    server.add("/or2/pdf", Reply(404, json.dumps(
        {"name": "NotFoundError", "message": "The Note fGone was not found", "status": 404}),
        content_type=JSON), id="fGone")
    server.add("/or2/pdf", Reply(body="<!DOCTYPE html><html><body>Service temporarily "
                                      "unavailable</body></html>",
                                 content_type="text/html"), id="fHtml")
    server.add("/or2/pdf", Reply(429, json.dumps({"name": "RateLimitError"}),
                                 {"Retry-After": "1"}, JSON),
               Reply(body=_pdf("The body of a busy afternoon."), content_type=PDF_TYPE),
               id="fBusy")
    server.add("/or2/notes/edits", Reply(body=json.dumps({"edits": [
        {"id": "eNew", "tcdate": 2000, "note": {"id": "fOK", "content": {
            "pdf": {"value": "/pdf/aaa.pdf"}}}},
        {"id": "eTitle", "tcdate": 1500, "note": {"id": "fOK", "content": {
            "title": {"value": "A retitling, no PDF"}}}},
        {"id": "eOld", "tcdate": 1000, "note": {"id": "fOK", "content": {
            "pdf": {"value": "/pdf/old.pdf"}}}}], "count": 3}), content_type=JSON),
        **{"note.id": "fOK"})
    server.add("/or2/notes/edits", Reply(body=json.dumps({"edits": [], "count": 0}),
                                         content_type=JSON))
    server.add("/or2/references/pdf", Reply(body=_pdf("The first submitted version."),
                                            content_type=PDF_TYPE), id="eOld")


def test_submission_pdfs_are_fetched_politely_and_failures_recorded(vault_paths) -> None:
    _submissions(vault_paths, FORUMS)
    with ReplayServer() as server:
        _serve(server)
        with harvest_context(vault_paths, server) as ctx:
            items, plan = openreview_pdf.plan(ctx)
            assert [i.forum_id for i in items] == ["fBusy", "fGone", "fHtml", "fOK"]
            assert (plan.submissions, plan.without_pdf) == (5, 1)  # not the other venue's
            report = openreview_pdf.fetch(ctx, items, revisions=True, report=plan)
            again, _ = openreview_pdf.plan(ctx)
        busy = server.requests("/or2/pdf")
        waited = [s.at for s in busy if s.query["id"] == "fBusy"]
        assert len(waited) == 2 and waited[1] - waited[0] >= 0.9  # Retry-After honoured
        # the edit that set an earlier PDF; not the retitling, nor the current PDF's edit
        assert [s.query["id"] for s in server.requests("/or2/references/pdf")] == ["eOld"]
    assert (report.fetched, report.revisions, len(report.failed)) == (2, 1, 2)
    failed = dict(report.failed)
    assert "HTTP 404" in failed["fGone"] and "was not found" in failed["fGone"]
    assert failed["fHtml"].startswith("not a PDF (text/html") and "DOCTYPE" in failed["fHtml"]
    assert again == []  # stored or failed for good: nothing asked again
    names = {r.original_name for r in RawZone(vault_paths).files(["pdf"])}
    assert names == {"openreview-fOK.pdf", "openreview-fBusy.pdf",
                     "openreview-fOK.rev-eOld.pdf"}
    cursor = json.loads((vault_paths.home / "harvest" / "cursors" /
                         f"{openreview_pdf.CURSOR}.json").read_text())
    assert cursor["fGone"]["stored"] is False and "404" in cursor["fGone"]["reason"]
    assert set(cursor["fOK"]["revisions"]) == {"eOld"}

    # a new revision (the note's `pdf` field changed) is asked again; a failure otherwise
    # only with retry_failed
    _submissions(vault_paths, [{**f, "pdf": "/pdf/bbb2.pdf"} if f["forum_id"] == "fGone"
                               else f for f in FORUMS])
    with ReplayServer() as server, harvest_context(vault_paths, server) as ctx:
        assert [i.forum_id for i in openreview_pdf.plan(ctx)[0]] == ["fGone"]
        assert [i.forum_id for i in openreview_pdf.plan(ctx, retry_failed=True)[0]] == [
            "fGone", "fHtml"]


def test_documents_key_openreview_pdfs_by_forum_and_fall_back_to_the_abstract(
        vault_paths) -> None:
    _submissions(vault_paths, FORUMS)
    with ReplayServer() as server:
        _serve(server)
        with harvest_context(vault_paths, server) as ctx:
            items, _ = openreview_pdf.plan(ctx)
            openreview_pdf.fetch(ctx, items, revisions=True)
    # a damaged download imported by hand for fHtml: converted, fails, abstract with reason
    broken = vault_paths.home.parent / "openreview-fHtml.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 50)
    RawZone(vault_paths).import_paths([broken])
    report = build_documents(vault_paths,
                             DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)))
    docs = pl.read_parquet(vault_paths.table(DOCUMENTS.name))
    rows = {r["forum_id"]: r for r in docs.iter_rows(named=True)}
    assert set(rows) == {"fOK", "fGone", "fHtml", "fBusy", "fNone", "fOther"}
    assert docs["arxiv_id"].null_count() == docs.height  # forum rows, no arXiv id
    ok = rows["fOK"]
    assert (ok["source"], ok["status"], ok["input_name"]) == ("pdf", "ok",
                                                               "openreview-fOK.pdf")
    assert "accepted submission" in ok["text"] and "first submitted" not in ok["text"]
    assert rows["fBusy"]["status"] == "ok" and "busy afternoon" in rows["fBusy"]["text"]
    gone = rows["fGone"]
    assert (gone["source"], gone["status"]) == ("abstract_only", "no_source")
    assert "Abstract of fGone." in gone["text"] and "raw zone" in gone["error"]
    assert "no public PDF" in rows["fNone"]["error"]
    damaged = rows["fHtml"]
    assert damaged["source"] == "abstract_only" and damaged["status"] not in ("ok", "no_source")
    assert "Abstract of fHtml." in damaged["text"] and damaged["error"].startswith("pdf: ")
    assert report.converted == 3  # fOK, fBusy, the damaged one; the revision is not

    frame = pl.DataFrame({"forum_id": ["fOK", "fGone", "fHtml"],
                          "arxiv_id": [None, "2501.00002", None],
                          "title": ["T1", "T2", "T3"], "abstract": ["A1", "A2", "A3"]})
    arxiv_doc = pl.DataFrame({"arxiv_id": ["2501.00002"], "forum_id": [None],
                              "source": ["latex"], "status": ["ok"],
                              "text": ["## Intro\n\nThe arXiv text."], "truncated": [False],
                              "n_chars": [25], "error": [None]},
                             schema_overrides={"forum_id": pl.String, "error": pl.String})
    both = pl.concat([docs, arxiv_doc], how="diagonal_relaxed")
    inputs = {r["forum_id"]: r for r in attach_representations(frame, both, 30_000)
              .iter_rows(named=True)}
    assert inputs["fOK"]["full_text_source"] == "openreview_pdf"
    assert "accepted submission" in inputs["fOK"]["full_text"]
    assert inputs["fGone"]["full_text_source"] == "latex"  # its arXiv match, since no PDF
    assert inputs["fHtml"]["full_text_source"] == "abstract_only"
    assert inputs["fHtml"]["full_text"] == "T3\n\nA3"
    assert inputs["fHtml"]["full_text_note"].startswith("no converted OpenReview PDF (pdf: ")


def test_forum_ids_are_read_from_the_names_the_harvest_stores() -> None:
    assert forum_of("openreview-fOK.pdf", "http://h/or2/pdf?id=fOK") == ("fOK", False)
    assert forum_of("openreview-a_b-C.rev-e1.pdf", None) == ("a_b-C", True)
    assert forum_of("openreview-x.pdf", "http://h/or1/references/pdf?id=r1") == ("x", True)
    assert forum_of("2202.12139v1.pdf", "https://arxiv.org/pdf/2202.12139v1") == (None, False)


def test_api_v1_venues_read_their_references(vault_paths) -> None:
    """A venue on API v1: the PDF from the v1 base, revisions from the note's references
    (`/references?referent=&original=true`), each read from `/references/pdf`."""
    from vault_pipeline.sources.settings import VenueSettings

    _submissions(vault_paths, [{"forum_id": "fV1", "pdf": "/pdf/current.pdf"}])
    with ReplayServer() as server:
        server.add("/or1/pdf", Reply(body=_pdf("Version two."), content_type=PDF_TYPE),
                   id="fV1")
        server.add("/or1/references", Reply(body=json.dumps({"references": [
            {"id": "r2", "tcdate": 3, "content": {"pdf": "/pdf/current.pdf"}},
            {"id": "r1", "tcdate": 2, "content": {"title": "Retitled"}},
            {"id": "r0", "tcdate": 1, "content": {"pdf": "/pdf/first.pdf"}}]}),
            content_type=JSON), referent="fV1", original="true")
        server.add("/or1/references/pdf", Reply(body=_pdf("Version one."),
                                                content_type=PDF_TYPE), id="r0")
        venues = (VenueSettings(VENUE, api=1),)
        with harvest_context(vault_paths, server, openreview={"venues": venues}) as ctx:
            items, _ = openreview_pdf.plan(ctx)
            report = openreview_pdf.fetch(ctx, items, revisions=True)
        assert server.requests("/or2/pdf") == []
        assert [s.query["id"] for s in server.requests("/or1/references/pdf")] == ["r0"]
    assert (report.fetched, report.revisions, report.failed) == (1, 1, [])
    names = {r.original_name for r in RawZone(vault_paths).files(["pdf"])}
    assert names == {"openreview-fV1.pdf", "openreview-fV1.rev-r0.pdf"}
