"""`vault eval report RUN`: the run's tables as the studies print them (review paradigms:
correlations with intervals, error, inflation, agreement; InnoEval: accuracies and ranking
agreement), beside the human noise ceiling of the sample's card, with calls and tokens."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from ..errors import VaultError
from ..paths import VaultPaths
from ..schemas import (
    EVAL_CARDS,
    EVAL_RUN_CALL_FAILURES,
    EVAL_RUN_CALLS,
    EVAL_RUN_METRICS,
    EVAL_RUN_PREDICTIONS,
)

REVIEW_ROWS = ("direct", "anchor", "group", "elo", "bradley_terry", "swiss")
REVIEW_COLUMNS = ("pearson", "spearman", "kendall", "mse", "inflation", "auc", "kappa_fixed",
                  "kappa_matched", "f1_macro", "f1_weighted", "reject_recall",
                  "partial_pearson_length", "icc_2_1_retest")
IDEA_ROWS = ("idea_point3", "idea_point2", "idea_pair", "idea_group_best",
             "idea_group_ranking")
IDEA_COLUMNS = ("accuracy", "f1_macro", "pair_accuracy", "pair_accuracy_easy",
                "pair_accuracy_hard", "chose_first_rate", "best_accuracy", "ranking_kendall")


def _cell(row: dict | None) -> str:
    if row is None or row["value"] is None:
        return "–"
    text = f"{row['value']:.3f}"
    if row["ci_low"] is not None:
        text += f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"
    return text


def metrics_table(metrics: pl.DataFrame, tasks: tuple[str, ...], columns: tuple[str, ...]
                  ) -> str:
    """One row per task present, one column per metric any of them has."""
    cells = {(r["task"], r["metric"]): r for r in metrics.iter_rows(named=True)}
    rows = [t for t in tasks if any(k[0] == t for k in cells)]
    shown = [c for c in columns if any((t, c) in cells for t in rows)]
    if not rows:
        return "_no results_"
    lines = ["| task | n | " + " | ".join(shown) + " |", "|---|---|" + "---|" * len(shown)]
    for task in rows:
        n = max(r["n"] for k, r in cells.items() if k[0] == task)
        lines.append(f"| {task} | {n} | " + " | ".join(_cell(cells.get((task, c)))
                                                        for c in shown) + " |")
    return "\n".join(lines)


def bin_table(paths: VaultPaths, run_id: str) -> str:
    """Calibration by human score bin: the mean prediction of each paradigm (mean over
    repeats) beside the mean human rating of the bin, where a scatter plot would show it."""
    preds = paths.store.read(EVAL_RUN_PREDICTIONS).filter(
        (pl.col("run_id") == run_id) & pl.col("human").is_not_null()
        & pl.col("task").is_in(list(REVIEW_ROWS)))
    if preds.is_empty():
        return "_no rating predictions_"
    per_item = preds.group_by("task", "item_id").agg(pl.col("predicted").mean(),
                                                      pl.col("human").first())
    binned = per_item.with_columns(bin=pl.col("human").floor().cast(pl.Int32))
    cells = binned.group_by("bin", "task").agg(pred=pl.col("predicted").mean(),
                                               human=pl.col("human").mean(), n=pl.len())
    tasks = [t for t in REVIEW_ROWS if t in set(cells.get_column("task"))]
    lines = ["| human bin | n | human mean | " + " | ".join(tasks) + " |",
             "|---|---|---|" + "---|" * len(tasks)]
    for (bin_,), rows in cells.sort("bin").group_by("bin", maintain_order=True):
        by_task = {r["task"]: r for r in rows.iter_rows(named=True)}
        first = next(iter(by_task.values()))
        shown = [f"{by_task[t]['pred']:.2f} ({by_task[t]['pred'] - by_task[t]['human']:+.2f})"
                 if t in by_task else "–" for t in tasks]
        lines.append(f"| {bin_} | {first['n']} | {first['human']:.2f} | "
                     + " | ".join(shown) + " |")
    return "\n".join(lines)


def cost_table(paths: VaultPaths, run_id: str) -> str:
    calls = paths.store.read(EVAL_RUN_CALLS).filter(
        pl.col("run_id") == run_id)
    failed = paths.store.read(EVAL_RUN_CALL_FAILURES).filter(pl.col("run_id") == run_id)
    summary = calls.group_by("task").agg(answered=pl.len(), attempts=pl.col("attempts").sum(),
                                         tokens_in=pl.col("tokens_in").sum(),
                                         tokens_out=pl.col("tokens_out").sum(),
                                         cost=pl.col("cost").sum())
    quarantined = dict(failed.group_by("task").len().rows())
    lines = ["| task | answered | quarantined | attempts | tokens in | tokens out | cost |",
             "|---|---|---|---|---|---|---|"]
    for row in summary.sort("task").iter_rows(named=True):
        cost = f"{row['cost']:.4f}" if row["cost"] else "–"
        lines.append(f"| {row['task']} | {row['answered']} | "
                     f"{quarantined.get(row['task'], 0)} | {row['attempts']} | "
                     f"{row['tokens_in']:,} | {row['tokens_out']:,} | {cost} |")
    model = calls.get_column("model").unique().to_list()
    return "\n".join(lines) + f"\n\nEvaluator: {', '.join(map(str, model)) or '–'}."


def noise_ceiling(paths: VaultPaths) -> str:
    """The human ceiling of the stratified sample's card (ICC and the Spearman ceiling)."""
    cards = paths.store.read(EVAL_CARDS).filter(
        pl.col("set_name") == "review_stratified")
    if cards.is_empty():
        return "No card of the stratified sample: no human ceiling to show."
    reliability = json.loads(cards.get_column("metrics")[0]).get("reliability", {})
    parts = [f"{name} = {reliability[name]:.3f}" for name in
             ("icc_1_1", "icc_1_k", "spearman_ceiling") if reliability.get(name) is not None]
    return "Human noise ceiling (reviewers of the same papers): " + (
        ", ".join(parts) if parts else "not computable") + "."


