"""Where the heavy per-document work runs, resolved like every stage's settings
(:mod:`vault_pipeline.pipeline.settings`): defaults < `[compute]` in `vault.toml` <
`VAULT_COMPUTE_<FIELD>` < run config. ``executor = "local"`` is the one-machine path (process
pools on this machine); ``"ray"`` runs the same per-document functions as Ray Data
pipelines on a Ray cluster (``ray_address``; unset: a Ray already started in this process,
else a local one).

``launch`` says where the driver of a heavy stage (the process that keeps the journal and
writes the tables) runs: ``"in_process"`` (default) in the process that runs the stage (the
Dagster step, the CLI); ``"ray_job"``: the Dagster asset submits the stage as a Ray job
to the cluster's job server (``job_address``) through Dagster Pipes, and the job reports the
stage's figures back (`executors/ray_job.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.settings import StageSettings

STAGE = "compute"
LOCAL = "local"
RAY = "ray"
EXECUTORS = (LOCAL, RAY)
IN_PROCESS = "in_process"
RAY_JOB = "ray_job"
LAUNCHES = (IN_PROCESS, RAY_JOB)
# The stages whose run the Dagster assets submit as a Ray job when launch = "ray_job": those
# that put their per-document work on the executor.
RAY_JOB_STAGES = frozenset({"documents", "masked_records", "index"})


@dataclass(frozen=True)
class ExecutorSettings(StageSettings):
    """``batch_size``: documents per Ray task (a task is the unit that is retried when its
    worker dies); ``actors``: model-holding actors (embedders) per pipeline;
    ``gpus_per_actor``: GPUs each of them claims; ``max_retries``: tries of a task or an
    actor call whose worker died before the pipeline fails; ``launch``: ``in_process``
    or ``ray_job`` (the heavy stages' Dagster assets submit them as Ray jobs);
    ``job_address``: the Ray job server (dashboard) URL, e.g. ``http://head:8265``
    (unset: ``$RAY_ADDRESS``, else a Ray cluster started on this machine)."""

    SECTION = STAGE

    executor: str = LOCAL
    ray_address: str | None = None  # e.g. "auto", "ray://head:10001"
    batch_size: int = 8
    actors: int = 2
    gpus_per_actor: float = 0.0
    max_retries: int = 3
    launch: str = IN_PROCESS
    job_address: str | None = None

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise VaultError(f"unknown executor {self.executor!r} (known: "
                             f"{', '.join(EXECUTORS)}; set [{STAGE}] executor in vault.toml "
                             f"or VAULT_COMPUTE_EXECUTOR)")
        if self.launch not in LAUNCHES:
            raise VaultError(f"unknown launch {self.launch!r} (known: {', '.join(LAUNCHES)}; "
                             f"set [{STAGE}] launch in vault.toml or VAULT_COMPUTE_LAUNCH)")
        if self.batch_size < 1 or self.actors < 1 or self.max_retries < 0:
            raise VaultError("compute settings: batch_size and actors must be at least 1, "
                             "max_retries at least 0")
