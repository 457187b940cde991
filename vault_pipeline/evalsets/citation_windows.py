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

from vault_pipeline.reviews.build import title_key

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


def title_ratio(candidate: str, title: str) -> float:
    """The `difflib` ratio of two titles after normalisation, as :func:`match_records`
    measures a record's title (``candidate``) against a submission's (``title``)."""
    a, b = _normalise(candidate), _normalise(title)
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


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
    arXiv id the vault matched, then title similarity, as in seed 001; one record matches
    one row at most."""
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
    return _one_submission_per_record(frame.with_columns(
        s2_id=pl.Series(matched, dtype=pl.String),
        citation_match=pl.Series(how, dtype=pl.String),
        citation_title_ratio=pl.Series(ratios, dtype=pl.Float64)))


def _one_submission_per_record(frame: pl.DataFrame) -> pl.DataFrame:
    """A record claimed by several rows goes to one: an id match (DOI, arXiv id) over any
    title match, else the closest title; on a tie at the best claim, to none. Without it
    one record's citations would be counted for every submission with a similar title
    (titles that share a long prefix reach 0.90)."""
    claim = pl.when(pl.col("citation_match") == "title").then(
        pl.col("citation_title_ratio")).otherwise(pl.lit(2.0))
    best = claim == claim.max().over("s2_id")
    alone = best.sum().over("s2_id") == 1
    keep = pl.col("s2_id").is_null() | (best & alone)
    return frame.with_columns(
        *(pl.when(keep).then(pl.col(c)).alias(c)
          for c in ("s2_id", "citation_match", "citation_title_ratio")))


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
    # a citing paper listed twice (its /citations row and its own reference list) keeps
    # its dated row: only a paper with no date anywhere counts as undated
    rows = (citations.select(key, citing_id, pl.col("citing_date").cast(pl.Date))
            .filter(pl.col(key).is_not_null())
            .sort(key, citing_id, "citing_date", nulls_last=True)
            .unique([key, citing_id], keep="first"))
    dates = published.select(key, pl.col("published").cast(pl.Date))
    joined = dates.unique(maintain_order=True).join(rows, on=key, how="left")
    aggs = [pl.col(citing_id).count().alias("citing_papers"),
            (pl.col(citing_id).is_not_null() & pl.col("citing_date").is_null()).sum()
            .cast(pl.UInt32).alias("citing_undated")]
    for months in windows:
        end = pl.col("published").dt.offset_by(f"{months}mo")
        aggs.append(pl.when(pl.col("published").first().is_null()).then(None)
                    .otherwise((pl.col("citing_date") <= end).sum())
                    .cast(pl.Int64).alias(f"citations_{months}m"))
    counted = joined.group_by(key, "published", maintain_order=True).agg(aggs)
    return counted.with_columns(pl.col("citing_papers").cast(pl.Int64),
                                pl.col("citing_undated").cast(pl.Int64))


WINDOW_COLUMNS = ("forum_id", "venue_id", "title", "s2_id", "citation_match")


def submission_windows(sets: pl.DataFrame, submissions: pl.DataFrame,
                       citations: pl.DataFrame | None,
                       windows: Iterable[int] = WINDOWS_MONTHS) -> pl.DataFrame:
    """One row per submission of ``sets`` matched to Semantic Scholar (`s2_id` not null):
    its citations within each window after its publication date, counted by
    :func:`window_counts` from the `citations` rows that name its record as cited, beside
    S2's total `citation_count` and the day it was read.

    The publication date is the OpenReview submission's `created` day (from
    ``submissions``): every submission has one, it is the same kind of date for the whole
    venue as the study's single cutoff per window was, and the vault does not store S2's
    `publicationDate` of the cited record (for a preprint it is the arXiv date, months
    before the venue). Windows are null, with a `window_note`, where they cannot be told:
    no publication date, or a record S2 counts citations for whose citing papers were not
    harvested; a window that ends after the citing list was read is a lower bound, said in
    the note."""
    windows = tuple(windows)
    matched = (sets.filter(pl.col("s2_id").is_not_null())
               .unique("forum_id", keep="first", maintain_order=True)
               .select(*WINDOW_COLUMNS, "citation_count", "citations_read_at"))
    dates = submissions.select("forum_id", published=pl.col("created").cast(pl.Date))
    matched = matched.join(dates.unique("forum_id", keep="first"), on="forum_id",
                           how="left", maintain_order="left")
    if citations is None:
        citations = pl.DataFrame(schema={"cited_s2_id": pl.String,
                                         "citing_s2_id": pl.String,
                                         "citing_date": pl.Date, "read_at": pl.Date})
    counted = window_counts(citations, matched.select(cited_s2_id="s2_id",
                                                      published="published"), windows)
    read = (citations.filter(pl.col("cited_s2_id").is_not_null())
            .group_by("cited_s2_id").agg(citing_read_at=pl.col("read_at").max()))
    out = (matched.join(counted, left_on=["s2_id", "published"],
                        right_on=["cited_s2_id", "published"], how="left",
                        maintain_order="left", nulls_equal=True)
           .join(read, left_on="s2_id", right_on="cited_s2_id", how="left",
                 maintain_order="left"))
    unharvested = (pl.col("citing_papers") == 0) & (pl.col("citation_count").fill_null(0) > 0)
    window_names = [f"citations_{n}m" for n in windows]
    longest = max(windows)
    note = (pl.when(pl.col("published").is_null())
            .then(pl.lit("the submission has no creation date: no window"))
            .when(unharvested)
            .then(pl.format("Semantic Scholar counts {} citation(s) but no citing paper of "
                            "this record was harvested: windows unknown",
                            pl.col("citation_count")))
            .when(pl.col("citing_read_at").is_not_null()
                  & (pl.col("published").dt.offset_by(f"{longest}mo")
                     > pl.col("citing_read_at")))
            .then(pl.format("the citing papers were read on {}: a window ending after "
                            "that day is a lower bound", pl.col("citing_read_at"))))
    return out.with_columns(
        *(pl.when(unharvested).then(None).otherwise(pl.col(c)).alias(c)
          for c in window_names),
        window_note=note,
    ).select(*WINDOW_COLUMNS, "published", *window_names, "citing_papers",
             "citing_undated", "citing_read_at", "citation_count", "citations_read_at",
             "window_note")
