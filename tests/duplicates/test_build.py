"""The duplicates build: every method finds its kind of match with its evidence, clusters
name one canonical member, and a refresh signs and compares only new texts."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import polars as pl

from vault_pipeline.duplicates import records
from vault_pipeline.duplicates.build import compute_duplicates
from vault_pipeline.duplicates.settings import DuplicatesSettings

ABSTRACT = ("We propose a routing algorithm for sparse mixture of experts layers that learns "
            "the capacity of every expert from the load it sees during training, so that no "
            "token is dropped when the batch is uneven, and we show how to train it end to end.")
OTHER = ("We study black hole entropy through the entanglement of quantum fields across the "
         "horizon and derive the area law from a lattice regularisation of the field theory.")


class BagOfWords:
    """A deterministic stand-in for the index's model: hashed word counts, unit length."""

    name, dimension = "bag-of-words", 64

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, sum(map(ord, word)) % self.dimension] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def paper(pid: str, title: str, abstract: str, published: date, author: str = "Ada Lovelace",
          doi: str | None = None) -> dict:
    return {"arxiv_id": pid, "title": title, "abstract": abstract, "authors": [author],
            "doi": doi, "published": published}


PAPERS = pl.DataFrame([
    paper("2401.00001", "Learned Capacity for Expert Routing", ABSTRACT, date(2024, 1, 5),
          doi="10.1000/JOURNAL.1"),
    paper("2601.00002", "Routing Experts with Learned Capacity", ABSTRACT.replace(
        "end to end", "jointly with the experts"), date(2026, 2, 1), author="Alan Turing"),
    paper("2602.00003", "Black Hole Entropy", OTHER, date(2026, 2, 2)),
    paper("2603.00004", "Learned capacity for expert routing!", "A short abstract.",
          date(2026, 3, 3)),
    paper("2604.00005", "Another Paper", "Unrelated words about graphs and trees.",
          date(2026, 4, 4), author="Grace Hopper", doi="https://doi.org/10.1000/journal.1"),
])
SUBMISSIONS = pl.DataFrame({
    "forum_id": ["F1"], "title": ["Anonymous submission"], "abstract": [OTHER],
    "authors": [None], "arxiv_id": ["2602.00003v2"], "arxiv_match": ["title+author"],
    "created": [datetime(2025, 9, 1, tzinfo=UTC)]},
    schema_overrides={"authors": pl.List(pl.String)})
COUNTS = pl.DataFrame({"s2_id": ["S9"], "arxiv_id": ["arXiv:2401.00001v3"], "doi": [None],
                       "title": ["Learned Capacity"], "year": [2024]})


def recs(papers: pl.DataFrame = PAPERS) -> pl.DataFrame:
    return records.gather(papers, SUBMISSIONS, COUNTS)


def run(papers: pl.DataFrame = PAPERS, stored=None, previous=None, embedder=None, **settings):
    return compute_duplicates(recs(papers), None, None, DuplicatesSettings(**settings),
                              stored, previous, embedder)


def methods(pairs: pl.DataFrame) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for a, b, m in pairs.select("a", "b", "method").iter_rows():
        out.setdefault((a, b), set()).add(m)
    return out


def test_each_method_finds_its_match_with_evidence() -> None:
    pairs, clusters, _, report = run(embedder=BagOfWords())
    found = methods(pairs)
    assert "minhash_abstract" in found[("2401.00001", "2601.00002")]
    assert "semantic" in found[("2401.00001", "2601.00002")]
    assert found[("2401.00001", "2603.00004")] == {"exact_title_author"}
    assert found[("2401.00001", "2604.00005")] == {"exact_doi"}
    assert "link_openreview" in found[("2602.00003", "openreview:F1")]
    assert "exact_arxiv_id" in found[("2401.00001", "s2:S9")]
    assert all(pairs["evidence"].str.len_chars() > 0)
    assert report.pairs_by_method["exact_doi"] == 1
    big = clusters.filter(pl.col("members").list.contains("2401.00001")).row(0, named=True)
    assert big["canonical_id"] == "2401.00001"  # the earliest arXiv paper
    assert set(big["members"]) == {"2401.00001", "2601.00002", "2603.00004", "2604.00005",
                                   "s2:S9"}
    assert "earliest arXiv paper" in big["why"]


def test_refresh_compares_only_new_texts_and_keeps_stored_pairs() -> None:
    first = PAPERS.filter(pl.col("arxiv_id") != "2601.00002")
    pairs, _, sigs, report = run(first, embedder=BagOfWords())
    assert report.new_by_method["minhash_abstract"] == first.height + 1  # and the forum
    again = run(first, sigs, pairs, BagOfWords())
    assert again[3].new_by_method == {"minhash_abstract": 0, "minhash_fulltext": 0,
                                      "views_ngram": 0, "semantic": 0}
    assert again[0].equals(pairs) and again[2].equals(sigs)
    grown = run(PAPERS, sigs, pairs, BagOfWords())
    assert grown[3].new_by_method["minhash_abstract"] == 1
    assert grown[3].stored_by_method["minhash_abstract"] == first.height + 1
    assert ("2401.00001", "2601.00002") in methods(grown[0])
    assert grown[0].equals(run(PAPERS, embedder=BagOfWords())[0])  # same as from scratch


def test_changed_settings_make_everything_new() -> None:
    pairs, _, sigs, _ = run()
    report = run(PAPERS, sigs, pairs, abstract_threshold=0.9)[3]
    assert report.stored_by_method["minhash_abstract"] == 0


