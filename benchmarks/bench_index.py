"""Benchmark of the index, side by side in one run:

- embedding throughput of the embedded model on this machine's cores, on real text: the
  bundled sample's abstracts cut to the length of a view (~50 words), whole abstracts, and
  titles (short texts);
- for 100k and 1M rows of synthetic unit vectors (384-d, the embedded model's dimension, on
  a low-dimensional manifold like sentence embeddings: see ``Synthetic``): LanceDB write
  time, IVF_FLAT index build time (the index the vault builds), search latency p50/p99 of
  the ANN index and of exact search (no index), recall@10 of the ANN index against the exact
  top-10 computed by NumPy on the same vectors;
  fewer and more partitions probed than the vault's default show the recall/latency trade;
- hybrid search latency (vector + full text, fused) with the full-text index on synthetic
  words, and with a date prefilter.

    python benchmarks/bench_index.py [--sizes 100000,1000000] [--queries 300]
    python benchmarks/bench_index.py --sizes ""          # embedding only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa

from vault_pipeline.embeddings.embedders import load_embedder
from vault_pipeline.index.lance_index import DISTANCE, IndexSettings, ann_config

SAMPLE = (Path(__file__).resolve().parents[1] / "vault_pipeline" / "sample" / "raw"
          / "arxiv-metadata-oai-snapshot.sample.jsonl")
DIM = 384
CHUNK = 100_000
K = 10


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = np.array(seconds) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def view_length_texts(abstracts: list[str], words: int = 50) -> list[str]:
    """Real sentences cut into pieces of about a view's length (the demo's views average
    40-60 words)."""
    out = []
    for abstract in abstracts:
        tokens = abstract.split()
        out += [" ".join(tokens[i:i + words]) for i in range(0, len(tokens), words)
                if len(tokens[i:i + words]) >= words // 2]
    return out


def bench_embedding(sets: dict[str, list[str]]) -> dict:
    import torch

    started = time.perf_counter()
    embedder = load_embedder()
    out: dict = {"model": embedder.name, "load_s": round(time.perf_counter() - started, 1),
                 "torch_threads": torch.get_num_threads()}
    embedder.embed(next(iter(sets.values()))[:16])  # warm-up
    for name, texts in sets.items():
        figures: dict = {"texts": len(texts),
                         "mean_words": round(float(np.mean([len(t.split()) for t in texts])), 1)}
        for batch in (16, 64):
            embedder.batch_size = batch
            started = time.perf_counter()
            embedder.embed(texts)
            figures[f"per_s_batch{batch}"] = round(len(texts) / (time.perf_counter() - started),
                                                   1)
        out[name] = figures
    return out


class Synthetic:
    """Unit vectors on a low-dimensional manifold (24 latent dimensions mapped into 384, plus
    noise), as sentence embeddings are: a point's 10th neighbour at 1M rows has cosine ~0.74,
    random pairs ~0, and neighbours spread across partitions (clustered mixtures, tried
    first, put every neighbour in one partition: recall 1.0 at any setting, which measures
    nothing). Text and dates come along to filter and keyword-search on."""

    LATENT = 24
    NOISE = 0.15

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.mixing = self.rng.normal(size=(self.LATENT, DIM))
        self.words = np.array([f"w{i}" for i in range(5000)])
        self.zipf = 1 / np.arange(1, 5001) ** 1.1
        self.zipf /= self.zipf.sum()

    def vectors(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Vectors and a coarse region label (signs of 8 latent coordinates)."""
        z = self.rng.normal(size=(n, self.LATENT))
        x = z @ self.mixing + self.NOISE * np.sqrt(self.LATENT) * self.rng.normal(size=(n, DIM))
        label = (z[:, :8] > 0) @ (1 << np.arange(8))
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32), label

    def texts(self, labels: np.ndarray) -> list[str]:
        """Zipf words plus four words of the row's region (what keyword search finds)."""
        common = self.rng.choice(self.words, size=(len(labels), 30), p=self.zipf)
        return [" ".join([*row, *(f"topic{lab}x{j}" for j in range(4))])
                for row, lab in zip(common, labels, strict=True)]


def build_table(db, n: int, data: Synthetic) -> tuple[object, np.ndarray, float]:
    schema = pa.schema([("id", pa.int64()), ("text", pa.string()), ("published", pa.date32()),
                        ("vector", pa.list_(pa.float32(), DIM))])
    table = db.create_table("bench", schema=schema, mode="overwrite")
    parts, seconds = [], 0.0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        x, labels = data.vectors(m)
        days = data.rng.integers(0, 12_000, m)
        batch = pa.table({
            "id": np.arange(start, start + m),
            "text": data.texts(labels),
            "published": pa.array([date(1993, 1, 1) + timedelta(days=int(d)) for d in days],
                                  pa.date32()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), DIM)},
            schema=schema)
        started = time.perf_counter()
        table.add(batch)
        seconds += time.perf_counter() - started
        parts.append(x)
    return table, np.concatenate(parts), seconds


