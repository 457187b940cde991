"""Group-wise set: for a seeded sample of query submissions per venue, retrieve the
`group_pool` most similar submissions of the same venue, rerank them, keep the `group_top_k`
best, and take from them, for every label other than the query's, the best-reranked
submission with that label that is at least `group_min_similarity` similar to the query (a
member far off the group's topic, such as an Oral at 0.34 among members at 0.99, is picked
out by topic rather than ranked by quality). A group spans at least `group_min_labels`
labels (one member per label, so the ranking by label has no ties); a query that cannot
form one is recorded in `eval_excluded` with the reason and the next query in the seeded
order is tried.

Reranking adds to the cosine similarity a bonus for the same primary area and a weight times
the Jaccard overlap of author keywords: a transparent, deterministic stand-in for a
cross-encoder reranker (InnoEval's bge-reranker-base), with both scores kept."""

from __future__ import annotations

import numpy as np
import polars as pl

from vault_pipeline.evalsets.labels import RANK, order_key
from vault_pipeline.evalsets.review_paradigm import Shortfall
from vault_pipeline.evalsets.settings import LABELS, EvalSetsSettings
from vault_pipeline.evalsets.similarity import TopicSpace

GROUPWISE = "groupwise"
_CHUNK = 64


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _rerank(query: int, pool: np.ndarray, sims: np.ndarray, areas: list, keywords: list,
            settings: EvalSetsSettings) -> tuple[np.ndarray, np.ndarray]:
    """(pool reordered by final score, final scores in that order)."""
    final = np.array([
        sims[p] + (settings.rerank_area_bonus if areas[p] and areas[p] == areas[query]
                   else 0.0)
        + settings.rerank_keyword_weight * _jaccard(keywords[p], keywords[query])
        for p in pool], dtype=np.float64)
    order = np.argsort(-final, kind="stable")
    return pool[order], final[order]


def groupwise_set(candidates: pl.DataFrame, space: TopicSpace, settings: EvalSetsSettings
                  ) -> tuple[pl.DataFrame, list[dict], list[Shortfall]]:
    """(member rows, skipped queries as exclusion rows, venues with fewer groups than
    asked for)."""
    forum = candidates.get_column("forum_id").to_list()
    label = candidates.get_column("label").to_list()
    areas = candidates.get_column("primary_area").to_list()
    keywords = [frozenset(k.lower() for k in (ks or []))
                for ks in candidates.get_column("keywords").to_list()]
    rows, skipped, short = [], [], []
    for venue in settings.idea_venues:
        members_of_venue = (candidates.with_row_index("_i")
                            .filter((pl.col("venue_id") == venue)
                                    & pl.col("label").is_in(LABELS))
                            .get_column("_i").to_numpy())
        queries = sorted(members_of_venue, key=lambda i: order_key(
            settings.seed, f"{GROUPWISE}:{venue}", forum[i]))
        made = 0
        for start in range(0, len(queries), _CHUNK):
            if made >= settings.groups_per_venue:
                break
            chunk = np.array(queries[start:start + _CHUNK])
            all_sims = space.similarity(chunk, members_of_venue)
            for row, query in enumerate(chunk):
                if made >= settings.groups_per_venue:
                    break
                sims = np.full(len(forum), -np.inf, dtype=np.float64)
                sims[members_of_venue] = all_sims[row]
                sims[query] = -np.inf
                others = members_of_venue[members_of_venue != query]
                size = min(settings.group_pool, others.size)
                if size == 0:
                    pool = others
                else:
                    top = np.argpartition(-sims[others], size - 1)[:size]
                    pool = others[top]
                pool = pool[np.argsort(-sims[pool], kind="stable")]
                reranked, finals = _rerank(int(query), pool, sims, areas, keywords, settings)
                chosen = {label[query]: (int(query), 1.0, None, None)}
                floor = settings.group_min_similarity
                for place, (candidate, final) in enumerate(
                        zip(reranked[:settings.group_top_k], finals, strict=False), start=1):
                    if floor is not None and sims[candidate] < floor:
                        continue  # off topic: it would be an easy pick, not a ranking
                    if label[candidate] not in chosen:
                        chosen[label[candidate]] = (int(candidate), float(sims[candidate]),
                                                    float(final), place)
                if len(chosen) < settings.group_min_labels:
                    skipped.append({
                        "set_name": GROUPWISE, "venue_id": venue, "forum_id": forum[query],
                        "note_id": None,
                        "reason": f"only {len(chosen)} label(s) among the query and its top "
                                  f"{min(settings.group_top_k, pool.size)} reranked "
                                  f"candidates{_floor_words(floor)} (at least "
                                  f"{settings.group_min_labels} needed)"})
                    continue
                made += 1
                rows += _group_rows(venue, forum[query], chosen, forum, space.method,
                                    settings)
        if made < settings.groups_per_venue:
            short.append(Shortfall(GROUPWISE, venue, "groups", settings.groups_per_venue, made))
    return pl.DataFrame(rows) if rows else pl.DataFrame(), skipped, short


def _floor_words(floor: float | None) -> str:
    return "" if floor is None else f" at least {floor:g} similar to it"


def _group_rows(venue: str, query: str, chosen: dict, forum: list[str], method: str,
                settings: EvalSetsSettings) -> list[dict]:
    group_id = f"{venue}:{query}"
    ranking = sorted(chosen, key=lambda lab: RANK[lab])
    ranked_forums = [forum[chosen[lab][0]] for lab in ranking]
    shuffled = sorted(ranked_forums, key=lambda f: order_key(settings.seed,
                                                             f"{GROUPWISE}:position:{group_id}",
                                                             f))
    out = []
    for lab in ranking:
        index, similarity, final, place = chosen[lab]
        out.append({
            "group_id": group_id, "venue_id": venue, "query_forum_id": query,
            "forum_id": forum[index], "is_query": forum[index] == query,
            "position": shuffled.index(forum[index]) + 1, "label": lab,
            "rank": ranking.index(lab) + 1, "is_best": lab == ranking[0],
            "best_forum_id": ranked_forums[0],
            "ranking": ranked_forums, "similarity": similarity, "final_score": final,
            "retrieval_rank": place, "similarity_method": method, "seed": settings.seed,
        })
    return out
