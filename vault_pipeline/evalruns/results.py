"""Predictions and metrics of a run, from its answered calls and the sets' human truth;
written to `eval_run_predictions` and `eval_run_metrics`, other runs' rows kept."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from vault_pipeline.evalruns import metrics as m
from vault_pipeline.evalruns.scores import bradley_terry, elo
from vault_pipeline.evalruns.settings import INPUTS, EvalRunSettings
from vault_pipeline.evalruns.swiss import SCORE
from vault_pipeline.evalruns.tasks import ABSTRACT
from vault_pipeline.llm.batches import rows_frame
from vault_pipeline.schemas import (
    EVAL_RUN_CALLS,
    EVAL_RUN_METRICS,
    EVAL_RUN_PREDICTIONS,
    TableSchema,
)
from vault_pipeline.store.paths import VaultPaths

RATED = ("direct", "anchor", "group")
STRENGTHS = ("elo", "bradley_terry", "swiss")


def _calls(paths: VaultPaths, run_id: str) -> list[dict[str, Any]]:
    calls = paths.store.read(EVAL_RUN_CALLS)
    rows = calls.filter(pl.col("run_id") == run_id).sort("task", "repeat", "item_id").to_dicts()
    for row in rows:
        row["answer"] = json.loads(row["answer"])
    return rows


def _pred(run_id: str, task: str, source: str, repeat: int, item: str, **values: Any
          ) -> dict[str, Any]:
    return {"run_id": run_id, "task": task, "input": source, "repeat": repeat,
            "item_id": item} | values


def predictions(run_id: str, calls: list[dict[str, Any]], sets: dict[str, pl.DataFrame],
                settings: EvalRunSettings) -> list[dict[str, Any]]:
    """One row per task, repeat and item; Elo and Bradley-Terry from the pair answers."""
    human: dict[str, float] = {}
    if "stratified" in sets:
        human = dict(sets["stratified"].select("forum_id", "mean_rating").rows())
    out: list[dict[str, Any]] = []
    # (input, repeat): outcomes in the schedule's order
    games: dict[tuple[str, int], list[tuple[str, str, float]]] = defaultdict(list)
    swiss: dict[tuple[str, int], list[tuple[str, str, float]]] = defaultdict(list)
    returned: dict[tuple[str, int], list[datetime | None]] = defaultdict(list)
    truth = _idea_truth(sets)
    for call in calls:
        task, rep, items, answer = call["task"], call["repeat"], call["items"], call["answer"]
        source = call["input"]
        if task in ("direct", "anchor"):
            out.append(_pred(run_id, task, source, rep, items[0],
                             predicted=float(answer["rating"]), human=human.get(items[0])))
        elif task == "group":
            given = {r["id"]: r["rating"] for r in answer["ratings"]}
            out += [_pred(run_id, task, source, rep, f, predicted=float(given[i]),
                          human=human.get(f))
                    for i, f in enumerate(items, 1) if i in given]
        elif task == "elo":  # item ids are the schedule's order
            games[(source, rep)].append((items[0], items[1], SCORE[answer["better"]]))
            returned[(source, rep)].append(call.get("answered_at"))
        elif task == "swiss":
            swiss[(source, rep)].append((items[0], items[1], SCORE[answer["better"]]))
        elif task in ("idea_point3", "idea_point2"):
            column = "label_3class" if task == "idea_point3" else "label_binary"
            out.append(_pred(run_id, task, source, rep, items[0],
                             predicted_label=answer["label"],
                             human_label=truth[column].get(items[0])))
        elif task == "idea_pair":
            chosen = items[0] if answer["better"] == "A" else items[1]
            better, difficulty = truth["pairs"][call["item_id"]]
            out.append(_pred(run_id, task, source, rep, call["item_id"],
                             predicted_label=chosen, human_label=better,
                             difficulty=difficulty,
                             predicted=1.0 if answer["better"] == "A" else 0.0))
        elif task == "idea_group":
            ranking = [items[i - 1] for i in answer["ranking"] if 1 <= i <= len(items)]
            best = items[answer["best"] - 1] if 1 <= answer["best"] <= len(items) else None
            true_rank = truth["groups"][call["item_id"]]
            out.append(_pred(run_id, "idea_group_best", source, rep, call["item_id"],
                             predicted_label=best, human_label=true_rank[0]))
            out.append(_pred(run_id, "idea_group_ranking", source, rep, call["item_id"],
                             predicted_label=",".join(dict.fromkeys(ranking)),
                             human_label=",".join(true_rank)))
    for (source, rep), played in sorted(swiss.items()):
        out += [_pred(run_id, "swiss", source, rep, f, predicted=s, human=human.get(f))
                for f, s in sorted(to_scale(win_rates(played)).items())]
    for (source, rep), played in sorted(games.items()):
        if settings.elo_order == "returned":
            played = returned_order(played, returned[(source, rep)])
        for name, scores in (("elo", elo(played, settings.elo_k)),
                             ("bradley_terry", bradley_terry(played))):
            out += [_pred(run_id, name, source, rep, f, predicted=s, human=human.get(f))
                    for f, s in sorted(to_scale(scores).items())]
    return out


def returned_order(played: list[tuple[str, str, float]], returned: list[datetime | None]
                   ) -> list[tuple[str, str, float]]:
    """``played`` (in schedule order) in the order the answers came back; answers with the
    same or no return time (a batch engine's, an older table's) keep the schedule's order."""
    def back(i: int) -> tuple[bool, float]:
        at = returned[i]
        return (at is None, at.timestamp() if at is not None else 0.0)

    return [played[i] for i in sorted(range(len(played)), key=back)]  # stable: ties keep it


