"""The integrity report of a run: what the gate found and removed, by layer; what reached the
quarantine; the method-leak and placeholder rates of the views; what a re-check of the
final tables still finds; and the gate's figures on the untouched half of the labelled set.
Computed from the tables, never asserted: the asset shows it, exports carry it as
`integrity.json`, and every claim a data card makes about masking is read from it."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from vault_pipeline.ideas import quality
from vault_pipeline.integrity import GATE_VERSION, classifier
from vault_pipeline.integrity.estimate import view_leak_estimate
from vault_pipeline.integrity.labelled import gate_figures
from vault_pipeline.integrity.leaks import RULESET_VERSION
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.store.paths import VaultPaths

_LAYER_IN_REASON = ("rules:", "source:", "judge:", "method:")


def _findings_by(frame: pl.DataFrame | None, column: str = "masked_findings"
                 ) -> dict[str, dict[str, int]]:
    """Findings of a table's `masked_findings` column, by layer then kind."""
    out: dict[str, Counter] = {}
    if frame is None or column not in frame.columns:
        return {}
    for findings in frame.get_column(column).to_list():
        for f in findings or []:
            out.setdefault(f.get("layer") or "rules", Counter())[f["kind"]] += 1
    return {layer: dict(kinds.most_common()) for layer, kinds in sorted(out.items())}


def _quarantined(frame: pl.DataFrame | None) -> dict[str, Any]:
    if frame is None:
        return {"papers": 0, "leaky": 0, "by_layer": {}}
    layers: Counter = Counter()
    leaky = 0
    for reasons in frame.get_column("reasons").to_list():
        text = " ".join(reasons or [])
        hit = [layer.rstrip(":") for layer in _LAYER_IN_REASON if f"({layer}" in text]
        leaky += bool(hit)
        layers.update(hit)
    return {"papers": frame.height, "leaky": leaky, "by_layer": dict(layers)}


def build_report(paths: VaultPaths, run_id: str | None = None) -> dict[str, Any]:
    """The integrity report of the vault's current tables."""
    store = paths.store
    records = store.read_optional("masked_records")
    views = store.read_optional("views")
    ideas = store.read_optional("eval_ideas")
    judge = classifier.load()
    complete = quality.views_complete(store)
    method = quality.problem_views_method_free(store)
    residual_records = quality.record_leak_findings(store)
    residual_views = quality.view_leak_findings(store)
    heldout = gate_figures("heldout")
    combined = next((s for s in heldout if s["layer"] == "combined"), None)
    records_masked = _findings_by(records)
    views_masked = _findings_by(views)
    return {
        "run_id": run_id,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "gate": {"version": GATE_VERSION, "rules": RULESET_VERSION,
                 "offline_judge": judge.version if judge else None,
                 "offline_judge_threshold": judge.threshold if judge else None},
        "records": {
            "rows": records.height if records is not None else 0,
            "backends": (dict(Counter(records.get_column("backend").to_list()))
                         if records is not None else {}),
            "with_leaky_answer": (int(records.get_column("leaky_answer").sum())
                                  if records is not None else 0),
            "masked_by_layer": records_masked,
        },
        "quarantined": _quarantined(store.read_optional("llm_failures")),
        "views": {
            "rows": views.height if views is not None else 0,
            "masked_by_layer": views_masked,
            "placeholder_rate": complete.metadata.get("placeholder_rate", 0.0),
            "empty_or_missing": complete.metadata.get("missing", 0),
            "complete_records": complete.metadata.get("complete_records", 0),
            "missing_by_view": complete.metadata.get("missing_by_view", {}),
        },
        "method_leaks": {
            "removed_at_derivation": method.metadata.get("removed_at_derivation", 0),
            "remaining": method.metadata.get("method_leaks", 0),
            "problem_views": method.metadata.get("problem_views", 0),
            "remaining_rate": method.metadata.get("rate", 0.0),
        },
        "residual": {"record_leaks": residual_records.metadata.get("leaks", 0),
                     "view_leaks": residual_views.metadata.get("leaks", 0)},
        "eval_ideas": {"rows": ideas.height if ideas is not None else 0,
                       "masked_by_layer": _findings_by(ideas)},
        "labelled_heldout": heldout,
        "view_leak_estimate": view_leak_estimate(),
        "clean_kept_estimate": combined["clean_kept"] if combined else None,
        "result_recall_estimate": combined["recall"] if combined else None,
    }


