"""Identification by content: a PDF whose name says nothing is found by its arXiv stamp, a
DOI the vault knows, or its title (and first author), and the row says how."""

from __future__ import annotations

import shutil

import polars as pl
import pymupdf
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import SAMPLE
from vault_pipeline.documents.build import DocumentsConfig, build_documents
from vault_pipeline.documents.identify import (
    BY_DOI,
    BY_STAMP,
    BY_SUBMISSION,
    BY_TITLE,
    Catalog,
    Clues,
    content_clues,
    opening_key_expr,
    title_key,
    title_key_expr,
    title_windows,
)
from vault_pipeline.documents.workers import PoolSettings
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENTS
from vault_pipeline.store.paths import VaultPaths

TITLE = "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
TITLE_LINES = (("Calculation of prompt diphoton production", 16.0),
               ("cross sections at Tevatron and LHC energies", 16.0))
CATALOG = Catalog.build(
    [("0704.0001", "10.1103/PhysRevD.76.013009", TITLE, ["C. Balázs", "E. L. Berger"]),
     ("0704.0002", None, "Sparsity-certifying Graph Decompositions", None)],
    [("forum123", "A Submission Title That Is Long Enough", ["Ada Lovelace"])])


def _pdf(*lines: tuple[str, float]) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    y = 80.0
    for text, size in lines:
        page.insert_text((72, y), text, fontsize=size)
        y += size * 1.6
    return doc.tobytes()


def test_each_clue_identifies_with_its_method() -> None:
    assert CATALOG.identify(Clues(arxiv="0704.0003v2")).method == BY_STAMP
    stamp = CATALOG.identify(Clues(arxiv="hep-th/9901001v1"))
    assert (stamp.arxiv_id, stamp.version) == ("hep-th/9901001", 1)
    doi = CATALOG.identify(Clues(doi="10.1103/physrevd.76.013009"))
    assert (doi.arxiv_id, doi.method) == ("0704.0001", BY_DOI)
    title = CATALOG.identify(Clues(title=TITLE.upper(), text="C. Balázs and others"))
    assert (title.arxiv_id, title.method) == ("0704.0001", BY_TITLE)
    no_authors = CATALOG.identify(Clues(title="Sparsity-certifying graph decompositions"))
    assert no_authors.arxiv_id == "0704.0002"
    forum = CATALOG.identify(Clues(title="A submission title that is long enough",
                                   text="Ada Lovelace, somewhere"))
    assert (forum.forum_id, forum.method) == ("forum123", BY_SUBMISSION)


def test_nothing_matches_without_a_clue_the_vault_knows() -> None:
    assert CATALOG.identify(Clues()) is None
    assert CATALOG.identify(Clues(doi="10.9999/unknown")) is None
    assert CATALOG.identify(Clues(title=TITLE, text="Someone Else")) is None  # not its author
    assert CATALOG.identify(Clues(title="Introduction")) is None  # too short to tell


def test_clues_are_read_from_the_first_page() -> None:
    with pymupdf.open(stream=_pdf(*TITLE_LINES, ("C. Balázs, E. L. Berger", 11.0),
                                  ("arXiv:0704.0001v2 [hep-ph] 2 Apr 2007", 9.0),
                                  ("doi:10.1103/PhysRevD.76.013009.", 9.0))) as doc:
        clues = content_clues(doc)
    assert clues.arxiv == "0704.0001v2" and clues.doi == "10.1103/physrevd.76.013009"
    assert title_key(clues.title or "") == title_key(TITLE)
    assert Clues.from_json(clues.to_json()) == Clues(clues.arxiv, clues.doi, clues.title,
                                                      clues.text[:2000])


@given(st.text(max_size=200))
def test_clues_survive_storage(text: str) -> None:
    clues = Clues(title=text or None, text=text)
    assert Clues.from_json(clues.to_json()).title == clues.title


