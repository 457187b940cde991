"""Throughput per core and peak memory of the duplicates stage's MinHash-LSH against
datatrove's MinHash deduplication (its four steps: signatures, buckets, clusters, filter),
on the same synthetic abstracts with planted near-duplicates, side by side in one run:

    python benchmarks/bench_duplicates_speed.py --fast-corpus \
        --sizes 20000 100000 1000000 --datatrove-python <python with datatrove>

Each side runs in its own process pinned to one thread (POLARS_MAX_THREADS, RAYON_NUM_THREADS,
OMP_NUM_THREADS = 1; DuckDB one thread) and is timed in CPU seconds of its work (imports
excluded), so texts per second is texts per core; peak RSS is the process's own (VmHWM).
This stage's side is the stage's code (:mod:`vault_pipeline.duplicates.lsh`): blocks of
5,000 texts read from the Parquet corpus, signed, appended; candidates by DuckDB's join;
verification reading only the candidates' rows. datatrove runs in the background, niced,
smallest size first, while this side runs, within ``--datatrove-budget`` wall seconds (a
size not done by then is reported as such). Both sides use 5-word shingles, 112 hashes
(datatrove its defaults, 14 bands of 8; ours 28 x 4) and datatrove its default English word
tokenizer (spaCy; its `xx` tokenizer measured 8 % faster, not worth a change of setting).
datatrove 0.10 passes str to xxhash, which xxhash 4 rejects: the benchmark encodes to bytes
first, as xxhash 3 did inside. Planted duplicates (2 %: a copy with 3 words replaced) give
each side's recall, with a 95 % Wilson interval. datatrove runs in its own environment, so
its dependencies do not touch the project's: `pip install datatrove==0.10.1 spacy regex
tokenizers pyarrow orjson polars xxhash`.

``--stage`` measures the whole stage instead (:func:`build_duplicates`: records, exact
keys, both MinHash methods, views, clusters, the tables written; no embedder): a synthetic
vault's `papers` table of each size from the same abstracts, the stage run in its own
one-thread process, first on the empty vault, then again (a refresh: nothing new, every
stored signature read back), with each run's peak RSS (VmHWM) side by side:

    python benchmarks/bench_duplicates_speed.py --stage --fast-corpus --sizes 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
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


def _text_batches(path: Path, chunk: int, columns: list[str]):
    """The corpus read a block at a time (PyArrow record batches): no side holds it whole.
    Without pre-buffering: with it PyArrow kept every row group's read column chunks
    allocated (192 MB after 600,000 texts of the million, measured), so memory grew with
    the corpus."""
    import pyarrow.parquet as pq

    yield from pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=chunk,
                                                                   columns=columns)


def run_ours(path: Path, chunk: int) -> dict:
    """The stage's MinHash-LSH as the stage runs it (:mod:`vault_pipeline.duplicates.lsh`):
    sign a block, append it; candidates by DuckDB's spilling join; verify in batches."""
    import polars as pl

    from vault_pipeline.duplicates import minhash
    from vault_pipeline.duplicates.clusters import components
    from vault_pipeline.duplicates.lsh import BlockedLSH
    from vault_pipeline.duplicates.settings import DuplicatesSettings

    s = DuplicatesSettings()
    params = minhash.MinHashParams(s.ngram, s.bands, s.rows)
    with tempfile.TemporaryDirectory() as work:
        lsh = BlockedLSH(Path(work), params)
        cpu, start = time.process_time(), time.perf_counter()
        for batch in _text_batches(path, chunk, ["text"]):
            lsh.add(minhash.signatures(pl.from_arrow(batch.column("text")), params))
        signed = time.process_time()
        candidates = lsh.candidates(0)
        joined = time.process_time()
        found = lsh.verify(candidates, s.abstract_threshold)
        verified = time.process_time()
        ids = pl.read_parquet(path, columns=["id"])["id"]
        pairs = pl.DataFrame({"a": ids.gather(found["a"]), "b": ids.gather(found["b"])})
        groups = components(pairs)
        end = time.perf_counter()
        stages = {"sign": signed - cpu, "candidates": joined - signed,
                  "verify": verified - joined, "clusters": time.process_time() - verified}
    removed = {m for g in groups for m in g[1:]}
    return {"seconds": end - start, "cpu_seconds": time.process_time() - cpu,
            "stages": stages, "pairs": pairs.height, "removed": sorted(removed)}


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
    def reader(data=None, rank: int = 0, world_size: int = 1):
        for batch in _text_batches(path, 20_000, ["id", "text"]):
            for pid, text in zip(batch.column("id").to_pylist(),
                                 batch.column("text").to_pylist(), strict=True):
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
    removed = sorted(set(pl.read_parquet(path, columns=["id"])["id"].to_list()) - survivors)
    return {"seconds": end - start, "cpu_seconds": time.process_time() - cpu,
            "removed": removed}