def latest_path(paths: VaultPaths) -> Path:
    """The integrity report of the last run (the pipeline's output; data cards quote it)."""
    return paths.home / "integrity" / "latest.json"


def write_report(paths: VaultPaths, report: dict[str, Any]) -> Path:
    """Keep the report as `integrity/<run>.json` and `integrity/latest.json` (history stays:
    one file a run)."""
    from vault_pipeline.store.atomic import atomic_write_bytes

    folder = paths.home / "integrity"
    folder.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(report, indent=2, sort_keys=True) + "\n").encode()
    stamp = report["built_at"].replace(":", "").replace("-", "")
    atomic_write_bytes(folder / f"{stamp}-{report.get('run_id') or 'local'}.json", data)
    latest = latest_path(paths)
    atomic_write_bytes(latest, data)
    return latest


def read_latest(paths: VaultPaths) -> dict[str, Any] | None:
    latest = latest_path(paths)
    return json.loads(latest.read_text()) if latest.exists() else None


def clean_outcome(report: dict[str, Any] | None) -> Outcome:
    """The integrity check: a report exists and its re-check of the final records and views
    found no flagged sentence and no method leak in a problem view."""
    report = report or {}
    residual = report.get("residual", {})
    remaining = report.get("method_leaks", {}).get("remaining", 0)
    bad = residual.get("record_leaks", 0) + residual.get("view_leaks", 0) + remaining
    return Outcome(bool(report) and bad == 0, f"{bad} flagged sentence(s) remain",
                   {"residual": residual, "method_leaks": remaining})


_REPORTED = ("masked_records", "views", "llm_failures", "eval_ideas")


def current_report(paths: VaultPaths) -> dict[str, Any]:
    """The latest integrity report while no table it counts was written after it (what the
    `integrity_report` asset of the same run left); else one built now, so an export never
    quotes figures older than its tables."""
    latest = latest_path(paths)
    if latest.exists():
        built = latest.stat().st_mtime
        written = [os.stat(paths.store.path(t)).st_mtime for t in _REPORTED
                   if paths.store.local and paths.store.exists(t)]
        if paths.store.local and all(m <= built for m in written):
            return json.loads(latest.read_text())
    return build_report(paths)


def card_lines(report: dict[str, Any] | None) -> str:
    """What a data card may say about masking: each figure read from the report."""
    if not report:
        return ("No integrity report was built for this vault, so this card makes no claim "
                "about results masking.")
    held = {s["layer"]: s for s in report.get("labelled_heldout") or []}
    comb = held.get("combined")
    lines = [
        f"- Gate `{report['gate']['version']}` (rules `{report['gate']['rules']}`, offline "
        f"judge `{report['gate']['offline_judge']}`).",
        f"- Records: {report['records']['rows']}; sentences removed by layer: "
        f"{_layer_counts(report['records']['masked_by_layer'])}; quarantined papers: "
        f"{report['quarantined']['papers']} ({report['quarantined']['leaky']} for leaks).",
        f"- Views: {report['views']['rows']}; placeholder or empty views left out: "
        f"{report['views']['empty_or_missing']} ({report['views']['placeholder_rate']:.1%});"
        f" method sentences removed from problem views: "
        f"{report['method_leaks']['removed_at_derivation']}, remaining: "
        f"{report['method_leaks']['remaining']}.",
        f"- The gate's own re-check of the final tables flags "
        f"{report['residual']['record_leaks']} sentence(s) in records and "
        f"{report['residual']['view_leaks']} in views; that is what the checker sees, not a "
        "leak rate (it cannot count what it misses).",
        estimate_lines(report.get("view_leak_estimate")),
    ]
    if comb:
        lines.append(
            f"- On the untouched half of the labelled sentence set ({comb['sentences']} "
            f"sentences, {comb['results']} results), the rules and offline judge together "
            f"catch {comb['recall']:.1%} of result sentences and keep {comb['clean_kept']:.1%}"
            f" of clean ones: the masking is not perfect, and a result the gate misses can "
            "remain in the texts.")
    return "\n".join(lines)


