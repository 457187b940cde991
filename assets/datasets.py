"""datasets: training examples per role and split, and their export with a manifest and a
data card (`$VAULT_HOME/exports/latest`; `vault export OUT_DIR` writes the same anywhere)."""


import dagster as dg

from vault_pipeline.datasets.export import export_datasets
from vault_pipeline.datasets.manifest import verify_export
from vault_pipeline.datasets.reconstruct import build_role_artifacts
from vault_pipeline.datasets.training import build_training
from vault_pipeline.ideas.settings import IdeasSettings
from vault_pipeline.schemas import ROLE_ARTIFACT_FAILURES, ROLE_ARTIFACTS, TRAINING_EXAMPLES

from .ideas import IdeasRunConfig
from .metadata import counts_table, table_attrs, table_path, table_spec
from .resources import VaultResource

LATEST = "latest"


@dg.multi_asset(specs=[table_spec(t, "datasets", ["splits", "masked_records", "views",
                                                  "papers", "documents", "citations"])
                       for t in (ROLE_ARTIFACTS, ROLE_ARTIFACT_FAILURES)])
def role_artifacts(context: dg.AssetExecutionContext, config: IdeasRunConfig,
                   vault: VaultResource):
    """The reference artifact of every target and role, through the ideas backend."""
    paths = vault.paths()
    report = build_role_artifacts(paths, IdeasSettings.resolve(config.model_dump(),
                                                               home=paths.home))
    if report.without_record:
        context.log.warning(f"{len(report.without_record)} targets have no masked record")
    yield dg.MaterializeResult(asset_key=ROLE_ARTIFACTS.name, metadata={
        "dagster/row_count": report.artifacts, "targets": report.targets,
        "reused": report.reused, "asked": report.asked,
        "by_role": counts_table(report.by_role, "role"),
        "path": table_path(paths, ROLE_ARTIFACTS)})
    yield dg.MaterializeResult(asset_key=ROLE_ARTIFACT_FAILURES.name, metadata={
        "dagster/row_count": report.quarantined,
        "path": table_path(paths, ROLE_ARTIFACT_FAILURES)})


@dg.asset(group_name="datasets", deps=["splits", "views", "papers", "masked_records",
                                       "citations", "role_artifacts", "eval_cards"],
          kinds={"polars", "parquet"}, **table_attrs(TRAINING_EXAMPLES))
def training_examples(context: dg.AssetExecutionContext,
                      vault: VaultResource) -> dg.MaterializeResult:
    paths = vault.paths()
    report = build_training(paths)
    if report.targets_without_views:
        context.log.warning(f"{len(report.targets_without_views)} targets lack views since "
                            "the splits were made: rematerialize splits")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": report.rows, "targets": report.targets,
        "by_role_and_split": counts_table(report.by_role_split, "role/split"),
        "targets_without_views": dg.MetadataValue.json(report.targets_without_views[:20]),
        "path": table_path(paths, TRAINING_EXAMPLES),
    })


@dg.asset(group_name="datasets", deps=["training_examples", "splits", "index", "eval_cards",
                                       "integrity_report"],
          kinds={"parquet", "json"},
          description="The datasets as files: <role>/<split>.parquet and .jsonl, "
                      "splits.parquet, integrity.json, manifest.json (sha256 of every file) "
                      "and a data card, "
                      "under $VAULT_HOME/exports/latest.")
def dataset_export(context: dg.AssetExecutionContext,
                   vault: VaultResource) -> dg.MaterializeResult:
    paths = vault.paths()
    report = export_datasets(paths, paths.home / "exports" / LATEST, overwrite=True)
    context.log.info(f"exported {report.files} files to {report.out_dir}")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": sum(v for k, v in report.rows.items() if k != "splits"),
        "files": report.files, "cutoff": report.cutoff, "seed": report.seed,
        "rows": counts_table(report.rows, "table"),
        "path": dg.MetadataValue.path(str(report.out_dir)),
    })


@dg.asset_check(asset="dataset_export", blocking=True,
                description="Every file of the export matches the sha256, size and row count "
                            "in its manifest, and none is unlisted.")
def dataset_export_verifies(vault: VaultResource) -> dg.AssetCheckResult:
    problems = verify_export(vault.paths().home / "exports" / LATEST)
    return dg.AssetCheckResult(
        passed=not problems,
        description="manifest verifies" if not problems else f"{len(problems)} problems",
        metadata={"problems": dg.MetadataValue.json(problems[:20])})


datasets_assets = [role_artifacts, training_examples, dataset_export]
datasets_checks = [dataset_export_verifies]
