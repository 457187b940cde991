"""The review-paradigm sets of seed 001.

- **population**: every submission of the venue with at least one valid rating: mean
  reviewer rating (the ground truth), the rating list, decision, whether the mean reaches
  the accept threshold (default 6), citation counts where Semantic Scholar matched.
- **stratified**: a seeded sample of the population, a fixed number per integer score bin
  (default 30 in bins 2-8) and every paper of the other, sparse bins; a dense bin with fewer
  papers than its quota keeps them all and the card says so. Rated withdrawn submissions
  stay in the draw and count as not accepted (`accepted` false), as the study's 232 held 18
  of them (`withdrawn_as_non_accepted`, on by default). Each paper carries its
  `anchors_per_paper` (3) nearest anchors by cosine of abstract embeddings, the study's
  Anchor Rating retrieval, so the set states which calibration points go with which paper.
- **anchors**: papers of an earlier venue (default ICLR 2024) whose reviewers agreed exactly
  (zero rating variance, at least two ratings), a seeded sample of the configured size.

The stratified and anchor sets carry both input representations (title + abstract; cleaned
full text cut at 30,000 characters, or the title and abstract where no full text converted)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from vault_pipeline.evalsets.inputs import (
    Inputs,
    attach_citations,
    attach_ratings,
    attach_representations,
    excluded_frame,
)
from vault_pipeline.evalsets.labels import order_key
from vault_pipeline.evalsets.settings import OFF_TRACK, EvalSetsSettings

POPULATION, STRATIFIED, ANCHORS = "review_population", "review_stratified", "review_anchors"


@dataclass
class Shortfall:
    """A stratum (label, score bin, pair type) that had fewer items than its quota."""

    set_name: str
    venue_id: str
    stratum: str
    quota: int
    available: int

    def as_dict(self) -> dict:
        return {"set": self.set_name, "venue_id": self.venue_id, "stratum": self.stratum,
                "quota": self.quota, "available": self.available,
                "short_by": self.quota - self.available}


@dataclass
class ReviewSets:
    population: pl.DataFrame
    stratified: pl.DataFrame
    anchors: pl.DataFrame
    excluded: pl.DataFrame
    shortfalls: list[Shortfall] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)


def score_bin(mean: pl.Expr, rule: str, scale: tuple[float, float]) -> pl.Expr:
    binned = mean.floor() if rule == "floor" else (mean + 0.5).floor()  # round half up
    return binned.clip(scale[0], scale[1]).cast(pl.Int32)


def scored(inputs: Inputs, venue: str, settings: EvalSetsSettings, set_name: str
           ) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """(scored submissions of a venue, exclusions, notes)."""
    subs = inputs.submissions.filter(pl.col("venue_id") == venue)
    notes = [f"{venue}: no submissions in the vault"] if subs.is_empty() else []
    rated = attach_ratings(subs, inputs.reviews)
    unscored = rated.filter(pl.col("rated_reviews") == 0)
    rows = [{"set_name": set_name, "venue_id": venue, "forum_id": forum, "note_id": None,
             "reason": "no official reviews" if count == 0 else
             f"none of its {count} official reviews has a valid rating"}
            for forum, count in unscored.select("forum_id", "review_count").iter_rows()]
    if subs.height and subs.get_column("decision").is_null().all():
        notes.append(f"{venue}: no decisions yet ({subs.height} submissions undecided); "
                     "scores are reviewer ratings only")
    population = rated.filter(pl.col("rated_reviews") > 0).with_columns(
        withdrawn=pl.col("decision").is_in(OFF_TRACK).fill_null(False),
        accepted=pl.col("decision").str.starts_with("Accept"),
        score_bin=score_bin(pl.col("mean_rating"), settings.bin_rule, settings.rating_scale),
        accept_by_threshold=pl.col("mean_rating") >= settings.accept_threshold,
        accept_threshold=pl.lit(settings.accept_threshold),
    )
    return population, excluded_frame(rows), notes


def stratified_sample(population: pl.DataFrame, settings: EvalSetsSettings, venue: str
                      ) -> tuple[pl.DataFrame, list[Shortfall]]:
    """``per_bin`` papers of each dense bin (all of them when fewer), every paper of the
    other bins; drawn in the seeded order."""
    keyed = population.with_columns(_key=pl.Series(
        [order_key(settings.seed, f"{STRATIFIED}:{venue}", f)
         for f in population.get_column("forum_id")], dtype=pl.String))
    dense = set(settings.dense_bins)
    parts, short = [], []
    for (bin_,), rows in keyed.sort("_key").group_by("score_bin", maintain_order=True):
        if bin_ in dense:
            if rows.height < settings.per_bin:
                short.append(Shortfall(STRATIFIED, venue, f"bin {bin_}", settings.per_bin,
                                       rows.height))
            rows = rows.head(settings.per_bin)
        parts.append(rows)
    present = set(keyed.get_column("score_bin").to_list())
    short += [Shortfall(STRATIFIED, venue, f"bin {b}", settings.per_bin, 0)
              for b in sorted(dense - present) if settings.per_bin > 0]
    sample = pl.concat(parts) if parts else keyed.clear()
    return sample.sort("score_bin", "_key").drop("_key"), short


def anchor_sample(population: pl.DataFrame, settings: EvalSetsSettings, venue: str
                  ) -> tuple[pl.DataFrame, list[Shortfall]]:
    """Zero-variance papers (all valid ratings equal, at least ``anchor_min_reviews``)."""
    unanimous = population.filter(
        (pl.col("rated_reviews") >= max(2, settings.anchor_min_reviews))
        & (pl.col("ratings").list.max() == pl.col("ratings").list.min()))
    keyed = unanimous.with_columns(_key=pl.Series(
        [order_key(settings.seed, f"{ANCHORS}:{venue}", f)
         for f in unanimous.get_column("forum_id")], dtype=pl.String))
    sample = keyed.sort("_key").head(settings.anchor_size)
    short = ([Shortfall(ANCHORS, venue, "zero-variance papers", settings.anchor_size,
                        unanimous.height)] if unanimous.height < settings.anchor_size else [])
    return sample.sort("mean_rating", "_key").drop("_key"), short


def eligible(population: pl.DataFrame, settings: EvalSetsSettings) -> pl.DataFrame:
    """The papers the anchors and the reliability figures are drawn from."""
    return population if settings.include_withdrawn else population.filter(~pl.col("withdrawn"))


def sample_frame(population: pl.DataFrame, settings: EvalSetsSettings) -> pl.DataFrame:
    """The papers the stratified sample is drawn from: with the withdrawn ones (as not
    accepted) when `withdrawn_as_non_accepted`, else as for the anchors."""
    return population if settings.withdrawn_as_non_accepted else eligible(population,
                                                                          settings)


def nearest_anchors(sample: pl.DataFrame, anchors: pl.DataFrame, similarity, k: int
                    ) -> pl.DataFrame:
    """``sample`` with `nearest_anchors` (forum ids, most similar first) and
    `nearest_anchor_similarities`; ``similarity`` is an (n sample, n anchors) cosine
    matrix of abstract embeddings, ties broken by anchor order."""
    ids = anchors.get_column("forum_id").to_list()
    chosen, sims = [], []
    for row in range(sample.height):
        order = np.argsort(-similarity[row], kind="stable")[:k] if ids else []
        chosen.append([ids[i] for i in order])
        sims.append([round(float(similarity[row, i]), 6) for i in order])
    return sample.with_columns(
        nearest_anchors=pl.Series(chosen, dtype=pl.List(pl.String)),
        nearest_anchor_similarities=pl.Series(sims, dtype=pl.List(pl.Float64)))


def build_review_sets(inputs: Inputs, settings: EvalSetsSettings) -> ReviewSets:
    venue, anchor_venue = settings.review_venue, settings.anchor_venue
    population, excluded, notes = scored(inputs, venue, settings, POPULATION)
    anchor_pool, anchor_excluded, anchor_notes = scored(inputs, anchor_venue, settings,
                                                        ANCHORS)
    population = attach_citations(population, inputs.citation_counts)
    stratified, short = stratified_sample(sample_frame(population, settings), settings,
                                          venue)
    anchors, anchor_short = anchor_sample(eligible(anchor_pool, settings), settings,
                                          anchor_venue)
    anchors = attach_citations(anchors, inputs.citation_counts)
    sample_cols = {"seed": pl.lit(settings.seed, pl.Int64)}
    stratified = attach_representations(stratified, inputs.documents,
                                        settings.max_text_chars).with_columns(**sample_cols)
    anchors = attach_representations(anchors, inputs.documents,
                                     settings.max_text_chars).with_columns(**sample_cols)
    return ReviewSets(population, stratified, anchors,
                      pl.concat([excluded, anchor_excluded]), short + anchor_short,
                      {POPULATION: notes, STRATIFIED: notes, ANCHORS: anchor_notes})
