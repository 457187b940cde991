"""The `integrity_report` stage: what the results gate found and removed in this run, by
layer; the method-leak and placeholder rates of the views; a re-check of the final tables; the
gate's figures on the untouched half of the labelled set.

Its output is a JSON document, not a table: one file a run under `integrity/` (history
stays) and `integrity/latest.json`, which every data card quotes. The run's id names the
file, so the run takes it from the run's context."""

from __future__ import annotations

from typing import Any

from vault_pipeline.audit.report import build_report, integrity_rates, latest_path, write_report
from vault_pipeline.pipeline.stage import Artifact, Chart, NoSettings, Rows, RunContext, Stage
from vault_pipeline.store.paths import VaultPaths


def run_integrity(paths: VaultPaths, _settings: NoSettings, context: RunContext
                  ) -> dict[str, Any]:
    report = build_report(paths, context.run_id)
    write_report(paths, report)
    return report


def _figures(report: dict[str, Any]) -> dict:
    held = {s["layer"]: s for s in report["labelled_heldout"]}.get("combined", {})
    return {"integrity_report": {
        "records": report["records"]["rows"], "views": report["views"]["rows"],
        "records_masked_by_layer": report["records"]["masked_by_layer"],
        "views_masked_by_layer": report["views"]["masked_by_layer"],
        "quarantined": report["quarantined"],
        "method_leak_rate": float(report["method_leaks"]["remaining_rate"]),
        "method_sentences_removed": report["method_leaks"]["removed_at_derivation"],
        "placeholder_rate": float(report["views"]["placeholder_rate"]),
        "residual_record_leaks": report["residual"]["record_leaks"],
        "residual_view_leaks": report["residual"]["view_leaks"],
        "heldout_recall": float(held.get("recall", 0.0)),
        "heldout_clean_kept": float(held.get("clean_kept", 0.0)),
        "labelled_heldout": report["labelled_heldout"],
        "rates": Rows([{"rate": k, "value": round(v, 6)} for k, v in integrity_rates(report)],
                      {"rate": "string", "value": "float"}),
        "rates_chart": Chart(integrity_rates(report), "Leak and quarantine rates",
                             percent=True)}}


STAGE = Stage(
    "integrity_report", "ideas", inputs=("masked_records", "llm_failures", "views", "eval_ideas"),
    outputs=(Artifact(
        "integrity_report",
        "The integrity report of the run: findings and removals of the results gate by layer "
        "(rules, source, judge, method), quarantined answers, the method-leak and placeholder "
        "rates of the views, a re-check of the final tables and the gate's figures on the "
        "untouched half of the labelled sentence set. Every masking claim of a data card is "
        "read from it.", latest_path),),
    run=run_integrity,
    describe=lambda r: (f"integrity: {r['residual']} residual, method leaks "
                        f"{r['method_leaks']['remaining']}, placeholder rate "
                        f"{r['views']['placeholder_rate']:.1%}"),
    figures=_figures)
