"""OAI-PMH responses from arXiv (``GetRecord`` and ``ListRecords``) in the three metadata
formats arXiv serves: ``arXiv``, ``arXivRaw`` and ``oai_dc``. The format of each record is
read from its metadata element's namespace, because a resumed ``ListRecords`` request does
not repeat its ``metadataPrefix``. An ``<error>`` envelope (``badResumptionToken``,
``noRecordsMatch``, ...) is a file-level error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO

from lxml import etree

from vault_pipeline.errors import RawFormatError
from vault_pipeline.parse.common import (
    ParseReject,
    any_date,
    iso_date,
    rfc2822_date,
    split_author_string,
)
from vault_pipeline.parse.xml_stream import iter_elements, text_of

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
ARXIV_RAW = "{http://arxiv.org/OAI/arXivRaw/}"
OAI_DC = "{http://www.openarchives.org/OAI/2.0/oai_dc/}"
DC = "{http://purl.org/dc/elements/1.1/}"

Record = dict[str, object]


def _categories(text: str | None) -> list[str] | None:
    return text.split() if text else None


def _arxiv(meta: etree._Element) -> Record:
    authors = []
    for author in meta.iterfind(f"{ARXIV}authors/{ARXIV}author"):
        parts = [text_of(author.find(f"{ARXIV}{p}")) for p in ("forenames", "keyname", "suffix")]
        authors.append(" ".join(p.strip() for p in parts if p))
    created = iso_date(text_of(meta.find(f"{ARXIV}created")))
    categories = _categories(text_of(meta.find(f"{ARXIV}categories")))
    return {
        "raw_id": text_of(meta.find(f"{ARXIV}id")),
        "title": text_of(meta.find(f"{ARXIV}title")),
        "abstract": text_of(meta.find(f"{ARXIV}abstract")),
        "authors": authors,
        "categories": categories,
        "primary_category": categories[0] if categories else None,
        "published": created,
        "updated": iso_date(text_of(meta.find(f"{ARXIV}updated"))) or created,
        **_bibliographic(meta, ARXIV),
        "source": "oai_arXiv",
    }


BIBLIOGRAPHIC = (("doi", "doi"), ("journal_ref", "journal-ref"), ("comments", "comments"),
                 ("license", "license"))


def _bibliographic(meta: etree._Element, namespace: str) -> Record:
    """DOI, journal reference, comments and license: the same elements in both arXiv
    metadata formats, under their own namespace."""
    return {key: text_of(meta.find(f"{namespace}{tag}")) for key, tag in BIBLIOGRAPHIC}


def _arxiv_raw(meta: etree._Element) -> Record:
    versions = sorted(
        (int((v.get("version") or "v0").lstrip("v") or 0),
         rfc2822_date(text_of(v.find(f"{ARXIV_RAW}date"))))
        for v in meta.iterfind(f"{ARXIV_RAW}version")
    )
    raw_id = text_of(meta.find(f"{ARXIV_RAW}id"))
    if raw_id and versions and versions[-1][0] > 0:
        raw_id = f"{raw_id.strip()}v{versions[-1][0]}"
    categories = _categories(text_of(meta.find(f"{ARXIV_RAW}categories")))
    return {
        "raw_id": raw_id,
        "title": text_of(meta.find(f"{ARXIV_RAW}title")),
        "abstract": text_of(meta.find(f"{ARXIV_RAW}abstract")),
        "authors": split_author_string(text_of(meta.find(f"{ARXIV_RAW}authors"))),
        "categories": categories,
        "primary_category": categories[0] if categories else None,
        "published": versions[0][1] if versions else None,
        "updated": versions[-1][1] if versions else None,
        "versions": [{"version": n, "created": d} for n, d in versions if n > 0] or None,
        **_bibliographic(meta, ARXIV_RAW),
        "source": "oai_arXivRaw",
    }


def _oai_dc(meta: etree._Element) -> Record:
    def values(name: str) -> list[str]:
        return [t.strip() for e in meta.iterfind(f"{DC}{name}") if (t := text_of(e))]

    descriptions = values("description")
    comments = [d.removeprefix("Comment:").strip() for d in descriptions
                if d.startswith("Comment:")]
    abstracts = [d for d in descriptions if not d.startswith("Comment:")]
    identifiers = values("identifier")
    raw_id = next((i for i in identifiers if "arxiv.org/abs/" in i), None)
    doi = next((i.removeprefix("doi:") for i in identifiers if i.startswith("doi:")), None)
    journal = next((i for i in identifiers if i != raw_id and not i.startswith("doi:")
                    and "://" not in i), None)
    dates = sorted(d for d in map(any_date, values("date")) if d)
    creators = []
    for creator in values("creator"):
        surname, _, forenames = creator.partition(",")
        creators.append(f"{forenames.strip()} {surname.strip()}".strip())
    return {
        "raw_id": raw_id,
        "title": values("title")[0] if values("title") else None,
        "abstract": abstracts[0] if abstracts else None,
        "authors": creators,
        "categories": None,
        "primary_category": None,
        "published": dates[0] if dates else None,
        "updated": dates[-1] if dates else None,
        "doi": doi,
        "journal_ref": journal,
        "comments": comments[0] if comments else None,
        "license": next(iter(values("rights")), None),
        "source": "oai_dc",
    }


FORMATS: dict[str, Callable[[etree._Element], Record]] = {
    f"{ARXIV}arXiv": _arxiv,
    f"{ARXIV_RAW}arXivRaw": _arxiv_raw,
    f"{OAI_DC}dc": _oai_dc,
}


def parse_oai(stream: IO[bytes]) -> Iterator[dict | ParseReject]:
    for element in iter_elements(stream, f"{OAI}OAI-PMH", {f"{OAI}record", f"{OAI}error"}):
        if isinstance(element, ParseReject):
            yield element
            continue
        if element.tag == f"{OAI}error":
            code = element.get("code", "unknown")
            raise RawFormatError(f"OAI-PMH error {code}: {' '.join((element.text or '').split())}")
        header = element.find(f"{OAI}header")
        identifier = text_of(header.find(f"{OAI}identifier")) if header is not None else None
        if header is not None and header.get("status") == "deleted":
            yield ParseReject(element.sourceline, identifier, "record deleted (OAI-PMH header)")
            continue
        metadata = element.find(f"{OAI}metadata")
        meta = metadata[0] if metadata is not None and len(metadata) else None
        parser = FORMATS.get(meta.tag) if meta is not None else None
        if parser is None:
            tag = meta.tag if meta is not None else "nothing"
            yield ParseReject(element.sourceline, identifier,
                              f"unsupported OAI-PMH metadata format: <{tag}>")
            continue
        record = parser(meta)
        record["raw_id"] = record["raw_id"] or identifier
        record["position"] = element.sourceline
        yield record
