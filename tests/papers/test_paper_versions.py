"""Version histories: every parser keeps the versions it lists, `paper_versions` keeps the
title and abstract of an earlier version a source described, and `vault_versions` picks the
last version created before the cutoff, saying so where its text is unknown."""

import io
from datetime import date

import polars as pl

from tests.conftest import DATA, SAMPLE
from vault_pipeline.papers.build import build_papers
from vault_pipeline.papers.versions import vault_versions
from vault_pipeline.parse.atom import parse_atom
from vault_pipeline.parse.oai import parse_oai
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import PAPER_VERSIONS, PAPERS
from vault_pipeline.store.paths import VaultPaths

CUTOFF = date(2007, 4, 2)
VERSIONED = DATA / "atom_versioned_0704.0008v1.xml"


def test_arxivraw_and_api_list_their_versions() -> None:
    first, _second, _deleted = parse_oai(io.BytesIO(
        (DATA / "oai_arxivraw_listrecords.xml").read_bytes()))
    assert first["versions"] == [{"version": 1, "created": date(2007, 3, 31)},
                                 {"version": 2, "created": date(2008, 12, 13)},
                                 {"version": 3, "created": date(2026, 11, 2)}]
    old, v1 = parse_atom(io.BytesIO((DATA / "atom_old_style.xml").read_bytes()))
    assert old["versions"] == [{"version": 1, "created": date(1999, 1, 4)},
                               {"version": 2, "created": date(1999, 3, 15)}]
    assert v1["versions"] == [{"version": 1, "created": date(2007, 4, 2)}]


