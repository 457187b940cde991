"""The datasets stages: every target's reference artifact per role (`role_artifacts`), the
training examples per role and split (`training_examples`), and their export as files
(`dataset_export`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vault_pipeline.datasets.export import ExportReport, export_datasets
from vault_pipeline.datasets.reconstruct import ArtifactsReport, build_role_artifacts
from vault_pipeline.datasets.training import TrainingReport, build_training
from vault_pipeline.llm.settings import STAGE as IDEAS
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.pipeline.stage import Artifact, Counts, NoSettings, RunContext, Stage
from vault_pipeline.schemas import ROLE_ARTIFACT_FAILURES, ROLE_ARTIFACTS, TRAINING_EXAMPLES
from vault_pipeline.store.paths import VaultPaths


def run_role_artifacts(paths: VaultPaths, settings: IdeasSettings, _context: RunContext
                       ) -> ArtifactsReport:
    return build_role_artifacts(paths, settings)


ROLE_ARTIFACTS_STAGE: Stage[IdeasSettings, ArtifactsReport] = Stage(
    "role_artifacts", "datasets",
    inputs=("splits", "masked_records", "views", "papers", "documents", "citations"),
    outputs=(ROLE_ARTIFACTS, ROLE_ARTIFACT_FAILURES), run=run_role_artifacts,
    settings=IdeasSettings, section=IDEAS,  # the reference artifacts come from the ideas backend
    describe=lambda r: (f"role artifacts: {r.artifacts} of {r.targets} targets, "
                        f"{r.quarantined} quarantined; {r.asked} asked, {r.reused} reused"),
    warnings=lambda r: ([f"{len(r.without_record)} targets have no masked record"]
                        if r.without_record else []),
    figures=lambda r: {
        ROLE_ARTIFACTS.name: {"dagster/row_count": r.artifacts, "targets": r.targets,
                              "reused": r.reused, "asked": r.asked,
                              "by_role": Counts("role", r.by_role)},
        ROLE_ARTIFACT_FAILURES.name: {"dagster/row_count": r.quarantined}})


def run_training(paths: VaultPaths, _settings: NoSettings, context: RunContext
                 ) -> TrainingReport:
    """The training examples, decontaminated under the duplicates stage's n-gram settings."""
    return build_training(paths, context.uses("duplicates"))


TRAINING_STAGE: Stage[NoSettings, TrainingReport] = Stage(
    "training_examples", "datasets",
    inputs=("splits", "views", "papers", "masked_records", "citations", "role_artifacts",
            "eval_cards"),
    outputs=(TRAINING_EXAMPLES,), run=run_training, uses=("duplicates",),
    describe=lambda r: f"training examples: {r.rows} rows for {r.targets} targets",
    warnings=lambda r: ([f"{len(r.targets_without_views)} targets lack views since the "
                         "splits were made: rematerialize splits"]
                        if r.targets_without_views else []),
    figures=lambda r: {TRAINING_EXAMPLES.name: {
        "dagster/row_count": r.rows, "targets": r.targets,
        "by_role_and_split": Counts("role/split", r.by_role_split),
        "targets_without_views": r.targets_without_views[:20],
        "decontamination": r.decontamination}})


LATEST = "latest"


def latest_export(paths: VaultPaths) -> Path:
    """Where the pipeline keeps its export (`vault export OUT_DIR` writes anywhere)."""
    return paths.home / "exports" / LATEST


def run_export(paths: VaultPaths, _settings: NoSettings, context: RunContext
               ) -> ExportReport:
    """Files, not tables: the export is written whole into `exports/latest` (replacing the
    last one), each file listed with its sha256 in the manifest. On an object-store root it
    is then published to `<root>/exports/latest` (the local copy stays in the cache, where
    the asset check verifies it)."""
    report = export_datasets(paths, latest_export(paths), overwrite=True,
                             overlap=context.uses("duplicates"))
    if paths.remote:
        from vault_pipeline.datasets.publish import publish_export

        url = publish_export(latest_export(paths), f"{paths.remote}/exports/{LATEST}",
                             overwrite=True)
        report = replace(report, out_dir=url)
    return report


EXPORT_STAGE: Stage[NoSettings, ExportReport] = Stage(
    "dataset_export", "datasets",
    inputs=("training_examples", "splits", "index", "eval_cards", "integrity_report"),
    outputs=(Artifact(
        "dataset_export",
        "The datasets as files: <role>/<split>.parquet and .jsonl, splits.parquet, "
        "integrity.json, manifest.json (sha256 of every file) and a data card, under "
        "$VAULT_HOME/exports/latest.", latest_export),),
    run=run_export, uses=("duplicates",),
    describe=lambda r: f"exported {r.files} files to {r.out_dir}",
    figures=lambda r: {"dataset_export": {
        "dagster/row_count": sum(v for k, v in r.rows.items() if k != "splits"),
        "files": r.files, "cutoff": r.cutoff, "seed": r.seed,
        "rows": Counts("table", r.rows)}})
