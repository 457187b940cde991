"""Benchmark of PDF conversion, side by side in one run:

- pages per second per core, in process, for each path: the fast structured path
  (fast_pdf.py, with and without its table finder), pymupdf4llm with its table finder on
  ruled pages (the stage's default before the fast path), on every page (pymupdf4llm's own
  behaviour without the layout model), with the layout model (``--layout``; about ten times
  slower), and plain PyMuPDF text extraction (``page.get_text()``). Per core means per CPU
  second of this process (``time.process_time``), which other jobs on the machine do not
  change; wall-clock pages/s are printed beside it;
- quality of each path on the same files (doc_quality.py says how each is measured):
  heading recall against the PDF outline, reading-order errors on two-column pages, token
  coverage of the plain text, citation markers, hyphenation and ligature leftovers, and
  references split off;
- the LaTeX path on the sample e-prints: documents and pages-equivalent per CPU second, and
  the agreement of each PDF path's text with the LaTeX text of the sample paper that has
  both; then at corpus scale, which inputs dominate: the sample e-print's sections grown to
  the size of a real paper's source (prose, display math, tables), source kB per CPU second
  at two sizes (linear or not) and the share spent in pylatexenc (parse and render);
- the isolated worker pool with 1 and 2 workers (cleaning included, the PDFs three times
  over), for each PDF converter: wall pages/s, pages per CPU second of the workers with
  their start taken out, and the speed-up from 1 to 2;
- the cost of isolation per document: the round trip of an empty task and a worker's start
  (spawn and imports), spread over the ``max_tasks`` documents a worker converts.

By default the real papers in ``../shared/fixtures/pdfs`` (relative to the repository);
any folder of PDFs as an argument; ``--generated`` for the two fixed sets made by
``make_sample_papers.py`` (the sample papers lengthened to 3–7 pages, and long papers of 12+
pages with a table, a figure and an equation in every round).

    python benchmarks/bench_documents.py [PDF_FOLDER | --generated] [--layout]
"""

from __future__ import annotations

import io
import os
import re
import resource
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import doc_quality as q
import pymupdf
from make_sample_papers import PAPERS, paper_pdf

from vault_pipeline.documents.cleaning import clean_document
from vault_pipeline.documents.convert import (
    DEFAULT_PDF_CONVERTER,
    FAST,
    LATEX,
    PDF,
    PYMUPDF4LLM,
    Settings,
    Task,
    convert_task,
)
from vault_pipeline.documents.fast_pdf import pdf_to_markdown_fast
from vault_pipeline.documents.latex import latex_to_markdown
from vault_pipeline.documents.outcome import OK, Conversion, Converted
from vault_pipeline.documents.pdf import ALL, OFF, RULED, pdf_plain_text, pdf_to_markdown
from vault_pipeline.documents.workers import PoolSettings, run_isolated

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "pdfs"
SAMPLE = ROOT / "vault_pipeline" / "sample" / "raw"
BOTH_SOURCES = "2202.12139v1"  # the sample paper with a PDF and an e-print
LATEX_REPEAT = 5  # the two sample e-prints are converted this many times each

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


def clocked(function: Callable[[bytes], str],
            paths: list[Path]) -> tuple[float, float, list[str]]:
    """(CPU seconds, wall seconds, outputs) of ``function`` over every file, after one
    warm-up (imports, model load)."""
    datas = [p.read_bytes() for p in paths]
    function(datas[0])
    cpu, wall = time.process_time(), time.perf_counter()
    outputs = [function(data) for data in datas]
    return time.process_time() - cpu, time.perf_counter() - wall, outputs


def _markdown(converted: Converted) -> str:
    return converted.markdown


FAST_LABEL = "fast structured path"
DEFAULT_LABEL = "pymupdf4llm, tables on ruled pages"
PATHS: list[tuple[str, Callable[[bytes], str]]] = [
    (FAST_LABEL, lambda d: _markdown(pdf_to_markdown_fast(d))),
    ("fast structured path, tables off", lambda d: _markdown(pdf_to_markdown_fast(d, None, OFF))),
    (DEFAULT_LABEL, lambda d: _markdown(pdf_to_markdown(d, tables=RULED))),
    ("pymupdf4llm, tables on every page", lambda d: _markdown(pdf_to_markdown(d, tables=ALL))),
    ("pymupdf4llm, tables off", lambda d: _markdown(pdf_to_markdown(d, tables=OFF))),
    ("pymupdf4llm, layout model", lambda d: _markdown(pdf_to_markdown(d, use_layout=True))),
    ("PyMuPDF page.get_text()", lambda d: pdf_plain_text(d)[0]),
]
DEFAULT_PATH = FAST_LABEL if DEFAULT_PDF_CONVERTER == FAST else DEFAULT_LABEL


