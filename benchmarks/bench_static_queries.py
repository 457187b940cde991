"""Could a static query encoder take the query model's place under load? Its cost and how
far its searches agree with the index model's, in one run (issue 30: the model is 85% of
a loaded server's time).

The encoder is the vault's own (`vault_pipeline/embeddings/static_query.py`, what `vault
serve --query-encoder static` uses), distilled from the index's own model (all-MiniLM-L6-v2
on ONNX Runtime), as model2vec does, but kept in that model's vector space so the built
index stays usable:
each vocabulary token's vector is the model's output for that token alone, mean-pooled and
centred; a text's vector is the idf-weighted sum of its tokens' vectors, mapped into the
model's space by a ridge regression fitted on sentences whose model vectors are known (in a
vault: the index's own rows). Texts are the sentence-role corpus's `dev` abstracts (never
its held-out half): query texts are three opening sentences of an abstract (about a problem
setting and challenge in length), documents every sentence of the others.

    python benchmarks/bench_static_queries.py

Prints: the model's cost per query (batched), the static encoder's, and, for the raw and
the mapped static vectors, their cosine to the model's and the overlap of their top-10
search results with the model's over the documents; then a search with a right answer (an
abstract's opening three sentences finding the rest of it among the others and 1,500
training abstracts) by the model, by the static encoder on both sides, and by the mapped
static query over the model's vectors."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vault_pipeline.embeddings.embedders import load_query_embedder
from vault_pipeline.embeddings.static_query import StaticQueryEncoder
from vault_pipeline.integrity import roles

DISTRACTORS = 1_500  # training abstracts searched beside the right answers


def unmapped(encoder: StaticQueryEncoder, embedder) -> StaticQueryEncoder:
    """The same encoder without its map into the model's space (the raw static vectors)."""
    return StaticQueryEncoder(embedder.tokenizer, encoder._rows,
                              np.eye(encoder.dimension, dtype=np.float32), embedder.name)


def agreement(model_queries: np.ndarray, queries: np.ndarray, docs: np.ndarray
              ) -> tuple[float, float]:
    """Mean cosine of the vectors, and mean overlap of the top-10 documents."""
    cosine = float((model_queries * queries).sum(1).mean())
    want = np.argsort(-(model_queries @ docs.T), 1)[:, :10]
    got = np.argsort(-(queries @ docs.T), 1)[:, :10]
    return cosine, float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want, got,
                                                                           strict=True)]))


def found_at_10(queries: np.ndarray, docs: np.ndarray) -> float:
    """Share of queries whose own document (row ``i`` for query ``i``) is among the 10
    nearest of ``docs``."""
    scores = queries @ docs.T
    own = scores[np.arange(len(queries)), np.arange(len(queries))]
    return float(((scores > own[:, None]).sum(1) < 10).mean())


def known_item(embedder, rows: list[dict], distractors: list[dict]) -> None:
    """Retrieval with a right answer: an abstract's opening found by the rest of it, among
    the rest of ``distractors`` too, by the model on both sides, by the static encoder on
    both sides (an index built with it), and by the mapped static query over the model's
    index (the encoder fitted on that index's documents, as the vault fits it on its rows)."""
    paired = [r for r in rows if len(r["sentences"]) >= 4]
    queries = [" ".join(r["sentences"][:3]) for r in paired]
    docs = [" ".join(r["sentences"][3:]) for r in paired] + [
        " ".join(r["sentences"]) for r in distractors]
    model_docs = embedder.embed(docs)
    encoder = StaticQueryEncoder.distill(embedder, docs, model_docs)
    raw = unmapped(encoder, embedder)
    rows_out = (("model, both sides", embedder.embed(queries), model_docs),
                ("static, both sides", raw.embed(queries), raw.embed(docs)),
                ("static mapped query, model index", encoder.embed(queries), model_docs))
    print(f"known item: {len(queries)} openings, {len(docs):,} documents")
    for name, q, d in rows_out:
        print(f"  {name:<34} own document in the top 10: {found_at_10(q, d):.3f}")


def main() -> None:
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    embedder = load_query_embedder("embedded")
    rows = roles.load_abstracts("dev")
    random.Random(0).shuffle(rows)
    half = len(rows) // 2
    queries = [" ".join(r["sentences"][:3]) for r in rows[:half] if len(r["sentences"]) >= 4]
    docs = [s for r in rows[half:] for s in r["sentences"]]
    started = time.perf_counter()
    model_docs = embedder.embed(docs)
    encoder = StaticQueryEncoder.distill(embedder, docs, model_docs)  # the vault's own code
    print(f"distilled and fitted in {time.perf_counter() - started:.1f} s (model vectors of "
          f"the documents included); {len(queries)} queries, {len(docs):,} documents")
    started = time.perf_counter()
    model_queries = embedder.embed(queries)
    model_ms = 1000 * (time.perf_counter() - started) / len(queries)
    started = time.perf_counter()
    mapped = encoder.embed(queries)
    static_ms = 1000 * (time.perf_counter() - started) / len(queries)
    print(f"cost a query: model {model_ms:.2f} ms (batched), static {static_ms:.3f} ms "
          f"({model_ms / static_ms:.0f}x less)")
    for name, vectors in (("static, raw", unmapped(encoder, embedder).embed(queries)),
                          ("static, mapped", mapped)):
        cosine, overlap = agreement(model_queries, vectors, model_docs)
        print(f"{name:<16} cosine to the model's vector {cosine:.3f}; top-10 overlap with "
              f"the model's search {overlap:.3f}")
    known_item(embedder, rows, roles.load_abstracts("train")[:DISTRACTORS])


if __name__ == "__main__":
    main()
