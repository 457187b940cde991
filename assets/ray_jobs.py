"""A heavy stage's asset launched as a Ray job through Dagster Pipes (``dagster-ray``'s
``PipesRayJobClient``): chosen by ``[compute] launch = "ray_job"``; the job's side is
`vault_pipeline/executors/ray_job.py`. The asset step only submits the job, forwards its
log and turns the figures the job reports into the same metadata a local run gives."""

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import dagster as dg

from vault_pipeline.errors import VaultError
from vault_pipeline.executors.ray_executor import INSTALL
from vault_pipeline.executors.ray_job import ENTRYPOINT, decode_figure, job_extras
from vault_pipeline.executors.settings import RAY_JOB, RAY_JOB_STAGES, ExecutorSettings
from vault_pipeline.pipeline.stage import Output, Stage
from vault_pipeline.store.paths import VaultPaths

JOB_ID = "Ray Job ID"  # the metadata entry dagster-ray adds to every result

Render = Callable[[Output, Mapping[str, object]], dict[str, object]]
T = TypeVar("T")


def launched_as_ray_job(stage: Stage, paths: VaultPaths) -> bool:
    return (stage.name in RAY_JOB_STAGES
            and ExecutorSettings.resolve(home=paths.home).launch == RAY_JOB)


AGENT_WAIT_S = 60.0  # a cluster just started answers before its job agent is up


def _submitted(submit: Callable[[], T], wait_s: float = AGENT_WAIT_S) -> T:
    """``submit()``, asked again while the job server says it has no agent yet (it answers
    HTTP 500 "No available agent to submit job, please try again later" until the agent
    of a freshly started node registers); any other error is raised at once."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return submit()
        except RuntimeError as exc:
            if "try again later" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1.0)


def run_as_ray_job(context: dg.AssetExecutionContext, stage: Stage, paths: VaultPaths,
                   run_config: Mapping[str, Any], render: Render
                   ) -> Iterator[dg.MaterializeResult]:
    """Submit the stage, wait for it, and yield one result per output, each with the
    figures the job reported (rendered by ``render``) and the Ray job's id; an output the
    job did not report is an error, never an empty materialization."""
    try:
        from dagster_ray import PipesRayJobClient
    except ImportError:
        raise VaultError(f"[compute] launch = \"ray_job\" needs dagster-ray: {INSTALL}") from None
    settings = ExecutorSettings.resolve(home=paths.home)
    client = PipesRayJobClient(address=settings.job_address, poll_interval=0.5)
    invocation = _submitted(lambda: client.run(
        context=context, submit_job_params={"entrypoint": ENTRYPOINT},
        extras=job_extras(stage, paths.root, run_config)))
    results = {r.asset_key.to_user_string(): r
               for r in invocation.get_results(implicit_materializations=False)
               if isinstance(r, dg.MaterializeResult) and r.asset_key is not None}
    for output in stage.outputs:
        if output.name not in results:
            raise VaultError(f"the Ray job of {stage.name} did not report {output.name}")
        reported = results[output.name].metadata or {}
        figures = {k: decode_figure(v.value) if isinstance(v, dg.JsonMetadataValue) else v
                   for k, v in reported.items()}
        yield dg.MaterializeResult(asset_key=output.name, metadata=render(output, figures))
