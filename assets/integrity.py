"""integrity: the integrity report of every run (what the gate found and removed, by layer;
method-leak and placeholder rates; re-check of the final tables; the gate's figures on the
untouched half of the labelled set), kept under `$VAULT_HOME/integrity/`."""

import dagster as dg

from vault_pipeline.integrity.report import build_report, clean_outcome, read_latest, write_report
from vault_pipeline.overview import integrity_rates

from .metadata import bar_chart, check_result, rates_table
from .resources import VaultResource


@dg.asset(group_name="ideas", deps=["masked_records", "llm_failures", "views", "eval_ideas"],
          kinds={"json"},
          description="The integrity report of the run: findings and removals of the results "
                      "gate by layer (rules, source, judge, method), quarantined answers, the "
                      "method-leak and placeholder rates of the views, a re-check of the final "
                      "tables and the gate's figures on the untouched half of the labelled "
                      "sentence set. Every masking claim of a data card is read from it.")
def integrity_report(context: dg.AssetExecutionContext,
                     vault: VaultResource) -> dg.MaterializeResult:
    paths = vault.paths()
    report = build_report(paths, context.run_id)
    path = write_report(paths, report)
    held = {s["layer"]: s for s in report["labelled_heldout"]}
    context.log.info(f"integrity: {report['residual']} residual, method leaks "
                     f"{report['method_leaks']['remaining']}, placeholder rate "
                     f"{report['views']['placeholder_rate']:.1%}")
    return dg.MaterializeResult(metadata={
        "records": report["records"]["rows"], "views": report["views"]["rows"],
        "records_masked_by_layer": dg.MetadataValue.json(report["records"]["masked_by_layer"]),
        "views_masked_by_layer": dg.MetadataValue.json(report["views"]["masked_by_layer"]),
        "quarantined": dg.MetadataValue.json(report["quarantined"]),
        "method_leak_rate": dg.MetadataValue.float(report["method_leaks"]["remaining_rate"]),
        "method_sentences_removed": report["method_leaks"]["removed_at_derivation"],
        "placeholder_rate": dg.MetadataValue.float(report["views"]["placeholder_rate"]),
        "residual_record_leaks": report["residual"]["record_leaks"],
        "residual_view_leaks": report["residual"]["view_leaks"],
        "heldout_recall": dg.MetadataValue.float(held.get("combined", {}).get("recall", 0.0)),
        "heldout_clean_kept": dg.MetadataValue.float(
            held.get("combined", {}).get("clean_kept", 0.0)),
        "labelled_heldout": dg.MetadataValue.json(report["labelled_heldout"]),
        "rates": rates_table(integrity_rates(report)),
        "rates_chart": bar_chart(integrity_rates(report), "Leak and quarantine rates",
                                 percent=True),
        "path": dg.MetadataValue.path(str(path)),
    })


@dg.asset_check(asset="integrity_report", blocking=True,
                description="A re-check of the final records and views finds no flagged "
                            "sentence and no method leak in a problem view.")
def integrity_clean(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(clean_outcome(read_latest(vault.paths())))


integrity_assets = [integrity_report]
integrity_checks = [integrity_clean]
