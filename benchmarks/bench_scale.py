"""Scale run: a synthetic vault through papers → documents (abstracts only) → splits at N
papers (default 1M), and through all five stages (ideas extractive and index included) at a
smaller N, each stage in its own process, with wall time, CPU time (the process and its
workers) and peak memory per stage; the heavy stages' figures extrapolated to N, labelled
so; then the LLM stage's prompt and answer tokens per paper (o200k_base), the bytes on disk
per table, and the cost model for 2.7M papers from these measurements (GPU throughput is an
input: none is measured here). docs/scale.md reports a run of it.

    python benchmarks/bench_scale.py                               # 1M + 5,000 papers
    python benchmarks/bench_scale.py --papers 100000 --full-papers 2000
    python benchmarks/bench_scale.py --prefill-tokens-per-s P --decode-tokens-per-s D \
        --gpu-source "vLLM benchmark_throughput, model X on GPU Y"
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
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(home).ensure()
    if name == "papers":
        from vault_pipeline.papers.build import build_papers
        from vault_pipeline.raw.zone import RawZone

        RawZone(paths).import_paths([snapshot])
        return {"rows": build_papers(paths).rows}
    if name == "documents":
        from vault_pipeline.documents.build import build_documents

        return {"rows": build_documents(paths).rows}
    if name == "ideas":
        from vault_pipeline.ideas.build import build_masked_records, build_views
        from vault_pipeline.llm.settings import IdeasSettings

        build_masked_records(paths, IdeasSettings(), log=lambda *_: None)
        return {"rows": build_views(paths).views}
    if name == "splits":
        from vault_pipeline.llm.settings import IdeasSettings
        from vault_pipeline.splits.build import build_splits
        from vault_pipeline.splits.classifiers import make_classifier
        from vault_pipeline.splits.settings import SplitSettings

        settings = SplitSettings()
        classifier = make_classifier(settings.classifier, IdeasSettings())
        return {"rows": build_splits(paths, settings, classifier).rows}
    from vault_pipeline.embeddings.embedders import EmbedderSettings, load_embedder
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
    abstracts (the documents of this run) and on full texts cut at 30,000 characters.
    Counted with o200k_base (the tokenizer `bpe-openai` ships in its package: GPT-4o's; an
    open model's tokenizer counts somewhat differently). The prompt is the stage's real
    chat messages; the answer is measured on the extractive backend's answers (the same JSON
    record an LLM must return, filled with the paper's own sentences), per paper, besides
    the recorded complete LLM-style answer of the tests."""
    import statistics

    import bpe_openai
    from bench_ideas import full_papers, sample_papers, tokens

    from vault_pipeline.ideas.backends.extractive import ExtractiveBackend
    from vault_pipeline.ideas.requests import build_requests
    from vault_pipeline.llm.prompting import load_prompt
    from vault_pipeline.llm.settings import IdeasSettings

    encoding = bpe_openai.get_encoding("o200k_base")
    backend = ExtractiveBackend()
    out = []
    for papers in (sample_papers(), full_papers(sample_papers())):
        figures = tokens(papers)
        requests = build_requests(papers, backend, load_prompt(), IdeasSettings())
        answers = [len(encoding.encode(a.text)) for a in backend.generate(requests) if a.text]
        figures |= {"extractive_answer": statistics.mean(answers),
                    "extractive_answer_max": max(answers), "papers": len(papers),
                    "answered": len(answers)}
        out.append(figures)
    return out[0], out[1]


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


def snapshot(folder: Path, papers: int, seed: int) -> Path:
    """The synthetic snapshot of ``papers`` records (written once per folder)."""
    from make_snapshot import write_snapshot

    target = folder / f"snapshot-{papers}.jsonl"
    started = time.perf_counter()
    if not target.exists():
        synthetic = folder / f"synthetic-{papers}.jsonl"
        write_snapshot(synthetic, papers, seed)
        with_sample_texts(synthetic, target)
        synthetic.unlink()
    print(f"synthetic snapshot: {papers:,} papers, {target.stat().st_size / 1e6:,.1f} MB, "
          f"ready in {time.perf_counter() - started:,.1f} s; {os.cpu_count()} cores")
    return target


def run_stages(stages: tuple[str, ...], home: Path, source: Path, papers: int
               ) -> dict[str, dict]:
    """Each stage in its own process, one line each as it finishes."""
    shutil.rmtree(home, ignore_errors=True)
    print(f"{'stage':<10} {'rows':>10} {'wall s':>9} {'cpu s':>9} {'peak MB':>8} "
          f"{'cpu ms/paper':>13}")
    rows = {}
    for name in stages:
        figures = run_stage(name, home, source)
        figures["cpu_ms_per_paper"] = 1000 * figures["cpu_s"] / papers
        rows[name] = figures
        print(f"{name:<10} {figures['rows']:>10,} {figures['wall_s']:>9.1f} "
              f"{figures['cpu_s']:>9.1f} {figures['peak_mb']:>8.0f} "
              f"{figures['cpu_ms_per_paper']:>13.3f}", flush=True)
    print(f"{'total':<10} {'':>10} {sum(f['wall_s'] for f in rows.values()):>9.1f}")
    return rows


CHEAP = ("papers", "documents", "splits")
CORPUS = 2_700_000  # arXiv, the figure


