"""Write a large synthetic arXiv metadata snapshot in the Kaggle/Cornell JSON-lines format.

Same keys, key order and value shapes as the real file (``id``, ``submitter``, ``authors``,
``title``, ``comments``, ``journal-ref``, ``doi``, ``report-no``, ``categories``,
``license``, ``abstract``, ``versions`` [{version, created RFC 2822}], ``update_date``,
``authors_parsed``), compact JSON with ASCII escapes like the real dump. Deterministic by
seed: the same arguments always give the same bytes.

    python benchmarks/make_snapshot.py OUT.jsonl --records 1000000 [--seed 0] [--gzip]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Paper, PaperFactory, author_string, rfc2822

_encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def snapshot_record(paper: Paper) -> dict:
    """The snapshot's JSON object for one paper, keys in the real file's order."""
    return {
        "id": paper.id,
        "submitter": paper.submitter,
        "authors": author_string(paper.authors),
        "title": paper.title,
        "comments": paper.comments,
        "journal-ref": paper.journal_ref,
        "doi": paper.doi,
        "report-no": paper.report_no,
        "categories": " ".join(paper.categories),
        "license": paper.license,
        "abstract": paper.abstract,
        "versions": [{"version": f"v{i}", "created": rfc2822(moment)}
                     for i, moment in enumerate(paper.versions, start=1)],
        "update_date": paper.update_date,
        "authors_parsed": [[a.keyname_unicode, a.forenames, a.suffix] for a in paper.authors],
    }


def snapshot_lines(records: int, seed: int = 0) -> Iterator[bytes]:
    for paper in PaperFactory(seed).papers(records):
        yield _encode(snapshot_record(paper)).encode("ascii") + b"\n"


def write_snapshot(target: Path, records: int, seed: int = 0, compress: bool = False) -> Path:
    """Write ``records`` lines to ``target`` (via a temporary name, so a half-written file
    never looks finished); gzip when ``compress``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    stream: IO[bytes]
    with (gzip.open(partial, "wb", compresslevel=6) if compress else partial.open("wb")
          ) as stream:
        buffer: list[bytes] = []
        for line in snapshot_lines(records, seed):
            buffer.append(line)
            if len(buffer) >= 10_000:
                stream.write(b"".join(buffer))
                buffer.clear()
        stream.write(b"".join(buffer))
    partial.replace(target)
    return target


def revise(record: dict) -> dict:
    """The same paper one version later: a new title and a ``vN+1`` created 30 days on."""
    last = parsedate_to_datetime(record["versions"][-1]["created"])
    created = rfc2822(last + timedelta(days=30))
    versions = [*record["versions"],
                {"version": f"v{len(record['versions']) + 1}", "created": created}]
    return record | {"title": record["title"] + " (revised)", "versions": versions,
                     "update_date": f"{last + timedelta(days=30):%Y-%m-%d}"}


def write_revisions(base: Path, target: Path, every: int) -> Path:
    """A second snapshot holding every ``every``-th paper of ``base``, revised: importing both
    makes those papers duplicates, which the build must resolve to the newer version."""
    partial = target.with_name(target.name + ".partial")
    with base.open("rb") as source, partial.open("wb") as out:
        for number, line in enumerate(source):
            if number % every == 0:
                out.write(_encode(revise(json.loads(line))).encode("ascii") + b"\n")
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="file to write (.jsonl or .jsonl.gz)")
    parser.add_argument("--records", type=int, default=100_000, help="number of papers")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same file)")
    parser.add_argument("--gzip", action="store_true", help="gzip the output")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    path = write_snapshot(args.output, args.records, args.seed, args.gzip)
    seconds = time.perf_counter() - started
    size = path.stat().st_size
    print(f"{path}: {args.records:,} records, {size / 1e6:,.1f} MB "
          f"({size / max(args.records, 1):,.0f} B/record) in {seconds:,.1f} s")


if __name__ == "__main__":
    main()
