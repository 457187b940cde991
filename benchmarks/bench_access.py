"""Benchmark of access to a built vault, side by side in one run:

- start-up: `vault --help` and `vault sql "SELECT count(*) FROM papers"` (each a new
  process; the bare interpreter's start-up printed beside them);
- a cold `vault search` (a new process that opens the index with LanceDB's engine alone and
  loads the model, ONNX Runtime), the same through the lancedb package, and through a running
  `vault serve`, as ratios to `vault --help`;
- warm searches through the service (HTTP, hybrid and vector) against a bare LanceDB query
  of the same table in this process, p50 and p99, on the demo vault and on a synthetic index
  of ``--rows`` rows (IVF_FLAT, the vault's own settings);
- a `vault materialize` with nothing new;
- embedding throughput of the same model, torch vs ONNX Runtime, on the demo's views and on
  view-length text.

    python benchmarks/bench_access.py [--home VAULT] [--rows 200000] [--queries 200]

Without ``--home`` a demo vault is built first in a temporary folder (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_index import SAMPLE, Synthetic, percentiles, view_length_texts

VAULT = str(Path(sys.executable).with_name("vault"))
QUERIES = ["test generation for web applications", "graph neural networks for molecules",
           "robust speech recognition under noise", "causal discovery from observational data",
           "efficient attention for long documents"]
DEMO_CONFIG = {"ops": {"splits": {"config": {"cutoff": "2025-01-01"}}}}


def wall(command: list[str], runs: int, env: dict | None = None) -> float:
    """Median wall seconds of a command, each run a new process."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def walls(commands: dict[str, tuple[list[str], dict | None]], runs: int) -> dict[str, float]:
    """Median wall seconds of several commands run in turn (each run a new process), so a
    change of load on a shared machine weighs on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, env) in commands.items():
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env)
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def serve(home: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([VAULT, "serve", "--home", str(home), "--port", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = home / "serve.json"
    while not marker.exists():
        if process.poll() is not None:
            raise SystemExit("vault serve did not start")
        time.sleep(0.1)
    return process, json.loads(marker.read_text())["url"]


def http_latency(url: str, queries: list[str], mode: str) -> tuple[float, float]:
    times = []
    for text in queries:
        query = urllib.parse.urlencode({"q": text, "k": 10, "mode": mode})
        started = time.perf_counter()
        with urllib.request.urlopen(f"{url}/api/search?{query}") as response:
            json.loads(response.read())
        times.append(time.perf_counter() - started)
    return percentiles(times)


def bare_latency(home: Path, queries: list[str]) -> tuple[float, float]:
    """LanceDB alone: a vector query of the same table, vectors embedded beforehand."""
    from vault_pipeline.embeddings.embedders import load_query_embedder
    from vault_pipeline.index.lance_index import IndexSettings, open_index
    from vault_pipeline.store.paths import VaultPaths

    table = open_index(VaultPaths(home))
    vectors = load_query_embedder("embedded").embed(queries)
    nprobes = IndexSettings().ann_nprobes
    times = []
    for vector in vectors:
        started = time.perf_counter()
        table.search(vector).distance_type("dot").nprobes(nprobes).limit(10).to_arrow()
        times.append(time.perf_counter() - started)
    return percentiles(times)


def service_rows(home: Path, queries: list[str], label: str) -> None:
    process, url = serve(home)
    try:
        http_latency(url, queries[:5], "vector")  # first requests: connections, caches
        hybrid = http_latency(url, queries, "hybrid")
        vector = http_latency(url, queries, "vector")
    finally:
        process.terminate()
        process.wait()
    bare = bare_latency(home, queries)
    print(f"| {label}: service, hybrid (HTTP) | p50 {hybrid[0]:.1f} ms, p99 {hybrid[1]:.1f} ms |")
    print(f"| {label}: service, vector (HTTP) | p50 {vector[0]:.1f} ms, p99 {vector[1]:.1f} ms |")
    print(f"| {label}: bare LanceDB vector query, in process | p50 {bare[0]:.1f} ms, "
          f"p99 {bare[1]:.1f} ms |")


def synthetic_vault(root: Path, rows: int) -> Path:
    """A vault holding only an index of ``rows`` synthetic views (vectors on a manifold,
    Zipf words), built with the vault's own index settings."""
    import pyarrow as pa

    from vault_pipeline.embeddings.embedders import load_query_embedder
    from vault_pipeline.index import lance_index
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(root).ensure()
    embedder = load_query_embedder("embedded")
    schema = lance_index.lance_schema(embedder)
    table = lance_index.connect(paths).create_table(lance_index.TABLE, schema=schema,
                                                    mode="overwrite")
    data = Synthetic()
    for start in range(0, rows, 100_000):
        n = min(100_000, rows - start)
        vectors, labels = data.vectors(n)
        days = data.rng.integers(0, 12_000, n)
        columns = {
            "arxiv_id": [f"{start + i:07d}" for i in range(n)],
            "view": ["challenge"] * n, "text": data.texts(labels),
            "published": pa.array(days.astype("int32"), pa.int32()).cast(pa.date32()),
            "primary_category": ["cs.LG"] * n, "categories": [["cs.LG"]] * n,
            "archives": [["cs"]] * n, "text_sha256": [""] * n,
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()),
                                                        vectors.shape[1]),
        }
        table.add(pa.table(columns).cast(schema))
    report = lance_index.IndexReport(rows=rows)
    lance_index._refresh_indexes(table, report, lance_index.IndexSettings(), changed=False)
    return root


