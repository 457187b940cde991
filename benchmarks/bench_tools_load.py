"""Load test of the agent tools behind `vault serve`, beside a plain LanceDB query, in one run:

- a synthetic vault of ``--papers`` papers with five views each (``5 x papers`` index rows:
  1M at the default), with `papers` and `splits` tables, so sessions cut their worlds from a
  real catalog; vectors on a manifold and Zipf words as in `bench_index.py`, an IVF_FLAT
  index with the vault's settings; built once and kept under ``benchmarks/out/``;
- the anchor: a plain LanceDB vector query of the same table with the session's filter,
  in this process, one at a time and from ``--clients`` threads; beside it the tools' own
  HNSW graph search (`access/vector_graph.py`) of the same query, and the recall@28 of both
  against the exact filtered answer;
- `vault serve` on loopback: one client calling `search_prior_art` in turn, then
  ``--clients`` concurrent clients, each with its own session, ``--calls`` calls each
  (bounded by ``--seconds``), each sending its next call when the last is answered (closed
  loop: the most calls per second the service gives): p50 / p99 per call, errors;
- open loop: ``--clients`` clients together offering each of ``--rates`` calls per second
  (exponential intervals; a call timed from when it was due), the latency at that load;
- a batch of 64 searches in one call against the same 64 as single calls, and a batch of
  8 targets x 8 trajectories each sending the same search (one walk per distinct search);
- oversized and malformed calls: each must be a 4xx.

    python benchmarks/bench_tools_load.py [--papers 200000] [--clients 32] [--calls 40]
        [--query-encoder static|model]

Queries are distinct texts (random Zipf words), so every call embeds its text (with the
static encoder by default, or the vault's model on ONNX Runtime) and no cache flatters the
figures, except in the row that says its texts repeat.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_index import Synthetic, percentiles

OUT = Path(__file__).parent / "out"
VAULT = str(Path(sys.executable).with_name("vault"))
CUTOFF = date(2026, 1, 1)
VIEWS = ("problem_setting", "challenge", "research_gap", "intuition", "proposal")
FIELDS = ("cs.LG", "cs.CL", "cs.IR", "stat.ML", "q-bio.NC", "hep-th", "math.OC", "physics.optics")


def build_vault(root: Path, papers: int) -> Path:
    """The synthetic vault (kept: a second run reuses it)."""
    import polars as pl
    import pyarrow as pa

    from vault_pipeline.embeddings.embedders import load_query_embedder
    from vault_pipeline.index import lance_index
    from vault_pipeline.schemas import PAPERS, SPLITS
    from vault_pipeline.store.paths import VaultPaths

    done = root / "built.json"
    if done.exists() and json.loads(done.read_text()).get("papers") == papers:
        return root
    started = time.perf_counter()
    paths = VaultPaths(root).ensure()
    data = Synthetic(seed=1)
    rng = data.rng
    ids = [f"{2000 + i // 100_000:04d}.{i % 100_000:05d}" for i in range(papers)]
    days = rng.integers(0, 12_400, papers)  # to 2026-12: the later ones are targets
    published = [date(1993, 1, 1) + timedelta(days=int(d)) for d in days]
    revised = rng.random(papers) < 0.2  # a fifth revised, some after the cutoff
    updated = [p + timedelta(days=int(rng.integers(1, 900))) if r else p
               for p, r in zip(published, revised, strict=True)]
    fields = [[FIELDS[int(j)]] for j in rng.integers(0, len(FIELDS), papers)]
    words = data.texts(rng.integers(0, 256, papers))
    frame = pl.DataFrame({
        "arxiv_id": ids, "latest_version": [2 if r else 1 for r in revised],
        "title": [" ".join(t) for t in rng.choice(data.words, size=(papers, 8))],
        "abstract": words,
        "authors": [["A. Author"]] * papers, "categories": fields,
        "primary_category": [f[0] for f in fields], "published": published,
        "updated": updated,
        "versions": [[{"version": 1, "created": p}] + ([{"version": 2, "created": u}] if r
                                                      else [])
                     for p, u, r in zip(published, updated, revised, strict=True)],
        "doi": None, "journal_ref": None, "comments": None, "license": None,
        "source": "synthetic", "raw_sha256": "0" * 64}, schema_overrides={
        "versions": PAPERS.polars["versions"], "doi": pl.String, "journal_ref": pl.String,
        "comments": pl.String, "license": pl.String})
    paths.store.write(PAPERS, frame)
    before = frame.filter(pl.col("published") < CUTOFF)
    splits = before.select("arxiv_id", "published").with_columns(
        split=pl.lit("vault"), reason=pl.lit("synthetic"), cutoff=pl.lit(CUTOFF),
        seed=pl.lit(0, pl.Int64), version=pl.lit(None, pl.Int32))
    for column in SPLITS.names:
        if column not in splits.columns:
            splits = splits.with_columns(pl.lit(None).alias(column))
    paths.store.write(SPLITS, splits)
    # the version the vault holds: the latest, unless it came after the cutoff (then v1)
    held = {a: (u if u < CUTOFF else p) for a, u, p in before.select(
        "arxiv_id", "updated", "published").iter_rows()}
    embedder = load_query_embedder("embedded")
    schema = lance_index.lance_schema(embedder)
    table = lance_index.connect(paths).create_table(lance_index.TABLE, schema=schema,
                                                    mode="overwrite")
    kept = before.select("arxiv_id", "published", "categories", "primary_category")
    chunk = 20_000
    for start in range(0, kept.height, chunk):
        part = kept.slice(start, chunk)
        n = part.height * len(VIEWS)
        vectors, labels = data.vectors(n)
        def rep(column: str, part: pl.DataFrame = part) -> list:
            return [v for v in part[column].to_list() for _ in VIEWS]
        arxiv = rep("arxiv_id")
        table.add(pa.table({
            "arxiv_id": arxiv, "version": pa.array([None] * n, pa.int32()),
            "view": list(VIEWS) * part.height, "text": data.texts(labels),
            "published": rep("published"),
            "version_created": [held[a] for a in arxiv],
            "primary_category": rep("primary_category"), "categories": rep("categories"),
            "archives": [[c[0].split(".")[0]] for c in rep("categories")],
            "text_sha256": [""] * n,
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()),
                                                        vectors.shape[1]),
        }).cast(schema))
    rows = table.count_rows()
    report = lance_index.IndexReport(rows=rows)  # the vault's own indexes, as it builds them
    lance_index._refresh_indexes(table, report, lance_index.IndexSettings(), changed=False)
    done.write_text(json.dumps({"papers": papers, "rows": rows,
                                "seconds": round(time.perf_counter() - started, 1)}))
    return root


def serve(home: Path, query_encoder: str) -> tuple[subprocess.Popen, str, int]:
    marker = home / "serve.json"
    marker.unlink(missing_ok=True)
    process = subprocess.Popen([VAULT, "serve", "--home", str(home), "--port", "0",
                                "--query-encoder", query_encoder],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"vault serve did not start: {process.stderr.read().decode()}")
        time.sleep(0.2)
    url = json.loads(marker.read_text())["url"]
    host, port = url.removeprefix("http://").split(":")
    return process, host, int(port)


class Client:
    """One keep-alive connection (what an RL worker holds)."""

    def __init__(self, host: str, port: int) -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=60)

    def post(self, path: str, body: object, raw: bytes | None = None,
             headers: dict | None = None) -> tuple[int, dict]:
        data = raw if raw is not None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **(headers or {})}
        try:
            self.connection.request("POST", path, body=data, headers=headers)
            response = self.connection.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed an idle keep-alive connection before this call reached it:
            # reconnect and send it again, as HTTP client pools do
            self.connection.close()
            self.connection.request("POST", path, body=data, headers=headers)
            response = self.connection.getresponse()
        payload = response.read()
        try:
            return response.status, json.loads(payload)
        except ValueError:
            return response.status, {"raw": payload[:200].decode(errors="replace")}


def texts(n: int, seed: int) -> list[str]:
    data = Synthetic(seed=seed)
    return data.texts(data.rng.integers(0, 256, n))


def prior_art(text: str) -> dict:
    half = len(text) // 2
    return {"problem_setting": text[:half], "challenge": text[half:], "k": 10}


TARGETS: list[str] = []  # post-cutoff papers of the synthetic vault: the sessions' targets


def open_session(client: Client, i: int, target: int | None = None) -> str:
    """Session ``load-i``, its target the ``target``-th (default ``i``-th) of ``TARGETS``."""
    pick = i if target is None else target
    status, body = client.post("/api/tools/sessions", {
        "as_of": "2025-06-01", "session_id": f"load-{i}",
        "target": TARGETS[pick % len(TARGETS)] if TARGETS else None})
    assert status == 201, body
    return body["session_id"]


def single_client(host: str, port: int, queries: list[str]) -> tuple[float, float]:
    client = Client(host, port)
    session = open_session(client, 10_000)
    times = []
    for text in queries:
        started = time.perf_counter()
        status, body = client.post("/api/tools/call", {"session_id": session,
                                                       "tool": "search_prior_art",
                                                       "arguments": prior_art(text)})
        times.append(time.perf_counter() - started)
        assert status == 200 and "results" in body, body
    return percentiles(times)


def run_clients(clients: int, worker, times: list[float], errors: list[str]) -> dict:
    """Run ``worker(i)`` for every client at once; its calls' times and errors summed up."""
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(worker, range(clients)))
    wall = time.perf_counter() - started
    p50, p99 = percentiles(times) if times else (float("nan"), float("nan"))
    return {"calls": len(times), "wall": wall, "rate": len(times) / wall, "p50": p50,
            "p99": p99, "errors": errors}


