"""The reviews stage's declaration: OpenReview pages in the raw zone to `submissions` and
`reviews`."""

from __future__ import annotations

from vault_pipeline.pipeline.stage import Counts, Stage, plain
from vault_pipeline.reviews.build import build_reviews
from vault_pipeline.schemas import REVIEWS, SUBMISSIONS

STAGE = Stage(
    "reviews", "reviews", inputs=("raw_files", "papers"), outputs=(SUBMISSIONS, REVIEWS),
    run=plain(build_reviews),
    describe=lambda r: (f"{r.submissions} submissions, {r.reviews} replies from {r.files} "
                        "OpenReview pages"),
    figures=lambda r: {
        SUBMISSIONS.name: {"dagster/row_count": r.submissions, "pages_parsed": r.files,
                           "matched_arxiv": r.matched_arxiv,
                           "by_decision": Counts("decision", r.by_decision)},
        REVIEWS.name: {"dagster/row_count": r.reviews,
                       "replies_not_kept": Counts("invitation", r.ignored_replies)}})