def _papers(paths: VaultPaths, *extra) -> tuple[pl.DataFrame, pl.DataFrame]:
    RawZone(paths).import_paths([SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl", *extra])
    build_papers(paths)
    return paths.store.read(PAPERS), paths.store.read(PAPER_VERSIONS)


def test_snapshot_history_and_an_earlier_versions_own_abstract(vault_paths: VaultPaths) -> None:
    papers, earlier = _papers(vault_paths, VERSIONED)
    row = papers.filter(pl.col("arxiv_id") == "0704.0008").row(0, named=True)
    assert row["latest_version"] == 3 and row["source"] == "arxiv_snapshot"
    assert [v["version"] for v in row["versions"]] == [1, 2, 3]
    assert row["versions"][0]["created"] == date(2007, 3, 31)
    (v1,) = earlier.iter_rows(named=True)
    assert (v1["arxiv_id"], v1["version"], v1["created"]) == ("0704.0008", 1,
                                                              date(2007, 3, 31))
    assert v1["title"].endswith("(first version)") and v1["source"] == "arxiv_api"


def test_the_vault_holds_the_last_version_before_the_cutoff(vault_paths: VaultPaths) -> None:
    papers, earlier = _papers(vault_paths, VERSIONED)
    chosen = vault_versions(papers, earlier, CUTOFF)
    early = papers.filter(pl.col("published") < CUTOFF)
    assert chosen.height == early.height
    revised = chosen.filter("revised")
    assert revised.height == early.filter(pl.col("updated") >= CUTOFF).height == 41
    assert (revised["created"] < CUTOFF).all() and revised["version"].null_count() == 0
    assert (revised["version"] < revised["latest_version"]).all()
    by_id = {r["arxiv_id"]: r for r in chosen.iter_rows(named=True)}
    known = by_id["0704.0008"]  # its v1 abstract came from the API
    assert known["version"] == 1 and known["abstract"].startswith("Constructed v1 abstract")
    assert known["note"] is None
    unknown = by_id["0704.0013"]  # only the latest abstract is known: none is used
    latest = papers.filter(pl.col("arxiv_id") == "0704.0013")["abstract"][0]
    assert unknown["version"] == 1 and unknown["abstract"] is None
    assert "abstract of v1 unknown" in unknown["note"] and latest not in str(unknown)
    plain = chosen.filter(~pl.col("revised"))
    assert (plain["version"] == plain["latest_version"]).all()
    assert plain["abstract"].null_count() == plain.height  # `papers` holds theirs


def test_a_revision_without_history_has_no_version() -> None:
    papers = pl.DataFrame({
        "arxiv_id": ["1401.2122"], "latest_version": [None], "published": [date(2014, 1, 9)],
        "updated": [date(2017, 10, 23)], "versions": [None], "title": ["T"],
        "abstract": ["A"]}, schema_overrides={
        "latest_version": pl.Int32, "versions": PAPERS.polars["versions"]})
    (row,) = vault_versions(papers, None, date(2015, 1, 1)).iter_rows(named=True)
    assert row["revised"] and row["version"] is None and row["abstract"] is None
    assert "no source lists its earlier versions" in row["note"]


def test_splits_keep_a_revised_paper_with_a_known_earlier_version() -> None:
    from testing.splits_vault import CUTOFF as SPLIT_CUTOFF
    from testing.splits_vault import papers_frame, views_frame
    from vault_pipeline.splits.build import REVISED, compute_splits
    from vault_pipeline.splits.settings import SplitSettings

    history = [{"version": 1, "created": date(2024, 1, 10)},
               {"version": 2, "created": date(2026, 3, 2)}]
    revised = pl.col("arxiv_id").is_in(["2401.00001", "2402.00002"])
    papers = papers_frame().with_columns(
        updated=pl.when(revised).then(pl.lit(date(2026, 3, 2))).otherwise("updated"),
        latest_version=pl.when(revised).then(pl.lit(2, pl.Int32)).otherwise("latest_version"),
        versions=pl.when(pl.col("arxiv_id") == "2401.00001")
        .then(pl.lit(history, PAPERS.polars["versions"])))
    frame, report = compute_splits(papers, views_frame(), None, None, None,
                                   SplitSettings(cutoff=SPLIT_CUTOFF))
    rows = {r["arxiv_id"]: r for r in frame.iter_rows(named=True)}
    kept = rows["2401.00001"]
    assert (kept["split"], kept["version"]) == ("vault", 1)
    assert "revised after it (v2 of 2026-03-02): the vault holds v1 of 2024-01-10" in \
        kept["reason"]
    lost = rows["2402.00002"]  # revised after the cutoff, no history: nothing safe to hold
    assert lost["split"] == "excluded" and lost["version"] is None
    assert "no source lists its earlier versions" in lost["reason"]
    assert report.excluded_by_reason[REVISED] == 1
    assert rows["2601.00007"]["version"] == 1  # a target: its latest


def test_ideas_inputs_read_the_held_version_or_withhold_the_paper() -> None:
    from vault_pipeline.llm.inputs import Withheld, load_inputs

    history = [{"version": 1, "created": date(2007, 3, 31)},
               {"version": 2, "created": date(2008, 5, 26)}]
    papers = pl.DataFrame({
        "arxiv_id": ["A", "B", "C"], "latest_version": [2, 2, 1],
        "title": ["Later title"] * 2 + ["Plain"], "abstract": ["LATER ABSTRACT"] * 2 + ["P"],
        "published": [date(2007, 3, 31)] * 3,
        "updated": [date(2008, 5, 26)] * 2 + [date(2007, 3, 31)],
        "versions": [history, history, None]},
        schema_overrides={"latest_version": pl.Int32, "versions": PAPERS.polars["versions"]})
    documents = pl.DataFrame({
        "arxiv_id": ["A", "B"], "version": [1, 2], "source": ["pdf", "pdf"],
        "status": ["ok", "ok"], "text": ["# First title\n\nAbstract\nOwn v1 abstract.\n\n"
                                         "# Intro\nBody.", "# Later\nLATER BODY"],
        "references": [None, None], "error": [None, None]},
        schema_overrides={"version": pl.Int32})
    withheld: list[Withheld] = []
    inputs = {p.arxiv_id: p for p in load_inputs(
        papers, documents, vault_versions(papers, None, CUTOFF), withheld)}
    a = inputs["A"]
    assert (a.version, a.title, a.abstract) == (1, "First title", "Own v1 abstract.")
    assert "LATER" not in a.markdown() and "read from the full text of v1" in a.note
    assert [w.arxiv_id for w in withheld] == ["B"]  # only v2's text: withheld
    assert "document of v2, not of v1" in withheld[0].reason
    assert (inputs["C"].version, inputs["C"].abstract) == (1, "P")


def test_splits_name_vault_views_read_from_a_later_version() -> None:
    from testing.splits_vault import CUTOFF as SPLIT_CUTOFF
    from testing.splits_vault import papers_frame, views_frame
    from vault_pipeline.splits.build import compute_splits
    from vault_pipeline.splits.settings import SplitSettings

    history = [{"version": 1, "created": date(2024, 1, 10)},
               {"version": 2, "created": date(2026, 3, 2)}]
    one = pl.col("arxiv_id") == "2401.00001"
    papers = papers_frame().with_columns(
        updated=pl.when(one).then(pl.lit(date(2026, 3, 2))).otherwise("updated"),
        latest_version=pl.when(one).then(pl.lit(2, pl.Int32)).otherwise("latest_version"),
        versions=pl.when(one).then(pl.lit(history, PAPERS.polars["versions"])))
    views = views_frame().with_columns(  # decomposed at another cutoff, from v2
        version=pl.when(one).then(pl.lit(2, pl.Int32)).otherwise(pl.lit(1, pl.Int32)))
    frame, report = compute_splits(papers, views, None, None, None,
                                   SplitSettings(cutoff=SPLIT_CUTOFF))
    row = frame.filter(one).row(0, named=True)
    assert row["split"] == "vault" and row["version"] == 1
    assert row["reason"].endswith("its views are of v2, written after the cutoff, so not in "
                                  "the index")
    assert any("1 vault paper(s) have views read from a version" in w
               for w in report.warnings)