def concurrent(host: str, port: int, clients: int, calls: int, seconds: float,
               repeated: bool = False) -> dict:
    """``clients`` sessions calling at once; ``repeated``: each sends 8 texts in turn that
    other sessions send too (trajectories of a target share its inputs), so their vectors
    come from the cache after the first round."""
    times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker(i: int) -> None:
        mine: list[float] = []
        bad: list[str] = []
        try:
            calls_of(i, mine, bad)
        except Exception as exc:  # noqa: BLE001 - an error of the load, counted
            bad.append(repr(exc))
        with lock:
            times.extend(mine)
            errors.extend(bad)

    def calls_of(i: int, mine: list[float], bad: list[str]) -> None:
        client = Client(host, port)
        session = open_session(client, i)
        own = ((texts(8, seed=300 + i % 4) * calls)[:calls] if repeated else
               texts(calls, seed=100 + i))
        for text in own:
            if time.monotonic() > deadline:
                break
            started = time.perf_counter()
            try:
                status, body = client.post("/api/tools/call", {
                    "session_id": session, "tool": "search_prior_art",
                    "arguments": prior_art(text)})
            except OSError as exc:
                bad.append(repr(exc))
                client = Client(host, port)
                continue
            mine.append(time.perf_counter() - started)
            if status != 200 or "results" not in body:
                bad.append(f"{status} {body}")
        client.post("/api/tools/close", {"session_id": session})

    return run_clients(clients, worker, times, errors)


