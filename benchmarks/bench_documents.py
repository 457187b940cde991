"""Benchmark of PDF conversion, side by side in one run:

- pages per second on one core: pymupdf4llm with its layout model, pymupdf4llm without it,
  and plain PyMuPDF text extraction (``page.get_text()``);
- the isolated worker pool with 1 and 2 workers (speed-up from 1 to 2);
- the cost of isolation per document: pool with 1 worker against the same conversions in
  process, and the round trip of an empty task.

The fixed set is paper-like PDFs made by ``make_sample_papers.py`` (each paper lengthened to
about 6–9 pages); pass a folder to measure real PDFs instead.

    python benchmarks/bench_documents.py [PDF_FOLDER]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from make_sample_papers import PAPERS, paper_pdf

from vault_pipeline.documents.convert import PDF, Settings, Task, convert_task
from vault_pipeline.documents.outcome import OK, Conversion
from vault_pipeline.documents.pdf import pdf_plain_text, pdf_to_markdown
from vault_pipeline.documents.workers import PoolSettings, run_isolated

REPEAT = 5  # each sample paper's body written this many times over


def noop(task: Task) -> Conversion:
    """An empty task: what the pool costs without any conversion."""
    return Conversion(status=OK, text=task.key)


def fixed_set(folder: Path) -> list[Path]:
    paths = []
    for copy in range(2):
        for paper in PAPERS:
            path = folder / f"{paper.arxiv_id}-{copy}.pdf"
            path.write_bytes(paper_pdf(paper, repeat=REPEAT + copy))
            paths.append(path)
    return paths


def timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def in_process(paths: list[Path], use_layout: bool) -> float:
    pdf_to_markdown(paths[0].read_bytes(), use_layout=use_layout)  # warm-up (model load)
    return sum(timed(lambda data: pdf_to_markdown(data, use_layout=use_layout), p.read_bytes())
               for p in paths)


def pooled(tasks: list[Task], workers: int, function=convert_task) -> tuple[float, float]:
    """(seconds to the first result incl. worker start, seconds for the rest)."""
    started = time.perf_counter()
    first = None
    statuses = []
    for _task, result in run_isolated(tasks, PoolSettings(workers=workers, timeout_s=300),
                                      function):
        first = first or time.perf_counter()
        statuses.append(result.status)
    assert set(statuses) == {OK}, statuses
    return (first or started) - started, time.perf_counter() - (first or started)


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-documents-"))
    paths = sorted(Path(sys.argv[1]).glob("*.pdf")) if len(sys.argv) > 1 else fixed_set(scratch)
    pages = sum(pdf_plain_text(p.read_bytes())[1] for p in paths)
    print(f"{len(paths)} PDFs, {pages} pages; {os.cpu_count()} cores\n")

    plain = sum(timed(pdf_plain_text, p.read_bytes()) for p in paths)
    layout = in_process(paths, use_layout=True)
    no_layout = in_process(paths, use_layout=False)
    print("one core, in process                 pages/s")
    print(f"  pymupdf4llm, layout model         {pages / layout:8.1f}")
    print(f"  pymupdf4llm, no layout model      {pages / no_layout:8.1f}")
    print(f"  PyMuPDF page.get_text()           {pages / plain:8.1f}")

    settings = Settings()
    tasks = [Task(f"{i:064d}", PDF, str(p), str(scratch / "unpack"), settings)
             for i, p in enumerate(paths)]
    # One extra task per worker first, so worker start and model load are measured apart.
    warm = [Task(f"warm{i}".ljust(64, "0"), PDF, str(paths[0]), str(scratch), settings)
            for i in range(2)]
    start1, one = pooled(warm[:1] + tasks, 1)
    start2, two = pooled(warm + tasks, 2)
    print("\nisolated pool (default settings: no layout model; cleaning included)")
    print(f"  1 worker: {pages / one:6.1f} pages/s (first result after {start1:.1f} s)")
    print(f"  2 workers: {pages / two:5.1f} pages/s (first result after {start2:.1f} s)")
    print(f"  speed-up 1 -> 2 workers: {one / two:.2f}x")

    direct = sum(in_process_time(p, settings) for p in paths)
    overhead = (one - direct) / len(paths)
    _, empty = pooled([Task(f"n{i}".ljust(64, "0"), PDF, "-", "-", settings)
                       for i in range(201)], 1, noop)
    print("\nisolation overhead per document")
    print(f"  pool (1 worker) minus in-process convert_task: {overhead * 1000:7.1f} ms")
    print(f"  round trip of an empty task:                   {empty / 200 * 1000:7.2f} ms")


def in_process_time(path: Path, settings: Settings) -> float:
    task = Task("x" * 64, PDF, str(path), "-", settings)
    return timed(convert_task, task)


if __name__ == "__main__":
    main()