def test_empty_input_gives_empty_tables() -> None:
    pairs, clusters, sigs, report = compute_duplicates(
        records.empty(), None, None, DuplicatesSettings(), None, None)
    assert pairs.is_empty() and clusters.is_empty() and sigs.is_empty()
    assert report.records == 0


def _store_run(paths, papers: pl.DataFrame, documents: pl.DataFrame, monkeypatch):
    """The stage over the store, read 2 rows and 1 full text at a time."""
    from vault_pipeline.duplicates import build
    from vault_pipeline.schemas import (
        CITATION_COUNTS,
        DOCUMENTS,
        DUPLICATE_CLUSTERS,
        DUPLICATE_PAIRS,
        DUPLICATE_SIGNATURES,
    )
    from vault_pipeline.schemas import PAPERS as PAPERS_TABLE
    from vault_pipeline.schemas import SUBMISSIONS as SUBMISSIONS_TABLE
    from vault_pipeline.store import tables

    monkeypatch.setattr(tables.TableStore.batches, "__defaults__", (None, 2))
    monkeypatch.setattr(build, "DOCUMENT_BATCH", 1)
    store = paths.store
    when = datetime(2026, 1, 1, tzinfo=UTC)
    filled = {"updated": when, "read_at": when, "source": "test", "raw_sha256": "0",
              "venue_id": "venue", "review_count": 0}

    def table(schema, frame: pl.DataFrame) -> None:
        store.write(schema, frame.select(
            [pl.col(f.name) if f.name in frame.columns
             else pl.lit(None if f.nullable else filled[f.name]).alias(f.name)
             for f in schema.arrow]))

    table(PAPERS_TABLE, papers.with_columns(
        published=pl.col("published").cast(pl.Datetime("us", "UTC"))))
    table(SUBMISSIONS_TABLE, SUBMISSIONS)
    table(CITATION_COUNTS, COUNTS)
    table(DOCUMENTS, documents)
    report = build.build_duplicates(paths, DuplicatesSettings(), BagOfWords())
    return (store.read(DUPLICATE_PAIRS), store.read(DUPLICATE_CLUSTERS),
            store.read(DUPLICATE_SIGNATURES), report)


DOCS = pl.DataFrame({
    "arxiv_id": ["2401.00001", "2601.00002", None, "2602.00003"],
    "forum_id": [None, None, "F1", None], "status": ["ok", "ok", "ok", "failed"],
    "source": ["pdf", "pdf", "pdf", "pdf"],
    "text": [ABSTRACT * 8, ABSTRACT * 7 + OTHER, OTHER * 9, None]})


def test_the_stage_streams_the_store_to_the_same_tables(vault_paths, monkeypatch) -> None:
    """Read a batch of two rows at a time, written as made: the tables are those of the
    function over whole frames, and a refresh signs only the new paper."""
    first = PAPERS.filter(pl.col("arxiv_id") != "2601.00002")
    stored_run = _store_run(vault_paths, first, DOCS, monkeypatch)
    whole = compute_duplicates(recs(first), DOCS, None, DuplicatesSettings(), None, None,
                               BagOfWords())
    for got, want in zip(stored_run[:3], whole[:3], strict=True):
        assert got.equals(want.cast(got.schema))
    assert stored_run[3].new_by_method == whole[3].new_by_method
    assert ("2401.00001", "2601.00002") in methods(stored_run[0])  # their full texts
    grown = _store_run(vault_paths, PAPERS, DOCS, monkeypatch)
    assert grown[3].new_by_method == {"minhash_abstract": 1, "minhash_fulltext": 0,
                                      "views_ngram": 0, "semantic": 1}
    scratch = compute_duplicates(recs(PAPERS), DOCS, None, DuplicatesSettings(), None, None,
                                 BagOfWords())
    assert grown[0].equals(scratch[0].cast(grown[0].schema))
    assert grown[2].equals(scratch[2].cast(grown[2].schema))


def test_a_stored_row_is_unchanged_only_with_its_id_and_text_hash(tmp_path) -> None:
    from vault_pipeline.duplicates.split import sha, split
    from vault_pipeline.duplicates.texts import frame_batches

    texts = pl.DataFrame({"id": ["b", "d", "f", "b"], "text": ["tb", "td", "tf", "later"]})
    hashes = dict(zip(["a", "b", "c", "d", "e"], sha(["ta", "tb", "tc", "td", "te"]),
                      strict=True))
    stored = pl.DataFrame({"id": ["a", "b", "b", "c", "d", "e", "d"],
                           "method": ["m"] * 6 + ["other"], "params": ["p"] * 7,
                           "text_sha256": [hashes["a"], hashes["b"], "old", hashes["c"],
                                           hashes["d"], hashes["e"], hashes["d"]]})
    where = split(frame_batches(texts), frame_batches(stored), "m", "p", tmp_path)
    assert where.old.tolist() == [False, True, False, False, True, False]
    assert where.current.tolist() == [True, True, True, False]  # the first of an id
    assert where.new.tolist() == [False, False, True, False]
    assert (where.n_old, where.n_new) == (2, 1)
    (tmp_path / "again").mkdir()
    nothing = split(frame_batches(texts), frame_batches(None), "m", "p", tmp_path / "again")
    assert nothing.old.tolist() == [] and nothing.new.tolist() == [True, True, True, False]