def paced(host: str, port: int, clients: int, rate: float, seconds: float) -> dict:
    """Open loop: ``clients`` sessions together offering ``rate`` calls per second (each
    client's calls at exponential intervals, as independent rollout workers send them), for
    ``seconds``. A call's time runs from when it was due, not from when a late client got to
    send it, so a server that falls behind shows it in the percentiles (no coordinated
    omission). A closed loop of 32 clients cannot show a 20 ms median at 100 calls/s: by
    Little's law its median is 32 / rate."""
    times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        rng = np.random.default_rng(700 + i)
        client = Client(host, port)
        session = open_session(client, 40_000 + i)
        own = iter(texts(int(rate * seconds / clients * 2) + 8, seed=1_000 + i))
        start = time.perf_counter()
        due = start + float(rng.exponential(clients / rate))
        mine, bad = [], []
        while due < start + seconds:
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            try:
                status, body = client.post("/api/tools/call", {
                    "session_id": session, "tool": "search_prior_art",
                    "arguments": prior_art(next(own))})
                if status != 200 or "results" not in body:
                    bad.append(f"{status} {body}")
            except OSError as exc:
                bad.append(repr(exc))
                client = Client(host, port)
            mine.append(time.perf_counter() - due)
            due += float(rng.exponential(clients / rate))
        client.post("/api/tools/close", {"session_id": session})
        with lock:
            times.extend(mine)
            errors.extend(bad)

    return run_clients(clients, worker, times, errors)


