"""OpenReview through openreview-py against a local replay server (API v2 pages), then the
`submissions` and `reviews` tables built from the raw zone."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from testing.sources_replay import ReplayServer, Reply, data, harvest_context
from tests.conftest import DATA
from vault_pipeline.parse.openreview import normalise_decision, parse_notes_page, score
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.schemas import PAPERS
from vault_pipeline.sources import openreview
from vault_pipeline.sources.settings import VenueSettings

VENUE = VenueSettings("ICLR.cc/2025/Conference")
JSON = "application/json; charset=utf-8"


def _serve(server: ReplayServer, *first: Reply) -> None:
    server.add("/or2/groups", Reply(body=data("openreview_group.json"), content_type=JSON),
               id=VENUE.id)
    server.add("/or2/notes", *(first or (Reply(body=data("openreview_notes_p1.json"),
                                               content_type=JSON),)),
               invitation=f"{VENUE.id}/-/Submission", count="true")
    server.add("/or2/notes", Reply(body=data("openreview_notes_p2.json"), content_type=JSON),
               after="Gq7tR2bC4d")


def _ctx(vault_paths, server):
    return harvest_context(vault_paths, server, openreview={"page_size": 2})


def _rate_limited(seen) -> Reply:
    reset = (datetime.now(UTC) + timedelta(seconds=1)).isoformat().replace("+00:00", "Z")
    body = json.loads(data("openreview_429.json"))
    body["details"]["resetTime"] = reset
    return Reply(429, json.dumps(body), content_type=JSON)


def test_a_venue_is_listed_through_openreview_py_into_the_raw_zone(vault_paths) -> None:
    with ReplayServer() as server:
        _serve(server)
        with _ctx(vault_paths, server) as ctx:
            report = openreview.harvest_venue(ctx, VENUE)
        notes = server.requests("/or2/notes")
        assert [n.query.get("after") for n in notes] == [None, "Gq7tR2bC4d"]
        assert notes[0].query["details"] == "replies" and notes[0].query["sort"] == "id"
        assert "research-idea-vault" in notes[0].headers["user-agent"]
        assert "authorization" not in notes[0].headers  # guest read without credentials
    assert (report.pages, report.notes, report.total) == (2, 3, 3)
    kinds = sorted(f.kind for f in ctx.zone.files())
    assert kinds == ["openreview_groups", "openreview_notes", "openreview_notes"]


def test_tables_from_the_pages(vault_paths) -> None:
    vault_paths.store.write(PAPERS, pl.DataFrame({
        "arxiv_id": ["2611.00001", "2611.00002"], "latest_version": [1, 1],
        "title": ["Sparse retrieval with learned PEBBLES", "A Constructed Study of Negative "
                  "Results"],
        "abstract": ["a", "b"], "authors": [["A. Example"], ["Someone Else"]],
        "categories": [["cs.LG"], ["cs.LG"]], "primary_category": ["cs.LG", "cs.LG"],
        "published": [datetime(2026, 1, 1).date()] * 2,
        "updated": [datetime(2026, 1, 1).date()] * 2,
        "doi": [None, None], "journal_ref": [None, None], "comments": [None, None],
        "license": [None, None], "source": ["arxiv_api"] * 2, "raw_sha256": ["x", "x"],
        "versions": [None, None]},
        schema_overrides={"latest_version": pl.Int32, "versions": PAPERS.polars["versions"]}))
    with ReplayServer() as server:
        _serve(server)
        with _ctx(vault_paths, server) as ctx:
            openreview.harvest_venue(ctx, VENUE)
    report = build_reviews(vault_paths)
    subs = pl.read_parquet(vault_paths.table("submissions")).sort("number")
    assert subs.get_column("decision").to_list() == ["Accept (oral)", "Reject", "Withdrawn"]
    assert subs.get_column("ratings").to_list() == [[8.0, 10.0, 6.0], [3.0, 5.0], [1.0]]
    assert subs.get_column("mean_rating").to_list() == [8.0, 4.0, 1.0]
    # title + shared surname → matched; same title but no shared author → not matched
    assert subs.get_column("arxiv_id").to_list() == ["2611.00001", None, None]
    reviews = pl.read_parquet(vault_paths.table("reviews"))
    assert reviews.group_by("kind").len().sort("kind").rows() == [
        ("decision", 2), ("meta_review", 1), ("review", 6)]
    oral = reviews.filter(pl.col("note_id") == "Rv1aaaa1111").row(0, named=True)
    assert (oral["rating"], oral["confidence"], oral["soundness"], oral["contribution"]) == (
        8.0, 4.0, 3.0, 4.0)
    assert "## weaknesses" in oral["text"]
    assert report.ignored_replies == {"Official_Comment": 1}


def test_pages_seen_twice_give_no_duplicates(vault_paths) -> None:
    with ReplayServer() as server:
        _serve(server)
        with _ctx(vault_paths, server) as ctx:
            openreview.harvest_venue(ctx, VENUE)
            openreview.harvest_venue(ctx, VENUE, refresh=True)
    build_reviews(vault_paths)
    assert pl.read_parquet(vault_paths.table("submissions")).height == 3
    assert pl.read_parquet(vault_paths.table("reviews")).height == 9


def test_rate_limit_waits_for_the_reset_time(vault_paths) -> None:
    with ReplayServer() as server:
        _serve(server, _rate_limited,
               Reply(body=data("openreview_notes_p1.json"), content_type=JSON))
        with _ctx(vault_paths, server) as ctx:
            report = openreview.harvest_venue(ctx, VENUE)
        limited, retried = server.requests("/or2/notes")[:2]
        assert retried.at - limited.at >= 0.9
    assert report.notes == 3


def test_crash_after_the_first_page_resumes_after_its_last_note(vault_paths) -> None:
    class Crash(Exception):
        pass

    def crash(_done, _total, _note):
        raise Crash

    with ReplayServer() as server:
        _serve(server)
        with _ctx(vault_paths, server) as ctx:
            ctx.progress = crash
            with pytest.raises(Crash):
                openreview.harvest_venue(ctx, VENUE)
        with _ctx(vault_paths, server) as ctx:
            report = openreview.harvest_venue(ctx, VENUE)
        assert report.resumed and report.pages == 1
        assert [n.query.get("after") for n in server.requests("/or2/notes")] == [
            None, "Gq7tR2bC4d"]


def test_token_from_the_environment_is_sent_and_never_stored(vault_paths, monkeypatch) -> None:
    monkeypatch.setenv("OPENREVIEW_TOKEN", "secret-token-value")
    with ReplayServer() as server:
        _serve(server)
        with _ctx(vault_paths, server) as ctx:
            openreview.harvest_venue(ctx, VENUE)
        assert server.requests("/or2/notes")[0].headers["authorization"] == \
            "Bearer secret-token-value"
    leaked = [p for p in vault_paths.home.rglob("*") if p.is_file()
              and b"secret-token-value" in p.read_bytes()]
    assert leaked == []


def test_decision_poll_counts_each_bucket(vault_paths) -> None:
    one = Reply(body=json.dumps({"notes": [], "count": 7}), content_type=JSON)
    with ReplayServer() as server:
        server.add("/or2/notes", one)
        with harvest_context(vault_paths, server) as ctx:
            counts = openreview.decision_counts(ctx, VENUE)
        assert counts == {"accepted": 7, "rejected": 7, "withdrawn": 7, "desk_rejected": 7}
        assert {s.query["content.venueid"] for s in server.log} == {
            VENUE.id, f"{VENUE.id}/Rejected_Submission", f"{VENUE.id}/Withdrawn_Submission",
            f"{VENUE.id}/Desk_Rejected_Submission"}


@pytest.mark.parametrize(("raw", "expected"), [
    (6, 6.0), ("6: marginally above the acceptance threshold", 6.0), ({"value": 8}, 8.0),
    ({"value": "3 good"}, 3.0), ("strong accept", None), (True, None), (None, None)])
def test_scores_of_every_era(raw, expected) -> None:
    assert score(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("Accept (Oral)", "Accept (oral)"), ("Accept: notable-top-5%", "Accept (oral)"),
    ("Accept (spotlight)", "Accept (spotlight)"), ("Accept: poster", "Accept (poster)"),
    ("Reject", "Reject"), ("Desk Reject", "Desk rejected"), ("Accept", "Accept")])
def test_decision_wordings(raw, expected) -> None:
    assert normalise_decision(raw) == expected


def test_api_v1_notes_are_read_too() -> None:
    v1 = {"notes": [{
        "id": "S1", "forum": "S1", "number": 5, "invitation": "ICLR.cc/2023/Conference/-/"
        "Blind_Submission", "cdate": 1663000000000, "tmdate": 1675000000000,
        "content": {"title": "Old style", "authors": ["Ann Old"], "venue": "ICLR 2023 poster",
                    "venueid": "ICLR.cc/2023/Conference"},
        "details": {"directReplies": [
            {"id": "R1", "forum": "S1", "invitation": "ICLR.cc/2023/Conference/Paper5/-/"
             "Official_Review", "content": {"recommendation": "8: accept, good paper",
                                            "confidence": "4: confident"}},
            {"id": "D1", "forum": "S1", "invitation": "ICLR.cc/2023/Conference/Paper5/-/"
             "Decision", "content": {"decision": "Accept: poster"}}]}}]}
    subs, replies, _ = parse_notes_page(v1)
    assert subs[0]["venue_id"] == "ICLR.cc/2023/Conference" and subs[0]["title"] == "Old style"
    assert [(r["kind"], r["decision"]) for r in replies] == [
        ("review", "8: accept, good paper"), ("decision", "Accept (poster)")]
    assert (replies[0]["rating"], replies[0]["confidence"]) == (8.0, 4.0)


def test_v1_invitations_of_every_form_from_an_openreview_py_dump(vault_paths) -> None:
    """ICLR 2019 and a NeurIPS 2018 workshop, `<venue>/-/Paper<N>/<Reply>` invitations, as a
    JSON list of `Note.to_json()` objects (how openreview-py scripts save notes)."""
    report = RawZone(vault_paths).import_paths([DATA / "openreview_py_v1_notes.json"])
    assert report.rejected == [] and report.added[0].kind == "openreview_notes"
    build = build_reviews(vault_paths)
    assert build.ignored_replies == {}
    subs = pl.read_parquet(vault_paths.table("submissions")).sort("venue_id")
    assert subs.select("venue_id", "decision", "ratings", "review_count").to_dicts() == [
        {"venue_id": "ICLR.cc/2019/Conference", "decision": "Accept (poster)",
         "ratings": [7.0, 4.0], "review_count": 2},
        {"venue_id": "NIPS.cc/2018/Workshop/IRASL", "decision": "Accept",
         "ratings": [3.0], "review_count": 1},
    ]
    kinds = pl.read_parquet(vault_paths.table("reviews"))["kind"].value_counts()
    assert dict(kinds.iter_rows()) == {"review": 3, "meta_review": 1, "decision": 1}


def _openreview_py_v2_notes() -> list[dict]:
    """A submission, two reviews and a decision as openreview-py 2's `Note.to_json()`
    writes them (API v2: every content value wrapped as `{"value": ...}`, no details)."""
    from openreview.api import Note

    venue = "ICLR.cc/2025/Conference"
    reply = f"{venue}/Submission7/-/"
    notes = [
        Note(id="S7", forum="S7", invitations=[f"{venue}/-/Submission"], cdate=1727000000000,
             content={"title": {"value": "Dumped one by one"}, "abstract": {"value": "A."},
                      "venueid": {"value": venue}}),
        Note(id="R1", forum="S7", replyto="S7", invitations=[f"{reply}Official_Review"],
             content={"rating": {"value": 8}, "confidence": {"value": 4}}),
        Note(id="R2", forum="S7", replyto="S7", invitations=[f"{reply}Official_Review"],
             content={"rating": {"value": 6}, "confidence": {"value": 3}}),
        Note(id="D1", forum="S7", replyto="S7", invitations=[f"{reply}Decision"],
             content={"decision": {"value": "Accept (Oral)"}}),
    ]
    return [n.to_json() for n in notes]


@pytest.mark.parametrize("shape", ["json_lines", "one_note_per_file", "list", "pages",
                                   "page_lines"])
def test_openreview_py_v2_dumps_of_every_shape_are_imported(vault_paths, tmp_path, shape
                                                            ) -> None:
    notes = _openreview_py_v2_notes()
    if shape == "json_lines":  # `for note in notes: f.write(json.dumps(note.to_json()) + "\n")`
        files = {"notes.jsonl": "".join(json.dumps(n) + "\n" for n in notes)}
    elif shape == "one_note_per_file":  # `json.dump(note.to_json(), open(f"{note.id}.json"))`
        files = {f"{n['id']}.json": json.dumps(n, indent=2) for n in notes}
    elif shape == "pages":  # every page of a paginated fetch, saved as one list
        files = {"pages.json": json.dumps([{"notes": notes[:2], "count": 4},
                                           {"notes": notes[2:], "count": 4}])}
    elif shape == "page_lines":
        files = {"pages.jsonl": json.dumps({"notes": notes[:1]}) + "\n"
                 + json.dumps({"notes": notes[1:]}) + "\n"}
    else:
        files = {"notes.json": json.dumps(notes)}
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    report = RawZone(vault_paths).import_paths(paths)
    assert report.rejected == []
    assert {a.kind for a in report.added} == {"openreview_notes"}
    build_reviews(vault_paths)
    subs = pl.read_parquet(vault_paths.table("submissions"))
    assert subs.select("forum_id", "venue_id", "title", "decision", "ratings").to_dicts() == [
        {"forum_id": "S7", "venue_id": "ICLR.cc/2025/Conference", "title": "Dumped one by one",
         "decision": "Accept (oral)", "ratings": [8.0, 6.0]}]


def test_json_lines_that_are_not_notes_stay_malformed_json(vault_paths, tmp_path) -> None:
    bad = tmp_path / "cut.jsonl"
    bad.write_text(json.dumps(_openreview_py_v2_notes()[0]) + "\n" + '{"id": "R1", "forum"')
    report = RawZone(vault_paths).import_paths([bad])
    assert report.added == [] and "malformed JSON" in report.rejected[0][1]
