"""Pair-wise set: pairs of submissions of one venue with different labels and a close topic.

For each pair type (easy: reject-oral; hard: poster-oral, reject-poster, poster-spotlight),
the submissions of the rarer label of each idea venue are visited in one seeded order over
all the venues, and each takes the most similar submission of the other label of its own
venue not yet paired in that type, until the quota is reached. Quotas are totals over the
venues, as InnoEval reports its 372 pairs (172 easy, 200 hard). A hard pair must be at least
`hard_pair_min_similarity` similar (a "hard" pair of unrelated topics tests nothing about
close ideas); `pair_min_similarity`, when set, is a floor for every pair. The two are then put in
a seeded random order and the better one (the higher label) is recorded. A type with fewer
possible pairs than its quota is reported as a shortfall, never padded."""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl

from vault_pipeline.evalsets.labels import coin, order_key
from vault_pipeline.evalsets.pointwise import pooled_venues
from vault_pipeline.evalsets.review_paradigm import Shortfall
from vault_pipeline.evalsets.settings import PAIR_TYPES, EvalSetsSettings
from vault_pipeline.evalsets.similarity import TopicSpace

PAIRWISE = "pairwise"
_CHUNK = 256


def _floor(pair_type: str, settings: EvalSetsSettings) -> float | None:
    """The least similarity a pair of this type may have: the larger of the floor for
    every pair and, for hard pairs, the floor for hard ones."""
    floors = [settings.pair_min_similarity]
    if PAIR_TYPES[pair_type][2] == "hard":
        floors.append(settings.hard_pair_min_similarity)
    given = [f for f in floors if f is not None]
    return max(given) if given else None


def _pairs_of_type(candidates: pl.DataFrame, space: TopicSpace, pair_type: str, quota: int,
                   settings: EvalSetsSettings) -> list[tuple[int, int, float]]:
    """(index of the lower-label submission, of the higher, similarity) for up to quota,
    over every idea venue: the anchors of all venues (in each venue the rarer label's
    submissions) are visited in one seeded order, each paired within its own venue."""
    low, high, _ = PAIR_TYPES[pair_type]
    if quota == 0:
        return []
    floor = _floor(pair_type, settings)
    forum = candidates.get_column("forum_id").to_list()
    indexed = candidates.with_row_index("_i")
    sides: dict[str, tuple[np.ndarray, bool]] = {}  # venue: (partners, anchors are high)
    queue: list[tuple[str, str, int]] = []  # (order key, venue, anchor)
    for venue in settings.idea_venues:
        in_venue = indexed.filter(pl.col("venue_id") == venue)
        lows = in_venue.filter(pl.col("label") == low).get_column("_i").to_numpy()
        highs = in_venue.filter(pl.col("label") == high).get_column("_i").to_numpy()
        if not lows.size or not highs.size:
            continue
        anchors_are_high = highs.size <= lows.size
        anchors, partners = (highs, lows) if anchors_are_high else (lows, highs)
        sides[venue] = (partners, anchors_are_high)
        queue += [(order_key(settings.seed, f"{PAIRWISE}:{pair_type}", forum[int(a)]),
                   venue, int(a)) for a in anchors]
    queue.sort()
    used: set[int] = set()
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, len(queue), _CHUNK):
        chunk = queue[start:start + _CHUNK]
        sims = {venue: space.similarity(np.array([a for _, v, a in chunk if v == venue]),
                                        sides[venue][0])
                for venue in {v for _, v, _ in chunk}}
        row_of: dict[str, int] = {}
        for _, venue, anchor in chunk:
            if len(pairs) >= quota:
                return pairs
            row = row_of[venue] = row_of.get(venue, -1) + 1
            partners, anchors_are_high = sides[venue]
            for column in np.argsort(-sims[venue][row], kind="stable"):
                partner = int(partners[column])
                similarity = float(sims[venue][row, column])
                if floor is not None and similarity < floor:
                    break
                if partner in used:
                    continue
                used.add(partner)
                pair = (partner, anchor) if anchors_are_high else (anchor, partner)
                pairs.append((*pair, similarity))
                break
    return pairs


def pairwise_set(candidates: pl.DataFrame, space: TopicSpace, settings: EvalSetsSettings
                 ) -> tuple[pl.DataFrame, list[Shortfall]]:
    columns = candidates.select("forum_id", "label", "title", "mean_rating").rows()
    rows, short = [], []
    venue_of = candidates.get_column("venue_id").to_list()
    for pair_type, quota in settings.pair_quota.items():
        found = _pairs_of_type(candidates, space, pair_type, quota, settings)
        if len(found) < quota:
            short.append(Shortfall(PAIRWISE, pooled_venues(settings), pair_type, quota,
                                   len(found)))
        for low, high, similarity in found:
            venue = venue_of[low]
            pair_id = hashlib.sha256(
                f"{columns[low][0]}|{columns[high][0]}".encode()).hexdigest()[:16]
            high_first = coin(settings.seed, f"{PAIRWISE}:order", pair_id)
            a, b = (high, low) if high_first else (low, high)
            rows.append({
                "pair_id": pair_id, "venue_id": venue, "pair_type": pair_type,
                "difficulty": PAIR_TYPES[pair_type][2],
                "forum_id_a": columns[a][0], "forum_id_b": columns[b][0],
                "label_a": columns[a][1], "label_b": columns[b][1],
                "better": "a" if high_first else "b",
                "better_forum_id": columns[high][0], "similarity": similarity,
                "similarity_method": space.method,
                "title_a": columns[a][2], "title_b": columns[b][2],
                "mean_rating_a": columns[a][3], "mean_rating_b": columns[b][3],
                "seed": settings.seed,
            })
    schema = {"pair_id": pl.String, "venue_id": pl.String, "pair_type": pl.String,
              "difficulty": pl.String, "forum_id_a": pl.String, "forum_id_b": pl.String,
              "label_a": pl.String, "label_b": pl.String, "better": pl.String,
              "better_forum_id": pl.String, "similarity": pl.Float64,
              "similarity_method": pl.String, "title_a": pl.String, "title_b": pl.String,
              "mean_rating_a": pl.Float64, "mean_rating_b": pl.Float64, "seed": pl.Int64}
    return pl.DataFrame(rows, schema=schema), short