def win_rates(outcomes: list[tuple[str, str, float]]) -> dict[str, float]:
    """Points (win 1, tie 0.5) per game played: a Swiss record, fair to a paper that sat a
    round out."""
    points: dict[str, float] = defaultdict(float)
    games: dict[str, int] = defaultdict(int)
    for a, b, score in outcomes:
        points[a] += score
        points[b] += 1.0 - score
        games[a] += 1
        games[b] += 1
    return {f: points[f] / games[f] for f in games}


def to_scale(strengths: dict[str, float], low: float = 1.0, high: float = 10.0
             ) -> dict[str, float]:
    """Strengths min-max mapped onto the rating scale, as the study maps Elo and Swiss, so
    every metric applies (inflation and MSE then reflect the mapping as much as the
    judgments; the report says so)."""
    if not strengths:
        return {}
    least, most = min(strengths.values()), max(strengths.values())
    span = most - least
    return {k: (low + high) / 2 if span == 0 else low + (high - low) * (v - least) / span
            for k, v in strengths.items()}


def _idea_truth(sets: dict[str, pl.DataFrame]) -> dict[str, dict]:
    truth: dict[str, dict] = {"label_3class": {}, "label_binary": {}, "pairs": {},
                              "groups": {}}
    if "pointwise" in sets:
        for column in ("label_3class", "label_binary"):
            truth[column] = dict(sets["pointwise"].select("forum_id", column).rows())
    if "pairwise" in sets:
        truth["pairs"] = {p: (b, d) for p, b, d in sets["pairwise"].select(
            "pair_id", "better_forum_id", "difficulty").rows()}
    if "groupwise" in sets:
        first = sets["groupwise"].unique("group_id", keep="first")
        truth["groups"] = dict(first.select("group_id", "ranking").rows())
    return truth


def _mean_over_repeats(rows: list[dict]) -> tuple[list[str], np.ndarray, np.ndarray,
                                                  np.ndarray | None]:
    """Items with a human truth, their mean prediction over repeats, and the items x repeats
    matrix (None unless every item has every repeat)."""
    by_item: dict[str, dict[int, float]] = defaultdict(dict)
    human: dict[str, float] = {}
    for r in rows:
        if r["human"] is not None and r["predicted"] is not None:
            by_item[r["item_id"]][r["repeat"]] = r["predicted"]
            human[r["item_id"]] = r["human"]
    items = sorted(by_item)
    pred = np.array([np.mean(list(by_item[i].values())) for i in items])
    repeats = sorted({k for v in by_item.values() for k in v})
    full = all(len(by_item[i]) == len(repeats) for i in items)
    matrix = (np.array([[by_item[i][k] for k in repeats] for i in items])
              if full and len(repeats) > 1 else None)
    return items, pred, np.array([human[i] for i in items]), matrix


