"""Citation counts as seed 001 measured them: a submission is matched to its Semantic Scholar
record by DOI where it has one, else by normalised-title similarity (Python `difflib`
sequence ratio, accepted at >= 0.90), and its citations are counted within fixed windows
after publication (12 and 17 months) from the citing papers' own dates.

`difflib` rather than rapidfuzz: the study names `difflib.SequenceMatcher.ratio` and its 0.90
threshold was set on that measure; rapidfuzz's ratio is an Indel distance that scores the
same pair differently, so the same threshold would accept a different set of matches. The
cost is kept down by comparing only titles whose lengths allow a ratio of 0.90 and by
`difflib`'s cheap upper bounds before the full ratio.

The window counts are a pure function of a citations table with one row per (citing paper,
cited paper) and a `citing_date` column, whichever harvest wrote the rows: a citing paper
without a usable date is counted apart (`undated`) and in no window, as the study left the
4% of undated citing papers out of its 12-month count."""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

from ..reviews import title_key

MIN_TITLE_RATIO = 0.90
WINDOWS_MONTHS = (12, 17)
CITED_KEYS = ("cited_s2_id", "cited_doi", "cited_arxiv_id")


@dataclass(frozen=True)
class TitleMatch:
    index: int  # row of the candidate list matched
    ratio: float


def _normalise(title: str) -> str:
    """Lowercase ASCII words, as the exact-title match of the reviews stage uses."""
    frame = pl.DataFrame({"t": [title]})
    return frame.select(title_key("t")).item() or ""


def best_title_match(title: str, candidates: Sequence[str],
                     min_ratio: float = MIN_TITLE_RATIO) -> TitleMatch | None:
    """The candidate (normalised titles) with the highest `difflib` ratio to ``title``, if
    it reaches ``min_ratio``; a tie between two different titles at the best ratio is no
    match (the study accepted one record per paper)."""
    if not title:
        return None
    n = len(title)
    best: TitleMatch | None = None
    tied = False
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(title)
    for i, other in enumerate(candidates):
        m = len(other)
        if not m or 2 * min(n, m) / (n + m) < min_ratio:  # the ratio cannot reach the floor
            continue
        matcher.set_seq1(other)
        if matcher.real_quick_ratio() < min_ratio or matcher.quick_ratio() < min_ratio:
            continue
        ratio = matcher.ratio()
        if ratio < min_ratio:
            continue
        if best is None or ratio > best.ratio:
            best, tied = TitleMatch(i, ratio), False
        elif ratio == best.ratio and other != candidates[best.index]:
            tied = True
    return None if tied else best


def match_records(frame: pl.DataFrame, records: pl.DataFrame,
                  min_ratio: float = MIN_TITLE_RATIO) -> pl.DataFrame:
    """For each row of ``frame`` (`title`, optional `doi` and `arxiv_id`): the `s2_id` of its
    Semantic Scholar record in ``records`` (`s2_id`, `title`, optional `doi`, `arxiv_id`)
    , how it was matched (`doi`, `arxiv_id`, `title`) and the title ratio of a title match,
    or nulls. DOI first, then the
    arXiv id the vault matched, then title similarity, as in seed 001."""
    def lookup(column: str) -> dict[str, str]:
        if column not in records.columns:
            return {}
        rows = records.filter(pl.col(column).is_not_null()).unique(column, keep="first")
        return dict(zip(rows.get_column(column).str.to_lowercase().to_list(),
                        rows.get_column("s2_id").to_list(), strict=True))

    by_doi, by_arxiv = lookup("doi"), lookup("arxiv_id")
    titled = sorted((len(t), t, i) for i, t in enumerate(
        _normalise(t) if t else "" for t in records.get_column("title").to_list()) if t)
    lengths = [n for n, _, _ in titled]
    titles = [t for _, t, _ in titled]
    ids = [records.get_column("s2_id")[i] for _, _, i in titled]
    matched, how, ratios = [], [], []
    for row in frame.iter_rows(named=True):
        doi, arxiv = (row.get("doi") or "").lower(), (row.get("arxiv_id") or "").lower()
        if doi and doi in by_doi:
            matched.append(by_doi[doi])
            how.append("doi")
            ratios.append(None)
            continue
        if arxiv and arxiv in by_arxiv:
            matched.append(by_arxiv[arxiv])
            how.append("arxiv_id")
            ratios.append(None)
            continue
        title = _normalise(row["title"]) if row.get("title") else ""
        # only titles whose length lets the ratio reach the floor: 2m / (n + m) >= r
        low = bisect.bisect_left(lengths, len(title) * min_ratio / (2 - min_ratio))
        high = bisect.bisect_right(lengths, len(title) * (2 - min_ratio) / min_ratio)
        hit = best_title_match(title, titles[low:high], min_ratio)
        matched.append(ids[low + hit.index] if hit else None)
        how.append("title" if hit else None)
        ratios.append(round(hit.ratio, 4) if hit else None)
    return frame.with_columns(s2_id=pl.Series(matched, dtype=pl.String),
                              citation_match=pl.Series(how, dtype=pl.String),
                              citation_title_ratio=pl.Series(ratios, dtype=pl.Float64))


def window_counts(citations: pl.DataFrame, published: pl.DataFrame,
                  windows: Iterable[int] = WINDOWS_MONTHS, key: str = "cited_s2_id"
                  ) -> pl.DataFrame:
    """Citations of each paper of ``published`` (`key`, `published` date) within each window
    of months after its publication, from ``citations`` (`key`, `citing_date`, and a citing
    id column to count each citing paper once).

    Returns one row per paper: `citing_papers` (all, dated or not), `citing_undated`, and
    `citations_<n>m` for each window: citing papers dated on or before publication + n
    months (day clamped to the month's end). A paper without citing rows counts 0 in every
    column; one without a publication date gets null windows."""
    windows = tuple(windows)
    citing_id = next((c for c in ("citing_s2_id", "citing_doi", "citing_arxiv_id")
                      if c in citations.columns), None)
    if key not in citations.columns or "citing_date" not in citations.columns or \
            citing_id is None:
        raise ValueError(f"window counts need `{key}`, `citing_date` and a citing id column "
                         f"in the citations table; it has {citations.columns}")
    rows = (citations.select(key, citing_id, pl.col("citing_date").cast(pl.Date))
            .filter(pl.col(key).is_not_null()).unique([key, citing_id]))
    joined = published.select(key, pl.col("published").cast(pl.Date)).join(
        rows, on=key, how="left")
    aggs = [pl.col(citing_id).count().alias("citing_papers"),
            (pl.col(citing_id).is_not_null() & pl.col("citing_date").is_null()).sum()
            .cast(pl.UInt32).alias("citing_undated")]
    for months in windows:
        end = pl.col("published").dt.offset_by(f"{months}mo")
        aggs.append(pl.when(pl.col("published").first().is_null()).then(None)
                    .otherwise((pl.col("citing_date") <= end).sum())
                    .cast(pl.Int64).alias(f"citations_{months}m"))
    counted = joined.group_by(key, maintain_order=True).agg(aggs)
    return counted.with_columns(pl.col("citing_papers").cast(pl.Int64),
                                pl.col("citing_undated").cast(pl.Int64))
