"""Build `submissions` and `reviews` from the OpenReview pages in the raw zone.

Every page is read (full listings, resumed listings, decision polls); a note seen in several
pages is kept once, its newest modification winning. Ratings, confidences and the decision of
a submission are gathered from its replies; a decision reply wins over what the submission's
venue group implies. The arXiv id is set only when the normalised title matches exactly one
paper of the vault and at least one author surname is shared."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import polars as pl

from vault_pipeline.parse.openreview import (
    GROUPS_KIND,
    NOTES_KIND,
    load_page,
    names_from_groups,
    normalise_decision,
    parse_notes_page,
)
from vault_pipeline.parse.openreview import decision_from_venue as _decision_from_venue
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import PAPERS, REVIEWS, SUBMISSIONS
from vault_pipeline.store.paths import VaultPaths


@dataclass
class ReviewsReport(Counters, counts=("files", "submissions", "reviews", "matched_arxiv")):
    """Responses read, submissions and reviews written, submissions matched to an arXiv id;
    the replies left out by kind, and the submissions by decision."""

    ignored_replies: dict[str, int] = field(default_factory=dict)
    by_decision: dict[str, int] = field(default_factory=dict)


def title_key(column: str) -> pl.Expr:
    """Title → lowercase ASCII words, for exact matching across sources."""
    return (pl.col(column).str.normalize("NFKD").str.to_lowercase()
            .str.replace_all(r"[^a-z0-9]+", " ").str.strip_chars())


def surname(name: str) -> str:
    return (name.split() or [""])[-1].lower()


def match_arxiv(submissions: pl.DataFrame, papers: pl.LazyFrame | None) -> pl.DataFrame:
    """Add `arxiv_id` and `arxiv_match` where one paper of the vault matches confidently."""
    empty = submissions.with_columns(arxiv_id=pl.lit(None, pl.String),
                                     arxiv_match=pl.lit(None, pl.String))
    if papers is None or submissions.is_empty():
        return empty
    keyed = submissions.select("forum_id", "authors", key=title_key("title")) \
        .filter(pl.col("key").str.len_chars() > 0)
    matches = (papers.select("arxiv_id", "authors", key=title_key("title"))
               .join(keyed.lazy().select("key"), on="key", how="semi").collect())
    pairs = keyed.join(matches, on="key", suffix="_paper")
    confident = {}
    for forum, rows in pairs.group_by("forum_id"):
        hits = [r for r in rows.iter_rows(named=True)
                if r["authors"] and r["authors_paper"] and
                {surname(a) for a in r["authors"]} & {surname(a) for a in r["authors_paper"]}]
        if len({h["arxiv_id"] for h in hits}) == 1:
            confident[forum[0]] = hits[0]["arxiv_id"]
    found = pl.DataFrame({"forum_id": list(confident), "arxiv_id": list(confident.values())},
                         schema={"forum_id": pl.String, "arxiv_id": pl.String})
    return submissions.join(found, on="forum_id", how="left").with_columns(
        arxiv_match=pl.when(pl.col("arxiv_id").is_not_null()).then(pl.lit("title+author")))


def _frame(rows: list[dict], schema: pl.Schema, extra: list[str]) -> pl.DataFrame:
    wanted = {name: dtype for name, dtype in schema.items() if name not in extra}
    return pl.DataFrame(rows, schema=wanted) if rows else pl.DataFrame(schema=wanted)


def newest(frame: pl.DataFrame, key: str) -> pl.DataFrame:
    return (frame.sort(["modified", "raw_sha256"], descending=[True, False], nulls_last=True)
            .unique(key, keep="first", maintain_order=True))


def aggregate(submissions: pl.DataFrame, replies: pl.DataFrame) -> pl.DataFrame:
    reviews = replies.filter(pl.col("kind") == "review").sort("created", "note_id")
    scores = reviews.group_by("forum_id").agg(
        ratings=pl.col("rating").drop_nulls(), confidences=pl.col("confidence").drop_nulls(),
        review_count=pl.len().cast(pl.Int32))
    newest_first = replies.filter(pl.col("decision").is_not_null()).sort(
        "modified", descending=True, nulls_last=True)
    decisions = (newest_first.filter(pl.col("kind") == "decision")
                 .unique("forum_id", keep="first")
                 .select("forum_id", decision_reply="decision"))
    # API v1 venues without Decision notes (ICLR 2019) decide in the meta-review's
    # recommendation ("Accept (Poster)")
    recommended = (newest_first.filter(pl.col("kind") == "meta_review")
                   .unique("forum_id", keep="first")
                   .select("forum_id", decision_meta=pl.col("decision").map_elements(
                       normalise_decision, return_dtype=pl.String)))
    merged = submissions.join(scores, on="forum_id", how="left").join(
        decisions, on="forum_id", how="left").join(recommended, on="forum_id", how="left")
    implied = [
        _decision_from_venue(v, vid, venue)
        for v, vid, venue in merged.select("venue_id", "venueid", "venue").iter_rows()
    ]
    return merged.with_columns(
        decision=pl.coalesce("decision_reply", "decision_meta",
                             pl.Series(implied, dtype=pl.String)),
        mean_rating=pl.col("ratings").list.mean(),
        review_count=pl.col("review_count").fill_null(0),
    )


def build_reviews(paths: VaultPaths) -> ReviewsReport:
    """Rebuild `submissions` and `reviews` from the raw zone, atomically."""
    zone = RawZone(paths.ensure())
    report = ReviewsReport()
    names: dict = {}
    for raw in zone.files([GROUPS_KIND]):
        for venue, found in names_from_groups(json.loads(zone.absolute(raw).read_bytes())).items():
            for kind, values in found.items():
                names.setdefault(venue, {}).setdefault(kind, set()).update(values)
    submission_rows, reply_rows = [], []
    for raw in zone.files([NOTES_KIND]):
        report.files += 1
        payload, _ = load_page(zone.absolute(raw).read_bytes())
        subs, replies, ignored = parse_notes_page(payload, names)
        submission_rows += [r | {"raw_sha256": raw.sha256} for r in subs]
        reply_rows += [r | {"raw_sha256": raw.sha256} for r in replies]
        for label, count in ignored.items():
            report.ignored_replies[label] = report.ignored_replies.get(label, 0) + count
    derived = ["decision", "ratings", "mean_rating", "confidences", "review_count", "arxiv_id",
               "arxiv_match"]
    submissions = newest(_frame(submission_rows, SUBMISSIONS.polars, derived), "forum_id")
    replies = newest(_frame(reply_rows, REVIEWS.polars, []), "note_id")
    submissions = match_arxiv(aggregate(submissions, replies), paths.store.scan_optional(PAPERS))
    submissions = submissions.sort("venue_id", "number", "forum_id", nulls_last=True)
    replies = replies.sort("venue_id", "forum_id", "kind", "created", "note_id")
    report.submissions = paths.store.write(SUBMISSIONS, submissions)
    report.reviews = paths.store.write(REVIEWS, replies)
    report.matched_arxiv = submissions.get_column("arxiv_id").drop_nulls().len()
    report.by_decision = {str(k): v for k, v in
                          submissions.group_by("decision").len().iter_rows()}
    return report