def _vault(paths: VaultPaths, files: dict[str, bytes], metadata: bool) -> VaultPaths:
    incoming = paths.home.parent / "incoming"
    incoming.mkdir()
    if metadata:
        shutil.copy(SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl", incoming)
    for name, data in files.items():
        (incoming / name).write_bytes(data)
    RawZone(paths).import_paths([incoming])
    build_papers(paths)
    return paths


def test_a_pdf_named_for_nothing_is_identified_by_its_title(vault_paths: VaultPaths) -> None:
    body = [(f"Line {i} of the body text of this paper goes here.", 10.0) for i in range(8)]
    paths = _vault(vault_paths, {
        "scan-0042.pdf": _pdf(*TITLE_LINES, ("C. Balázs, E. L. Berger", 11.0), *body),
        "mystery.pdf": _pdf(("An Unknown Paper About Nothing", 16.0), *body),
    }, metadata=True)
    build_documents(paths, DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)))
    docs = pl.read_parquet(paths.table(DOCUMENTS.name))
    found = docs.filter(pl.col("arxiv_id") == "0704.0001").row(0, named=True)
    assert (found["status"], found["source"], found["identified_by"]) == ("ok", "pdf", "title")
    assert found["input_name"] == "scan-0042.pdf"
    unknown = docs.filter(pl.col("arxiv_id").is_null()).row(0, named=True)
    assert unknown["status"] == "unidentified" and unknown["identified_by"] is None
    assert "no arXiv stamp, known DOI or known title" in unknown["error"]
    others = docs.filter(pl.col("arxiv_id") == "0704.0002")["identified_by"].to_list()
    assert others == ["metadata"]


def test_a_vault_of_pdfs_alone_builds_documents(vault_paths: VaultPaths) -> None:
    stamped = _pdf(("A Paper With A Stamp", 16.0), ("arXiv:2101.00001v3 [cs.CL] 1 Jan 2021",
                                                     9.0), ("Some body text here.", 10.0))
    paths = _vault(vault_paths, {"a.pdf": stamped}, metadata=False)
    build_documents(paths, DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)))
    row = pl.read_parquet(paths.table(DOCUMENTS.name)).row(0, named=True)
    assert (row["arxiv_id"], row["version"], row["identified_by"]) == ("2101.00001", 3,
                                                                       "arxiv_stamp")
    assert row["status"] == "ok"


def test_the_index_of_an_empty_split_is_empty(vault_paths: VaultPaths) -> None:
    from vault_pipeline.index.lance_index import vault_rows
    from vault_pipeline.schemas import PAPERS, SPLITS, VIEWS

    for schema in (SPLITS, PAPERS, VIEWS):
        vault_paths.store.write(schema, pl.from_arrow(schema.empty()))
    rows, _views, cutoff = vault_rows(vault_paths)
    assert rows.is_empty() and cutoff.year >= 2000


@given(st.text(alphabet=st.characters(max_codepoint=0x24F), max_size=60))
def test_the_table_filter_keys_titles_as_the_matcher_does(text: str) -> None:
    frame = pl.DataFrame({"t": [text]}, schema={"t": pl.String})
    assert frame.select(title_key_expr("t")).item() == title_key(text)


def test_a_title_clue_with_more_than_the_title_still_matches() -> None:
    """The largest lines may hold an article number (ACM's ``111``) or an ``ABSTRACT`` set
    in the title's font; the title inside them matches, longest first."""
    for title in (f"{TITLE} ABSTRACT We compute", f"111 {TITLE}"):
        found = CATALOG.identify(Clues(title=title, text="C. Balázs"))
        assert found is not None and found.arxiv_id == "0704.0001"
    assert title_windows("A B")[:1] == [] and title_windows(TITLE)[0] == title_key(TITLE)


def test_marks_raised_over_the_title_are_left_out_of_it() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Sparsity-certifying Graph", fontsize=16)
    page.insert_text((300, 74), "*,**", fontsize=9)  # raised footnote marks
    page.insert_text((330, 80), "Decompositions", fontsize=16)
    with pymupdf.open(stream=doc.tobytes()) as pdf:
        clues = content_clues(pdf)
    assert title_key(clues.title or "") == title_key("Sparsity-certifying Graph Decompositions")


