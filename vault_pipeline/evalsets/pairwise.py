"""Pair-wise set: pairs of submissions of one venue with different labels and a close topic.

For each pair type (easy: reject-oral; hard: poster-oral, reject-poster, poster-spotlight)
and venue, the submissions of the rarer label are visited in the seeded order, and each takes
the most similar submission of the other label not yet paired in that type (at least
`pair_min_similarity` similar, when set), until the quota is reached. The two are then put in
a seeded random order and the better one (the higher label) is recorded. A type with fewer
possible pairs than its quota is reported as a shortfall, never padded."""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl

from .labels import coin, order_key
from .review_paradigm import Shortfall
from .settings import PAIR_TYPES, EvalSetsSettings
from .similarity import TopicSpace

PAIRWISE = "pairwise"
_CHUNK = 256


def _pairs_of_type(candidates: pl.DataFrame, space: TopicSpace, venue: str, pair_type: str,
                   quota: int, settings: EvalSetsSettings) -> list[tuple[int, int, float]]:
    """(index of the lower-label submission, of the higher, similarity) for up to quota."""
    low, high, _ = PAIR_TYPES[pair_type]
    in_venue = candidates.with_row_index("_i").filter(pl.col("venue_id") == venue)
    lows = in_venue.filter(pl.col("label") == low).get_column("_i").to_numpy()
    highs = in_venue.filter(pl.col("label") == high).get_column("_i").to_numpy()
    if quota == 0 or not lows.size or not highs.size:
        return []
    anchors_are_high = highs.size <= lows.size
    anchors, partners = (highs, lows) if anchors_are_high else (lows, highs)
    forum = candidates.get_column("forum_id").to_list()
    anchors = np.array(sorted(anchors, key=lambda i: order_key(
        settings.seed, f"{PAIRWISE}:{venue}:{pair_type}", forum[i])))
    used: set[int] = set()
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, anchors.size, _CHUNK):
        chunk = anchors[start:start + _CHUNK]
        sims = space.similarity(chunk, partners)
        for row, anchor in enumerate(chunk):
            if len(pairs) >= quota:
                return pairs
            for column in np.argsort(-sims[row], kind="stable"):
                partner = int(partners[column])
                similarity = float(sims[row, column])
                if settings.pair_min_similarity is not None and \
                        similarity < settings.pair_min_similarity:
                    break
                if partner in used:
                    continue
                used.add(partner)
                pair = (partner, int(anchor)) if anchors_are_high else (int(anchor), partner)
                pairs.append((*pair, similarity))
                break
    return pairs


def pairwise_set(candidates: pl.DataFrame, space: TopicSpace, settings: EvalSetsSettings
                 ) -> tuple[pl.DataFrame, list[Shortfall]]:
    columns = candidates.select("forum_id", "label", "title", "mean_rating").rows()
    rows, short = [], []
    for venue in settings.idea_venues:
        for pair_type, quota in settings.pair_quota.items():
            found = _pairs_of_type(candidates, space, venue, pair_type, quota, settings)
            if len(found) < quota:
                short.append(Shortfall(PAIRWISE, venue, pair_type, quota, len(found)))
            for low, high, similarity in found:
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