@dataclass
class Reference:
    """What each converted paper is measured against."""

    plain: str
    outline: list[str]
    probes: list[list[str]]


def references_of(paths: list[Path]) -> list[Reference]:
    refs = []
    for path in paths:
        with pymupdf.open(path) as doc:
            plain = "\n".join(page.get_text() for page in doc)
            refs.append(Reference(plain, q.outline_titles(doc), q.reference_probes(doc)))
    return refs


def quality_row(outputs: list[str], refs: list[Reference]) -> dict[str, str]:
    found = outlined = errors = compared = cites = hyphens = ligatures = split = 0
    recall = 0.0
    for markdown, ref in zip(outputs, refs, strict=True):
        cleaned = clean_document(markdown, max_chars=10**9)
        whole = "\n".join(filter(None, (cleaned.text, cleaned.references, cleaned.appendix)))
        if ref.outline:
            f, n = q.heading_recall(whole, ref.outline)
            found, outlined = found + f, outlined + n
        e, c = q.order_errors(markdown, ref.probes)
        errors, compared = errors + e, compared + c
        recall += q.token_recall(markdown, ref.plain)
        cites += q.citations_left(cleaned.text)
        hyphens += q.hyphenation_left(cleaned.text)
        ligatures += q.ligatures_left(markdown)
        split += bool(cleaned.references and len(cleaned.references) > 500)
    return {
        "headings": f"{found}/{outlined}" if outlined else "-",
        "order errors": f"{errors}/{compared}" if compared else "-",
        "coverage": f"{recall / len(outputs):.3f}",
        "citations": str(cites), "hyphens": str(hyphens), "ligatures": str(ligatures),
        "refs split": f"{split}/{len(outputs)}",
    }


def print_table(rows: list[dict[str, str]]) -> None:
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns}
    for row in [dict(zip(columns, columns, strict=True)), *rows]:
        print("  " + " ".join(row[c].rjust(widths[c]) if i else row[c].ljust(widths[c])
                              for i, c in enumerate(columns)))


def compare_paths(name: str, paths: list[Path], layout: bool) -> None:
    """Speed and quality of every path on ``paths``, side by side."""
    pages = n_pages(paths)
    print(f"\n{name}: {len(paths)} PDFs, {pages} pages, in process, one core")
    refs = references_of(paths)
    rows = []
    for label, function in PATHS:
        if "layout" in label and not layout:
            continue
        cpu, wall, outputs = clocked(function, paths)
        mark = " *" if label == DEFAULT_PATH else ""
        rows.append({"path": label + mark, "pages/CPU-s": f"{pages / cpu:.1f}",
                     "pages/s wall": f"{pages / wall:.1f}"} | quality_row(outputs, refs))
    print_table(rows)
    print("  headings: outline titles (levels 1-2) found as headings; order errors: probe\n"
          "  inversions / probe pairs compared on two-column pages; coverage: token recall of\n"
          "  the plain text; citations, hyphens: left in the cleaned body; ligatures: in the\n"
          "  raw output; refs split: papers whose references went to their own column")


def chars_per_page(paths: list[Path]) -> float:
    chars = pages = 0
    for path in paths:
        text, n = pdf_plain_text(path.read_bytes())
        chars, pages = chars + len(text), pages + n
    return chars / pages


