"""A heavy stage launched from its Dagster asset as a Ray job through Dagster Pipes
(`[compute] launch = "ray_job"`): on a Ray cluster started by the test on 127.0.0.1 (head,
job server), the documents asset submits the stage, the job runs it with the Ray executor
and reports its figures through Pipes; the tables equal those of the asset run in-process,
and the materializations carry what the job reported. Skipped without the `[ray]` extra."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from testing.sample_vault import full_text_vault
from vault_pipeline.executors.ray_job import decode_figure, encode_figure
from vault_pipeline.pipeline.stage import Chart, Counts, Markdown, Rows
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS
from vault_pipeline.store.paths import VaultPaths

pytestmark = pytest.mark.xdist_group("ray")  # one Ray cluster at a time (tests/conftest.py)

VOLATILE = ("converted_at", "attempted_at", "duration_ms")


def test_figures_travel_through_pipes_metadata_unchanged() -> None:
    figures = [Counts("status", {"ok": 3, "failed": 1}), Chart([("a", 1.0), ("b", 0.5)], "t",
               percent=True), Rows([{"x": 1}], {"x": "int"}), {"pdf": 0.5}, [1, 2]]
    for figure in figures:
        encoded = encode_figure(figure)
        assert encoded["type"] == "json"
        assert decode_figure(encoded["raw_value"]) == figure
    assert encode_figure(Markdown("# card")) == {"type": "md", "raw_value": "# card"}
    assert encode_figure(3) == {"type": "__infer__", "raw_value": 3}
    assert encode_figure(Path("/x")) == {"type": "path", "raw_value": "/x"}


def test_an_unknown_launch_is_refused(tmp_path: Path) -> None:
    from vault_pipeline.errors import VaultError
    from vault_pipeline.executors import ExecutorSettings

    with pytest.raises(VaultError, match="unknown launch 'slurm'"):
        ExecutorSettings.resolve(home=tmp_path, environ={"VAULT_COMPUTE_LAUNCH": "slurm"})


def test_an_output_the_job_did_not_report_is_an_error(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dagster_ray")
    import dagster_ray

    from assets.ray_jobs import run_as_ray_job
    from vault_pipeline.documents.stage import STAGE
    from vault_pipeline.errors import VaultError

    class OneResult:  # a job that reported `documents` only
        def __init__(self, **_kwargs) -> None: ...

        def run(self, **_kwargs):
            return self

        def get_results(self, **_kwargs):
            return [dg.MaterializeResult(asset_key="documents", metadata={"rows": 1})]

    monkeypatch.setattr(dagster_ray, "PipesRayJobClient", OneResult)
    results = run_as_ray_job(None, STAGE, VaultPaths(tmp_path), {},  # type: ignore[arg-type]
                             lambda output, figures: dict(figures))
    assert next(results).metadata == {"rows": 1}
    with pytest.raises(VaultError, match="did not report document_attempts"):
        next(results)


pytest.importorskip("ray")
pytest.importorskip("dagster_ray")


def _ports(n: int) -> list[int]:
    """``n`` distinct free ports: every socket is held until all are bound (ports taken one
    at a time may be handed out twice, and Ray refuses two components on one port)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _wait(head: subprocess.Popen, address: str, log: Path) -> str:
    """The job server's address once it answers; a head that exits or stays silent for
    three minutes (a loaded two-core runner starts one in 10-60 s) fails with its log."""
    from ray.job_submission import JobSubmissionClient

    deadline = time.monotonic() + 180
    while True:
        try:
            JobSubmissionClient(address).list_jobs()
            return address
        except (OSError, RuntimeError):  # not listening yet
            if head.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(f"the Ray head did not start (exit {head.poll()}):\n"
                                   f"{tail}") from None
            time.sleep(0.5)


@pytest.fixture(scope="module")
def job_server() -> Iterator[Callable[[], str]]:
    """A one-node Ray cluster with its job server (its address, once it answers), stopped by
    ending the process that started it (``--block``), so that no other Ray on the machine
    is touched; token authentication off, as on a cluster reached only from inside its
    network."""
    bin_dir = Path(sys.executable).parent
    agents = ("ray-client-server", "dashboard-agent-listen", "dashboard-agent-grpc",
              "metrics-export", "runtime-env-agent")
    port, dashboard, *agent_ports = _ports(2 + len(agents))
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    env.pop("RAY_ADDRESS", None)
    # a short folder: Ray's socket paths under it must stay within AF_UNIX's 107 bytes, and
    # a pytest folder under an xdist worker's is longer than that leaves room for
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    log = temp / "head.log"
    head = subprocess.Popen(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
         "--node-ip-address=127.0.0.1",
         f"--port={port}", "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard}",
         "--num-cpus=2", "--include-dashboard=true", f"--temp-dir={temp}",
         # free ports for the agents too: their fixed defaults collide with another Ray
         *(f"--{name}-port={p}" for name, p in zip(agents, agent_ports, strict=True))],
        env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield functools.partial(_wait, head, f"http://127.0.0.1:{dashboard}", log)
    finally:
        head.terminate()  # `ray start --block` stops what it started...
        try:
            head.wait(5)
        except subprocess.TimeoutExpired:  # ...or its process group is killed
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def _vault(home: Path, compute: str) -> VaultPaths:
    return full_text_vault(home, f"[documents]\nworkers = 1\ntimeout_s = 60\n{compute}")


def _materialize(paths: VaultPaths) -> dict[str, dict]:
    from assets import VaultResource
    from assets.documents import documents

    result = dg.materialize([documents], resources={"vault": VaultResource(
        home=str(paths.home))})
    assert result.success
    return {e.asset_key.to_user_string(): e.step_materialization_data.materialization.metadata
            for e in result.get_asset_materialization_events()}


def test_documents_launched_as_a_ray_job_equal_the_in_process_run(
        job_server: Callable[[], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    here = _materialize(local := _vault(tmp_path / "local", ""))  # while the head starts
    remote = _vault(tmp_path / "ray", f'[compute]\nexecutor = "ray"\nlaunch = "ray_job"\n'
                    f'job_address = "{job_server()}"\nbatch_size = 4\n')
    there = _materialize(remote)
    assert there["documents"]["Ray Job ID"].value.startswith("pipes-")  # ran as a Ray job
    assert "Ray Job ID" not in here["documents"]
    assert there["documents"]["converted_now"].value == 3  # reported by the job
    for key in ("by_status", "by_source"):  # Counts rebuilt from the Pipes message
        assert there["documents"][key] == here["documents"][key]
    assert there["document_attempts"]["by_kind_and_status"] == (
        here["document_attempts"]["by_kind_and_status"])
    assert there["documents"]["path"].value.endswith("documents.parquet")
    for table in (DOCUMENTS, DOCUMENT_ATTEMPTS):
        ours = remote.store.read(table).drop(VOLATILE, strict=False)
        theirs = local.store.read(table).drop(VOLATILE, strict=False)
        assert ours.equals(theirs), table.name
    assert pl.read_parquet(remote.table(DOCUMENTS.name))["status"].to_list().count("ok") >= 2
