"""The executors: the Ray executor (a small local Ray cluster) gives the same documents and
index tables as the local one, while a worker killed in the middle of a conversion task and
an embedding actor killed in its first call are retried with nothing lost or duplicated.
The Ray part is skipped when Ray is not installed (the `[ray]` extra)."""

from __future__ import annotations

import functools
import os
import shutil
import signal
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from testing.sample_vault import SAMPLE, full_text_vault
from vault_pipeline.documents.build import DocumentsConfig, build_documents
from vault_pipeline.documents.convert import Task, convert_task
from vault_pipeline.documents.outcome import Conversion
from vault_pipeline.documents.workers import PoolSettings
from vault_pipeline.errors import VaultError
from vault_pipeline.executors import ExecutorSettings, LocalExecutor, make_executor
from vault_pipeline.executors.ray_executor import collect
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS
from vault_pipeline.store.paths import VaultPaths

pytestmark = pytest.mark.xdist_group("ray")  # one Ray cluster at a time (tests/conftest.py)

ROOT = Path(__file__).parents[2]


def test_settings_come_from_the_one_resolver(tmp_path: Path) -> None:
    (tmp_path / "vault.toml").write_text('[compute]\nexecutor = "ray"\nbatch_size = 4\n')
    settings = ExecutorSettings.resolve(home=tmp_path, environ={
        "VAULT_COMPUTE_RAY_ADDRESS": "ray://head:10001"})
    assert (settings.executor, settings.batch_size, settings.ray_address) == (
        "ray", 4, "ray://head:10001")
    assert make_executor(ExecutorSettings()).name == "local"
    with pytest.raises(VaultError, match="unknown executor 'spark'"):
        ExecutorSettings.resolve(home=tmp_path, environ={"VAULT_COMPUTE_EXECUTOR": "spark"})


def test_collect_refuses_a_lost_or_duplicated_item() -> None:
    def batch(rows: list[int]) -> pa.Table:
        import pickle
        return pa.Table.from_pydict({"i": rows, "result": [pickle.dumps(r) for r in rows]})

    assert [r for _, r in collect(["a", "b"], [batch([1]), batch([0])])] == [1, 0]
    with pytest.raises(VaultError, match="came back twice"):
        list(collect(["a", "b"], [batch([0, 1]), batch([1])]))
    with pytest.raises(VaultError, match="1 of 2 items never came back"):
        list(collect(["a", "b"], [batch([0])]))