def latex_throughput(scratch: Path, per_page: float) -> str | None:
    """Documents and pages-equivalent (characters / ``per_page``) per CPU second of the
    LaTeX path (unpacking, conversion, cleaning) on the sample e-prints; returns the LaTeX
    text of the paper that also has a PDF."""
    eprints = sorted(SAMPLE.glob("*.tar.gz")) + sorted(
        p for p in SAMPLE.glob("*.gz") if not p.name.endswith(".tar.gz"))
    tasks = [Task(f"{i:064d}", LATEX, str(p), str(scratch / "latex"), Settings())
             for i, p in enumerate(eprints)]
    results = [convert_task(task) for task in tasks]  # warm-up
    cpu = time.process_time()
    for _ in range(LATEX_REPEAT):
        results = [convert_task(task) for task in tasks]
    cpu = time.process_time() - cpu
    chars = sum(len(r.text or "") + len(r.references or "") + len(r.appendix or "")
                for r in results) * LATEX_REPEAT
    docs = len(tasks) * LATEX_REPEAT
    print(f"\nLaTeX path, {len(tasks)} sample e-prints x {LATEX_REPEAT}, unpacking and cleaning "
          f"included: {docs / cpu:.1f} documents/CPU-s, {chars / per_page / cpu:.1f} "
          f"pages-equivalent/CPU-s ({per_page:,.0f} characters a page, the PDFs' mean)")
    for path, result in zip(eprints, results, strict=True):
        print(f"  {path.name}: {result.status}, {result.n_chars or 0:,} body characters")
    both = [r for p, r in zip(eprints, results, strict=True) if BOTH_SOURCES in p.name]
    return both[0].text if both and both[0].status == OK else None


LATEX_KINDS = {  # what a paper's source is mostly made of: a pattern picking it in the sample
    "prose": r"\\section\{Method\}.*?(?=\\begin\{equation\})",
    "display math": r"\\begin\{equation\}.*?\\end\{equation\}",
    "tables": r"\\begin\{table\}.*?\\end\{table\}",
}
LATEX_SIZES_KB = (30, 120)  # a typical arXiv main file is tens of kB; long ones, 100+


