"""Benchmark of PDF conversion, side by side in one run:

- pages per second per core, in process, for each pymupdf4llm option set (layout model;
  no layout model with the table finder on every page, on ruled pages only — the default —
  or off) and for plain PyMuPDF text extraction (``page.get_text()``). Per core means per
  CPU second of this process (``time.process_time``), which other jobs on the machine do
  not change; wall-clock pages/s are printed beside it;
- the isolated worker pool with 1 and 2 workers (default settings, cleaning included):
  wall pages/s, pages per CPU second of the workers, and the speed-up from 1 to 2;
- the cost of isolation per document: the round trip of an empty task and a worker's start
  (spawn and imports), spread over the ``max_tasks`` documents a worker converts.

Two fixed sets made by ``make_sample_papers.py``: the sample papers lengthened to 3–7 pages,
and long papers of 12+ pages with a table, a figure and an equation in every round. The
layout model is measured on the first set only (it is about ten times slower). Pass a folder
to measure real PDFs instead (one set).

    python benchmarks/bench_documents.py [PDF_FOLDER]
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pymupdf
from make_sample_papers import PAPERS, paper_pdf

from vault_pipeline.documents.convert import PDF, Settings, Task, convert_task
from vault_pipeline.documents.outcome import OK, Conversion
from vault_pipeline.documents.pdf import ALL, OFF, RULED, pdf_plain_text, pdf_to_markdown
from vault_pipeline.documents.workers import PoolSettings, run_isolated

REPEAT = 5  # each sample paper's body written this many times over (first set)
LONG_PAGES = 12  # the least pages of a long paper (second set)


def noop(task: Task) -> Conversion:
    """An empty task: what the pool costs without any conversion."""
    return Conversion(status=OK, text=task.key)


def sample_set(folder: Path) -> list[Path]:
    paths = []
    for copy in range(2):
        for paper in PAPERS:
            path = folder / f"{paper.arxiv_id}-{copy}.pdf"
            path.write_bytes(paper_pdf(paper, repeat=REPEAT + copy))
            paths.append(path)
    return paths


def long_set(folder: Path) -> list[Path]:
    paths = []
    for paper in PAPERS:
        repeat = REPEAT
        while pymupdf.open(stream=(data := paper_pdf(paper, repeat, True))).page_count \
                < LONG_PAGES:
            repeat += 2
        path = folder / f"{paper.arxiv_id}-long.pdf"
        path.write_bytes(data)
        paths.append(path)
    return paths


def n_pages(paths: list[Path]) -> int:
    return sum(pdf_plain_text(p.read_bytes())[1] for p in paths)


def clocked(function: Callable[[bytes], object], paths: list[Path]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``function`` over every file, after one warm-up."""
    datas = [p.read_bytes() for p in paths]
    function(datas[0])  # imports, model load
    cpu, wall = time.process_time(), time.perf_counter()
    for data in datas:
        function(data)
    return time.process_time() - cpu, time.perf_counter() - wall


OPTION_SETS: list[tuple[str, Callable[[bytes], object]]] = [
    ("pymupdf4llm, layout model", lambda d: pdf_to_markdown(d, use_layout=True)),
    ("pymupdf4llm, tables on every page", lambda d: pdf_to_markdown(d, tables=ALL)),
    ("pymupdf4llm, tables on ruled pages *", lambda d: pdf_to_markdown(d, tables=RULED)),
    ("pymupdf4llm, tables off", lambda d: pdf_to_markdown(d, tables=OFF)),
    ("PyMuPDF page.get_text()", pdf_plain_text),
]


def compare_options(name: str, paths: list[Path], layout: bool) -> None:
    pages = n_pages(paths)
    print(f"\n{name}: {len(paths)} PDFs, {pages} pages, in process, one core")
    print(f"  {'option set':40s} {'pages/CPU-s':>12s} {'pages/s wall':>13s}")
    for label, function in OPTION_SETS:
        if "layout" in label and not layout:
            continue
        cpu, wall = clocked(function, paths)
        print(f"  {label:40s} {pages / cpu:12.1f} {pages / wall:13.1f}")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pooled(tasks: list[Task], workers: int, function=convert_task) -> tuple[float, float, float]:
    """(seconds to the first result incl. worker start, wall seconds for the rest, CPU
    seconds of the workers in all)."""
    cpu = children_cpu()
    started = time.perf_counter()
    first = None
    statuses = []
    for _task, result in run_isolated(tasks, PoolSettings(workers=workers, timeout_s=300),
                                      function):
        first = first or time.perf_counter()
        statuses.append(result.status)
    ended = time.perf_counter()
    assert set(statuses) == {OK}, statuses
    return (first or started) - started, ended - (first or started), children_cpu() - cpu


def compare_pools(paths: list[Path], scratch: Path) -> None:
    pages = n_pages(paths)
    settings = Settings()
    # Largest first, so the last document to finish is a short one: a long paper scheduled
    # last would keep one worker busy alone and understate the speed-up.
    paths = sorted(paths, key=lambda p: p.stat().st_size, reverse=True)
    tasks = [Task(f"{i:064d}", PDF, str(p), str(scratch / "unpack"), settings)
             for i, p in enumerate(paths)]
    # One extra task per worker first, so worker start is measured apart from the rest.
    warm = [Task(f"warm{i}".ljust(64, "0"), PDF, str(paths[-1]), str(scratch), settings)
            for i in range(2)]
    print(f"\nisolated pool, default settings, cleaning included: {len(paths)} PDFs, "
          f"{pages} pages; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    walls = {}
    for workers in (1, 2):
        start, wall, cpu = pooled(warm[:workers] + tasks, workers)
        warm_pages = workers * n_pages(paths[-1:])
        walls[workers] = wall
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: {pages / wall:6.1f} pages/s wall, "
              f"{(pages + warm_pages) / cpu:5.1f} pages/CPU-s in the workers "
              f"(first result after {start:.1f} s)")
    print(f"  speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x"
          + ("" if os.getloadavg()[0] < 1 else "  (other jobs share the cores: not a clean "
                                                "figure)"))

    empties = [Task(f"n{i}".ljust(64, "0"), PDF, "-", "-", settings) for i in range(201)]
    start, rest, _ = pooled(empties, 1, noop)
    max_tasks = PoolSettings().max_tasks
    print("\nisolation overhead per document")
    print(f"  round trip of an empty task:          {rest / 200 * 1000:7.2f} ms")
    print(f"  worker start (spawn, imports):        {start * 1000:7.0f} ms, once per "
          f"{max_tasks} documents: {start / max_tasks * 1000:5.1f} ms each")


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-documents-"))
    if len(sys.argv) > 1:
        sets = [("given PDFs", sorted(Path(sys.argv[1]).glob("*.pdf")), True)]
    else:
        sets = [("sample papers", sample_set(scratch), True),
                (f"long papers ({LONG_PAGES}+ pages)", long_set(scratch), False)]
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          "* marks the stage's default")
    for name, paths, layout in sets:
        compare_options(name, paths, layout)
    compare_pools([p for _, paths, _ in sets for p in paths], scratch)


if __name__ == "__main__":
    main()
