"""evaluation_runs: one evaluator model over the evaluation sets (review paradigms and
InnoEval tasks), its calls cached by input hash, its predictions and metrics. Never part of
the default selection (it needs an LLM): run it with `--select group:evaluation_runs` and a
config naming the backend and model."""

import base64
from pathlib import Path

import dagster as dg

from vault_pipeline.evalruns.render import Figure, markdown
from vault_pipeline.evalruns.report import (
    HEADLINE,
    default_target,
    headline,
    report_blocks,
    write_blocks,
)
from vault_pipeline.evalruns.run import run_evaluation
from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.schemas import (
    EVAL_RUN_CALL_FAILURES,
    EVAL_RUN_CALLS,
    EVAL_RUN_METRICS,
    EVAL_RUN_PREDICTIONS,
    EVAL_SUMMARIES,
    EVAL_SUMMARY_FAILURES,
)

from .ideas import IdeasRunConfig
from .metadata import table_path, table_spec
from .resources import VaultResource

GROUP = "evaluation_runs"
DEPS = ["eval_review_stratified", "eval_review_anchors", "eval_pointwise", "eval_pairwise",
        "eval_groupwise"]
SCHEMAS = (EVAL_SUMMARIES, EVAL_SUMMARY_FAILURES, EVAL_RUN_CALLS, EVAL_RUN_CALL_FAILURES,
           EVAL_RUN_PREDICTIONS, EVAL_RUN_METRICS)


class EvalRunConfig(dg.Config):
    """Unset fields keep the defaults of `vault_pipeline.evalruns.settings.EvalRunSettings`;
    the backend is configured as the ideas stage's, under `ideas`; the summaries' backend
    under `summarizer` (unset: the run's own)."""

    run_id: str | None = None
    tasks: list[str] | None = None
    inputs: list[str] | None = None
    model: str | None = None
    temperature: float | None = None
    seed: int | None = None
    repeats: int | None = None
    call_budget: int | None = None
    embedder: str | None = None
    bootstrap: int | None = None
    price_in: float | None = None
    price_out: float | None = None
    ideas: IdeasRunConfig = IdeasRunConfig()
    summarizer: IdeasRunConfig = IdeasRunConfig()

    def settings(self, home: Path | None = None) -> EvalRunSettings:
        values = self.model_dump()
        for backend in ("ideas", "summarizer"):
            values[backend] = {k: v for k, v in values.pop(backend).items() if v is not None}
        return EvalRunSettings.resolve(values, home=home)


def metrics_table(rows: list[dict[str, object]]) -> dg.MetadataValue:
    """The run's headline metrics, one row per task and input, as a table the UI sorts."""
    columns = [dg.TableColumn("task", "string"), dg.TableColumn("input", "string"),
               dg.TableColumn("n", "int"), *(dg.TableColumn(m, "float") for m in HEADLINE)]
    return dg.MetadataValue.table(records=[dg.TableRecord(r) for r in rows],
                                  schema=dg.TableSchema(columns=columns))


def figures_md(figures: list[Figure]) -> dg.MetadataValue:
    """The run's figures inside Markdown (PNG data URIs: nothing to fetch)."""
    return dg.MetadataValue.md("\n\n".join(
        f"**{f.caption}**\n\n![{f.name}](data:image/png;base64,"
        f"{base64.b64encode(f.png).decode('ascii')})" for f in figures) or "_no rating "
        "predictions to plot_")


@dg.multi_asset(specs=[table_spec(s, GROUP, DEPS) for s in SCHEMAS])
def evaluation_runs(context: dg.AssetExecutionContext, config: EvalRunConfig,
                    vault: VaultResource):
    paths = vault.paths()
    settings = config.settings(paths.home)
    report = run_evaluation(paths, settings, log=context.log.info)
    tokens = {t: s.tokens_in + s.tokens_out for t, s in report.by_task.items()}
    by_input = {f"{t}/{i}": {"calls": s.calls, "tokens": s.tokens_in + s.tokens_out}
                for (t, i), s in sorted(report.by_cell.items())}
    yield dg.MaterializeResult(asset_key=EVAL_SUMMARIES.name, metadata={
        "made": report.summaries_made, "reused": report.summaries_reused,
        "quarantined": report.summaries_missing, "path": table_path(paths, EVAL_SUMMARIES)})
    yield dg.MaterializeResult(asset_key=EVAL_SUMMARY_FAILURES.name,
                               metadata={"path": table_path(paths, EVAL_SUMMARY_FAILURES)})
    yield dg.MaterializeResult(asset_key=EVAL_RUN_CALLS.name, metadata={
        "run_id": settings.run_id, "calls": report.units, "asked": report.asked,
        "reused": report.reused, "tokens_by_task": dg.MetadataValue.json(tokens),
        "by_task_and_input": dg.MetadataValue.json(by_input),
        "path": table_path(paths, EVAL_RUN_CALLS)})
    for schema in (EVAL_RUN_CALL_FAILURES, EVAL_RUN_PREDICTIONS):
        yield dg.MaterializeResult(asset_key=schema.name,
                                   metadata={"path": table_path(paths, schema)})
    blocks = report_blocks(paths, settings.run_id)
    page = write_blocks(blocks, default_target(paths, settings.run_id), "html",
                        f"Evaluation run {settings.run_id}")
    figures = [b for b in blocks if isinstance(b, Figure)]
    yield dg.MaterializeResult(asset_key=EVAL_RUN_METRICS.name, metadata={
        "run_id": settings.run_id,
        "metrics": metrics_table(headline(paths, settings.run_id)),
        "plots": figures_md(figures),
        "report": dg.MetadataValue.md(markdown([b for b in blocks
                                                if not isinstance(b, Figure)],
                                               lambda f: f.name)),
        "report_html": dg.MetadataValue.path(str(page)),
        "path": table_path(paths, EVAL_RUN_METRICS)})


evalruns_assets = [evaluation_runs]