def embedding_rows(texts_by_set: dict[str, list[str]]) -> None:
    from vault_pipeline.embeddings.embedders import EmbedderSettings, load_embedder

    models = {"torch (sentence-transformers)": load_embedder(),
              "ONNX Runtime": load_embedder(EmbedderSettings(backend="onnx"))}
    for model in models.values():
        model.embed(next(iter(texts_by_set.values()))[:16])  # warm-up
    for name, texts in texts_by_set.items():
        cells = []
        for label, model in models.items():
            started = time.perf_counter()
            vectors = model.embed(texts)
            cells.append(f"{label} {len(texts) / (time.perf_counter() - started):.1f}/s")
            if label == "ONNX Runtime":
                reference = next(iter(models.values())).embed(texts[:64])
                cosine = float((reference * vectors[:64]).sum(axis=1).min())
        print(f"| embedding, {name} ({len(texts)} texts) | {', '.join(cells)}; "
              f"min cosine {cosine:.5f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="A built vault (default: build the demo).")
    parser.add_argument("--rows", type=int, default=200_000,
                        help="Rows of the synthetic index (0: skip).")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7, help="Runs of each start-up command.")
    parser.add_argument("--startup-only", action="store_true",
                        help="Only the start-up and cold-search rows.")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-access-"))
    os.environ["VAULT_MODEL_CACHE"] = str(scratch / "models")  # an ONNX export of its own
    env = dict(os.environ)
    import polars as pl
    try:
        home = args.home
        if home is None:
            home = scratch / "demo"
            subprocess.run([VAULT, "demo", "--home", str(home)], check=True,
                           capture_output=True, env=env)
        home = home.resolve()
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} at start "
              "(other jobs share the cores)")
        print("| figure | value |\n|---|---|")
        search = [VAULT, "search", QUERIES[0], "--k", "5", "--home", str(home)]
        wall([*search, "--local"], 1, env)  # the first one exports the model to ONNX, once
        measured = walls({
            "python": ([sys.executable, "-c", "pass"], env),
            "help": ([VAULT, "--help"], env),
            "sql": ([VAULT, "sql", "SELECT count(*) FROM papers", "--home", str(home)], env),
            "cold": ([*search, "--local"], env),
            "package": ([*search, "--local"], {**env, "VAULT_SEARCH_ENGINE": "lancedb"}),
        }, args.runs)
        python, helped, counted = measured["python"], measured["help"], measured["sql"]
        print(f"| bare `python -c pass` | {python * 1000:.0f} ms |")
        print(f"| `vault --help` | {helped * 1000:.0f} ms ({(helped - python) * 1000:.0f} ms "
              "of its own) |")
        print(f"| `vault sql \"SELECT count(*) FROM papers\"` | {counted * 1000:.0f} ms "
              f"({(counted - python) * 1000:.0f} ms of its own) |")
        cold, package = measured["cold"], measured["package"]
        print(f"| cold `vault search` (new process, ONNX, LanceDB's engine alone) | "
              f"{cold * 1000:.0f} ms = {cold / helped:.1f}x `vault --help` |")
        print(f"| cold `vault search` through the lancedb package | {package * 1000:.0f} ms = "
              f"{package / helped:.1f}x `vault --help` |")
        if args.startup_only:
            return
        process, _ = serve(home)
        try:
            through = wall(search, 3, env)
        finally:
            process.terminate()
            process.wait()
        print(f"| `vault search` with `vault serve` running | {through * 1000:.0f} ms = "
              f"{through / helped:.1f}x `vault --help` |")
        config = scratch / "demo.json"
        config.write_text(json.dumps(DEMO_CONFIG))
        noop = wall([VAULT, "materialize", "--home", str(home), "--config", str(config)], 3)
        print(f"| `vault materialize`, nothing new | {noop * 1000:.0f} ms |")
        queries = [QUERIES[i % len(QUERIES)] + f" {i}" for i in range(args.queries)]
        service_rows(home, queries, "demo vault")
        if args.rows:
            started = time.perf_counter()
            big = synthetic_vault(scratch / "synthetic", args.rows)
            print(f"| synthetic index of {args.rows:,} rows built | "
                  f"{time.perf_counter() - started:.0f} s |")
            service_rows(big, queries, f"{args.rows:,} rows")
        views = [t for t in pl.read_parquet(home / "tables" / "views.parquet")["text"].to_list()
                 if t]
        abstracts = [json.loads(line)["abstract"] for line in SAMPLE.read_text().splitlines()]
        embedding_rows({"demo views": views, "view-length sample text":
                        view_length_texts(abstracts)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
