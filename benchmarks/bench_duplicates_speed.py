"""Throughput per core and peak memory of the duplicates stage's MinHash-LSH against
datatrove's MinHash deduplication (its four steps: signatures, buckets, clusters, filter),
on the same synthetic abstracts with planted near-duplicates, side by side in one run:

    python benchmarks/bench_duplicates_speed.py --sizes 20000 100000 --datatrove-max 20000

Each side runs in its own process pinned to one thread (POLARS_MAX_THREADS, RAYON_NUM_THREADS,
OMP_NUM_THREADS = 1) and is timed in CPU seconds of its work (imports and model loads
excluded), so texts per second is texts per core; peak RSS is the process's own.
Both sides use 5-word shingles and 14 bands of 8 hashes (datatrove's defaults), and datatrove
its default English word tokenizer (spaCy). datatrove runs only up to ``--datatrove-max``
texts: at ~170 texts/s per core it would need hours on a million. datatrove 0.10 passes str
to xxhash, which xxhash 4 rejects: the benchmark encodes to bytes first, as xxhash 3 did
inside. Planted duplicates (2 %: a copy with 3 words replaced) give each side's recall."""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
ONE_CORE = {"POLARS_MAX_THREADS": "1", "RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PLANTED = 0.02


def make_corpus(n: int, path: Path) -> None:
    """``n`` synthetic abstracts (benchmarks/synthetic.py), 2 % of them near-copies of an
    earlier one (`dup_of`), written as Parquet."""
    import polars as pl

    from benchmarks.synthetic import PaperFactory

    rng = random.Random(25)
    factory = PaperFactory(seed=25)
    ids, texts, dup_of = [], [], []
    for i, paper in enumerate(factory.papers(n)):
        text = " ".join(f"{paper.title} {paper.abstract}".split())
        source = None
        if i > 10 and rng.random() < PLANTED:
            source = rng.randrange(i)
            words = texts[source].split()
            for _ in range(3):
                words[rng.randrange(len(words))] = rng.choice(words)
            text = " ".join(words)
        ids.append(f"p{i:07d}")
        texts.append(text)
        dup_of.append(ids[source] if source is not None else None)
    pl.DataFrame({"id": ids, "text": texts, "dup_of": dup_of}).write_parquet(path)


def make_corpus_fast(n: int, path: Path) -> None:
    """The same kind of corpus drawn with NumPy (the vocabulary and lengths of
    benchmarks/synthetic.py, no metadata): a million abstracts in seconds, not minutes."""
    import numpy as np
    import polars as pl

    from benchmarks.synthetic import WORDS

    rng = np.random.default_rng(25)
    lengths = rng.integers(110, 185, n)
    words = rng.integers(0, len(WORDS), int(lengths.sum()))
    starts = np.cumsum(lengths) - lengths
    planted = np.flatnonzero(rng.random(n) < PLANTED)
    planted = planted[planted > 10]
    sources = (rng.random(len(planted)) * planted).astype(np.int64)
    for copy, source in zip(planted, sources, strict=True):  # near-copies: 3 words replaced
        size = min(lengths[copy], lengths[source])
        block = words[starts[source]:starts[source] + size].copy()
        block[rng.integers(0, size, 3)] = rng.integers(0, len(WORDS), 3)
        lengths[copy] = size
        words[starts[copy]:starts[copy] + size] = block
    vocab = pl.Series(WORDS)
    texts = (pl.DataFrame({"doc": np.repeat(np.arange(n), np.diff(np.append(starts, len(words)))),
                           "w": vocab.gather(words)})
             .group_by("doc", maintain_order=True).agg("w").sort("doc"))
    cut = [" ".join(ws[:length]) for ws, length in zip(texts["w"].to_list(), lengths,
                                                       strict=True)]
    ids = [f"p{i:07d}" for i in range(n)]
    dup_of = [None] * n
    for copy, source in zip(planted, sources, strict=True):
        dup_of[copy] = ids[source]
    pl.DataFrame({"id": ids, "text": cut, "dup_of": dup_of}).write_parquet(path)


def run_ours(path: Path, chunk: int) -> dict:
    import numpy as np
    import polars as pl

    from vault_pipeline.duplicates import minhash
    from vault_pipeline.duplicates.clusters import components
    from vault_pipeline.duplicates.settings import DuplicatesSettings

    s = DuplicatesSettings()
    params = minhash.MinHashParams(s.ngram, s.bands, s.rows)
    cpu, start = time.process_time(), time.perf_counter()
    sigs = []
    for batch in pl.scan_parquet(path).select("text").collect_batches(chunk_size=chunk):
        sigs.append(minhash.signatures(batch["text"], params))
    sig = np.vstack(sigs)
    signed = time.perf_counter()
    found = minhash.candidates(minhash.band_keys(sig, params),
                               np.zeros((0, params.bands), dtype=np.uint64))
    a, b = found["a"].to_numpy(), found["b"].to_numpy()
    keep = minhash.estimate(sig[a], sig[b]) >= s.abstract_threshold
    ids = pl.read_parquet(path, columns=["id"])["id"]
    pairs = pl.DataFrame({"a": ids.gather(a[keep]), "b": ids.gather(b[keep])})
    groups = components(pairs)
    end = time.perf_counter()
    removed = {m for g in groups for m in g[1:]}
    return {"seconds": end - start, "cpu_seconds": time.process_time() - cpu,
            "sign_seconds": signed - start, "pairs": pairs.height, "removed": sorted(removed)}


def run_datatrove(path: Path, work: Path) -> dict:
    import polars as pl
    import xxhash
    from datatrove.data import Document
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashes import xxhash as dx

    dx.xxhash64 = lambda d: xxhash.xxh64_intdigest(d.encode() if isinstance(d, str) else d)
    dx.xxhash32 = lambda d: xxhash.xxh32_intdigest(d.encode() if isinstance(d, str) else d)
    frame = pl.read_parquet(path)

    def reader(data=None, rank: int = 0, world_size: int = 1):
        for i, (pid, text) in enumerate(frame.select("id", "text").iter_rows()):
            if i % world_size == rank:
                yield Document(text=text, id=pid)

    config = MinhashConfig()
    sig, buckets, remove = work / "sig", work / "buckets", work / "remove"
    logs = work / "logs"
    cpu, start = time.process_time(), time.perf_counter()
    LocalPipelineExecutor([reader, MinhashDedupSignature(str(sig), config=config)], tasks=1,
                          workers=1, logging_dir=str(logs / "1")).run()
    LocalPipelineExecutor([MinhashDedupBuckets(str(sig), str(buckets), config=config)],
                          tasks=config.num_buckets, workers=1,
                          logging_dir=str(logs / "2")).run()
    LocalPipelineExecutor([MinhashDedupCluster(str(buckets), str(remove), config=config)],
                          tasks=1, workers=1, logging_dir=str(logs / "3")).run()
    kept = work / "kept"
    LocalPipelineExecutor([reader, MinhashDedupFilter(str(remove)),
                           JsonlWriter(str(kept), compression=None)], tasks=1, workers=1,
                          logging_dir=str(logs / "4")).run()
    end = time.perf_counter()
    survivors = set()
    for file in kept.glob("*.jsonl"):
        survivors |= {json.loads(line)["id"] for line in file.read_text().splitlines()}
    removed = sorted(set(frame["id"].to_list()) - survivors)
    return {"seconds": end - start, "cpu_seconds": time.process_time() - cpu,
            "removed": removed}


def side(args: argparse.Namespace) -> None:
    path = Path(args.corpus)
    with tempfile.TemporaryDirectory() as work:
        out = (run_ours(path, args.chunk) if args.side == "ours"
               else run_datatrove(path, Path(work)))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def measure(which: str, corpus: Path, chunk: int) -> dict:
    env = {**os.environ, **ONE_CORE}
    done = subprocess.run([sys.executable, __file__, "--side", which, "--corpus", str(corpus),
                           "--chunk", str(chunk)], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def recall(removed: list[str], dup_of: dict[str, str]) -> tuple[float, int]:
    """Share of planted copies removed, and removals that are not planted copies (a pair of
    planted copies of one text may keep either, so both are counted as planted)."""
    gone = set(removed)
    planted = set(dup_of) | set(dup_of.values())
    hit = sum(1 for copy, source in dup_of.items() if copy in gone or source in gone)
    return hit / len(dup_of) if dup_of else float("nan"), len(gone - planted)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--datatrove-max", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=20_000)
    parser.add_argument("--fast-corpus", action="store_true",
                        help="draw the abstracts with NumPy (for a million)")
    parser.add_argument("--side", choices=("ours", "datatrove"))
    parser.add_argument("--corpus")
    args = parser.parse_args()
    if args.side:
        side(args)
        return
    import polars as pl

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; "
          "each side one thread")
    print(f"{'texts':>9s} {'side':>10s} {'texts/s/core':>13s} {'wall s':>8s} {'cpu s':>8s} "
          f"{'peak MB':>8s} {'recall':>7s} {'extra':>6s} {'ratio':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            corpus = Path(tmp) / f"abstracts_{n}.parquet"
            (make_corpus_fast if args.fast_corpus else make_corpus)(n, corpus)
            dup_of = {a: b for a, b in pl.read_parquet(corpus).select("id", "dup_of")
                      .drop_nulls().iter_rows()}
            results = {"ours": measure("ours", corpus, args.chunk)}
            if n <= args.datatrove_max:
                results["datatrove"] = measure("datatrove", corpus, args.chunk)
            for name, r in results.items():
                if "error" in r:
                    print(f"{n:9d} {name:>10s} error: {r['error']}")
                    continue
                rate = n / r["cpu_seconds"]
                got, extra = recall(r["removed"], dup_of)
                ratio = ""
                other = results.get("datatrove")
                if name == "ours" and other and "error" not in other:
                    ratio = f"{rate / (n / other['cpu_seconds']):.1f}x"
                print(f"{n:9d} {name:>10s} {rate:13.0f} {r['seconds']:8.1f} "
                      f"{r['cpu_seconds']:8.1f} {r['peak_rss_mb']:8.0f} {got:7.3f} "
                      f"{extra:6d} {ratio:>6s}", flush=True)


if __name__ == "__main__":
    main()