def make_vault(corpus: Path, home: Path) -> None:
    """A vault whose `papers` are the corpus's texts (the first 12 words the title, the
    rest the abstract), written through the table store a batch at a time."""
    import polars as pl

    from vault_pipeline.schemas import PAPERS
    from vault_pipeline.store.paths import VaultPaths

    store = VaultPaths(home).ensure().store
    when = pl.datetime(2020, 1, 1, time_zone="UTC")

    def batches():
        for batch in _text_batches(corpus, 50_000, ["id", "text"]):
            frame = pl.from_arrow(batch)
            words = pl.col("text").str.split(" ")
            yield frame.select(
                arxiv_id="id", latest_version=pl.lit(1),
                title=words.list.head(12).list.join(" "),
                abstract=words.list.slice(12).list.join(" "),
                authors=pl.concat_list(pl.lit("Author ") + pl.col("id").str.slice(-4)),
                published=when + pl.duration(hours=pl.col("id").str.slice(1).cast(pl.Int64)),
                updated=when, source=pl.lit("synthetic"), raw_sha256=pl.lit("0")
            ).with_columns([pl.lit(None).alias(c) for c in PAPERS.names
                            if c not in {"arxiv_id", "latest_version", "title", "abstract",
                                         "authors", "published", "updated", "source",
                                         "raw_sha256"}])

    store.write_batches(PAPERS, batches())


def run_stage(home: Path) -> dict:
    """The duplicates stage over a vault, as `vault materialize` runs it (no embedder)."""
    from vault_pipeline.duplicates.build import build_duplicates
    from vault_pipeline.duplicates.settings import NO_EMBEDDER, DuplicatesSettings
    from vault_pipeline.store.paths import VaultPaths

    cpu, start = time.process_time(), time.perf_counter()
    report = build_duplicates(VaultPaths(home), DuplicatesSettings(model=NO_EMBEDDER))
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "pairs": report.pairs, "clusters": report.clusters,
            "new": report.new_by_method.get("minhash_abstract", 0),
            "stored": report.stored_by_method.get("minhash_abstract", 0)}


