"""arXiv identifiers: one pattern, used by the Python parsers and by the Polars expressions,
so an id normalises the same way whichever source it came from.

Forms accepted: ``2202.12139``, ``2202.12139v3``, ``0704.0001``, ``hep-th/9901001v2``,
``math.GT/0309136`` (subject class dropped: arXiv's canonical id is ``math/0309136``), with
an optional ``arXiv:`` / ``oai:arXiv.org:`` / ``https://arxiv.org/abs/`` (or ``/pdf/``) prefix.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import polars as pl

NEW_STYLE = r"\d{4}\.\d{4,5}"
ARCHIVE = r"[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]{2})?"  # of an old-style id, subject class too
OLD_STYLE = rf"{ARCHIVE}/\d{{7}}"
_PREFIX = r"(?i:https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/|arxiv:|oai:arxiv\.org:)?"
ID_PATTERN = rf"^\s*{_PREFIX}({NEW_STYLE}|{OLD_STYLE})(?:v(\d+))?(?:\.pdf)?\s*$"
SUBJECT_CLASS = r"^([a-z]+(?:-[a-z]+)?)\.[A-Za-z]{2}/"

_ID_RE = re.compile(ID_PATTERN)
_SUBJECT_RE = re.compile(SUBJECT_CLASS)


class ArxivId(NamedTuple):
    id: str
    version: int | None


def parse_arxiv_id(text: str) -> ArxivId:
    """Split an id into its version-less form and version; ValueError if it is not an id."""
    match = _ID_RE.match(text)
    if match is None:
        raise ValueError(f"not an arXiv id: {text!r}")
    base, version = match.group(1), match.group(2)
    return ArxivId(_SUBJECT_RE.sub(r"\1/", base), int(version) if version else None)


def normalize_arxiv_id(text: str) -> str:
    return parse_arxiv_id(text).id


def id_expr(column: str) -> pl.Expr:
    """Polars twin of :func:`parse_arxiv_id`: the version-less id, null when invalid."""
    return (
        pl.col(column)
        .str.extract(ID_PATTERN, 1)
        .str.replace(SUBJECT_CLASS, "${1}/")
    )


def id_and_version(column: str) -> pl.Expr:
    """Polars twin of :func:`parse_arxiv_id`: a struct of ``id`` (version-less) and
    ``version`` (Int32), from one regex pass; ``id`` is null when invalid."""
    groups = pl.col(column).str.extract_groups(ID_PATTERN)
    return pl.struct(id=groups.struct.field("1").str.replace(SUBJECT_CLASS, "${1}/"),
                     version=groups.struct.field("2").cast(pl.Int32))
