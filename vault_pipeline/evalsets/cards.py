"""Data-card metrics of every evaluation set, computed from the set itself, and the card.

Every card states what a user needs before evaluating on the set: label and score
distributions, inter-reviewer reliability of the ratings behind it (ICC(1,1), ICC(1,k)) and
the ceiling that reliability puts on a Spearman correlation with the mean rating, pair and
group counts by type, the similarity used, and every shortfall (a stratum with fewer items
than its quota: the set holds what there was, never padding)."""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

import vault_pipeline.markdown_text as md
from vault_pipeline.evalsets.reliability import icc_oneway
from vault_pipeline.evalsets.review_paradigm import Shortfall

SET_DOCS = {
    "pointwise": "Point-wise idea set: one idea per row with its decision label (Reject / "
                 "Poster / Spotlight / Oral; three classes Reject / Poster / Highlight; two "
                 "classes Reject / Accept).",
    "pairwise": "Pair-wise idea set: two ideas of one venue and a close topic with different "
                "labels, in random order; which one is better is the label.",
    "groupwise": "Group-wise idea set: same-topic ideas of one venue spanning labels; the best "
                 "idea and the full ranking are the labels.",
    "review_population": "Scored population of the venue: every submission with a valid "
                         "reviewer rating; the mean rating is the ground truth.",
    "review_stratified": "Stratified sample of the scored population, a fixed number per "
                         "integer score bin, with title + abstract and full-text inputs.",
    "review_anchors": "Zero-variance anchor papers of an earlier venue, for calibration.",
}


def counts(frame: pl.DataFrame, *columns: str) -> dict[str, Any]:
    """Nested counts by the given columns (``{venue: {label: n}}``), sorted keys."""
    if frame.is_empty():
        return {}
    if len(columns) == 1:
        return {str(k): v for k, v in sorted(frame.group_by(columns[0]).len().iter_rows(),
                                             key=lambda kv: str(kv[0]))}
    out: dict[str, Any] = {}
    for (key,), part in sorted(frame.group_by(columns[0]), key=lambda kv: str(kv[0][0])):
        out[str(key)] = counts(part, *columns[1:])
    return out


def score_summary(values: pl.Series) -> dict[str, Any]:
    values = values.drop_nulls()
    if values.is_empty():
        return {"n": 0, "mean": None, "sd": None, "min": None, "max": None}
    sd = values.std(ddof=1)
    return {"n": values.len(), "mean": round(float(values.mean()), 4),
            "sd": round(float(sd), 4) if sd is not None and not math.isnan(sd) else None,
            "min": float(values.min()), "max": float(values.max())}


def reliability(forums: list[str], reviews: pl.DataFrame) -> dict[str, Any]:
    """ICC(1,1), ICC(1,k) and the Spearman ceiling of the valid ratings of ``forums``."""
    ratings = reviews.filter(pl.col("forum_id").is_in(forums)).select("forum_id", "rating")
    return icc_oneway(ratings).as_dict()


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _nested_table(title: str, data: dict[str, Any]) -> str:
    if not data:
        return f"{title}: none.\n"
    rows: list[tuple[str, Any]] = []

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, sub in node.items():
                walk(f"{prefix} / {key}" if prefix else str(key), sub)
        else:
            rows.append((prefix, node))

    walk("", data)
    return f"{title}:\n\n" + md.table(("group", "count"), rows, ("left", "right")) + "\n"


def render_card(set_name: str, table: str, metrics: dict[str, Any],
                settings: dict[str, Any]) -> str:
    """The Markdown card of one set."""
    rel = metrics.get("reliability") or {}
    scores = metrics.get("scores") or {}
    parts = [f"# Evaluation set `{set_name}` (table `{table}`)", "", SET_DOCS[set_name], "",
             f"Rows: **{metrics['rows']}**. Seed: {settings['seed']}. Built from the vault's "
             "`submissions`, `reviews`, `documents` and `citation_counts` tables.", ""]
    if metrics["rows"] == 0:
        parts += ["**This set is empty.** See the notes below for why.", ""]
    parts += ["## Noise ceiling", "",
              "| figure | value |", "|---|---|",
              f"| papers with valid ratings | {_fmt(rel.get('papers'))} |",
              f"| ratings | {_fmt(rel.get('ratings'))} |",
              f"| mean reviewers per paper (k) | {_fmt(rel.get('mean_reviewers'))} |",
              f"| ICC(1,1), one reviewer | {_fmt(rel.get('icc_1_1'))} |",
              f"| ICC(1,k), mean of k reviewers | {_fmt(rel.get('icc_1_k'))} |",
              f"| Spearman ceiling sqrt(ICC(1,k)) | {_fmt(rel.get('spearman_ceiling'))} |",
              f"| mean rating: mean / sd | {_fmt(scores.get('mean'))} / "
              f"{_fmt(scores.get('sd'))} |", ""]
    if rel.get("note"):
        parts += [f"Reliability: {rel['note']}.", ""]
    parts += ["One-way random-effects ICC (Shrout & Fleiss 1979) with unequal reviewers per "
              "paper; a correlation with the mean rating should be read against the ceiling, "
              "not against 1.", ""]
    for key, title in (("labels", "Labels"), ("labels_by_venue", "Labels by venue"),
                       ("label_3class", "Three classes"), ("label_binary", "Two classes"),
                       ("pair_types", "Pairs by type"), ("pairs_by_venue", "Pairs by venue"),
                       ("difficulty", "Pairs by difficulty"), ("group_sizes", "Group sizes"),
                       ("best_labels", "Best idea's label"), ("groups_by_venue",
                                                              "Groups by venue"),
                       ("score_bins", "Score bins"), ("full_text_sources",
                                                      "Full-text sources"),
                       ("decisions", "Decisions")):
        if key in metrics:
            parts.append(_nested_table(title, metrics[key]))
    if metrics.get("similarity_method"):
        parts += [f"Topic similarity: {md.code(metrics['similarity_method'])}"
                  + (f" ({metrics['similarity_note']})" if metrics.get("similarity_note")
                     else "") + ".", ""]
    shortfalls = metrics.get("shortfalls") or []
    if shortfalls:
        parts += ["## Shortfalls (fewer items than the quota; nothing padded)", "",
                  md.table(("venue", "stratum", "quota", "available", "short by"),
                           [(s["venue_id"], s["stratum"], s["quota"], s["available"],
                             s["short_by"]) for s in shortfalls],
                           ("left", "left", "right", "right", "right")), ""]
    notes = metrics.get("notes") or []
    if notes:
        parts += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    if metrics.get("idea_provenance"):
        parts += [_nested_table("Ideas by backend / model / prompt",
                                metrics["idea_provenance"])]
    parts += ["## Loading", "", "```bash", f'vault sql "SELECT * FROM {table} LIMIT 5"',
              "```", "", "```python", "import polars as pl",
              f'df = pl.read_parquet("$VAULT_HOME/tables/{table}.parquet")', "```", "",
              "## Settings", "", "```json", json.dumps(settings, indent=1, sort_keys=True),
              "```", ""]
    return "\n".join(parts)


def shortfall_dicts(items: list[Shortfall], set_name: str) -> list[dict]:
    return [s.as_dict() for s in items if s.set_name == set_name]
