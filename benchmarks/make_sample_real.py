"""Build the real-paper part of the bundled sample from the transcribed sources in
`benchmarks/data/sample_real/`: arXiv metadata of recent ML/NLP papers as one
metadata-snapshot file, abridged CC BY 4.0 full texts as single-file LaTeX e-prints, the
metadata of the CC BY 4.0 proceedings PDFs bundled unmodified beside them (`pdf/`), and a
`manifest.json` naming each item's license and source.

    python benchmarks/make_sample_real.py [SAMPLE_DIR]   # default: vault_pipeline/sample

Written out here rather than fetched, because the sample must build offline; every sentence
in it is a sentence of the paper it names (the manifest says where each was read)."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "sample_real"
SNAPSHOT = "arxiv-metadata-2025-ml.jsonl"
LISTINGS = "sliuxl/LinguaVitaminArxiv"
# listing key -> (path in the repository of daily arXiv listings, commit, its category)
SOURCES = {
    "L0601": ("_posts/arxiv/2025/06/2025-06-01--arxiv-cs__LG.md", "13ffd9be1f2e", "cs.LG"),
    "L0704": ("_posts/arxiv/2025/07/2025-07-04--arxiv-cs__LG.md", "c556a3d6c63a", "cs.LG"),
    "L0711": ("_posts/arxiv/2025/07/2025-07-11--arxiv-cs__LG.md", "a0ea452668a1", "cs.LG"),
    "C0711": ("_posts/arxiv/2025/07/2025-07-11--arxiv-cs__CL.md", "18dc1a828591", "cs.CL"),
    "C0718": ("_posts/arxiv/2025/07/2025-07-18--arxiv-cs__CL.md", "5dcba086d885", "cs.CL"),
    "L0725": ("_posts/arxiv/2025/07/2025-07-25--arxiv-cs__LG.md", "0e282d393f71", "cs.LG"),
    "L0801": ("_posts/arxiv/2025/08/2025-08-01--arxiv-cs__LG.md", "ad7e07d9ec2c", "cs.LG"),
    "L0808": ("_posts/arxiv/2025/08/2025-08-08--arxiv-cs__LG.md", "76ff9e34db05", "cs.LG"),
    "L0822": ("_posts/arxiv/2025/08/2025-08-22--arxiv-cs__LG.md", "53f6fe5f5248", "cs.LG"),
}
_HEAD = re.compile(r"(?P<id>\d{4}\.\d{4,5})v(?P<v>\d+)")
_SPECIAL = re.compile(r"([&%#_])")


def parse_abstracts(path: Path) -> list[dict]:
    """Entries of an abstracts file: `=== <id>v<N> | <date> | <listing key>`, `T: title`,
    `A: authors`, then the abstract."""
    out = []
    for block in path.read_text().split("=== ")[1:]:
        head, rest = block.split("\n", 1)
        pid, day, key = (x.strip() for x in head.split("|"))
        lines = rest.strip("\n").split("\n")
        match = _HEAD.match(pid)
        assert match, pid
        out.append({"id": match["id"], "version": int(match["v"]), "date": day, "key": key,
                    "title": lines[0][3:].strip(), "authors": lines[1][3:].strip(),
                    "abstract": " ".join(x.strip() for x in lines[2:] if x.strip())})
    return out


def parse_fulltext(path: Path) -> tuple[dict[str, str], list[str]]:
    """`@key value` lines, then `#`/`##` headings and one paragraph per line."""
    meta: dict[str, str] = {}
    body: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("@"):
            key, _, value = line[1:].partition(" ")
            meta[key] = value.strip()
        elif line.strip():
            body.append(line)
    return meta, body


def _rfc2822(day: str) -> str:
    return dt.date.fromisoformat(day).strftime("%a, %d %b %Y 00:00:00 GMT")


def _authors_parsed(authors: str) -> list[list[str]]:
    names = [a.split() for a in authors.split(",") if a.strip()]
    return [[n[-1], " ".join(n[:-1]), ""] for n in names]


def snapshot_record(pid: str, title: str, authors: str, abstract: str, categories: str,
                    versions: list[tuple[str, str]], license_url: str | None,
                    journal_ref: str | None = None, doi: str | None = None) -> dict:
    """One line of the arXiv metadata snapshot (the Kaggle/Cornell JSON-lines format)."""
    return {"id": pid, "submitter": None, "authors": authors, "title": title,
            "comments": None, "journal-ref": journal_ref, "doi": doi, "report-no": None,
            "categories": categories, "license": license_url, "abstract": abstract,
            "versions": [{"version": v, "created": _rfc2822(d)} for v, d in versions],
            "update_date": versions[-1][1], "authors_parsed": _authors_parsed(authors)}


def _tex(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


def to_latex(meta: dict[str, str], body: list[str]) -> str:
    out = ["% Abridged e-print rebuilt for the Research Idea Vault sample from the paper's",
           "% own text (CC BY 4.0): sentences verbatim, in the paper's order; figures, tables,",
           "% equations, references and some paragraphs and sentences left out. It is not",
           "% the authors' LaTeX source.",
           "\\documentclass{article}", f"\\title{{{_tex(meta['title'])}}}",
           f"\\author{{{_tex(meta['authors'])}}}", "\\begin{document}", "\\maketitle",
           "\\begin{abstract}", _tex(meta["abstract"]), "\\end{abstract}", ""]
    for line in body:
        if line.startswith("## "):
            out += [f"\\subsection{{{_tex(line[3:])}}}", ""]
        elif line.startswith("# "):
            out += [f"\\section{{{_tex(line[2:])}}}", ""]
        else:
            out += [_tex(line), ""]
    return "\n".join([*out, "\\end{document}"]) + "\n"


def _gzip(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as handle:  # reproducible bytes
        handle.write(data)
    return buffer.getvalue()


def proceedings_record(raw: Path, path: Path, manifest: list[dict]) -> dict:
    """A CC BY proceedings PDF bundled unmodified (checked against its recorded sha256, as
    the PDF cannot be rebuilt from text): its metadata line, dated by the proceedings, and
    its manifest rows."""
    meta, _ = parse_fulltext(path)
    pdf = raw / meta["file"]
    digest = hashlib.sha256(pdf.read_bytes()).hexdigest() if pdf.exists() else "missing"
    if digest != meta["sha256"]:
        raise SystemExit(f"{pdf}: expected the proceedings PDF {meta['pdf']} "
                         f"(sha256 {meta['sha256']}), found {digest}")
    for file, what in ((meta["file"], f"the proceedings PDF {meta['pdf']}, unmodified, named "
                                      "by the paper's arXiv id"),
                       (SNAPSHOT, "metadata from the proceedings PDF; its one version is "
                                  "dated by the proceedings, not by arXiv")):
        manifest.append({"arxiv_id": meta["id"], "file": file, "license": "CC-BY-4.0",
                         "license_evidence": meta["license_evidence"], "what": what,
                         "source": meta["source"]})
    return snapshot_record(meta["id"], meta["title"], meta["authors"], meta["abstract"],
                           meta["categories"], [("v1", meta["date"])], meta["license"],
                           meta["journal_ref"], meta["doi"])


def build(sample: Path) -> tuple[int, int]:
    """Write the snapshot, the e-prints and the manifest; (records, manifest rows)."""
    raw = sample / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    records, manifest = [], []
    for name in ("abstracts_pre.txt", "abstracts_post.txt"):
        for p in parse_abstracts(DATA / name):
            path, commit, category = SOURCES[p["key"]]
            records.append(snapshot_record(p["id"], p["title"], p["authors"], p["abstract"],
                                           category, [(f"v{p['version']}", p["date"])], None))
            manifest.append({"arxiv_id": p["id"], "file": SNAPSHOT, "license": "CC0-1.0",
                             "what": "arXiv metadata: title, authors, abstract, the date of "
                                     "the version listed, the listing's category",
                             "source": f"{LISTINGS} {path} (commit {commit})"})
    for path in sorted((DATA / "fulltext").glob("*.txt")):
        meta, body = parse_fulltext(path)
        versions = [tuple(v.split()) for v in meta["versions"].split(";")]
        records.append(snapshot_record(meta["id"], meta["title"], meta["authors"],
                                       meta["abstract"], meta["categories"], versions,
                                       meta["license"]))
        eprint = f"{meta['id']}v{meta['version']}.gz"
        (raw / eprint).write_bytes(_gzip(to_latex(meta, body).encode()))
        for file, what in ((eprint, "abridged full text as a one-file LaTeX e-print "
                                    "(rebuilt, not the authors' source)"),
                           (SNAPSHOT, "metadata from the paper's first page")):
            manifest.append({"arxiv_id": meta["id"], "file": file, "license": "CC-BY-4.0",
                             "license_evidence": meta["license_evidence"], "what": what,
                             "source": meta["source"]})
    for path in sorted((DATA / "pdf").glob("*.txt")):
        records.append(proceedings_record(raw, path, manifest))
    with (raw / SNAPSHOT).open("w") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    (sample / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False)
                                          + "\n")
    return len(records), len(manifest)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).parent.parent / "vault_pipeline" / "sample"
    records, rows = build(target)
    print(f"{records} records, {rows} manifest rows")
