"""Which paper a PDF or e-print belongs to: the arXiv id (and version) in the URL it was
fetched from or in the name it was stored under, as arXiv and common tools name them:
``2202.12139v1.pdf``, ``arXiv-2202.12139v2.tar.gz``, ``hep-th_9901001.pdf`` (the slash of an
old-style id replaced), ``hep-th9901001v2.gz``, ``https://arxiv.org/pdf/2202.12139v1``,
``https://arxiv.org/e-print/hep-th/9901001``."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlparse

from vault_pipeline.ids import ARCHIVE, ArxivId, parse_arxiv_id

_EXTENSIONS = re.compile(r"(?:\.(?:pdf|tar|tgz|gz|tex|zip|ps))+$", re.IGNORECASE)
_PREFIX = re.compile(r"^(?:arxiv[-_:.\s]?)", re.IGNORECASE)
_OLD_STYLE_FLAT = re.compile(rf"^({ARCHIVE})[_/]?(\d{{7}}(?:v\d+)?)$")
_URL_PATH = re.compile(r"/(?:abs|pdf|e-print|src|format)/(.+?)/?$")


def id_from_name(name: str) -> ArxivId | None:
    """The arXiv id in a file name, or None."""
    stem = _PREFIX.sub("", _EXTENSIONS.sub("", name.strip()))
    candidates = [stem]
    flat = _OLD_STYLE_FLAT.match(stem)
    if flat:
        candidates.append(f"{flat.group(1)}/{flat.group(2)}")
    for candidate in candidates:
        try:
            return parse_arxiv_id(candidate)
        except ValueError:
            continue
    return None


def id_from_origin(origin: str | None) -> ArxivId | None:
    """The arXiv id in an arxiv.org URL (abs, pdf, e-print, src), or None."""
    if not origin or "://" not in origin:
        return None
    parsed = urlparse(origin)
    if not parsed.netloc.lower().endswith("arxiv.org"):
        return None
    match = _URL_PATH.search(unquote(parsed.path))
    return id_from_name(match.group(1)) if match else None


def arxiv_id_of(original_name: str | None, origin: str | None) -> tuple[ArxivId | None, str]:
    """The id of a raw file and where it was read (``origin``, ``name``, or ``none``)."""
    found = id_from_origin(origin)
    if found is not None:
        return found, "origin"
    found = id_from_name(original_name) if original_name else None
    return (found, "name") if found is not None else (None, "none")
