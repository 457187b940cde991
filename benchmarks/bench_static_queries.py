"""Could a static query encoder take the query model's place under load? Its cost and how
far its searches agree with the index model's, in one run (issue 30: the model is 85% of
a loaded server's time).

The encoder is distilled from the index's own model (all-MiniLM-L6-v2 on ONNX Runtime), as
model2vec does, but kept in that model's vector space so the built index stays usable:
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
from vault_pipeline.integrity import roles

RIDGE = 1e-2
DISTRACTORS = 1_500  # training abstracts searched beside the right answers


def token_table(embedder) -> np.ndarray:
    """The model's mean-pooled output for each vocabulary token alone, centred."""
    tokenizer, session = embedder._tokenizer, embedder._session  # the embedder's own parts
    size = tokenizer.get_vocab_size()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    table = np.zeros((size, embedder.dimension), np.float32)
    for start in range(0, size, 512):
        ids = np.arange(start, min(start + 512, size))
        batch = np.stack([np.full(len(ids), cls), ids, np.full(len(ids), sep)], 1)
        feed = {"input_ids": batch, "attention_mask": np.ones_like(batch),
                "token_type_ids": np.zeros_like(batch)}
        out = session.run(None, {k: v for k, v in feed.items() if k in embedder._inputs})[0]
        table[ids] = out.mean(1)
    return table - table.mean(0, keepdims=True)


def static(embedder, table: np.ndarray, texts: list[str], weights: np.ndarray,
           mapping: np.ndarray | None = None) -> np.ndarray:
    """Unit vectors of ``texts``: the weighted sum of their tokens' rows, mapped."""
    specials = {embedder._tokenizer.token_to_id("[CLS]"),
                embedder._tokenizer.token_to_id("[SEP]")}
    out = np.zeros((len(texts), table.shape[1]), np.float32)
    for i, encoding in enumerate(embedder._tokenizer.encode_batch(texts)):
        ids = [t for t in encoding.ids if t not in specials]
        out[i] = (table[ids] * weights[ids][:, None]).sum(0)
    if mapping is not None:
        out = out @ mapping
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


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


def known_item(embedder, table: np.ndarray, idf: np.ndarray, rows: list[dict],
               distractors: list[dict]) -> None:
    """Retrieval with a right answer: an abstract's opening found by the rest of it, among
    the rest of ``distractors`` too, by the model on both sides, by the static encoder on
    both sides (an index built with it), and by the mapped static query over the model's
    index."""
    paired = [r for r in rows if len(r["sentences"]) >= 4]
    queries = [" ".join(r["sentences"][:3]) for r in paired]
    docs = [" ".join(r["sentences"][3:]) for r in paired] + [
        " ".join(r["sentences"]) for r in distractors]
    model_docs = embedder.embed(docs)
    fitted = static(embedder, table, docs, idf)
    mapping = np.linalg.solve(fitted.T @ fitted + RIDGE * np.eye(fitted.shape[1]),
                              fitted.T @ model_docs)
    rows_out = (("model, both sides", embedder.embed(queries), model_docs),
                ("static, both sides", static(embedder, table, queries, idf), fitted),
                ("static mapped query, model index",
                 static(embedder, table, queries, idf, mapping), model_docs))
    print(f"known item: {len(queries)} openings, {len(docs):,} documents")
    for name, q, d in rows_out:
        d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
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
    table = token_table(embedder)
    print(f"token table: {table.shape[0]:,} x {table.shape[1]} in "
          f"{time.perf_counter() - started:.1f} s; {len(queries)} queries, {len(docs):,} "
          f"documents")
    started = time.perf_counter()
    model_queries = embedder.embed(queries)
    model_ms = 1000 * (time.perf_counter() - started) / len(queries)
    model_docs = embedder.embed(docs)
    frequency = np.zeros(table.shape[0])
    for encoding in embedder._tokenizer.encode_batch(docs):
        frequency[list(set(encoding.ids))] += 1
    idf = (np.log((len(docs) + 1) / (frequency + 1)) + 1).astype(np.float32)
    fitted = static(embedder, table, docs, idf)
    mapping = np.linalg.solve(fitted.T @ fitted + RIDGE * np.eye(fitted.shape[1]),
                              fitted.T @ model_docs)
    started = time.perf_counter()
    mapped = static(embedder, table, queries, idf, mapping)
    static_ms = 1000 * (time.perf_counter() - started) / len(queries)
    print(f"cost a query: model {model_ms:.2f} ms (batched), static {static_ms:.3f} ms "
          f"({model_ms / static_ms:.0f}x less)")
    for name, vectors in (("static, raw", static(embedder, table, queries, idf)),
                          ("static, mapped", mapped)):
        cosine, overlap = agreement(model_queries, vectors, model_docs)
        print(f"{name:<16} cosine to the model's vector {cosine:.3f}; top-10 overlap with "
              f"the model's search {overlap:.3f}")
    known_item(embedder, table, idf, rows, roles.load_abstracts("train")[:DISTRACTORS])


if __name__ == "__main__":
    main()
