"""Executors for the heavy per-document stages: ``local`` (this machine) or ``ray`` (Ray
Data on a cluster), chosen by the `[compute]` settings; see :mod:`.settings`."""

from __future__ import annotations

from vault_pipeline.executors.base import BatchFunction, Executor, LocalExecutor, ModelFactory
from vault_pipeline.executors.settings import LOCAL, RAY, ExecutorSettings

__all__ = ["BatchFunction", "Executor", "ExecutorSettings", "LocalExecutor", "ModelFactory",
           "make_executor"]


def make_executor(settings: ExecutorSettings | None = None) -> Executor:
    """The executor the settings name (Ray is imported only when chosen)."""
    settings = settings or ExecutorSettings()
    if settings.executor == RAY:
        from vault_pipeline.executors.ray_executor import RayExecutor

        return RayExecutor(settings)
    assert settings.executor == LOCAL
    return LocalExecutor(settings.batch_size)
