"""Write large synthetic arXiv API (Atom) and OAI-PMH (``arXiv``, ``arXivRaw``) pages.

The element layout copies the recorded responses: an arXiv search API page (feed header with
OpenSearch counts, then entries with id, title, updated, links, summary, categories,
published, comment, primary category, journal ref, authors, DOI) and an OAI-PMH
``ListRecords`` page (header with set specs, metadata in the format's own namespace,
resumption token). Titles and abstracts keep their line breaks, as arXiv serves them.

    python benchmarks/make_feeds.py OUT_DIR --entries 20000 [--page-size 1000] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Paper, PaperFactory, author_string, rfc2822

FORMATS = ("atom", "oai_arXiv", "oai_arXivRaw")


def _iso(paper: Paper, index: int) -> str:
    return f"{paper.versions[index]:%Y-%m-%dT%H:%M:%SZ}"


def atom_entry(paper: Paper) -> str:
    version = f"{paper.id}v{len(paper.versions)}"
    lines = [
        "  <entry>",
        f"    <id>http://arxiv.org/abs/{version}</id>",
        f"    <title>{escape(paper.title)}</title>",
        f"    <updated>{_iso(paper, -1)}</updated>",
        f'    <link href="https://arxiv.org/abs/{version}" rel="alternate" type="text/html"/>',
        f'    <link href="https://arxiv.org/pdf/{version}" rel="related" '
        'type="application/pdf" title="pdf"/>',
        f"    <summary>{escape(paper.abstract)}</summary>",
        *(f'    <category term="{c}" scheme="http://arxiv.org/schemas/atom"/>'
          for c in paper.categories),
        f"    <published>{_iso(paper, 0)}</published>",
    ]
    if paper.comments:
        lines.append(f"    <arxiv:comment>{escape(paper.comments)}</arxiv:comment>")
    lines.append(f'    <arxiv:primary_category term="{paper.categories[0]}"/>')
    if paper.journal_ref:
        lines.append(f"    <arxiv:journal_ref>{escape(paper.journal_ref)}</arxiv:journal_ref>")
    for author in paper.authors:
        lines += ["    <author>", f"      <name>{escape(author.display_unicode)}</name>",
                  "    </author>"]
    if paper.doi:
        lines += [f"    <arxiv:doi>{escape(paper.doi)}</arxiv:doi>",
                  f'    <link rel="related" href={quoteattr("https://doi.org/" + paper.doi)} '
                  'title="doi"/>']
    lines.append("  </entry>")
    return "\n".join(lines)


def atom_page(papers: list[Paper], start: int, total: int) -> str:
    head = (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        f"  <id>https://arxiv.org/api/synthetic-{start}</id>\n"
        f"  <title>arXiv Query: search_query=all:synthetic&amp;id_list=&amp;start={start}"
        f"&amp;max_results={len(papers)}</title>\n"
        "  <updated>2026-04-12T22:09:27Z</updated>\n"
        '  <link href="https://arxiv.org/api/query?search_query=all:synthetic&amp;'
        f'start={start}&amp;max_results={len(papers)}&amp;id_list=" '
        'type="application/atom+xml"/>\n'
        f"  <opensearch:itemsPerPage>{len(papers)}</opensearch:itemsPerPage>\n"
        f"  <opensearch:totalResults>{total}</opensearch:totalResults>\n"
        f"  <opensearch:startIndex>{start}</opensearch:startIndex>\n"
    )
    return head + "\n".join(atom_entry(p) for p in papers) + "\n</feed>\n"


def _set_spec(category: str) -> str:
    archive = category.split(".")[0]
    return archive if archive in ("math", "cs", "q-bio", "stat", "econ", "eess") \
        else f"physics:{archive}"


def _oai_header(paper: Paper) -> str:
    specs = "".join(f" <setSpec>{_set_spec(c)}</setSpec>\n" for c in paper.categories[:2])
    return (f"<header>\n <identifier>oai:arXiv.org:{paper.id}</identifier>\n"
            f" <datestamp>{paper.update_date}</datestamp>\n{specs}</header>\n")


def _optional(tag: str, value: str | None) -> str:
    return f"<{tag}>{escape(value)}</{tag}>" if value else ""


def oai_arxiv_record(paper: Paper) -> str:
    authors = "".join(
        f"<author><keyname>{escape(a.keyname_unicode)}</keyname>"
        f"<forenames>{escape(a.forenames)}</forenames>"
        + (f"<suffix>{a.suffix}</suffix>" if a.suffix else "") + "</author>"
        for a in paper.authors
    )
    updated = (f"<updated>{paper.versions[-1]:%Y-%m-%d}</updated>"
               if len(paper.versions) > 1 else "")
    return (
        f"<record>\n{_oai_header(paper)}<metadata>\n"
        ' <arXiv xmlns="http://arxiv.org/OAI/arXiv/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://arxiv.org/OAI/arXiv/ http://arxiv.org/OAI/arXiv.xsd">\n'
        f" <id>{paper.id}</id><created>{paper.versions[0]:%Y-%m-%d}</created>{updated}"
        f"<authors>{authors}</authors><title>{escape(paper.title)}</title>"
        f"<categories>{' '.join(paper.categories)}</categories>"
        f"{_optional('comments', paper.comments)}{_optional('report-no', paper.report_no)}"
        f"{_optional('journal-ref', paper.journal_ref)}{_optional('doi', paper.doi)}"
        f"{_optional('license', paper.license)}"
        f"<abstract>{escape(paper.abstract)}</abstract></arXiv>\n</metadata>\n</record>"
    )


def oai_arxiv_raw_record(paper: Paper) -> str:
    versions = "".join(
        f' <version version="v{i}"><date>{rfc2822(moment)}</date>'
        f"<size>{20 + 3 * i}kb</size><source_type>D</source_type></version>\n"
        for i, moment in enumerate(paper.versions, start=1)
    )
    return (
        f"<record>\n{_oai_header(paper)}<metadata>\n"
        ' <arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://arxiv.org/OAI/arXivRaw/ http://arxiv.org/OAI/arXivRaw.xsd">\n'
        f" <id>{paper.id}</id>{_optional('submitter', paper.submitter)}\n{versions}"
        f" <title>{escape(paper.title)}</title>\n"
        f" <authors>{escape(author_string(paper.authors))}</authors>\n"
        f" <categories>{' '.join(paper.categories)}</categories>\n"
        f" {_optional('comments', paper.comments)}{_optional('report-no', paper.report_no)}"
        f"{_optional('journal-ref', paper.journal_ref)}{_optional('doi', paper.doi)}"
        f"{_optional('license', paper.license)}\n"
        f" <abstract>{escape(paper.abstract)}</abstract>\n </arXivRaw>\n</metadata>\n</record>"
    )


def oai_page(records: list[str], prefix: str, token: str | None, cursor: int,
             total: int) -> str:
    resumption = (f'<resumptionToken cursor="{cursor}" completeListSize="{total}">'
                  f"{token}</resumptionToken>\n" if token else
                  f'<resumptionToken cursor="{cursor}" completeListSize="{total}"/>\n')
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ '
        'http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n'
        "<responseDate>2026-11-02T10:00:00Z</responseDate>\n"
        f'<request verb="ListRecords" metadataPrefix="{prefix}">'
        "http://export.arxiv.org/oai2</request>\n<ListRecords>\n"
        + "\n".join(records) + f"\n{resumption}</ListRecords>\n</OAI-PMH>\n"
    )


def pages(kind: str, entries: int, page_size: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """(file name, bytes) of each page of ``kind``, ``entries`` in all."""
    factory = PaperFactory(seed)
    render: Callable[[Paper], str] = {"oai_arXiv": oai_arxiv_record,
                                      "oai_arXivRaw": oai_arxiv_raw_record}.get(kind, atom_entry)
    for number, start in enumerate(range(0, entries, page_size)):
        papers = list(factory.papers(min(page_size, entries - start)))
        if kind == "atom":
            text = atom_page(papers, start, entries)
        else:
            end = start + len(papers)
            token = f"{seed}|{end + 1}" if end < entries else None
            text = oai_page([render(p) for p in papers], kind.removeprefix("oai_"), token,
                            start, entries)
        yield f"{kind}-{number:04d}.xml", text.encode("utf-8")


def write_pages(directory: Path, kind: str, entries: int, page_size: int = 1000,
                seed: int = 1) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in pages(kind, entries, page_size, seed):
        path = directory / name
        path.write_bytes(data)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="directory for the pages")
    parser.add_argument("--entries", type=int, default=20_000, help="entries per format")
    parser.add_argument("--page-size", type=int, default=1000, help="entries per page")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    args = parser.parse_args(argv)
    for kind in args.formats:
        paths = write_pages(args.output / kind, kind, args.entries, args.page_size, args.seed)
        size = sum(p.stat().st_size for p in paths)
        print(f"{kind}: {len(paths)} pages, {args.entries:,} entries, {size / 1e6:,.1f} MB")


if __name__ == "__main__":
    main()
