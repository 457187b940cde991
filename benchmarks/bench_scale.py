"""Scale run: a synthetic N-paper vault through papers → documents (abstracts only) →
ideas (extractive) → splits → index on this machine, each stage in its own process, with
wall time, CPU time (the process and its workers) and peak memory per stage; then the
prompt and answer tokens per paper the LLM stage would send (o200k_base, the extractive
prompt's messages) and the bytes on disk per table. The per-paper figures are what
docs/scale.md scales to 2.7M papers.

    python benchmarks/bench_scale.py                    # 1M papers (hours here)
    python benchmarks/bench_scale.py --papers 100000
    python benchmarks/bench_scale.py --papers 2000 --keep vault-2k
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

STAGES = ("papers", "documents", "ideas", "splits", "index")


def _stage(name: str, home: Path, snapshot: Path) -> dict:
    """Run one stage on the vault at ``home`` (in this, a fresh process)."""
    from vault_pipeline.paths import VaultPaths

    paths = VaultPaths(home).ensure()
    if name == "papers":
        from vault_pipeline.papers import build_papers
        from vault_pipeline.raw.zone import RawZone

        RawZone(paths).import_paths([snapshot])
        return {"rows": build_papers(paths).rows}
    if name == "documents":
        from vault_pipeline.documents.build import build_documents

        return {"rows": build_documents(paths).rows}
    if name == "ideas":
        from vault_pipeline.ideas.build import build_masked_records, build_views
        from vault_pipeline.ideas.settings import IdeasSettings

        build_masked_records(paths, IdeasSettings(), log=lambda *_: None)
        return {"rows": build_views(paths).views}
    if name == "splits":
        from vault_pipeline.ideas.settings import IdeasSettings
        from vault_pipeline.splits.build import build_splits
        from vault_pipeline.splits.classifiers import make_classifier
        from vault_pipeline.splits.settings import SplitSettings

        settings = SplitSettings()
        classifier = make_classifier(settings.classifier, IdeasSettings())
        return {"rows": build_splits(paths, settings, classifier).rows}
    from vault_pipeline.index.embedders import EmbedderSettings, load_embedder
    from vault_pipeline.index.lance_index import build_index

    report = build_index(paths, load_embedder(EmbedderSettings(backend="onnx")))
    return {"rows": report.rows, "embedded": report.embedded,
            "views_per_second": report.views_per_second}


def child(name: str, home: Path, snapshot: Path) -> None:
    started = time.perf_counter()
    figures = _stage(name, home, snapshot)
    wall = time.perf_counter() - started
    own, workers = (resource.getrusage(who) for who in
                    (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    figures |= {"wall_s": wall,
                "cpu_s": own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime,
                "peak_mb": max(own.ru_maxrss, workers.ru_maxrss) / 1024}
    print("FIGURES " + json.dumps(figures), flush=True)


def run_stage(name: str, home: Path, snapshot: Path) -> dict:
    result = subprocess.run([sys.executable, __file__, "--child", name, "--home", str(home),
                             "--snapshot", str(snapshot)], capture_output=True, text=True)
    lines = [x for x in result.stdout.splitlines() if x.startswith("FIGURES ")]
    if result.returncode != 0 or not lines:
        raise SystemExit(f"stage {name} failed:\n{result.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("FIGURES "))


def with_sample_texts(source: Path, target: Path) -> None:
    """The synthetic records (ids, dates, versions, authors) with the titles and abstracts
    of the bundled sample's real papers in turn: random words carry none of the cues the
    extractive decomposer keys on, real abstracts give it the work it does in production."""
    from bench_ideas import SAMPLE

    texts = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    with source.open() as reader, target.open("w") as writer:
        for i, line in enumerate(reader):
            record = json.loads(line)
            real = texts[i % len(texts)]
            record["title"], record["abstract"] = real["title"], real["abstract"]
            writer.write(json.dumps(record) + "\n")


def tokens_per_paper() -> tuple[dict[str, float], dict[str, float]]:
    """Prompt and answer tokens of the LLM stage per paper, on the bundled sample's
    abstracts (the documents of this run) and on full texts cut at 30,000 characters."""
    from bench_ideas import full_papers, sample_papers, tokens

    papers = sample_papers()
    return tokens(papers), tokens(full_papers(papers))


def pdf_pages_per_core_second() -> dict[str, float]:
    """Full-text conversion, which this run skips (abstracts only): pages per CPU second of
    each PDF converter on the bundled sample's PDFs, in this process."""
    from vault_pipeline.documents.convert import (
        FAST,
        PDF,
        PYMUPDF4LLM,
        Settings,
        Task,
        convert_task,
    )

    pdfs = sorted((HERE.parent / "vault_pipeline" / "sample" / "raw").glob("*.pdf"))
    rates = {}
    for converter in (FAST, PYMUPDF4LLM, FAST, PYMUPDF4LLM):  # the first pass warms up
        settings = Settings(pdf_converter=converter)
        pages, started = 0, time.process_time()
        with tempfile.TemporaryDirectory() as scratch:
            for pdf in pdfs:
                result = convert_task(Task(pdf.name, PDF, str(pdf), scratch, settings))
                pages += result.n_pages or 0
        rates[converter] = pages / (time.process_time() - started)
    return rates


