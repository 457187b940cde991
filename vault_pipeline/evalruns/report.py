"""`vault eval report RUN`: the run's tables as the studies print them (review paradigms per
input: correlations with intervals, error, inflation, agreement; the inputs and paradigms
compared; InnoEval: accuracies and ranking agreement), beside the human noise ceiling of
the sample's card, with the study's figures (predicted against human, calibration, error
per bin) and calls and tokens. Written as one self-contained HTML page, or as Markdown with
the figures as PNG files beside it."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import vault_pipeline.markdown_text as md
from vault_pipeline.errors import VaultError
from vault_pipeline.evalruns.render import Block, Figure, Heading, Table, Text, markdown, to_html
from vault_pipeline.evalruns.settings import INPUTS
from vault_pipeline.schemas import (
    EVAL_CARDS,
    EVAL_RUN_CALL_FAILURES,
    EVAL_RUN_CALLS,
    EVAL_RUN_METRICS,
    EVAL_RUN_PREDICTIONS,
    EVAL_SUMMARIES,
    EVAL_SUMMARY_FAILURES,
)
from vault_pipeline.store.paths import VaultPaths

FORMATS = ("html", "md")
REVIEW_ROWS = ("direct", "anchor", "group", "elo", "bradley_terry", "swiss")
REVIEW_COLUMNS = ("pearson", "spearman", "kendall", "mse", "inflation", "auc",
                  "partial_pearson_length", "icc_2_1_retest")
# the review-paradigm study's decision table: at the accept threshold beside the always-reject
# baseline, then at each paradigm's base-rate-matched cut
DECISION_COLUMNS = ("accuracy", "always_reject_accuracy", "accuracy_over_always_reject",
                    "balanced_accuracy", "kappa_fixed", "f1_macro", "f1_weighted",
                    "reject_recall", "matched_cut", "kappa_matched", "f1_macro_matched")
INPUT_COLUMNS = ("pearson", "spearman", "kendall", "mse", "inflation", "kappa_matched")
IDEA_ROWS = ("idea_point3", "idea_point2", "idea_pair", "idea_group_best",
             "idea_group_ranking")
IDEA_COLUMNS = ("accuracy", "f1_macro", "pair_accuracy", "pair_accuracy_easy",
                "pair_accuracy_hard", "chose_first_rate", "best_accuracy", "ranking_kendall")
WILCOXON = "wilcoxon_p_abs_error"
INPUT_WORDS = {"abstract": "title and abstract",
               "vanilla": "abstract and a vanilla summary of the full text",
               "objective": "abstract and an objective summary (Background, Method, Results, "
                            "Limitations) of the full text"}


def _cell(row: dict | None) -> str:
    if row is None or row["value"] is None:
        return "–"
    text = f"{row['value']:.3f}"
    if row["ci_low"] is not None:
        text += f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"
    return text


def metrics_table(metrics: pl.DataFrame, tasks: tuple[str, ...], columns: tuple[str, ...]
                  ) -> Table:
    """One row per task present, one column per metric any of them has (``metrics``: the
    rows of one input)."""
    cells = {(r["task"], r["metric"]): r for r in metrics.iter_rows(named=True)}
    rows = [t for t in tasks if any(k[0] == t for k in cells)]
    shown = [c for c in columns if any((t, c) in cells for t in rows)]
    out = []
    for task in rows:
        n = max(r["n"] for k, r in cells.items() if k[0] == task)
        out.append([task, str(n), *(_cell(cells.get((task, c))) for c in shown)])
    return Table(["task", "n", *shown], out)


def _inputs_of(frame: pl.DataFrame) -> list[str]:
    present = set(frame.get_column("input").to_list())
    return [i for i in INPUTS if i in present]


def inputs_table(metrics: pl.DataFrame) -> Table:
    """The study's input comparison: each metric averaged over the paradigms run on it."""
    rated = metrics.filter(pl.col("task").is_in(list(REVIEW_ROWS))
                           & pl.col("metric").is_in(list(INPUT_COLUMNS)))
    rows = []
    for source in _inputs_of(rated):
        part = rated.filter(pl.col("input") == source)
        means = dict(part.group_by("metric").agg(pl.col("value").mean()).rows())
        count = part.get_column("task").n_unique()
        rows.append([source, str(count), *("–" if means.get(c) is None else
                                           f"{means[c]:.3f}" for c in INPUT_COLUMNS)])
    return Table(["input", "paradigms", *INPUT_COLUMNS], rows)