def test_a_known_title_under_a_larger_banner_is_found_in_the_page_text() -> None:
    """A journal banner set larger than the title, or a logo's raised letters read as marks,
    leave the title out of the largest lines; the page's words still hold it."""
    with pymupdf.open(stream=_pdf(("TUGBOAT, VOLUME 0 (9999), NO. 0", 20.0), *TITLE_LINES,
                                  ("C. Balázs, E. L. Berger", 11.0))) as doc:
        clues = content_clues(doc)
    assert title_key(TITLE) not in title_key(clues.title or "")
    found = CATALOG.identify(clues)
    assert found is not None and (found.arxiv_id, found.method) == ("0704.0001", BY_TITLE)


def test_a_title_cited_far_down_the_first_page_identifies_nothing() -> None:
    body = " ".join(["word"] * 200)
    clues = Clues(title="An Unknown Paper About Something Else",
                  text=f"An Unknown Paper About Something Else {body} as in {TITLE} by Balázs")
    assert CATALOG.identify(clues) is None
    near = Clues(title="An Unknown Paper", text=f"BANNER {TITLE} C. Balázs {body}")
    assert CATALOG.identify(near).arxiv_id == "0704.0001"


def test_a_title_under_a_larger_banner_is_identified_by_the_stage(
        vault_paths: VaultPaths) -> None:
    """The stage loads only the papers a clue may name: a title found in the page's words,
    not its largest lines, must be among them."""
    body = [(f"Line {i} of the body text of this paper goes here.", 10.0) for i in range(8)]
    paths = _vault(vault_paths, {
        "tb.pdf": _pdf(("TUGBOAT, VOLUME 0 (9999), NO. 0", 20.0), *TITLE_LINES,
                       ("C. Balázs, E. L. Berger", 11.0), *body)}, metadata=True)
    build_documents(paths, DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60)))
    docs = pl.read_parquet(paths.table(DOCUMENTS.name))
    found = docs.filter(pl.col("input_name") == "tb.pdf").row(0, named=True)
    assert (found["arxiv_id"], found["identified_by"]) == ("0704.0001", "title")


@given(st.text(alphabet=st.characters(max_codepoint=0x24F, exclude_categories=("Cc",))
               | st.sampled_from(" \t\n"), max_size=80))
def test_the_opening_key_expression_keys_as_the_catalogue_does(title: str) -> None:
    frame = pl.DataFrame({"title": [title]})
    got = frame.select(opening_key_expr("title")).item()
    assert got == title_key(" ".join(title.split()[:3])) or not title.split()


def test_a_first_author_is_matched_by_a_whole_name_not_a_part_of_one() -> None:
    """Two specimens share a title; ``Krishnan`` (the second's first author) is no author
    of a page that names ``C. V. Radhakrishnan``, but is of one that names
    ``J.K. Krishnana,c,∗,1`` (affiliation marks glued to the name)."""
    title = "This Is a Specimen Title of Two Papers"
    catalog = Catalog.build([("one", None, title, ["Jos Migchielsen"]),
                             ("two", None, title, ["J.K. Krishnan"])])
    first = catalog.identify(Clues(title=title, text="Jos Migchielsen, C. V. Radhakrishnan"))
    assert first is not None and first.arxiv_id == "one"
    second = catalog.identify(Clues(title=title, text="Sir J.K. Krishnana,c,∗,1 (Researcher)"))
    assert second is not None and second.arxiv_id == "two"


def test_a_title_set_with_texs_dotless_i_under_an_accent_matches() -> None:
    """TeX sets ``art\\'{\\i}culo`` as a dotless ``ı`` and a spacing accent: ``art´ıculo``."""
    title = "Un ejemplo de cómo escribir un artículo"
    assert title_key("Un ejemplo de c´omo escribir un art´ıculo") == title_key(title)
    frame = pl.DataFrame({"t": ["art´ıculo"]})
    assert frame.select(title_key_expr("t")).item() == title_key("artículo")