def cost_model(per_paper_ms: dict[str, float], tokens: tuple[dict, dict],
               pdf_rates: dict[str, float], index_bytes: float, args: argparse.Namespace
               ) -> None:
    """Core-hours, GPU-hours and storage for the whole of arXiv from this run's
    measurements; what is an input rather than a measurement is named as such."""
    n = CORPUS
    print(f"\ncost model for {n:,} papers (measured per-paper figures of this run)")
    print(f"{'stage':<34} {'measured':>22} {'core-hours':>11}")
    for name, ms in per_paper_ms.items():
        label = f"{name} (abstracts)" if name == "documents" else name
        print(f"{label:<34} {ms:>15.3f} ms/paper {n * ms / 1000 / 3600:>11.2f}")
    for converter, rate in pdf_rates.items():
        seconds = n * args.pages_per_paper / rate
        print(f"{'documents, full text, ' + converter:<34} {rate:>11.1f} pages/cpu-s "
              f"{seconds / 3600:>11.0f}")
    print(f"  (full text: {args.pages_per_paper:g} pages per paper is an input, "
          "--pages-per-paper, not measured here)")
    abstract, full = tokens
    print("LLM stage tokens per paper (o200k_base): prompt "
          f"{abstract['mean']:,.0f} (abstract) / {full['mean']:,.0f} (full text); answer "
          f"{full['extractive_answer']:,.0f} (extractive answers, full text), "
          f"{abstract['extractive_answer']:,.0f} (abstracts), {full['answer']:,} (recorded "
          "LLM answer)")
    prompt, answer = full["mean"], full["extractive_answer"]
    print(f"  {n:,} papers, full text: {n * prompt / 1e9:,.2f} billion prompt tokens, "
          f"{n * answer / 1e9:,.2f} billion answer tokens")
    if args.prefill_tokens_per_s and args.decode_tokens_per_s:
        seconds = prompt / args.prefill_tokens_per_s + answer / args.decode_tokens_per_s
        print(f"  GPU-hours = N x (prompt/P + answer/D) / 3600 with P = "
              f"{args.prefill_tokens_per_s:,.0f} and D = {args.decode_tokens_per_s:,.0f} "
              f"tokens/s per GPU (input, not measured here; source: {args.gpu_source}): "
              f"{seconds:.3f} s/paper, {n * seconds / 3600:,.0f} GPU-hours")
    else:
        print("  GPU-hours = N x (prompt/P + answer/D) / 3600, P and D the prefill and decode "
              "tokens/s one GPU sustains: no GPU here, give them with --prefill-tokens-per-s "
              "and --decode-tokens-per-s (and --gpu-source) to evaluate it")
    print(f"vector index: {index_bytes:,.0f} bytes/paper measured -> "
          f"{n * index_bytes / 1e9:,.1f} GB for {n:,} papers")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1_000_000,
                        help="papers for the cheap stages (papers, documents, splits)")
    parser.add_argument("--full-papers", type=int, default=5_000,
                        help="papers for all five stages (ideas and index included); their "
                             "figures are extrapolated to --papers, and labelled so")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="build the vaults here and keep them")
    parser.add_argument("--pages-per-paper", type=float, default=15.0,
                        help="pages of an average arXiv paper (an input: the issue's figure)")
    parser.add_argument("--prefill-tokens-per-s", type=float,
                        help="prompt tokens/s one GPU sustains (an input; none measured here)")
    parser.add_argument("--decode-tokens-per-s", type=float,
                        help="answer tokens/s one GPU sustains (an input)")
    parser.add_argument("--gpu-source", default="given on the command line",
                        help="where the two GPU figures come from (printed with them)")
    parser.add_argument("--child", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.home, args.snapshot)
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="vault-scale-"))
    folder.mkdir(parents=True, exist_ok=True)

    print(f"== cheap stages at {args.papers:,} papers (documents: abstracts)")
    cheap = run_stages(CHEAP, folder / "vault-cheap", snapshot(folder, args.papers, args.seed),
                       args.papers)
    shutil.rmtree(folder / "vault-cheap", ignore_errors=True)

    n = args.full_papers
    print(f"\n== all five stages at {n:,} papers (ideas: extractive; index: ONNX Runtime)")
    home = folder / "vault-full"
    full = run_stages(STAGES, home, snapshot(folder, n, args.seed), n)
    if full["index"].get("views_per_second"):
        print(f"index: {full['index']['embedded']:,} views embedded at "
              f"{full['index']['views_per_second']:,.1f} views/s")
    print(f"\n== extrapolated to {args.papers:,} papers from the {n:,}-paper run's CPU ms "
          "per paper (not run at that size)")
    for name in ("ideas", "index"):
        ms = full[name]["cpu_ms_per_paper"]
        print(f"{name:<10} {ms:>9.3f} ms/paper x {args.papers:,} = "
              f"{args.papers * ms / 1000 / 3600:,.1f} core-hours (extrapolated)")

    tokens = tokens_per_paper()
    for label, t in zip(("abstract", "full text, 30,000 chars"), tokens, strict=True):
        print(f"LLM stage per paper ({label}, o200k_base, {t['papers']} sample papers): "
              f"prompt {t['mean']:,.0f} tokens (max {t['max']:,}); extractive answer "
              f"{t['extractive_answer']:,.0f} (max {t['extractive_answer_max']:,}, "
              f"{t['answered']} answered); recorded LLM answer {t['answer']:,}; JSON schema "
              f"{t['schema']:,}")
    rates = pdf_pages_per_core_second()
    print("PDF conversion (sample PDFs, one core): " + ", ".join(
        f"{name} {rate:,.1f} pages/cpu-s" for name, rate in rates.items()))
    sizes = table_bytes(home)
    print(f"bytes per paper on disk ({n:,}-paper vault): " + ", ".join(
        f"{name} {size / n:,.0f}" for name, size in sorted(sizes.items())))
    per_paper = {name: cheap[name]["cpu_ms_per_paper"] for name in CHEAP} | {
        name: full[name]["cpu_ms_per_paper"] for name in ("ideas", "index")}
    cost_model(per_paper, tokens, rates, sizes.get("views_index (lance)", 0) / n, args)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