def wilcoxon_table(metrics: pl.DataFrame, by: str) -> Table:
    """p-values of the Wilcoxon tests: paradigm pairs by input (``by="input"``), or input
    pairs by paradigm (``by="task"``)."""
    tests = metrics.filter(pl.col("metric") == WILCOXON)
    if by == "input":
        tests = tests.filter(pl.col("task").str.contains("_vs_"))
        rows_of, cols_of = "task", "input"
    else:
        tests = tests.filter(pl.col("input").str.contains("_vs_"))
        rows_of, cols_of = "input", "task"
    cells = {(r[rows_of], r[cols_of]): r for r in tests.iter_rows(named=True)}
    rows = list(dict.fromkeys(k[0] for k in cells))
    cols = sorted(dict.fromkeys(k[1] for k in cells),
                  key=lambda c: INPUTS.index(c) if c in INPUTS else len(INPUTS))
    return Table([rows_of if by == "input" else "inputs", *cols],
                 [[r, *(_cell(cells.get((r, c))) for c in cols)] for r in rows],
                 empty="no pair to compare")


def rating_items(paths: VaultPaths, run_id: str) -> pl.DataFrame:
    """Each rated paper's mean prediction over repeats beside its human mean, per paradigm
    and input."""
    preds = paths.store.read(EVAL_RUN_PREDICTIONS).filter(
        (pl.col("run_id") == run_id) & pl.col("human").is_not_null()
        & pl.col("predicted").is_not_null() & pl.col("task").is_in(list(REVIEW_ROWS)))
    return preds.group_by("task", "input", "item_id").agg(pl.col("predicted").mean(),
                                                          pl.col("human").first())


def score_bins(items: pl.DataFrame) -> pl.DataFrame:
    """Per paradigm, input and integer human bin: mean prediction, mean human rating, mean
    absolute error and papers."""
    return (items.with_columns(bin=pl.col("human").floor().cast(pl.Int32))
            .group_by("task", "input", "bin")
            .agg(pred=pl.col("predicted").mean(), human=pl.col("human").mean(),
                 mae=(pl.col("predicted") - pl.col("human")).abs().mean(), n=pl.len())
            .sort("task", "input", "bin"))


def bin_table(bins: pl.DataFrame, source: str) -> Table:
    """Calibration by human score bin on one input: each paradigm's mean prediction beside
    the bin's human mean (its error in brackets)."""
    part = bins.filter(pl.col("input") == source)
    tasks = [t for t in REVIEW_ROWS if t in set(part.get_column("task"))]
    rows = []
    for (bin_,), cells in part.sort("bin").group_by("bin", maintain_order=True):
        by_task = {r["task"]: r for r in cells.iter_rows(named=True)}
        first = next(iter(by_task.values()))
        rows.append([str(bin_), str(first["n"]), f"{first['human']:.2f}",
                     *(f"{by_task[t]['pred']:.2f} ({by_task[t]['pred'] - by_task[t]['human']:+.2f})"
                       if t in by_task else "–" for t in tasks)])
    return Table(["human bin", "n", "human mean", *tasks], rows,
                 empty="no rating predictions")


_SPENT = ("attempts", "tokens_in", "tokens_out", "cost", "seconds")