def latency(run, queries: np.ndarray) -> tuple[list[float], list[np.ndarray]]:
    times, ids = [], []
    for q in queries:
        started = time.perf_counter()
        result = run(q)
        times.append(time.perf_counter() - started)
        ids.append(result["id"].to_numpy())
    return times, ids


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f[:K]) & set(t)) / K for f, t in zip(found, truth,
                                                                        strict=True)]))


def bench_size(folder: Path, n: int, queries: int, exact_queries: int) -> dict:
    import lancedb
    from lancedb.index import FTS, BTree

    data = Synthetic(seed=n)
    db = lancedb.connect(str(folder / f"db{n}"))
    table, vectors, write_s = build_table(db, n, data)
    q, q_labels = data.vectors(queries)
    truth, tenth = [], []
    for v in q:
        sims = vectors @ v
        top = np.argpartition(-sims, K)[:K]
        truth.append(top)
        tenth.append(float(sims[top].min()))
    truth = np.stack(truth)
    out = {"rows": n, "write_s": round(write_s, 1),
           "query_10th_neighbour_cosine": round(float(np.mean(tenth)), 3),
           "random_pair_cosine": round(float(np.mean(vectors[:1000] @ q[:50].T)), 3)}

    def vector_search(nprobes: int | None):
        def run(v):
            query = table.search(v).distance_type(DISTANCE).select(["id"]).limit(K)
            query = query.bypass_vector_index() if nprobes is None else query.nprobes(nprobes)
            return query.to_arrow()
        return run

    times, found = latency(vector_search(None), q[:exact_queries])
    out["exact_p50_ms"], out["exact_p99_ms"] = percentiles(times)
    out["exact_recall_at_10"] = recall(found, truth[:exact_queries])

    settings = IndexSettings()
    config = ann_config(n, settings)
    started = time.perf_counter()
    table.create_index("vector", config=config)
    out["ann_index"] = f"IVF_FLAT, {config.num_partitions} partitions"
    out["ann_build_s"] = round(time.perf_counter() - started, 1)
    for nprobes in (settings.ann_nprobes // 4, settings.ann_nprobes, settings.ann_nprobes * 2):
        latency(vector_search(nprobes), q[:5])  # warm the index cache
        times, found = latency(vector_search(nprobes), q)
        p50, p99 = percentiles(times)
        out[f"ann_nprobes{nprobes}"] = {"p50_ms": round(p50, 2), "p99_ms": round(p99, 2),
                                        "recall_at_10": round(recall(found, truth), 3)}

    started = time.perf_counter()
    table.create_index("text", config=FTS())
    out["fts_build_s"] = round(time.perf_counter() - started, 1)
    table.create_index("published", config=BTree())  # as the vault does with its ANN index
    words = [f"topic{lab}x1 topic{lab}x2" for lab in q_labels]

    def hybrid(where: str | None):
        texts = iter(words * 2)

        def run(v):
            query = (table.search(query_type="hybrid", fts_columns="text").vector(v)
                     .text(next(texts)).distance_type(DISTANCE).nprobes(settings.ann_nprobes))
            if where:
                query = query.where(where, prefilter=True)
            return query.select(["id"]).limit(40).to_arrow()
        return run

    for name, where in (("hybrid", None), ("hybrid_before_2010", "published < date '2010-01-01'")):
        latency(hybrid(where), q[:5])
        times, _ = latency(hybrid(where), q[: queries // 2])
        p50, p99 = percentiles(times)
        out[name] = {"p50_ms": round(p50, 2), "p99_ms": round(p99, 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--exact-queries", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    records = [json.loads(line) for line in SAMPLE.open()]
    abstracts = [r["abstract"].strip() for r in records]
    results: dict = {"cores": os.cpu_count(), "embedding": bench_embedding({
        "view_length": view_length_texts(abstracts),
        "abstracts": abstracts,
        "titles": [" ".join(r["title"].split()) for r in records] * 3})}
    print(json.dumps({"embedding": results["embedding"]}), flush=True)
    folder = Path(tempfile.mkdtemp(prefix="bench_index."))
    try:
        for n in (int(s) for s in args.sizes.split(",") if s):
            figures = bench_size(folder, n, args.queries, args.exact_queries)
            results[str(n)] = figures
            print(json.dumps(figures), flush=True)
            shutil.rmtree(folder / f"db{n}", ignore_errors=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