def run_metrics(run_id: str, preds: list[dict[str, Any]], settings: EvalRunSettings,
                lengths: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    """Per task and input: the studies' metrics on the mean over repeats (and ICC(2,1)
    across them), the correlation with input length partialled out; Wilcoxon between rating
    paradigms on the same input, and between inputs of the same paradigm. ``lengths``:
    characters the evaluator read of each paper, by (input, forum)."""
    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in preds:
        by_cell[(row["task"], row["input"])].append(row)
    out: list[dict[str, Any]] = []
    seed, resamples = settings.seed, settings.bootstrap

    def add(task: str, source: str, rows: list[m.Row]) -> None:
        out.extend({"run_id": run_id, "task": task, "input": source, "metric": name,
                    "value": value, "ci_low": low, "ci_high": high, "n": n}
                   for name, value, low, high, n in rows)

    means: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    for (task, source), rows in sorted(by_cell.items()):
        if task in RATED or task in STRENGTHS:
            items, pred, human, matrix = _mean_over_repeats(rows)
            means[(task, source)] = {i: (p, h) for i, p, h in
                                     zip(items, pred, human, strict=True)}
            found = m.rating_metrics(pred, human, settings.accept_threshold, resamples, seed)
            found.append(("partial_pearson_length",
                          m.partial_pearson(pred, human,
                                            [lengths.get((source, i), 0) for i in items]),
                          None, None, len(items)))
            if matrix is not None:
                found.append(("icc_2_1_retest", m.icc_2_1(matrix), None, None, len(matrix)))
            add(task, source, found)
        elif task in ("idea_point3", "idea_point2", "idea_group_best", "idea_pair"):
            kept = [r for r in rows if r["human_label"] is not None]
            found = m.label_metrics([r["predicted_label"] or "" for r in kept],
                                    [r["human_label"] for r in kept], resamples, seed)
            if task == "idea_group_best":
                found = [("best_accuracy", *found[0][1:])]
            if task == "idea_pair":
                found = [("pair_accuracy", *found[0][1:])]
                for level in ("easy", "hard"):
                    part = [r for r in kept if r["difficulty"] == level]
                    acc = m.label_metrics([r["predicted_label"] for r in part],
                                          [r["human_label"] for r in part], 0, seed)[0]
                    found.append((f"pair_accuracy_{level}", *acc[1:]))
                found.append(("chose_first_rate", float(np.mean([r["predicted"]
                                                                 for r in kept]))
                              if kept else None, None, None, len(kept)))
            add(task, source, found)
        elif task == "idea_group_ranking":
            tau = m.ranking_kendall([r["predicted_label"].split(",") for r in rows],
                                    [r["human_label"].split(",") for r in rows])
            add(task, source, [("ranking_kendall", tau, None, None, len(rows))])
    paradigms = [*RATED, *STRENGTHS]
    inputs = [i for i in INPUTS if any(source == i for _, source in means)]
    for source in inputs:  # paradigms against each other on one input
        for first, second in combinations([t for t in paradigms if (t, source) in means], 2):
            add(f"{first}_vs_{second}", source,
                [_wilcoxon(means[(first, source)], means[(second, source)])])
    for task in paradigms:  # one paradigm's inputs against each other
        for first, second in combinations([i for i in inputs if (task, i) in means], 2):
            add(task, f"{first}_vs_{second}",
                [_wilcoxon(means[(task, first)], means[(task, second)])])
    return out


def _wilcoxon(first: dict[str, tuple[float, float]], second: dict[str, tuple[float, float]]
              ) -> m.Row:
    shared = sorted(set(first) & set(second))
    return m.wilcoxon_errors([first[i][0] for i in shared], [second[i][0] for i in shared],
                             [first[i][1] for i in shared])


def _replace_run(paths: VaultPaths, schema: TableSchema, run_id: str, rows: list[dict]) -> int:
    old = paths.store.read(schema).filter(pl.col("run_id") != run_id)
    frame = pl.concat([old, rows_frame(rows, schema)], how="vertical_relaxed")
    return paths.store.write(schema, frame)


def write_results(paths: VaultPaths, settings: EvalRunSettings, sets: dict[str, pl.DataFrame],
                  report: Any, texts: dict[str, dict[str, str]] | None = None) -> None:
    preds = predictions(settings.run_id, _calls(paths, settings.run_id), sets, settings)
    _replace_run(paths, EVAL_RUN_PREDICTIONS, settings.run_id, preds)
    _replace_run(paths, EVAL_RUN_METRICS, settings.run_id,
                 run_metrics(settings.run_id, preds, settings, _lengths(sets, texts or {})))


def _lengths(sets: dict[str, pl.DataFrame], texts: dict[str, dict[str, str]]
             ) -> dict[tuple[str, str], int]:
    """Characters the evaluator read of each paper per input (the abstract alone, or with
    its summary)."""
    if "stratified" not in sets:
        return {}
    if not texts:
        sample = sets["stratified"]
        abstracts = sample.get_column("abstract").fill_null("").str.len_chars().to_list()
        return {(ABSTRACT, f): n for f, n in zip(sample.get_column("forum_id").to_list(),
                                                 abstracts, strict=True)}
    return {(source, forum): len(text) for source, papers in texts.items()
            for forum, text in papers.items()}