def table_bytes(home: Path) -> dict[str, int]:
    sizes = {f.stem: f.stat().st_size for f in (home / "tables").glob("*.parquet")}
    index = home / "index"
    if index.exists():
        sizes["views_index (lance)"] = sum(f.stat().st_size for f in index.rglob("*")
                                           if f.is_file())
    return sizes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="build the vault here and keep it")
    parser.add_argument("--child", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.home, args.snapshot)
        return
    from make_snapshot import write_snapshot

    folder = args.keep or Path(tempfile.mkdtemp(prefix="vault-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    snapshot = folder / f"snapshot-{args.papers}.jsonl"
    started = time.perf_counter()
    if not snapshot.exists():
        synthetic = folder / "synthetic.jsonl"
        write_snapshot(synthetic, args.papers, args.seed)
        with_sample_texts(synthetic, snapshot)
        synthetic.unlink()
    print(f"synthetic snapshot: {args.papers:,} papers, {snapshot.stat().st_size / 1e6:,.1f} "
          f"MB, written in {time.perf_counter() - started:,.1f} s; {os.cpu_count()} cores")
    home = folder / "vault"
    shutil.rmtree(home, ignore_errors=True)
    print(f"{'stage':<10} {'rows':>10} {'wall s':>9} {'cpu s':>9} {'peak MB':>8} "
          f"{'cpu ms/paper':>13}")
    rows = {}
    for name in STAGES:
        figures = run_stage(name, home, snapshot)
        rows[name] = figures
        print(f"{name:<10} {figures['rows']:>10,} {figures['wall_s']:>9.1f} "
              f"{figures['cpu_s']:>9.1f} {figures['peak_mb']:>8.0f} "
              f"{1000 * figures['cpu_s'] / args.papers:>13.3f}", flush=True)
    total = sum(f["wall_s"] for f in rows.values())
    print(f"{'total':<10} {'':>10} {total:>9.1f}")
    if rows["index"].get("views_per_second"):
        print(f"index: {rows['index']['embedded']:,} views embedded at "
              f"{rows['index']['views_per_second']:,.1f} views/s (ONNX Runtime)")
    for label, tokens in zip(("abstract", "full text, 30,000 chars"), tokens_per_paper(),
                             strict=True):
        print(f"LLM stage per paper ({label}, o200k_base): prompt {tokens['mean']:,.0f} "
              f"tokens (max {tokens['max']:,}), answer {tokens['answer']:,}, JSON schema "
              f"{tokens['schema']:,}")
    print("PDF conversion (sample PDFs, one core): " + ", ".join(
        f"{name} {rate:,.1f} pages/cpu-s" for name, rate in pdf_pages_per_core_second().items()))
    sizes = table_bytes(home)
    print("bytes per paper on disk: " + ", ".join(
        f"{name} {size / args.papers:,.0f}" for name, size in sorted(sizes.items())))
    print(f"all tables and the index: {sum(sizes.values()) / args.papers:,.0f} bytes/paper")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
