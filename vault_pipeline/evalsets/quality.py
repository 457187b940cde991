"""What a user checks on the evaluation sets, as plain functions over the table store:
the asset checks call them, and so can anyone in a notebook."""

from __future__ import annotations

import polars as pl

from vault_pipeline.evalsets.extraction import IDEA_POLICY
from vault_pipeline.evalsets.labels import RANK
from vault_pipeline.evalsets.settings import PAIR_TYPES
from vault_pipeline.ideas.quality import leak_outcome
from vault_pipeline.integrity.gate import Gate
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.records.idea import IDEA_FIELDS
from vault_pipeline.schemas import EVAL_GROUPWISE, EVAL_IDEAS, EVAL_PAIRWISE, EVAL_REVIEW_STRATIFIED
from vault_pipeline.store.tables import TableStore


def ideas_without_results(store: TableStore) -> Outcome:
    """No part of any idea states a measured result (the gate run again: rules, offline
    judge, instructions)."""
    frame = store.read_optional(EVAL_IDEAS)
    if frame is None:
        return Outcome(True, "no eval_ideas table yet", {"leaks": 0})
    gate = Gate(IDEA_POLICY)
    hits = [(row["forum_id"], name, f) for row in frame.iter_rows(named=True)
            for name, f in gate.findings({k: row[k] for k in IDEA_FIELDS})]
    return leak_outcome(hits, frame.height, "ideas")


def pairs_valid(store: TableStore) -> Outcome:
    """Each pair: its type's two labels, the better one the higher label, both sides
    different submissions, nobody twice within a type and venue, one similarity method."""
    frame = store.read_optional(EVAL_PAIRWISE)
    if frame is None:
        return Outcome(True, "no eval_pairwise table yet", {})
    bad = []
    for row in frame.iter_rows(named=True):
        low, high, difficulty = PAIR_TYPES[row["pair_type"]]
        better = row["label_a"] if row["better"] == "a" else row["label_b"]
        ok = ({row["label_a"], row["label_b"]} == {low, high} and better == high
              and row["difficulty"] == difficulty and row["forum_id_a"] != row["forum_id_b"])
        if not ok:
            bad.append(row["pair_id"])
    repeats = 0
    for _, part in frame.group_by("venue_id", "pair_type"):
        sides = pl.concat([part.get_column("forum_id_a"), part.get_column("forum_id_b")])
        repeats += sides.len() - sides.n_unique()
    methods = frame.get_column("similarity_method").unique().to_list()
    passed = not bad and not repeats and len(methods) <= 1
    return Outcome(passed, f"{frame.height} pairs; {len(bad)} inconsistent, {repeats} "
                           f"submission(s) repeated within a type",
                   {"inconsistent": bad[:10], "repeated": repeats, "methods": methods})


def groups_valid(store: TableStore, min_labels: int = 2) -> Outcome:
    """Each group: one venue, one member per label, at least ``min_labels`` labels, ranked by
    label, the best ranked first, positions a permutation, one query."""
    frame = store.read_optional(EVAL_GROUPWISE)
    if frame is None or frame.is_empty():
        return Outcome(True, "no groups", {"groups": 0})
    bad = []
    for (group_id,), part in frame.group_by("group_id"):
        ranked = part.sort("rank")
        labels = ranked.get_column("label").to_list()
        ok = (part.get_column("venue_id").n_unique() == 1 and len(set(labels)) == len(labels)
              and len(labels) >= min_labels
              and [RANK[x] for x in labels] == sorted(RANK[x] for x in labels)
              and ranked.get_column("forum_id").to_list()
              == ranked.get_column("ranking")[0].to_list()
              and ranked.get_column("is_best").to_list()[0]
              and sorted(part.get_column("position")) == list(range(1, part.height + 1))
              and part.get_column("is_query").sum() == 1)
        if not ok:
            bad.append(group_id)
    groups = frame.get_column("group_id").n_unique()
    return Outcome(not bad, f"{groups} groups; {len(bad)} inconsistent",
                   {"groups": groups, "inconsistent": bad[:10]})


def strata_within_quota(store: TableStore, per_bin: int, dense_bins: tuple[int, ...]
                        ) -> Outcome:
    """No dense score bin holds more than its quota (the sample never pads or repeats)."""
    frame = store.read_optional(EVAL_REVIEW_STRATIFIED)
    if frame is None:
        return Outcome(True, "no eval_review_stratified table yet", {})
    by_bin = dict(frame.group_by("score_bin").len().iter_rows())
    over = {b: n for b, n in by_bin.items() if b in dense_bins and n > per_bin}
    repeated = frame.height - frame.get_column("forum_id").n_unique()
    return Outcome(not over and not repeated,
                   f"{frame.height} papers in {len(by_bin)} bins; {len(over)} over quota, "
                   f"{repeated} repeated",
                   {"by_bin": {str(k): v for k, v in sorted(by_bin.items())},
                    "over_quota": {str(k): v for k, v in over.items()}})