def stage_main(sizes: list[int], fast: bool) -> None:
    """The whole stage at each size, first run and refresh, peak RSS side by side."""
    print(f"{load_line()}; the stage in its own one-thread process", flush=True)
    print(f"{'papers':>9s} {'run':>8s} {'wall s':>8s} {'cpu s':>8s} {'peak MB':>8s} "
          f"{'new':>9s} {'stored':>9s} {'pairs':>8s} {'clusters':>8s}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            corpus, home = Path(tmp) / f"abstracts_{n}.parquet", Path(tmp) / f"vault_{n}"
            (make_corpus_fast if fast else make_corpus)(n, corpus)
            make_vault(corpus, home)
            for run in ("first", "refresh"):
                r = measure("stage", home, 0)
                if "error" in r:
                    print(f"{n:9d} {run:>8s} {r['error']}", flush=True)
                    break
                print(f"{n:9d} {run:>8s} {r['seconds']:8.1f} {r['cpu_seconds']:8.1f} "
                      f"{r['peak_rss_mb']:8.0f} {r['new']:9d} {r['stored']:9d} "
                      f"{r['pairs']:8d} {r['clusters']:8d}; {load_line()}", flush=True)


def peak_rss_mb() -> float:
    """This process's own peak resident memory (VmHWM). Not getrusage's ru_maxrss: Linux
    carries that across exec, so a child would report its parent's peak when larger."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def side(args: argparse.Namespace) -> None:
    path = Path(args.corpus)
    with tempfile.TemporaryDirectory() as work:
        out = (run_stage(path) if args.side == "stage" else
               run_ours(path, args.chunk) if args.side == "ours"
               else run_datatrove(path, Path(work)))
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out))


def measure(which: str, corpus: Path, chunk: int, python: str = sys.executable,
            nice: int = 0, timeout: float | None = None) -> dict:
    """One side in its own one-thread process (``nice``: datatrove yields the cores to
    ours while both run; CPU seconds are the process's own either way)."""
    env = {**os.environ, **ONE_CORE, "PYTHONPATH": str(ROOT.parent)}
    try:
        done = subprocess.run([python, __file__, "--side", which, "--corpus", str(corpus),
                               "--chunk", str(chunk)], env=env, capture_output=True,
                              text=True, check=False, timeout=timeout,
                              preexec_fn=(lambda: os.nice(nice)) if nice else None)
    except subprocess.TimeoutExpired:
        return {"error": f"not finished within {timeout:.0f} s of wall time (stopped)"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def datatrove_in_background(corpora: dict[int, Path], args: argparse.Namespace
                            ) -> tuple[threading.Thread, dict[int, dict]]:
    """datatrove on every size up to ``--datatrove-max``, smallest first, one after the
    other in a niced process, while this stage's side runs; each size gets the wall time
    left before ``--datatrove-budget`` runs out."""
    results: dict[int, dict] = {}
    deadline = time.monotonic() + args.datatrove_budget

    def run() -> None:
        for n, corpus in sorted(corpora.items()):
            if n > args.datatrove_max:
                continue
            left = deadline - time.monotonic()
            results[n] = (measure("datatrove", corpus, args.chunk, args.datatrove_python,
                                  nice=10, timeout=left) if left > 0 else
                          {"error": "not started: the wall-time budget was spent"})
            shown = {k: v for k, v in results[n].items() if k != "removed"}
            print(f"datatrove {n}: {json.dumps(shown)}; {load_line()}", flush=True)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, results


def recall(removed: list[str], dup_of: dict[str, str]) -> tuple[int, int, int]:
    """(planted copies removed, planted copies, removals that are not planted copies): a
    pair of planted copies of one text may keep either, so both are counted as planted."""
    gone = set(removed)
    planted = set(dup_of) | set(dup_of.values())
    hit = sum(1 for copy, source in dup_of.items() if copy in gone or source in gone)
    return hit, len(dup_of), len(gone - planted)


def report(n: int, name: str, r: dict, dup_of: dict[str, str], other: dict | None) -> None:
    from vault_pipeline.integrity.estimate import wilson

    if "error" in r:
        print(f"{n:9d} {name:>10s} {r['error']}", flush=True)
        return
    rate = n / r["cpu_seconds"]
    hit, total, extra = recall(r["removed"], dup_of)
    got, low, high = wilson(hit, total)
    ratio = ""
    if name == "ours" and other and "error" not in other:
        ratio = f"{rate / (n / other['cpu_seconds']):.1f}x"
    stages = " ".join(f"{k} {v:.1f}" for k, v in r.get("stages", {}).items())
    print(f"{n:9d} {name:>10s} {rate:13.0f} {r['seconds']:8.1f} {r['cpu_seconds']:8.1f} "
          f"{r['peak_rss_mb']:8.0f} {got:7.3f} [{low:.3f}, {high:.3f}] {hit}/{total} "
          f"{extra:6d} {ratio:>6s}  {stages}", flush=True)


def load_line() -> str:
    load = os.getloadavg()
    return f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000, 1_000_000])
    parser.add_argument("--datatrove-max", type=int, default=1_000_000)
    parser.add_argument("--datatrove-budget", type=float, default=6 * 3600,
                        help="wall seconds datatrove may take, all sizes together")
    parser.add_argument("--datatrove-python", default=sys.executable,
                        help="interpreter with datatrove installed (its own environment)")
    parser.add_argument("--chunk", type=int, default=5_000)
    parser.add_argument("--fast-corpus", action="store_true",
                        help="draw the abstracts with NumPy (for a million)")
    parser.add_argument("--stage", action="store_true",
                        help="the whole stage on a synthetic vault, first run and refresh")
    parser.add_argument("--side", choices=("ours", "datatrove", "stage"))
    parser.add_argument("--corpus")
    args = parser.parse_args()
    if args.side:
        side(args)
        return
    if args.stage:
        stage_main(args.sizes, args.fast_corpus)
        return
    import polars as pl

    print(f"{load_line()}; each side one thread, datatrove niced in the background")
    with tempfile.TemporaryDirectory() as tmp:
        corpora = {}
        for n in args.sizes:
            corpora[n] = Path(tmp) / f"abstracts_{n}.parquet"
            (make_corpus_fast if args.fast_corpus else make_corpus)(n, corpora[n])
        thread, theirs = datatrove_in_background(corpora, args)
        ours = {}
        print(f"{'texts':>9s} {'side':>10s} {'texts/s/core':>13s} {'wall s':>8s} "
              f"{'cpu s':>8s} {'peak MB':>8s} {'recall [95% CI] found/planted':>30s} "
              f"{'extra':>6s} {'ratio':>6s}  cpu s by step")
        for n, corpus in corpora.items():
            ours[n] = measure("ours", corpus, args.chunk)
            dup_of = {a: b for a, b in pl.read_parquet(corpus).select("id", "dup_of")
                      .drop_nulls().iter_rows()}
            report(n, "ours", ours[n], dup_of, None)
        print(f"this stage's side done; {load_line()}", flush=True)
        thread.join()
        print(f"datatrove done; {load_line()}")
        for n, corpus in corpora.items():
            dup_of = {a: b for a, b in pl.read_parquet(corpus).select("id", "dup_of")
                      .drop_nulls().iter_rows()}
            report(n, "ours", ours[n], dup_of, theirs.get(n))
            if n in theirs:
                report(n, "datatrove", theirs[n], dup_of, None)


if __name__ == "__main__":
    main()
