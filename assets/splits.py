"""splits: the pre-cutoff vault and the post-cutoff targets, one partition for every role."""


import dagster as dg

from vault_pipeline import overview
from vault_pipeline.ideas.settings import IdeasSettings
from vault_pipeline.schemas import SPLITS
from vault_pipeline.splits import quality
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.classifiers import make_classifier
from vault_pipeline.splits.settings import STAGE, SplitSettings

from .config import stage_config
from .metadata import bar_chart, check_result, counts_table, table_attrs, table_path
from .resources import VaultResource

SplitsConfig = stage_config(
    SplitSettings, STAGE, "SplitsConfig",
    "Cutoff (YYYY-MM-DD), seed, held-out shares (below 1: fractions; 1 or more: sizes), "
    "cited-work threshold, and the classifier: `extractive`, `llm` (the ideas stage's LLM "
    "backend) or `auto` (`llm` when the ideas backend is an LLM, else `extractive`).")


@dg.asset(group_name="splits", deps=["papers", "views", "masked_records", "citations",
                                     "documents"],
          kinds={"polars", "parquet"}, **table_attrs(SPLITS))
def splits(context: dg.AssetExecutionContext, config: SplitsConfig,
           vault: VaultResource) -> dg.MaterializeResult:
    paths = vault.paths()
    settings = SplitSettings.resolve(paths.home, config.model_dump())
    classifier = make_classifier(settings.classifier, IdeasSettings.resolve(home=paths.home))
    report = build_splits(paths, settings, classifier)
    for warning in report.warnings:
        context.log.warning(warning)
    context.log.info(f"splits at {settings.cutoff}: {report.counts}")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": report.rows,
        "cutoff": str(settings.cutoff), "seed": settings.seed,
        "classifier": classifier.name,
        "post_cutoff_papers": report.post_cutoff,
        "citations_known": report.citations_known,
        "by_split": counts_table(report.counts, "split"),
        "by_split_chart": bar_chart(overview.split_sizes(report.counts), "Papers by split"),
        "excluded_by_reason": counts_table(report.excluded_by_reason, "reason"),
        "warnings": dg.MetadataValue.json(report.warnings),
        "path": table_path(paths, SPLITS),
    })


@dg.asset_check(asset="splits", blocking=True,
                description="Every paper in exactly one split, on the right side of the "
                            "cutoff, under one cutoff and seed.")
def splits_disjoint_and_complete(vault: VaultResource) -> dg.AssetCheckResult:
    store = vault.paths().store
    outcome = quality.disjoint_and_complete(store.read_optional(SPLITS),
                                            store.read_optional("papers"))
    return check_result(outcome)


splits_assets = [splits]
splits_checks = [splits_disjoint_and_complete]