def test_local_executor_checks_the_batch_function() -> None:
    assert list(LocalExecutor(2).map_batches(lambda b: [x * 2 for x in b], [1, 2, 3])) == [
        (1, 2), (2, 4), (3, 6)]
    with pytest.raises(VaultError, match="returned 1 results for 2 items"):
        list(LocalExecutor(2).map_batches(lambda b: b[:1], [1, 2]))


ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    """A two-CPU local Ray cluster whose workers import this checkout's tests."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    yield make_executor(ExecutorSettings(executor="ray", batch_size=2, actors=1,
                                         max_retries=2))
    ray.shutdown()


def die_once(marker: Path, kill_parent: bool, items: list):
    """Kills the worker it runs in (or, from an isolated conversion worker, the Ray worker
    above it) the first time; afterwards behaves."""
    if not marker.exists():
        marker.touch()
        if kill_parent:
            os.kill(os.getppid(), signal.SIGKILL)
        os._exit(1)
    return items


class DyingEmbedder:
    """The embedded model, in an actor that dies in its first call."""

    def __init__(self, marker: Path) -> None:
        from vault_pipeline.embeddings.embedders import load_embedder

        self.inner = load_embedder()
        self.name, self.source = self.inner.name, self.inner.source
        self.dimension = self.inner.dimension
        self.marker = marker

    def embed(self, texts: list[str]) -> np.ndarray:
        die_once(self.marker, False, [])
        return self.inner.embed(texts)


def convert_killing_ray_worker(marker: Path, task: Task) -> Conversion:
    """Runs in the isolated worker under a Ray task: kills the Ray worker once."""
    die_once(marker, True, [])
    return convert_task(task)


def _table(paths: VaultPaths, name: str) -> pl.DataFrame:
    return pl.read_parquet(paths.table(name)).drop(
        "converted_at", "attempted_at", "duration_ms", strict=False)


def test_documents_on_ray_equal_the_local_ones(cluster, tmp_path: Path) -> None:
    config = DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=60))
    local = full_text_vault(tmp_path / "local")
    build_documents(local, config)
    distributed = full_text_vault(tmp_path / "ray")
    marker = tmp_path / "worker-died"
    report = build_documents(distributed, config, executor=cluster, convert=functools.partial(
        convert_killing_ray_worker, marker))
    assert marker.exists()  # the first Ray task's worker was killed, and its task retried
    assert report.converted == 3
    for table in (DOCUMENTS.name, DOCUMENT_ATTEMPTS.name):
        assert _table(distributed, table).equals(_table(local, table)), table
    assert _table(local, DOCUMENTS.name)["status"].to_list().count("ok") >= 2


def test_index_embedded_on_ray_actors_equals_the_local_one(cluster, tmp_path: Path) -> None:
    from testing.splits_vault import CUTOFF, write_vault
    from vault_pipeline.embeddings.embedders import EmbedderSettings, load_embedder
    from vault_pipeline.index.lance_index import IndexSettings, build_index, open_index
    from vault_pipeline.splits.build import build_splits
    from vault_pipeline.splits.settings import SplitSettings

    tables = {}
    marker = tmp_path / "actor-died"
    for name, executor in (("local", None), ("ray", cluster)):
        paths = VaultPaths(tmp_path / name).ensure()
        write_vault(paths)
        build_splits(paths, SplitSettings(cutoff=CUTOFF))
        embedder = load_embedder(EmbedderSettings())
        report = build_index(paths, embedder, IndexSettings(batch_rows=8), executor=executor,
                             load=functools.partial(DyingEmbedder, marker))
        assert report.embedded > 8  # several chunks
        tables[name] = pl.from_arrow(open_index(paths).to_arrow()).sort("arxiv_id", "view")
    assert marker.exists()  # the actor died in its first call; the call was retried
    local, distributed = tables["local"], tables["ray"]
    assert local.drop("vector").equals(distributed.drop("vector"))
    np.testing.assert_allclose(np.stack(local["vector"].to_list()),
                               np.stack(distributed["vector"].to_list()), atol=1e-5)


def test_ideas_generated_on_ray_actors_equal_the_local_ones(cluster, tmp_path: Path) -> None:
    from vault_pipeline.ideas.build import build_masked_records
    from vault_pipeline.llm.settings import IdeasSettings
    from vault_pipeline.schemas import LLM_FAILURES, MASKED_RECORDS

    local = VaultPaths(tmp_path / "local").ensure()
    RawZone(local).import_paths([SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl"])
    build_papers(local)
    build_documents(local)  # abstracts only: nothing to convert
    shutil.copytree(local.home, tmp_path / "ray")
    distributed = VaultPaths(tmp_path / "ray")
    settings = IdeasSettings(batch_size=40)
    build_masked_records(local, settings, log=lambda *_: None)
    actors = make_executor(ExecutorSettings(executor="ray", batch_size=25, actors=2))
    report = build_masked_records(distributed, settings, log=lambda *_: None, executor=actors)
    assert report.backend == "extractive" and report.processed == report.papers > 50
    for table, stamp in ((MASKED_RECORDS, "created_at"), (LLM_FAILURES, "failed_at")):
        ours, theirs = (distributed.store.read(table).drop(stamp).sort("arxiv_id"),
                        local.store.read(table).drop(stamp).sort("arxiv_id"))
        assert ours.equals(theirs), table.name
    assert local.store.rows(MASKED_RECORDS) > 50
