"""Benchmark of the `papers` stage: one command, figures printed side by side.

    python benchmarks/bench_papers.py [--sizes 100000 1000000] [--feed-entries 10000]

(a) Synthetic arXiv metadata snapshots (the Kaggle/Cornell JSON-lines format) go through
    ``RawZone.import_paths`` and ``build_papers`` on a fresh data root. Each step runs in its
    own child process, so the peak RSS reported is the build's own high-water mark
    (``getrusage``), not the parent's or the generator's. One more run adds a revised copy of
    a tenth of the papers, so the duplicate-resolution path is timed and its memory checked.
(b) Atom (arXiv API) and OAI-PMH (``arXiv``, ``arXivRaw``) pages parsed by the project's
    parsers, beside plain ``feedparser`` on the very same Atom pages, in the same run.

Inputs are generated under benchmarks/out/ (kept between runs: same seed, same bytes)."""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

GOAL_RECORDS_PER_S = 100_000
REVISED_EVERY = 10


def _peak_rss_mb() -> float:
    """This process's peak resident set size (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---- child processes -------------------------------------------------------------------


def child_import(home: Path, inputs: list[Path]) -> dict:
    from vault_pipeline.raw.zone import RawZone
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(home).ensure()
    started = time.perf_counter()
    report = RawZone(paths).import_paths(inputs)
    if report.rejected:
        raise SystemExit(f"import rejected {report.rejected}")
    return {"seconds": time.perf_counter() - started, "files": len(report.added)}


class AnonymousPeak:
    """Peak anonymous memory (``RssAnon``), sampled every 20 ms. The streamed build reads
    the snapshot through a memory map, whose file pages count in RSS but are page cache,
    not memory the build holds; this figure leaves them out."""

    def __init__(self) -> None:
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        status = Path("/proc/self/status")
        while not self._stop.is_set():
            match = re.search(r"RssAnon:\s+(\d+)", status.read_text())
            self.peak_kib = max(self.peak_kib, int(match.group(1)) if match else 0)
            self._stop.wait(0.02)

    def __enter__(self) -> AnonymousPeak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def child_build(home: Path, reader: str, codec: str) -> dict:
    from vault_pipeline.papers import build as papers
    from vault_pipeline.papers.build import build_papers
    from vault_pipeline.store.paths import VaultPaths

    papers.COMPRESSION.clear()
    papers.COMPRESSION.update(CODECS[codec])
    paths = VaultPaths(home)
    baseline = _peak_rss_mb()  # interpreter and libraries, before any work
    with AnonymousPeak() as anonymous:
        cpu, started = _cpu_s(), time.perf_counter()
        report = build_papers(paths, stream_snapshots=reader == "streamed")
        seconds, cpu = time.perf_counter() - started, _cpu_s() - cpu
    return {"seconds": seconds, "cpu_seconds": cpu,
            "peak_rss_mb": _peak_rss_mb(), "baseline_rss_mb": baseline,
            "peak_anon_mb": anonymous.peak_kib / 1024, "rows": report.rows,
            "candidates": report.candidates, "rejected": report.rejected,
            "table_mb": paths.table("papers").stat().st_size / 1e6}


def run_child(*args: str) -> dict:
    """Run this script in a fresh interpreter; its last stdout line is a JSON result."""
    done = subprocess.run([sys.executable, __file__, "--child", *args], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- (a) snapshot → papers ---------------------------------------------------------------


VARIANTS = {"streamed, lz4": ("streamed", "lz4"), "streamed, zstd": ("streamed", "zstd"),
            "batch, zstd": ("batch", "zstd")}
"""Reader and table codec. ``streamed``: the default, one Polars streaming query per plain
snapshot file; ``batch``: the same file through the batch reader (what gzip snapshots and
files with an unreadable line take). ``lz4`` is the table's codec; ``zstd`` (level 1) was,
so ``batch, zstd`` is the build as it was before both changes."""
CODECS = {"lz4": {"compression": "lz4"}, "zstd": {"compression": "zstd", "compression_level": 1}}


@dataclass
class BuildRow:
    label: str
    variant: str
    records: int
    input_mb: float
    imported: dict
    builds: list[dict]

    def median(self, key: str) -> float:
        values = sorted(b[key] for b in self.builds)
        return values[len(values) // 2]

    @property
    def rate(self) -> float:
        return self.records / self.median("seconds")

    @property
    def rates(self) -> tuple[float, float]:
        return (self.records / max(b["seconds"] for b in self.builds),
                self.records / min(b["seconds"] for b in self.builds))


def snapshot_file(records: int, seed: int) -> Path:
    from make_snapshot import write_snapshot

    path = OUT / f"snapshot-{records}-seed{seed}.jsonl"
    if not path.exists():
        started = time.perf_counter()
        write_snapshot(path, records, seed)
        print(f"  generated {path.name} in {time.perf_counter() - started:,.0f} s", flush=True)
    return path


def revised_file(base: Path) -> Path:
    from make_snapshot import write_revisions

    path = base.with_name(base.stem + f"-revised-every{REVISED_EVERY}.jsonl")
    if not path.exists():
        write_revisions(base, path, REVISED_EVERY)
    return path


def bench_build(label: str, inputs: list[Path], records: int, rounds: int) -> list[BuildRow]:
    """Import once, then build ``rounds`` times with each variant, in turn, each build in a
    fresh process: every variant meets the same machine load, side by side."""
    home = OUT / "vault"
    shutil.rmtree(home, ignore_errors=True)
    imported = run_child("import", str(home), *map(str, inputs))
    size = sum(p.stat().st_size for p in inputs) / 1e6
    rows = {name: BuildRow(label, name, records, size, imported, []) for name in VARIANTS}
    for _ in range(rounds):
        for name, (reader, codec) in VARIANTS.items():
            rows[name].builds.append(run_child("build", str(home), reader, codec))
    shutil.rmtree(home, ignore_errors=True)
    for row in rows.values():
        low, high = row.rates
        print(f"  {label}, {row.variant}: {row.rate:,.0f} records/s (median of {rounds}; "
              f"{low:,.0f}-{high:,.0f}), peak anonymous memory "
              f"{row.median('peak_anon_mb'):,.0f} MB", flush=True)
    return list(rows.values())


def build_table(rows: list[BuildRow]) -> str:
    head = (f"{'input':<34}{'reader, codec':<16}{'records':>11}{'input MB':>10}{'import s':>10}"
            f"{'build s':>9}{'records/s':>11}{'range':>17}{'CPU s':>7}{'rec/CPU-s':>11}"
            f"{'peak RSS MB':>13}{'peak anon MB':>14}{'of which libs':>15}"
            f"{'papers rows':>13}{'table MB':>10}")
    lines = [head, "-" * len(head)]
    for row in rows:
        low, high = row.rates
        built = row.builds[0]
        lines.append(
            f"{row.label:<34}{row.variant:<16}{row.records:>11,}{row.input_mb:>10,.0f}"
            f"{row.imported['seconds']:>10.1f}{row.median('seconds'):>9.2f}{row.rate:>11,.0f}"
            f"{f'{low:,.0f}-{high:,.0f}':>17}{row.median('cpu_seconds'):>7.1f}"
            f"{row.records / row.median('cpu_seconds'):>11,.0f}"
            f"{row.median('peak_rss_mb'):>13,.0f}{row.median('peak_anon_mb'):>14,.0f}"
            f"{built['baseline_rss_mb']:>15,.0f}"
            f"{built['rows']:>13,}{built['table_mb']:>10,.0f}")
    return "\n".join(lines)


# ---- (b) Atom / OAI-PMH parsing --------------------------------------------------------------


@dataclass
class ParseRow:
    format: str
    parser: str
    entries: int
    megabytes: float
    seconds: float


def _best_of(repeats: int, work: Callable[[], int]) -> tuple[int, float]:
    best, count = float("inf"), 0
    for _ in range(repeats):
        started = time.perf_counter()
        count = work()
        best = min(best, time.perf_counter() - started)
    return count, best


def bench_feeds(entries: int, page_size: int, repeats: int) -> list[ParseRow]:
    import feedparser
    from make_feeds import write_pages

    from vault_pipeline.parse import parse_raw_file
    from vault_pipeline.parse.atom import parse_atom
    from vault_pipeline.parse.common import ParseReject
    from vault_pipeline.parse.oai import parse_oai

    def records(rows: Iterable[object]) -> int:
        return sum(1 for row in rows if not isinstance(row, ParseReject))

    results = []
    for kind, parse, raw_kind in (("atom", parse_atom, "arxiv_api"),
                                  ("oai_arXiv", parse_oai, "oai_pmh"),
                                  ("oai_arXivRaw", parse_oai, "oai_pmh")):
        directory = OUT / f"feeds-{entries}-{page_size}" / kind
        paths = sorted(directory.glob("*.xml")) if directory.exists() else []
        if not paths:
            paths = write_pages(directory, kind, entries, page_size)
        pages = [p.read_bytes() for p in paths]
        size = sum(map(len, pages)) / 1e6
        label = {"atom": "Atom (arXiv API)", "oai_arXiv": "OAI-PMH arXiv",
                 "oai_arXivRaw": "OAI-PMH arXivRaw"}[kind]

        def project(parse=parse, pages=pages) -> int:
            return sum(records(parse(io.BytesIO(page))) for page in pages)

        def to_frames(paths=paths, raw_kind=raw_kind) -> int:
            return sum(b.candidates.height for p in paths for b in parse_raw_file(p, raw_kind))

        for parser, work in (("vault parser (lxml) → dict rows", project),
                             ("vault parse_raw_file → Polars batches", to_frames)):
            count, seconds = _best_of(repeats, work)
            results.append(ParseRow(label, parser, count, size, seconds))
        if kind == "atom":
            def plain_feedparser(pages=pages) -> int:
                return sum(len(feedparser.parse(page).entries) for page in pages)

            count, seconds = _best_of(1, plain_feedparser)
            results.append(ParseRow(label, "feedparser (baseline)", count, size, seconds))
        print(f"  {label}: done", flush=True)
    return results


def parse_table(rows: list[ParseRow]) -> str:
    head = (f"{'format':<19}{'parser':<40}{'entries':>9}{'MB':>7}{'seconds':>9}"
            f"{'entries/s':>11}{'MB/s':>7}")
    lines = [head, "-" * len(head)]
    for row in rows:
        lines.append(f"{row.format:<19}{row.parser:<40}{row.entries:>9,}{row.megabytes:>7.1f}"
                     f"{row.seconds:>9.2f}{row.entries / row.seconds:>11,.0f}"
                     f"{row.megabytes / row.seconds:>7.1f}")
    return "\n".join(lines)


# ---- report ----------------------------------------------------------------------------------


def machine() -> str:
    import psutil

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0))
    memory = psutil.virtual_memory().total / 2**30
    libs = ", ".join(f"{name} {version(name)}"
                     for name in ("polars", "pyarrow", "lxml", "feedparser"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"machine: {cores} cores ({usable} usable), {memory:.1f} GiB RAM, "
            f"{platform.system()} {platform.machine()}; Python {platform.python_version()}; "
            f"{libs}\nload average (1, 5, 15 min): {load}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000],
                        help="snapshot records per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-duplicates", action="store_true",
                        help="skip the run with revised copies (duplicate resolution)")
    parser.add_argument("--feed-entries", type=int, default=10_000,
                        help="entries per Atom / OAI format (0 skips part b)")
    parser.add_argument("--page-size", type=int, default=1000, help="entries per page")
    parser.add_argument("--repeats", type=int, default=3, help="best of N for the parsers")
    parser.add_argument("--rounds", type=int, default=3,
                        help="builds per variant and input (the median is reported)")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    print("papers benchmark\n" + machine(), flush=True)

    builds = []
    for records in args.sizes:
        base = snapshot_file(records, args.seed)
        builds += bench_build(f"snapshot {records:,}", [base], records, args.rounds)
    if args.sizes and not args.no_duplicates:
        records = max(args.sizes)
        base = snapshot_file(records, args.seed)
        revised = revised_file(base)
        label = f"snapshot {records:,} + 1/{REVISED_EVERY} revised"
        builds += bench_build(label, [base, revised], records + records // REVISED_EVERY,
                              args.rounds)
    feeds = (bench_feeds(args.feed_entries, args.page_size, args.repeats)
             if args.feed_entries else [])

    print("\n" + machine())
    if builds:
        print(f"\n(a) snapshot → `papers` (import, then build_papers; goal "
              f"≥ {GOAL_RECORDS_PER_S:,} records/s)\n" + build_table(builds))
        default = next(iter(VARIANTS))
        for row in builds:
            if row.variant == default:
                verdict = "met" if row.rate >= GOAL_RECORDS_PER_S else "NOT met"
                print(f"goal {verdict} by the median default ({default}) build of "
                      f"{row.label}: {row.rate:,.0f} records/s")
    if feeds:
        print("\n(b) Atom / OAI-PMH parsing, same pages for every parser\n" + parse_table(feeds))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        step, home, *rest = sys.argv[2:]
        result = (child_import(Path(home), [Path(p) for p in rest]) if step == "import"
                  else child_build(Path(home), *rest))
        print(json.dumps(result))
    else:
        main()