def _spent(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Sums of what the rows spent per ``keys`` (columns an older table lacks: nulls)."""
    missing = [pl.lit(None, pl.Float64).alias(c) for c in _SPENT if c not in frame.columns]
    return frame.with_columns(missing).group_by(keys).agg(
        rows=pl.len(), **{c: pl.col(c).sum() for c in _SPENT})


def _money(value: float | None) -> str:
    return f"{value:.4f}" if value else "–"


def cost_table(paths: VaultPaths, run_id: str) -> tuple[Table, str]:
    """Calls, attempts, tokens, cost and seconds per task and input: every attempt, of an
    answered call or a quarantined one, with the quarantined calls' share beside."""
    calls = paths.store.read(EVAL_RUN_CALLS).filter(pl.col("run_id") == run_id)
    failed = paths.store.read(EVAL_RUN_CALL_FAILURES).filter(pl.col("run_id") == run_id)
    keys = ["task", "input"]
    answered = {(r["task"], r["input"]): r for r in _spent(calls, keys).iter_rows(named=True)}
    lost = {(r["task"], r["input"]): r for r in _spent(failed, keys).iter_rows(named=True)}
    none = dict.fromkeys(("rows", *_SPENT), 0)
    rows = []
    for cell in sorted(set(answered) | set(lost)):
        ok, bad = answered.get(cell, none), lost.get(cell, none)
        both = {c: (ok[c] or 0) + (bad[c] or 0) for c in _SPENT}
        rows.append([*cell, str(ok["rows"]), str(bad["rows"]), str(both["attempts"]),
                     f"{both['tokens_in']:,}", f"{both['tokens_out']:,}",
                     f"{bad['tokens_in'] + bad['tokens_out']:,}", _money(both["cost"]),
                     f"{both['seconds']:.1f}"])
    model = calls.get_column("model").unique().sort().to_list()
    return (Table(["task", "input", "answered", "quarantined", "attempts", "tokens in",
                   "tokens out", "of them quarantined", "cost", "seconds"], rows),
            f"Evaluator: {', '.join(md.code(m) for m in model) or '–'}. Every attempt counts: "
            "re-asks, plain retries and the quarantined calls' attempts are in the tokens, cost "
            "and seconds (seconds: each call's own time, so concurrent calls add up to more "
            "than the wall time).")


def summaries_table(paths: VaultPaths, forums: list[str]) -> Table:
    """The summaries of the run's papers in the shared cache, by kind and summarizer, with
    what every attempt spent (the quarantined summaries' included)."""
    keys = ["kind", "backend", "model", "prompt_version"]
    made = paths.store.read(EVAL_SUMMARIES).filter(pl.col("forum_id").is_in(forums))
    failed = paths.store.read(EVAL_SUMMARY_FAILURES).filter(pl.col("forum_id").is_in(forums))
    words = dict(((k, b, m, p), w) for k, b, m, p, w in made.group_by(keys).agg(
        pl.col("words").mean()).rows())
    ok = {tuple(r[k] for k in keys): r for r in _spent(made, keys).iter_rows(named=True)}
    bad = {tuple(r[k] for k in keys): r for r in _spent(failed, keys).iter_rows(named=True)}
    none = dict.fromkeys(("rows", *_SPENT), 0)
    rows = []
    for key in sorted(set(ok) | set(bad)):
        a, b = ok.get(key, none), bad.get(key, none)
        kind, backend, model, prompt = key
        rows.append([kind, f"{backend}/{model}", prompt, str(a["rows"]), str(b["rows"]),
                     f"{words.get(key) or 0:.0f}",
                     f"{(a['tokens_in'] or 0) + (b['tokens_in'] or 0):,}",
                     f"{(a['tokens_out'] or 0) + (b['tokens_out'] or 0):,}",
                     _money((a["cost"] or 0) + (b["cost"] or 0))])
    return Table(["kind", "summarizer", "prompt", "summaries", "quarantined", "mean words",
                  "tokens in", "tokens out", "cost"], rows,
                 empty="no summaries (abstract input only)")


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


def figures(items: pl.DataFrame, bins: pl.DataFrame) -> list[Figure]:
    """The three study figures of the rating paradigms (none without rating predictions)."""
    if items.is_empty():
        return []
    from vault_pipeline.evalruns import plots

    tasks = [t for t in REVIEW_ROWS if t in set(items.get_column("task"))]
    inputs = _inputs_of(items)
    return [
        Figure("scatter", "Predicted (mean over repeats) against the human mean rating, per "
               "paradigm (columns) and input (rows); dashed: perfect agreement.",
               plots.scatter(items, tasks, inputs)),
        Figure("calibration", "Calibration: mean prediction per integer human score bin "
               "against the bin's human mean, per input; dashed: calibrated.",
               plots.calibration(bins, tasks, inputs)),
        Figure("bin_error", "Mean absolute error per human score bin, per paradigm and "
               "input.", plots.bin_error(bins, tasks, inputs)),
    ]


def report_blocks(paths: VaultPaths, run_id: str, with_figures: bool = True) -> list[Block]:
    metrics = paths.store.read(EVAL_RUN_METRICS).filter(pl.col("run_id") == run_id)
    if metrics.is_empty():
        raise VaultError(f"no evaluation run {run_id!r}; runs with results: "
                         f"{', '.join(known_runs(paths)) or 'none'}")
    items = rating_items(paths, run_id)
    bins = score_bins(items)
    blocks: list[Block] = [
        Heading(f"Evaluation run {md.code(run_id)}", 1),
        Heading("Review paradigms (stratified sample, against the human mean rating)"),
        Text(noise_ceiling(paths))]
    rated = metrics.filter(pl.col("task").is_in(list(REVIEW_ROWS)))
    for source in _inputs_of(rated):
        part = rated.filter(pl.col("input") == source)
        blocks += [Heading(f"Input: {source} ({INPUT_WORDS[source]})", 3),
                   metrics_table(part, REVIEW_ROWS, REVIEW_COLUMNS),
                   Text("Accept / reject decisions:"),
                   metrics_table(part, REVIEW_ROWS, DECISION_COLUMNS)]
    blocks += [
        Text("Elo, Bradley-Terry and Swiss strengths are min-max mapped onto 1-10, as in the "
             "study: their MSE and inflation reflect that mapping as much as the judgments. "
             "Decisions at the fixed threshold accept a paper whose prediction reaches the "
             "accept threshold, as for the human mean; `always_reject_accuracy` is the "
             "trivial baseline's (the human reject share) on the same papers and "
             "`accuracy_over_always_reject` the paired difference. The matched cut is the "
             "study's base-rate-matched threshold: of the cuts at each distinct prediction, "
             "the one whose predicted reject share is closest to the human one (tied "
             "predictions stay on one side, so no tie order decides it). Brackets: seeded "
             "bootstrap 95% intervals."),
        Heading("Inputs compared", 3),
        Text("Each metric averaged over the paradigms run on the input (the study's input "
             "comparison)."),
        inputs_table(metrics),
        Text("Inputs of the same paradigm compared (Wilcoxon signed-rank test of absolute "
             "errors, p-value):"),
        wilcoxon_table(metrics, "task"),
        Heading("Paradigms compared", 3),
        Text("Wilcoxon signed-rank test of absolute errors on the same papers and input, "
             "p-value:"),
        wilcoxon_table(metrics, "input"),
        Heading("Calibration and error by human score bin", 3),
        Text("Mean prediction per bin (its error against the bin's human mean in "
             "brackets).")]
    for source in _inputs_of(bins) or ["abstract"]:
        blocks += [Text(f"Input `{source}`:"), bin_table(bins, source)]
    if with_figures:
        blocks += figures(items, bins)
    costs, evaluator = cost_table(paths, run_id)
    forums = items.get_column("item_id").unique().to_list()
    blocks += [
        Heading("Idea evaluation (InnoEval sets, six-part idea input)"),
        metrics_table(metrics, IDEA_ROWS, IDEA_COLUMNS),
        Heading("Calls and tokens"), costs, Text(evaluator),
        Text("Summaries the summary inputs read (cached by input hash, shared by the runs "
             "with the same summarizer):"),
        summaries_table(paths, forums)]
    return blocks


def known_runs(paths: VaultPaths) -> list[str]:
    metrics = paths.store.read(EVAL_RUN_METRICS)
    return sorted(set(metrics.get_column("run_id").to_list()))


def headline(paths: VaultPaths, run_id: str) -> list[dict[str, object]]:
    """One row per task and input with the metrics people look at first (the Dagster
    table of the run): correlations, error, inflation, matched κ, accuracies."""
    metrics = paths.store.read(EVAL_RUN_METRICS).filter(
        (pl.col("run_id") == run_id) & pl.col("metric").is_in(list(HEADLINE))
        & ~pl.col("input").str.contains("_vs_") & ~pl.col("task").str.contains("_vs_"))
    cells = {(t, i, m): (v, n) for t, i, m, v, n in
             metrics.select("task", "input", "metric", "value", "n").rows()}
    order = {t: n for n, t in enumerate((*REVIEW_ROWS, *IDEA_ROWS))}
    inputs = {i: n for n, i in enumerate((*INPUTS, "idea"))}
    keys = sorted({(t, i) for t, i, _ in cells},
                  key=lambda k: (order.get(k[0], 99), inputs.get(k[1], 99), k))
    rows = []
    for task, source in keys:
        found = {m: cells[(task, source, m)] for m in HEADLINE if (task, source, m) in cells}
        rows.append({"task": task, "input": source,
                     "n": max(n for _, n in found.values())}
                    | {m: found[m][0] if m in found else None for m in HEADLINE})
    return rows


HEADLINE = ("spearman", "pearson", "mse", "inflation", "kappa_matched", "accuracy",
            "always_reject_accuracy", "balanced_accuracy", "pair_accuracy", "best_accuracy",
            "ranking_kendall")


def write_blocks(blocks: list[Block], target: Path, fmt: str, title: str) -> Path:
    """``blocks`` as HTML with the figures inside, or as Markdown with the figures as
    `<stem>.<figure>.png` beside it."""
    if fmt not in FORMATS:
        raise VaultError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    target.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "html":
        target.write_text(to_html(blocks, title), encoding="utf-8")
        return target

    def image(figure: Figure) -> str:
        path = target.with_name(f"{target.stem}.{figure.name}.png")
        path.write_bytes(figure.png)
        return path.name

    target.write_text(markdown(blocks, image), encoding="utf-8")
    return target


def default_target(paths: VaultPaths, run_id: str, fmt: str = "html") -> Path:
    return paths.home / "evalruns" / f"{run_id}.{fmt}"


def write_report(paths: VaultPaths, run_id: str, out: Path | None = None,
                 fmt: str | None = None) -> Path:
    """Write the report (see :func:`write_blocks`); ``fmt`` defaults to the suffix of
    ``out`` (`.md`: Markdown), else HTML."""
    fmt = fmt or ("md" if out is not None and out.suffix.lower() == ".md" else "html")
    if fmt not in FORMATS:
        raise VaultError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    return write_blocks(report_blocks(paths, run_id), out or default_target(paths, run_id, fmt),
                        fmt, f"Evaluation run {run_id}")
