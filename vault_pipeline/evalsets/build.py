"""Build every evaluation set from the vault's tables, write them as tables, and write each
set's card (into `eval_cards` and `$VAULT_HOME/evalsets/cards/<set>.md`).

Order: the labelled submissions of the idea venues get their six-part ideas (incremental);
the point-, pair- and group-wise sets are drawn from those with an idea; the review-paradigm
sets come from the ratings alone. Every draw is seeded, so a rebuild with the same tables and
settings writes the same rows."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

from vault_pipeline.evalsets import metrics as m
from vault_pipeline.evalsets.candidates import labelled_submissions
from vault_pipeline.evalsets.cards import render_card, shortfall_dicts
from vault_pipeline.evalsets.citation_windows import submission_windows
from vault_pipeline.evalsets.extraction import ExtractionReport, extract_ideas
from vault_pipeline.evalsets.groupwise import GROUPWISE, groupwise_set
from vault_pipeline.evalsets.inputs import excluded_frame, read_inputs
from vault_pipeline.evalsets.pairwise import PAIRWISE, pairwise_set
from vault_pipeline.evalsets.pointwise import POINTWISE, pointwise_set
from vault_pipeline.evalsets.review_paradigm import (
    ANCHORS,
    POPULATION,
    STRATIFIED,
    build_review_sets,
    eligible,
    nearest_anchors,
)
from vault_pipeline.evalsets.settings import EvalSetsSettings
from vault_pipeline.evalsets.similarity import topic_space, topic_text
from vault_pipeline.ideas.backends import Backend
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.records.idea import IDEA_FIELDS
from vault_pipeline.schemas import (
    EVAL_CARDS,
    EVAL_CITATION_WINDOWS,
    EVAL_EXCLUDED,
    EVAL_GROUPWISE,
    EVAL_IDEA_FAILURES,
    EVAL_IDEAS,
    EVAL_PAIRWISE,
    EVAL_POINTWISE,
    EVAL_REVIEW_ANCHORS,
    EVAL_REVIEW_POPULATION,
    EVAL_REVIEW_STRATIFIED,
    TableSchema,
)
from vault_pipeline.store.atomic import atomic_write_bytes
from vault_pipeline.store.paths import VaultPaths

TABLES: dict[str, TableSchema] = {
    POINTWISE: EVAL_POINTWISE, PAIRWISE: EVAL_PAIRWISE, GROUPWISE: EVAL_GROUPWISE,
    POPULATION: EVAL_REVIEW_POPULATION, STRATIFIED: EVAL_REVIEW_STRATIFIED,
    ANCHORS: EVAL_REVIEW_ANCHORS,
}


@dataclass
class EvalSetsReport:
    rows: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    excluded: int = 0
    citation_windows: dict[str, int] = field(default_factory=dict)
    extraction: ExtractionReport | None = None
    similarity_method: str = ""
    seconds: dict[str, float] = field(default_factory=dict)


class _Clock:
    def __init__(self, report: EvalSetsReport) -> None:
        self.report, self.last = report, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.report.seconds[name] = round(now - self.last, 3)
        self.last = now


def cards_dir(paths: VaultPaths):
    return paths.home / "evalsets" / "cards"


NO_IDEA = "no idea extracted for this submission"


def _idea_column(paths: VaultPaths) -> pl.DataFrame:
    """Each submission's idea and why it is incomplete (null when every part is there): the
    parts it does not state, or the reason its extraction was quarantined (idea null)."""
    ideas = paths.store.read(EVAL_IDEAS)
    missing = [pl.when(pl.col(f).is_null()).then(pl.lit(f.replace("_", " "))) for f in
               IDEA_FIELDS]
    stated = ideas.select(
        "forum_id", idea=pl.struct(*IDEA_FIELDS),
        idea_note=pl.concat_str(missing, separator=", ", ignore_nulls=True))
    stated = stated.with_columns(idea_note=pl.when(pl.col("idea_note") != "").then(
        pl.lit("not stated in the submission: ") + pl.col("idea_note")))
    failed = paths.store.read(EVAL_IDEA_FAILURES).filter(
        ~pl.col("forum_id").is_in(stated.get_column("forum_id").to_list())).select(
        "forum_id", idea=pl.lit(None, stated.schema["idea"]),
        idea_note=pl.lit("idea extraction quarantined (eval_idea_failures): ")
        + pl.col("reason"))
    return pl.concat([stated, failed]).unique("forum_id", keep="first", maintain_order=True)


def _conformed(frame: pl.DataFrame, schema: TableSchema) -> pl.DataFrame:
    if frame.is_empty() and not set(schema.names) <= set(frame.columns):
        return pl.from_arrow(schema.empty())  # type: ignore[return-value]
    return frame


def _with_member_columns(groups: pl.DataFrame, pool: pl.DataFrame) -> pl.DataFrame:
    if groups.is_empty():
        return groups
    members = pool.select("forum_id", "year", "title", "abstract", "keywords", "primary_area",
                          "author_tldr", "ratings", "confidences", "mean_rating", "idea",
                          "idea_note")
    return groups.join(members, on="forum_id", how="left", maintain_order="left")


def _with_pair_ideas(pairs: pl.DataFrame, ideas: pl.DataFrame) -> pl.DataFrame:
    for side in ("a", "b"):
        pairs = pairs.join(ideas.rename({"forum_id": f"forum_id_{side}", "idea": f"idea_{side}",
                                         "idea_note": f"idea_note_{side}"}),
                           on=f"forum_id_{side}", how="left", maintain_order="left")
    return pairs


def _with_nearest_anchors(paths: VaultPaths, sample: pl.DataFrame, anchors: pl.DataFrame,
                          settings: EvalSetsSettings) -> pl.DataFrame:
    """The sample with each paper's nearest anchors by abstract embedding (seed 001 embeds
    abstracts alone for this retrieval, not title and abstract)."""
    texts = [a or t or "" for t, a in [*anchors.select("title", "abstract").rows(),
                                      *sample.select("title", "abstract").rows()]]
    if sample.is_empty() or anchors.is_empty() or settings.anchors_per_paper == 0:
        return nearest_anchors(sample, anchors.clear(), np.zeros((sample.height, 0)), 0)
    space = topic_space(paths, texts, settings.embedder, settings.embed_batch_size,
                        settings.embed_backend)
    rows = np.arange(anchors.height, anchors.height + sample.height)
    similarity = space.similarity(rows, np.arange(anchors.height))
    return nearest_anchors(sample, anchors, similarity, settings.anchors_per_paper)


def build_evalsets(paths: VaultPaths, settings: EvalSetsSettings,
                   backend: Backend | None = None, log=print,
                   ideas: IdeasSettings | None = None) -> EvalSetsReport:
    """The sets; ideas are extracted by the ideas stage's backend: ``ideas``, the `[ideas]`
    section the stage ``uses`` (the defaults when called alone), with the settings' own
    `ideas` over it."""
    report = EvalSetsReport()
    clock = _Clock(report)
    inputs = read_inputs(paths, settings.rating_scale)
    candidates = labelled_submissions(inputs, settings)
    clock.lap("read_inputs")
    report.extraction = extract_ideas(
        paths, candidates.frame.select("forum_id", "venue_id", "title", "abstract",
                                       "arxiv_id"),
        inputs.documents, (ideas or IdeasSettings()).over(settings.ideas),
        settings.prompt, backend, log)
    clock.lap("ideas")
    ideas = _idea_column(paths)
    # every labelled submission stays in the draw: an incomplete idea is kept with its note
    pool = candidates.frame.join(ideas, on="forum_id", how="left", maintain_order="left")
    pool = pool.with_columns(idea_note=pl.when(pl.col("idea").is_null()).then(
        pl.col("idea_note").fill_null(NO_IDEA)).otherwise(pl.col("idea_note")))
    ideas = pool.select("forum_id", "idea", "idea_note")
    missing = pool.filter(pl.col("idea").is_null())
    excluded = [inputs.excluded, candidates.excluded]
    pointwise, short = pointwise_set(pool, settings)
    clock.lap("pointwise")
    space = topic_space(paths, [topic_text(t, a) for t, a in
                                pool.select("title", "abstract").iter_rows()],
                        settings.embedder, settings.embed_batch_size,
                        settings.embed_backend)
    report.similarity_method = space.method
    clock.lap("similarity")
    pairs, pair_short = pairwise_set(pool, space, settings)
    pairs = _with_pair_ideas(pairs, ideas)
    clock.lap("pairwise")
    groups, skipped, group_short = groupwise_set(pool, space, settings)
    groups = _with_member_columns(groups, pool)
    excluded.append(excluded_frame(skipped))
    clock.lap("groupwise")
    review = build_review_sets(inputs, settings)
    review.stratified = _with_nearest_anchors(paths, review.stratified, review.anchors,
                                              settings)
    excluded.append(review.excluded)
    clock.lap("review_sets")
    frames = {POINTWISE: pointwise, PAIRWISE: pairs, GROUPWISE: groups,
              POPULATION: review.population, STRATIFIED: review.stratified,
              ANCHORS: review.anchors}
    for name, frame in frames.items():
        frames[name] = _conformed(frame, TABLES[name])
        report.rows[name] = paths.store.write(TABLES[name], frames[name])
    windows = submission_windows(pl.concat([review.population, review.anchors],
                                           how="diagonal_relaxed"),
                                 inputs.submissions, inputs.citations)
    report.citation_windows = {
        "rows": paths.store.write(EVAL_CITATION_WINDOWS, windows),
        "citing_undated": int(windows.get_column("citing_undated").sum()),
        "unknown_windows": windows.get_column("citations_17m").null_count(),
        "lower_bounds": windows.filter(pl.col("window_note").is_not_null()
                                       & pl.col("citations_17m").is_not_null()).height}
    all_excluded = pl.concat(excluded).sort("set_name", "venue_id", "forum_id", "note_id",
                                            nulls_last=True)
    report.excluded = paths.store.write(EVAL_EXCLUDED, all_excluded)
    clock.lap("write")
    reviews = inputs.reviews
    population_basis = eligible(review.population, settings)
    report.metrics = {
        POINTWISE: m.pointwise_metrics(frames[POINTWISE], reviews),
        PAIRWISE: m.pairwise_metrics(frames[PAIRWISE], reviews),
        GROUPWISE: m.groupwise_metrics(frames[GROUPWISE], reviews),
        POPULATION: m.review_metrics(frames[POPULATION], reviews, population_basis),
        STRATIFIED: m.review_metrics(frames[STRATIFIED], reviews),
        ANCHORS: m.review_metrics(frames[ANCHORS], reviews),
    }
    shortfalls = short + pair_short + group_short + review.shortfalls
    for name in (PAIRWISE, GROUPWISE):
        report.metrics[name] |= {"similarity_method": space.method,
                                 "similarity_note": space.note}
    report.metrics[GROUPWISE]["queries_without_group"] = len(skipped)
    partial = pool.filter(pl.col("idea").is_not_null() & pl.col("idea_note").is_not_null())
    idea_notes = [*candidates.notes,
                  *([f"{missing.height} labelled submission(s) have no idea (extraction "
                     "quarantined in eval_idea_failures): kept in the draw with the reason "
                     "in `idea_note`; the runs' idea tasks leave them out"]
                    if missing.height else []),
                  *([f"{partial.height} idea(s) leave parts unstated (`idea_note` names them)"]
                    if partial.height else [])]
    for name in TABLES:
        report.metrics[name]["shortfalls"] = shortfall_dicts(shortfalls, name)
        report.metrics[name]["notes"] = (idea_notes if name in (POINTWISE, PAIRWISE, GROUPWISE)
                                         else review.notes.get(name, []))
    extraction = report.extraction
    for name in (POINTWISE, PAIRWISE, GROUPWISE):
        report.metrics[name]["idea_provenance"] = {
            f"{extraction.backend} / {extraction.model} / {extraction.prompt_version}":
                extraction.records}
    write_cards(paths, settings, report.metrics, report.rows)
    clock.lap("cards")
    return report


def write_cards(paths: VaultPaths, settings: EvalSetsSettings,
                metrics: dict[str, dict[str, Any]], rows: dict[str, int]) -> None:
    built = datetime.now(UTC)
    config = settings.as_dict()
    records = []
    for name, schema in TABLES.items():
        card = render_card(name, schema.name, metrics[name], config)
        atomic_write_bytes(cards_dir(paths) / f"{name}.md", card.encode())
        records.append({"set_name": name, "table_name": schema.name, "rows": rows[name],
                        "metrics": json.dumps(metrics[name], sort_keys=True, default=str),
                        "card": card, "settings": json.dumps(config, sort_keys=True),
                        "settings_fingerprint": settings.fingerprint(), "built_at": built})
    paths.store.write(EVAL_CARDS, pl.DataFrame(records))