def batch_speedup(host: str, port: int, rounds: int = 1) -> tuple[float, float, float]:
    client = Client(host, port)
    session = open_session(client, 20_000)
    singles, batches = [], []
    for r in range(rounds):
        queries = texts(64, seed=500 + r)
        started = time.perf_counter()
        for text in queries:
            status, _ = client.post("/api/tools/call", {"session_id": session,
                                                        "tool": "search_prior_art",
                                                        "arguments": prior_art(text)})
            assert status == 200
        singles.append(time.perf_counter() - started)
        queries = texts(64, seed=900 + r)
        started = time.perf_counter()
        status, body = client.post("/api/tools/batch", {"calls": [
            {"session_id": session, "tool": "search_prior_art", "arguments": prior_art(t)}
            for t in queries]})
        batches.append(time.perf_counter() - started)
        assert status == 200 and all("results" in a for a in body["answers"]), body
    single, batch = statistics.median(singles), statistics.median(batches)
    return single * 1000, batch * 1000, single / batch


def grouped_batch(host: str, port: int, groups: int = 8, size: int = 8, first: int = 40_000
                  ) -> float:
    """One batch of ``groups`` x ``size`` searches: ``size`` trajectories of each of
    ``groups`` targets sending the same search, as a group-sampled RL step does (ms)."""
    client = Client(host, port)
    sessions = [open_session(client, first + i, target=first + i // size)
                for i in range(groups * size)]
    queries = texts(groups, seed=1_300)
    started = time.perf_counter()
    status, body = client.post("/api/tools/batch", {"calls": [
        {"session_id": session, "tool": "search_prior_art",
         "arguments": prior_art(queries[i // size])} for i, session in enumerate(sessions)]})
    elapsed = time.perf_counter() - started
    assert status == 200 and all("results" in a for a in body["answers"]), body
    for session in sessions:
        client.post("/api/tools/close", {"session_id": session})
    return elapsed * 1000


def bad_calls(host: str, port: int) -> list[tuple[str, int]]:
    client = Client(host, port)
    session = open_session(client, 30_000)
    big = "x " * 600_000
    cases = {
        "oversized body (1.2 MB)": ("/api/tools/call", None, json.dumps({
            "session_id": session, "tool": "search_prior_art",
            "arguments": prior_art(big)}).encode()),
        "malformed JSON": ("/api/tools/call", None, b"{not json"),
        "body not an object": ("/api/tools/call", [1, 2], None),
        "unknown tool": ("/api/tools/call", {"session_id": session, "tool": "rm -rf",
                                             "arguments": {}}, None),
        "missing argument": ("/api/tools/call", {"session_id": session,
                                                 "tool": "search_prior_art",
                                                 "arguments": {"challenge": "x"}}, None),
        "k too large": ("/api/tools/call", {"session_id": session, "tool": "search_prior_art",
                                            "arguments": {**prior_art("a b c d"),
                                                          "k": 100_000}}, None),
        "text over 8,000 characters": ("/api/tools/call", {
            "session_id": session, "tool": "search_mechanisms",
            "arguments": {"challenge": "y" * 9_000}}, None),
        "unknown session": ("/api/tools/call", {"session_id": "nope", "tool": "get_paper",
                                                "arguments": {"id": "2001.00001"}}, None),
        "batch of 1,000 calls": ("/api/tools/batch", {"calls": [
            {"session_id": session, "tool": "get_paper", "arguments": {"id": "2001.00001"}}
        ] * 1_000}, None),
        "as_of a year only": ("/api/tools/sessions", {"as_of": "2025"}, None),
    }
    out = []
    for name, (path, body, raw) in cases.items():
        try:
            status, _ = client.post(path, body, raw=raw)
        except OSError:  # the server may close after refusing a large body: a new connection
            client = Client(host, port)
            status = -1
        out.append((name, status))
        client = Client(host, port)
    return out


def plain_lancedb(home: Path, queries: list[str], clients: int) -> dict:
    """The anchor: the same filtered vector query straight on the LanceDB table."""
    from vault_pipeline.embeddings.embedders import load_query_embedder
    from vault_pipeline.index.lance_index import IndexSettings, open_index
    from vault_pipeline.store.paths import VaultPaths

    table = open_index(VaultPaths(home))
    vectors = load_query_embedder("embedded").embed(queries)
    nprobes = IndexSettings().ann_nprobes
    where = ("version_created < date '2025-06-01' AND "
             "view IN ('problem_setting', 'challenge')")

    def one(vector: np.ndarray) -> float:
        started = time.perf_counter()
        (table.search(vector).distance_type("dot").nprobes(nprobes)
         .where(where, prefilter=True).select(["arxiv_id", "view", "text"]).limit(28)
         .to_arrow())
        return time.perf_counter() - started

    one(vectors[0])
    sequential = percentiles([one(v) for v in vectors])
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        times = list(pool.map(one, vectors))
    wall = time.perf_counter() - started
    return {"p50": sequential[0], "p99": sequential[1], "conc_p50": percentiles(times)[0],
            "conc_p99": percentiles(times)[1], "rate": len(vectors) / wall}


def graph_beside_lancedb(home: Path, queries: list[str], encoder: str) -> dict:
    """The tools' in-memory graph search (`access/vector_graph.py`) of the same filtered
    query, one at a time, its search depth tuned for ``encoder`` as the server tunes it, and
    the recall@28 of it and of the plain LanceDB query (the same query vectors) against the
    exact answer (every passing row scored)."""
    from vault_pipeline.access.tools import Toolbox
    from vault_pipeline.access.vector_graph import _exact
    from vault_pipeline.index.lance_index import IndexSettings, index_dir, open_index
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(home)
    table = open_index(paths)
    toolbox = Toolbox(paths, query_encoder=encoder)
    started = time.perf_counter()
    graph = toolbox.graph()
    loaded = time.perf_counter() - started
    tuned = graph.tune(toolbox.query_model(), index_dir(paths) / "graph")  # as the server
    vectors = toolbox.query_model().embed(queries)
    where = ("version_created < date '2025-06-01' AND "
             "view IN ('problem_setting', 'challenge')")
    graph.search(vectors[:1], where, 28)
    times, found = [], []
    for vector in vectors:
        started = time.perf_counter()
        found.append(graph.search(vector[None], where, 28)[0])
        times.append(time.perf_counter() - started)
    started = time.perf_counter()
    graph.search(vectors[:32], where, 28)
    batched = (time.perf_counter() - started) / min(32, len(vectors))
    positions, _ = graph.passing(where)
    truth, _ = _exact(graph.vectors, positions, vectors, 28)
    texts_of = graph.rows.column("text").to_pylist()
    nprobes = IndexSettings().ann_nprobes
    lance = [(table.search(v).distance_type("dot").nprobes(nprobes)
              .where(where, prefilter=True).select(["text"]).limit(28).to_arrow()
              .column("text").to_pylist()) for v in vectors]

    def recall(answers: list[list[str]]) -> float:
        return float(np.mean([len(set(a) & {texts_of[p] for p in t}) / len(t)
                              for a, t in zip(answers, truth, strict=True)]))

    p50, p99 = percentiles(times)
    return {"p50": p50, "p99": p99, "batched": batched * 1000, "loaded": loaded,
            "recall": recall([[h["text"] for h in hits] for hits in found]),
            "lance_recall": recall(lance), "passing": len(positions), "rows": len(graph),
            "depth": graph.search_depth, "tuned_recall": tuned.get("recall", 1.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=200_000,
                        help="Papers of the synthetic vault (five index rows each).")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--calls", type=int, default=40, help="Calls per client.")
    parser.add_argument("--seconds", type=float, default=120, help="Cap on the load phase.")
    parser.add_argument("--queries", type=int, default=200, help="Sequential queries.")
    parser.add_argument("--rates", type=float, nargs="*", default=[25.0, 50.0, 100.0],
                        help="Offered rates (calls/s) of the open-loop runs.")
    parser.add_argument("--paced-seconds", type=float, default=30.0,
                        help="Length of each open-loop run.")
    parser.add_argument("--query-encoder", choices=["static", "model"], default="static",
                        help="What `vault serve` embeds search texts with.")
    args = parser.parse_args()
    os.environ.setdefault("LANCEDB_LOG", "error")
    uptime = lambda: subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()  # noqa: E731
    print(f"machine: {os.cpu_count()} cores; {uptime()}")
    home = OUT / f"tools-load-{args.papers}"
    started = time.perf_counter()
    build_vault(home, args.papers)
    built = json.loads((home / "built.json").read_text())
    import polars as pl

    from vault_pipeline.index.layout import IndexSettings

    TARGETS.extend(pl.scan_parquet(home / "tables" / "papers.parquet")
                   .filter(pl.col("published") >= CUTOFF).select("arxiv_id").head(64)
                   .collect()["arxiv_id"].to_list())
    print(f"| synthetic vault: {args.papers:,} papers, {built['rows']:,} index rows "
          f"(IVF_FLAT) | built in {built['seconds']} s "
          f"({'cached' if time.perf_counter() - started < 30 else 'this run'}) |")
    plain = plain_lancedb(home, texts(args.queries, seed=7), args.clients)
    print(f"| plain LanceDB filtered vector query, in process, one at a time | "
          f"p50 {plain['p50']:.1f} ms, p99 {plain['p99']:.1f} ms |")
    print(f"| plain LanceDB, {args.clients} threads | p50 {plain['conc_p50']:.1f} ms, "
          f"p99 {plain['conc_p99']:.1f} ms, {plain['rate']:.0f} queries/s |")
    graph = graph_beside_lancedb(home, texts(args.queries, seed=7), args.query_encoder)
    print(f"| the tools' HNSW graph search, same filter ({graph['passing']:,} of "
          f"{graph['rows']:,} rows pass), in process, one at a time | p50 {graph['p50']:.2f} "
          f"ms, p99 {graph['p99']:.2f} ms; {graph['batched']:.2f} ms a query in a batch of 32; "
          f"efSearch {graph['depth']} (tuned for recall@28 {graph['tuned_recall']:.3f}); "
          f"graph read in {graph['loaded']:.1f} s |")
    print(f"| recall@28 against the exact filtered answer | graph {graph['recall']:.3f}, "
          f"plain LanceDB (IVF_FLAT, {IndexSettings().ann_nprobes} probes) "
          f"{graph['lance_recall']:.3f} |")
    process, host, port = serve(home, args.query_encoder)
    print(f"vault serve --query-encoder {args.query_encoder}")
    try:
        p50, p99 = single_client(host, port, texts(args.queries, seed=8))
        print(f"| search_prior_art over HTTP, one client | p50 {p50:.1f} ms, p99 {p99:.1f} ms |")
        load = concurrent(host, port, args.clients, args.calls, args.seconds)
        print(f"| search_prior_art over HTTP, {args.clients} concurrent clients, closed loop "
              f"({load['calls']:,} calls in {load['wall']:.1f} s) | p50 {load['p50']:.1f} ms, "
              f"p99 {load['p99']:.1f} ms, {load['rate']:.0f} calls/s, "
              f"{len(load['errors'])} errors (goal p50 <= 20, p99 <= 100, >= 100/s, 0) |")
        for error in load["errors"][:3]:
            print(f"  error: {error}")
        for offered in args.rates:
            open_loop = paced(host, port, args.clients, offered, args.paced_seconds)
            print(f"| search_prior_art over HTTP, {args.clients} clients offering {offered:g} "
                  f"calls/s, open loop ({open_loop['calls']:,} calls in "
                  f"{open_loop['wall']:.1f} s) | p50 {open_loop['p50']:.1f} ms, "
                  f"p99 {open_loop['p99']:.1f} ms, {open_loop['rate']:.0f} calls/s, "
                  f"{len(open_loop['errors'])} errors (goal p50 <= 20, p99 <= 100) |")
            for error in open_loop["errors"][:3]:
                print(f"  error: {error}")
        again = concurrent(host, port, args.clients, args.calls, args.seconds, repeated=True)
        print(f"| the same, texts repeated across sessions (query vectors cached) "
              f"({again['calls']:,} calls in {again['wall']:.1f} s) | p50 {again['p50']:.1f} ms, "
              f"p99 {again['p99']:.1f} ms, {again['rate']:.0f} calls/s, "
              f"{len(again['errors'])} errors |")
        single, batch, ratio = batch_speedup(host, port, rounds=3)
        print(f"| 64 searches: 64 single calls vs one batched call (medians of 3) | "
              f"{single:.0f} ms vs {batch:.0f} ms: {ratio:.1f}x (goal >= 4x) |")
        rounds = [grouped_batch(host, port, first=40_000 + 100 * r) for r in range(3)]
        grouped = statistics.median(rounds)
        print(f"| the same 64 as 8 targets x 8 trajectories sending one search each, one "
              f"batched call (median of 3: {' / '.join(f'{r:.0f}' for r in rounds)} ms) | "
              f"{grouped:.0f} ms: {single / grouped:.1f}x the 64 single calls |")
        refused = bad_calls(host, port)
        clean = all(400 <= status < 500 for _, status in refused)
        print(f"| oversized and malformed calls | {'all 4xx' if clean else 'NOT all 4xx'}: "
              + ", ".join(f"{name} {status}" for name, status in refused) + " |")
    finally:
        process.terminate()
        process.wait()
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
