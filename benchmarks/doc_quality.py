"""Quality measures of a converted paper, for bench_documents.py: what a reader would check,
made countable so converters can be compared side by side on the same real PDFs.

- heading recall: of the PDF outline's titles (levels 1-2), how many came out as Markdown
  headings (matched on letters and digits only);
- reading-order errors on two-column pages: the reference is the page's body-size text lines
  read column by column (left column, then right, in bands cut by full-width lines); a probe
  is the first five words of each reference line, found (once) in the output; an error is a
  pair of consecutive probes that come out in the opposite order — a paragraph continued in
  the wrong column, or the columns read across, shows up as inversions. Probes not found (or
  found twice) are not compared: coverage measures what is missing;
- coverage: token recall of PyMuPDF's plain ``page.get_text()`` (words, case folded, a
  sub- or superscript character a token of its own), on the converter's output before
  cleaning;
- citation markers, hyphenation and ligature leftovers: counted in the cleaned body."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter

import pymupdf

from vault_pipeline.documents.cleaning import heading_title
from vault_pipeline.documents.fast_pdf import normalize_title

_TOKEN = re.compile(r"[^\W_]+")
PROBE_WORDS = 5
# Not ``[0]`` nor an index (``tokens[9:13]``, ``x[2]``): code, not a citation.
_NUMERIC = re.compile(r"(?<![\w\])])\[[1-9]\d{0,2}(?:\s*[,–-]\s*\d{1,3})*\]")
_AUTHOR_YEAR = re.compile(r"\([A-Z][^()]{0,120}?,?\s(?:19|20)\d{2}[a-z]?(?:[;,][^()]{0,160})?\)")
_LINE_END_HYPHEN = re.compile(r"\b[a-z]{2,}-[ \t]*\n[ \t]*[a-z]{2,}")
_JOINED_HYPHEN = re.compile(r"\b[a-z]{2,}- (?!and\b|or\b|to\b)[a-z]{2,}")
_LIGATURE = re.compile("[\ufb00-\ufb06]")


def _scripts_apart(char: str) -> str:
    """A sub- or superscript character as its own token (``yᵢ`` as ``y i``, as LaTeX's
    ``y_i`` reads), so that how a converter spaces math does not count as a different word."""
    if unicodedata.decomposition(char).startswith(("<sub>", "<super>")):
        return " " + unicodedata.normalize("NFKC", char) + " "
    return char


def tokens(text: str) -> list[str]:
    """Words, case folded; a ligature character spelled out (PyMuPDF's plain text keeps
    ``ﬁ`` where a converter writes ``fi``: the same word)."""
    if not text.isascii():
        text = _LIGATURE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
        text = "".join(_scripts_apart(ch) if not ch.isascii() else ch for ch in text)
    return [t.lower() for t in _TOKEN.findall(text)]


def token_recall(output: str, reference: str, words_only: bool = False) -> float:
    """The share of the reference's tokens (with multiplicity) found in the output;
    ``words_only`` counts the tokens with a letter (line and page numbers, which a cleaning
    converter drops as furniture, are all digits)."""
    have, want = Counter(tokens(output)), Counter(tokens(reference))
    if words_only:
        want = Counter({t: n for t, n in want.items() if not t.isdigit()})
    total = sum(want.values())
    return sum(min(n, have[t]) for t, n in want.items()) / total if total else 1.0


def token_f1(a: str, b: str) -> float:
    """Bag-of-words F1 of two texts (agreement of a PDF's and its LaTeX source's text)."""
    ca, cb = Counter(tokens(a)), Counter(tokens(b))
    common = sum((ca & cb).values())
    if not common:
        return 0.0
    precision, recall = common / sum(ca.values()), common / sum(cb.values())
    return 2 * precision * recall / (precision + recall)


def outline_titles(doc: pymupdf.Document) -> list[str]:
    return [title for level, title, *_ in doc.get_toc(simple=True)
            if level <= 2 and normalize_title(title)]


def heading_recall(markdown: str, titles: list[str]) -> tuple[int, int]:
    """(outline titles found as headings, outline titles)."""
    headings = {normalize_title(title) for line in markdown.split("\n")
                if (title := heading_title(line))}
    found = sum(1 for t in titles
                if any(normalize_title(t) == h or (len(h) >= 4 and h.endswith(normalize_title(t)))
                       for h in headings))
    return found, len(titles)


def _body_size(doc: pymupdf.Document) -> float:
    sizes = Counter[float]()
    for page in doc:
        for block in page.get_text("dict")["blocks"]:
            for line in block.get("lines", []):
                for span in line["spans"]:
                    sizes[round(span["size"] * 2) / 2] += len(span["text"])
    return sizes.most_common(1)[0][0] if sizes else 0.0


def column_probes(page: pymupdf.Page, body: float) -> list[str] | None:
    """Probes of a two-column page in column-aware reading order; None if one column."""
    width = page.rect.width
    mid = width / 2
    lines = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            spans = line["spans"]
            if not spans or abs(line["dir"][1]) > 0.1:
                continue
            size = max(spans, key=lambda s: len(s["text"]))["size"]
            if abs(size - body) > 0.6:
                continue
            x0, y0, x1, _y1 = line["bbox"]
            side = "left" if x1 <= mid else "right" if x0 >= mid else "full"
            lines.append((side, y0, x0, "".join(s["text"] for s in spans)))
    counts = Counter(side for side, *_ in lines)
    if min(counts["left"], counts["right"]) < 0.25 * len(lines) or not lines:
        return None
    ordered: list[tuple] = []
    band: list[tuple] = []
    for line in sorted(lines, key=lambda ln: (ln[1], ln[2])):
        if line[0] == "full":
            ordered += sorted((ln for ln in band if ln[0] == "left"), key=lambda ln: ln[1])
            ordered += sorted((ln for ln in band if ln[0] == "right"), key=lambda ln: ln[1])
            ordered.append(line)
            band = []
        else:
            band.append(line)
    ordered += sorted((ln for ln in band if ln[0] == "left"), key=lambda ln: ln[1])
    ordered += sorted((ln for ln in band if ln[0] == "right"), key=lambda ln: ln[1])
    probes = []
    for *_rest, text in ordered:
        words = tokens(text)
        if len(words) >= PROBE_WORDS + 1:  # the last word may be hyphenated: not in a probe
            probes.append(" ".join(words[:PROBE_WORDS]))
    return probes


def reference_probes(doc: pymupdf.Document) -> list[list[str]]:
    """Per two-column page, its probes in reading order."""
    body = _body_size(doc)
    pages = [column_probes(page, body) for page in doc]
    return [p for p in pages if p]


def order_errors(output: str, pages: list[list[str]]) -> tuple[int, int]:
    """(inversions, pairs of consecutive probes compared) over every two-column page."""
    text = " " + " ".join(tokens(output)) + " "
    errors = compared = 0
    for probes in pages:
        positions = []
        for probe in probes:
            at = text.find(f" {probe} ")
            if at >= 0 and text.find(f" {probe} ", at + 1) < 0:
                positions.append(at)
        for before, after in itertools.pairwise(positions):
            compared += 1
            errors += after < before
    return errors, compared


def citations_left(text: str) -> int:
    return len(_NUMERIC.findall(text)) + len(_AUTHOR_YEAR.findall(text))


def hyphenation_left(text: str) -> int:
    return len(_LINE_END_HYPHEN.findall(text)) + len(_JOINED_HYPHEN.findall(text))


def ligatures_left(text: str) -> int:
    return len(_LIGATURE.findall(text))
