"""The `splits` stage: the pre-cutoff vault and the post-cutoff targets, one partition for
every role. The classifier of paper kinds follows the ideas stage's backend (`auto`), so the
run resolves the ideas settings of the same data root too."""

from __future__ import annotations

from vault_pipeline.pipeline import figures
from vault_pipeline.pipeline.stage import Chart, Counts, RunContext, Stage, StageResult
from vault_pipeline.schemas import SPLITS
from vault_pipeline.splits.build import SplitsReport, build_splits
from vault_pipeline.splits.classifiers import make_classifier
from vault_pipeline.splits.settings import STAGE as SECTION
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths


def run_splits(paths: VaultPaths, settings: SplitSettings, context: RunContext
               ) -> StageResult[SplitSettings, SplitsReport]:
    classifier = make_classifier(settings.classifier, context.uses("ideas"))
    return StageResult(build_splits(paths, settings, classifier), settings,
                       {"classifier": classifier.name})


STAGE = Stage(
    "splits", "splits", inputs=("papers", "views", "masked_records", "citations", "documents",
                               "duplicate_clusters", "duplicate_pairs", "submissions"),
    outputs=(SPLITS,), run=run_splits, settings=SplitSettings, section=SECTION,
    uses=("ideas",),
    describe=lambda run: f"splits at {run.settings.cutoff}: {run.report.counts}",
    warnings=lambda run: run.report.warnings,
    figures=lambda run: {SPLITS.name: {
        "dagster/row_count": run.report.rows, "cutoff": str(run.settings.cutoff),
        "seed": run.settings.seed, "classifier": run.read["classifier"],
        "post_cutoff_papers": run.report.post_cutoff,
        "citations_known": run.report.citations_known,
        "by_split": Counts("split", run.report.counts),
        "by_split_chart": Chart(figures.split_sizes(run.report.counts), "Papers by split"),
        "excluded_by_reason": Counts("reason", run.report.excluded_by_reason),
        "warnings": run.report.warnings}})