_DOMAINS = {"cs": "computer science / NLP", "bio": "biomedical"}


def _pct(share: dict[str, Any]) -> str:
    low, high = share["ci95"]
    return (f"{share['rate']:.1%} ({share['hits']} of {share['total']}; 95% interval "
            f"{low:.1%}–{high:.1%})")


def estimate_lines(estimate: dict[str, Any] | None) -> str:
    """The leak rate as estimated end to end on held-out labelled abstracts, per domain,
    with its 95 % interval; no rate at all when none was measured for this gate."""
    if not estimate:
        return ("- No end-to-end leak rate was measured for this gate, so this card claims "
                "none.")
    if not estimate.get("current"):
        return ("- The end-to-end leak rate on record was measured with another gate "
                f"(`{estimate.get('measured_with')}`), so this card quotes none.")
    lines = ["- Leak rate, estimated end to end in the views and records of the default "
             "extractive path on the untouched half of role-labelled abstracts (never used "
             "to train or tune):"]
    for domain, shares in estimate["domains"].items():
        parts = [f"result sentences reaching a view or record {_pct(shares['result'])}"]
        if "conclusion" in shares:
            parts.append(f"conclusion sentences {_pct(shares['conclusion'])}")
        per = shares.get("result_per_1000_view_sentences")
        if per:
            parts.append(f"{per['rate']:.1f} result sentences per 1,000 view sentences "
                         f"(95% interval {per['ci95'][0]:.1f}–{per['ci95'][1]:.1f})")
        if "clean_kept" in shares:
            parts.append(f"clean sentences kept in views {shares['clean_kept']['rate']:.2f}")
        lines.append(f"  - {_DOMAINS.get(domain, domain)}, {shares['abstracts']} abstracts: "
                     + "; ".join(parts) + ".")
    return "\n".join(lines)


def _layer_counts(by_layer: dict[str, dict[str, int]]) -> str:
    if not by_layer:
        return "none"
    return ", ".join(f"{layer} {sum(kinds.values())}" for layer, kinds in by_layer.items())


def _rate(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def integrity_rates(report: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """Leak and quarantine rates of an integrity report (`integrity/latest.json`)."""
    if not report:
        return []
    records = report.get("records", {})
    views = report.get("views", {})
    residual = report.get("residual", {})
    quarantined = report.get("quarantined", {}).get("papers", 0)
    rows, view_rows = records.get("rows", 0), views.get("rows", 0)
    return [
        ("papers quarantined", _rate(quarantined, rows + quarantined)),
        ("records with a leaky answer", _rate(records.get("with_leaky_answer", 0), rows)),
        ("records left leaking", _rate(residual.get("record_leaks", 0), rows)),
        ("views left leaking", _rate(residual.get("view_leaks", 0), view_rows)),
        ("method leaks in problem views", float(
            report.get("method_leaks", {}).get("remaining_rate", 0.0))),
        ("placeholder views", float(views.get("placeholder_rate", 0.0))),
        *_estimated(report.get("view_leak_estimate")),
    ]


def _estimated(estimate: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """The estimated end-to-end leak rate per domain, when measured with this gate."""
    if not estimate or not estimate.get("current"):
        return []
    return [(f"result sentences reaching views or records, estimated ({domain})",
             float(shares["result"]["rate"]))
            for domain, shares in estimate.get("domains", {}).items() if "result" in shares]
