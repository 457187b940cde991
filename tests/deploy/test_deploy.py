"""The production deployment: the instance of `deploy/dagster.yaml` on a PostgreSQL server
started here (Debian's `postgresql` binaries, run as the `postgres` user when the tests run
as root) records a run of the vault's own `papers` asset; the Helm values and the image
definition name the code the project ships. The Postgres part is skipped when the server
binaries or dagster-postgres are not installed."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import SAMPLE
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.store.paths import VaultPaths

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"


def test_helm_values_and_image_name_the_shipped_code() -> None:
    values = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
    [deployment] = values["dagster-user-deployments"]["deployments"]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", "vault_pipeline.definitions"]
    assert deployment["envConfigMaps"] and deployment["envSecrets"]
    limits = values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]
    assert {"key": "vault/writes", "value": "true", "limit": 1} in limits[
        "tagConcurrencyLimits"]
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is False  # an external, managed database
    docker = (DEPLOY / "Dockerfile").read_text()
    assert "vault_pipeline.definitions" in docker and ".[ray,s3,postgres]" in docker
    instance = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
    [writes] = [limit for limit in instance["concurrency"]["runs"]["tag_concurrency_limits"]
                if limit["key"] == "vault/writes"]
    assert writes["limit"] == 1


def test_the_refresh_job_carries_the_tag_the_queue_limits(tmp_path: Path) -> None:
    from vault_pipeline.definitions import build_defs

    job = build_defs(VaultPaths(tmp_path)).resolve_job_def("refresh_from_raw")
    assert job.tags["vault/writes"] == "true"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


@pytest.fixture(scope="module")
def postgres():
    """A throwaway PostgreSQL server on 127.0.0.1; yields its port."""
    pytest.importorskip("dagster_postgres")
    psycopg2 = pytest.importorskip("psycopg2")
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not installed (Debian: apt-get install "
                    "postgresql)")
    prefix: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="vault-pg-"))
    if os.geteuid() == 0:  # the server refuses to run as root
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser")
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user")
        os.chown(folder, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()
    subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "vault",
                    "--auth=trust", "-E", "UTF8"], check=True, capture_output=True)
    subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l",
                    str(folder / "log"), "-o", f"-p {port} -k {folder} -h 127.0.0.1",
                    "start"], check=True, capture_output=True)
    try:
        connection = psycopg2.connect(host="127.0.0.1", port=port, user="vault",
                                      dbname="postgres")
        connection.autocommit = True
        connection.cursor().execute("CREATE DATABASE dagster")
        connection.close()
        yield port
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast",
                        "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_postgres_instance_records_a_vault_run(postgres: int, tmp_path: Path,
                                                   monkeypatch) -> None:
    import dagster as dg
    import psycopg2
    from dagster._core.run_coordinator import QueuedRunCoordinator
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    from vault_pipeline.definitions import build_defs

    for name, value in {"DAGSTER_PG_HOST": "127.0.0.1", "DAGSTER_PG_PORT": str(postgres),
                        "DAGSTER_PG_USERNAME": "vault", "DAGSTER_PG_PASSWORD": "unused",
                        "DAGSTER_PG_DB": "dagster"}.items():
        monkeypatch.setenv(name, value)
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copy(DEPLOY / "dagster.yaml", dagster_home / "dagster.yaml")
    paths = VaultPaths(tmp_path / "vault").ensure()
    monkeypatch.setenv("VAULT_HOME", str(paths.home))
    RawZone(paths).import_paths([SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl"])

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
        job = build_defs(paths).get_implicit_global_asset_job_def()
        result = job.execute_in_process(instance=instance,
                                        asset_selection=[dg.AssetKey("papers"),
                                                         dg.AssetKey("paper_versions"),
                                                         dg.AssetKey("papers_rejected")])
        assert result.success
        [run] = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.SUCCESS
        event = instance.get_latest_materialization_event(dg.AssetKey("papers"))
        assert event is not None and event.run_id == run.run_id
    with psycopg2.connect(host="127.0.0.1", port=postgres, user="vault",
                          dbname="dagster") as connection, connection.cursor() as cursor:
        cursor.execute("SELECT run_id, status FROM runs")
        assert cursor.fetchall() == [(run.run_id, "SUCCESS")]
