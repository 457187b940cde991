"""A heavy stage run as a Ray job, reporting back through Dagster Pipes.

With ``[compute] launch = "ray_job"`` the Dagster asset of a heavy stage does not run the
stage in its own process: it submits ``python -m vault_pipeline.executors.ray_job`` to the
cluster's job server, and this module, the job's entrypoint on the cluster, runs the same
stage declaration (``stage.run``) there, as the Ray driver of the stage's executor, then
reports each output's figures as a Pipes materialization. The asset renders them as it
renders a local run's (`assets/ray_jobs.py`).

Only ``dagster_pipes`` (the light, dependency-free half of Pipes) is imported here; the
figures of a stage (counts, charts, tables of rows) travel as JSON tagged with their kind and
are rebuilt by :func:`decode_figure` on the Dagster side."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vault_pipeline.errors import VaultError
from vault_pipeline.executors.settings import RAY, ExecutorSettings
from vault_pipeline.pipeline.stage import Chart, Counts, Figures, Markdown, Rows, RunContext, Stage
from vault_pipeline.store.paths import VaultPaths

ENTRYPOINT = "python -m vault_pipeline.executors.ray_job"
KIND = "__vault_figure__"  # the key that marks a figure of a kind other than plain JSON


def job_extras(stage: Stage, root: str, run_config: Mapping[str, Any]) -> dict[str, Any]:
    """What the job needs to find and run the stage (sent as Pipes extras): where its
    declaration lives, the vault's root (a path the cluster shares, or an object-store
    URL) and the run config of the Dagster run."""
    return {"stage": stage.name, "stage_module": stage.run.__module__, "home": root,
            "run_config": dict(run_config)}


def find_stage(module: str, name: str) -> Stage:
    """The stage declaration called ``name`` in ``module``; a one-line error otherwise."""
    found = [v for v in vars(importlib.import_module(module)).values()
             if isinstance(v, Stage) and v.name == name]
    if len(found) != 1:
        raise VaultError(f"no stage {name!r} declared in {module}")
    return found[0]


def encode_figure(value: object) -> dict[str, Any]:
    """One figure as a Pipes metadata value: Markdown and paths as such, the figure kinds as
    tagged JSON, numbers and text inferred."""
    if isinstance(value, Counts):
        raw: Any = {KIND: "counts", "label": value.label,
                    "counts": [[str(k), int(v)] for k, v in value.counts.items()]}
    elif isinstance(value, Chart):
        raw = {KIND: "chart", "items": [[label, v] for label, v in value.items],
               "title": value.title, "percent": value.percent, "by_year": value.by_year}
    elif isinstance(value, Rows):
        raw = {KIND: "rows", "records": [dict(r) for r in value.records],
               "columns": dict(value.columns)}
    elif isinstance(value, Markdown):
        return {"type": "md", "raw_value": str(value)}
    elif isinstance(value, Path):
        return {"type": "path", "raw_value": str(value)}
    elif isinstance(value, (Mapping, list, tuple)):
        raw = value if isinstance(value, Mapping) else list(value)
    else:
        return {"type": "__infer__", "raw_value": value}
    return {"type": "json", "raw_value": raw}


def decode_figure(raw: object) -> object:
    """The figure :func:`encode_figure` tagged (plain JSON comes back as it went)."""
    if not isinstance(raw, Mapping) or KIND not in raw:
        return raw
    kind = raw[KIND]
    if kind == "counts":
        return Counts(raw["label"], {k: v for k, v in raw["counts"]})
    if kind == "chart":
        return Chart([(label, v) for label, v in raw["items"]], raw["title"],
                     percent=raw["percent"], by_year=raw["by_year"])
    if kind == "rows":
        return Rows(raw["records"], raw["columns"])
    raise VaultError(f"unknown figure kind {kind!r} in a Ray job's report")


def encode_figures(figures: Figures) -> dict[str, dict[str, Any]]:
    return {name: encode_figure(value) for name, value in figures.items()}


def run_stage(pipes: Any) -> None:
    """Run the stage the Pipes extras name and report every output (``pipes``: the
    ``dagster_pipes`` context)."""
    extras = pipes.extras
    stage = find_stage(extras["stage_module"], extras["stage"])
    paths = VaultPaths.from_env(extras["home"]).ensure()
    settings = stage.resolve(home=paths.home, run_config=extras.get("run_config") or {})
    compute = ExecutorSettings.resolve(home=paths.home)
    if compute.executor == RAY:  # this job is the stage's Ray driver, on the cluster
        import ray

        if not ray.is_initialized():  # Ray's job supervisor sets RAY_ADDRESS
            ray.init(address=os.environ.get("RAY_ADDRESS", compute.ray_address),
                     include_dashboard=False, log_to_driver=False)
    report = stage.run(paths, settings, RunContext(pipes.run_id, pipes.log.info,
                                                   settings=stage.used_settings(paths.home)))
    for warning in stage.warnings(report):
        pipes.log.warning(warning)
    pipes.log.info(stage.describe(report))
    figures = stage.figures(report)
    for output in stage.outputs:
        pipes.report_asset_materialization(
            asset_key=output.name, metadata=encode_figures(figures.get(output.name, {})))


def main() -> None:
    from dagster_pipes import open_dagster_pipes

    with open_dagster_pipes() as pipes:
        run_stage(pipes)


if __name__ == "__main__":
    main()