def render_report(paths: VaultPaths, run_id: str) -> str:
    metrics = paths.store.read(EVAL_RUN_METRICS).filter(
        pl.col("run_id") == run_id)
    if metrics.is_empty():
        raise VaultError(f"no evaluation run {run_id!r}; runs with results: "
                         f"{', '.join(known_runs(paths)) or 'none'}")
    return "\n\n".join([
        f"# Evaluation run `{run_id}`",
        "## Review paradigms (stratified sample, abstract input, against the human mean "
        "rating)", noise_ceiling(paths),
        metrics_table(metrics, REVIEW_ROWS, REVIEW_COLUMNS),
        "Elo, Bradley-Terry and Swiss strengths are min-max mapped onto 1-10, as in the study: "
        "their MSE and inflation reflect that mapping as much as the judgments. κ at the "
        "fixed threshold uses the accept threshold; the matched κ accepts as many papers "
        "as the humans did. Brackets: seeded bootstrap 95% intervals.",
        "Paradigms compared (Wilcoxon signed-rank test of absolute errors, p-value):",
        metrics_table(metrics.filter(pl.col("task").str.contains("_vs_")),
                      tuple(sorted(set(metrics.get_column("task")))),
                      ("wilcoxon_p_abs_error",)),
        "### Calibration and error by human score bin",
        "Mean prediction per bin (its error against the bin's human mean in brackets).",
        bin_table(paths, run_id),
        "## Idea evaluation (InnoEval sets, six-part idea input)",
        metrics_table(metrics, IDEA_ROWS, IDEA_COLUMNS),
        "## Calls and tokens", cost_table(paths, run_id)]) + "\n"


def known_runs(paths: VaultPaths) -> list[str]:
    metrics = paths.store.read(EVAL_RUN_METRICS)
    return sorted(set(metrics.get_column("run_id").to_list()))


def write_report(paths: VaultPaths, run_id: str, out: Path | None = None) -> Path:
    target = out or paths.home / "evalruns" / f"{run_id}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_report(paths, run_id), encoding="utf-8")
    return target