def grown_eprint(kind: str, size_kb: int) -> bytes:
    """The sample e-print with one of its parts repeated until the source is ``size_kb``."""
    with tarfile.open(SAMPLE / f"arXiv-{BOTH_SOURCES}.tar.gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    main = members["main.tex"].decode()
    part = re.search(LATEX_KINDS[kind], main, re.DOTALL).group(0)
    copies = max(1, (size_kb * 1024 - len(main)) // len(part))
    at = main.index("\\section{Conclusion}")
    members["main.tex"] = (main[:at] + (part + "\n\n") * copies + main[at:]).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


LATEX_TRIES = 3


def best_of(tries: int, function: Callable[[], object]) -> tuple[float, object]:
    """The least CPU seconds of ``tries`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(tries):
        cpu = time.process_time()
        result = function()
        best = min(best, time.process_time() - cpu)
    return best, result


def latex_scaling(scratch: Path) -> None:
    """Source kB per CPU second of the whole LaTeX path (unpacking, inlining, pylatexenc,
    cleaning) on grown e-prints, and the share of it in ``latex_to_markdown``."""
    print("\nLaTeX path at corpus scale: the sample e-print grown by one kind of content")
    rows = []
    for kind in LATEX_KINDS:
        for size in LATEX_SIZES_KB:
            path = scratch / f"grown-{kind.replace(' ', '-')}-{size}.tar.gz"
            path.write_bytes(grown_eprint(kind, size))
            task = Task(f"g{size}".ljust(64, "0"), LATEX, str(path), str(scratch / "latex"),
                        Settings(max_chars=10**9))
            total, result = best_of(LATEX_TRIES, lambda task=task: convert_task(task))
            assert result.status == OK, result.error
            with tarfile.open(path) as tar:
                source = tar.extractfile("main.tex").read().decode()
            render, _ = best_of(LATEX_TRIES, lambda source=source: latex_to_markdown(source))
            kb = len(source) / 1024
            rows.append({"content": kind, "source kB": f"{kb:.0f}",
                         "CPU s": f"{total:.2f}", "kB/CPU-s": f"{kb / total:.1f}",
                         "in pylatexenc": f"{min(render / total, 1):.0%}",
                         "body chars": f"{result.n_chars:,}"})
    print_table(rows)


def pdf_latex_agreement(latex_text: str, layout: bool) -> None:
    """Bag-of-words F1 of each PDF path's cleaned body against the LaTeX body."""
    data = (SAMPLE / f"{BOTH_SOURCES}.pdf").read_bytes()
    print(f"\nPDF vs LaTeX text of {BOTH_SOURCES} (cleaned bodies: bag-of-words F1, and "
          "recall of the LaTeX words)")
    for label, function in PATHS:
        if "layout" in label and not layout:
            continue
        body = clean_document(function(data), max_chars=10**9).text
        print(f"  {label:40s} F1 {q.token_f1(body, latex_text):.3f}  "
              f"recall {q.token_recall(body, latex_text):.3f}")


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


POOL_ROUNDS = 3  # the PDFs go through the pool this many times: a batch, not a start-up


def compare_pools(paths: list[Path], scratch: Path, settings: Settings) -> None:
    """1 and 2 workers on the same batch: wall pages/s, and pages per CPU second of the
    workers with their start (spawn, imports, first document) taken out, measured by a
    pool that converts only the warm-up documents: equal figures for 1 and 2 workers mean
    the workers do not slow each other, so the speed-up is bounded by the free cores."""
    pages = n_pages(paths) * POOL_ROUNDS
    # Largest first, so the last document to finish is a short one: a long paper scheduled
    # last would keep one worker busy alone and understate the speed-up.
    paths = sorted(paths, key=lambda p: p.stat().st_size, reverse=True)
    tasks = [Task(f"{r}{i:063d}", PDF, str(p), str(scratch / "unpack"), settings)
             for r in range(POOL_ROUNDS) for i, p in enumerate(paths)]
    # One extra task per worker first, so worker start is measured apart from the rest.
    warm = [Task(f"warm{i}".ljust(64, "0"), PDF, str(paths[-1]), str(scratch), settings)
            for i in range(2)]
    print(f"\nisolated pool, PDF converter {settings.pdf_converter}, cleaning included: "
          f"{len(paths)} PDFs x {POOL_ROUNDS}, {pages} pages; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    walls = {}
    for workers in (1, 2):
        _, _, start_cpu = pooled(warm[:workers], workers)
        start, wall, cpu = pooled(warm[:workers] + tasks, workers)
        walls[workers] = wall
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: {pages / wall:6.1f} pages/s wall, "
              f"{pages / max(cpu - start_cpu, 1e-9):5.1f} pages/CPU-s in the workers, start "
              f"taken out ({start_cpu:.1f} CPU s; first result after {start:.1f} s)")
    print(f"  speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x"
          + ("" if os.getloadavg()[0] < 1 else "  (other jobs share the cores: not a clean "
                                                "figure)"))


def isolation_overhead() -> None:
    settings = Settings()
    empties = [Task(f"n{i}".ljust(64, "0"), PDF, "-", "-", settings) for i in range(201)]
    start, rest, _ = pooled(empties, 1, noop)
    max_tasks = PoolSettings().max_tasks
    print("\nisolation overhead per document")
    print(f"  round trip of an empty task:          {rest / 200 * 1000:7.2f} ms")
    print(f"  worker start (spawn, imports):        {start * 1000:7.0f} ms, once per "
          f"{max_tasks} documents: {start / max_tasks * 1000:5.1f} ms each")


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-documents-"))
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    layout = "--layout" in sys.argv
    if "--generated" in sys.argv or (not args and not FIXTURES.is_dir()):
        sets = [("sample papers", sample_set(scratch), True),
                (f"long papers ({LONG_PAGES}+ pages)", long_set(scratch), False)]
    else:
        folder = Path(args[0]) if args else FIXTURES
        sets = [(f"PDFs in {folder.name}/", sorted(folder.glob("*.pdf")), layout)]
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          "* marks the stage's default")
    for name, paths, with_layout in sets:
        compare_paths(name, paths, with_layout)
    all_pdfs = [p for _, paths, _ in sets for p in paths]
    latex = latex_throughput(scratch, chars_per_page(all_pdfs))
    latex_scaling(scratch)
    if latex:
        pdf_latex_agreement(latex, layout)
    if "--no-pool" not in sys.argv:
        for converter in (FAST, PYMUPDF4LLM):
            compare_pools(all_pdfs, scratch, replace(Settings(), pdf_converter=converter))
        isolation_overhead()


if __name__ == "__main__":
    main()
