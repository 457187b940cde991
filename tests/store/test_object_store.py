"""The data root on object storage: a local S3-compatible server (moto's server mode on
127.0.0.1, started here) holds the tables and the LanceDB index of a vault whose
``VAULT_HOME`` is ``s3://…``; the raw zone and the scratch live in the local cache folder.
Skipped when the `[s3]` extra (s3fs, moto[server]) is not installed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import SAMPLE, SMALL_INBOX_PAPERS, small_inbox, vault_command
from vault_pipeline.errors import VaultError
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import PAPERS, PAPERS_REJECTED
from vault_pipeline.store import checksums
from vault_pipeline.store.object_store import storage_options
from vault_pipeline.store.paths import VaultPaths, is_url


def test_roots_and_options_without_a_server(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VAULT_CACHE", str(tmp_path / "cache"))
    paths = VaultPaths.from_env("s3://bucket/vault/")
    assert (paths.remote, paths.home) == ("s3://bucket/vault", tmp_path / "cache")
    assert not is_url(str(tmp_path)) and not is_url("file:///x") and is_url("gs://b/v")
    assert VaultPaths.from_env(tmp_path).remote is None
    options = storage_options("s3://b/v", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                                           "AWS_ACCESS_KEY_ID": "k"})
    assert options == {"aws_endpoint": "http://127.0.0.1:9", "aws_access_key_id": "k",
                       "allow_http": "true"}
    assert storage_options(str(tmp_path), {"AWS_ACCESS_KEY_ID": "k"}) == {}


def test_the_writer_lock_on_a_store_without_conditional_puts(tmp_path: Path) -> None:
    """``memory://`` has no If-None-Match: the same protocol, check-then-put."""
    from vault_pipeline.store.object_lock import ObjectLock

    root = f"memory://{tmp_path.name}/vault"
    first = ObjectLock(root, "vault demo", heartbeat_s=0)
    first.acquire(0)
    with pytest.raises(VaultError, match="in use by vault demo"):
        ObjectLock(root, "vault materialize", heartbeat_s=0).acquire(0)
    first.beat()
    first.release()
    again = ObjectLock(root, "vault materialize", heartbeat_s=0)
    again.acquire(0)
    again.release()
    assert not first.was_lost and not again.was_lost


moto_server = pytest.importorskip("moto.server")
pytest.importorskip("s3fs")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port())
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_vault(s3_endpoint: str, tmp_path: Path, monkeypatch) -> VaultPaths:
    import boto3

    for name, value in {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                        "VAULT_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(name, value)
    bucket = f"vault-{tmp_path.name.lower().replace('_', '-')}"[:60]
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    monkeypatch.setenv("VAULT_HOME", f"s3://{bucket}/vault")
    return VaultPaths.from_env().ensure()


def _keys(endpoint: str, url: str) -> list[str]:
    import boto3

    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    listed = boto3.client("s3", endpoint_url=endpoint).list_objects_v2(Bucket=bucket,
                                                                      Prefix=prefix)
    return sorted(item["Key"] for item in listed.get("Contents", []))


def test_papers_stage_writes_its_tables_to_the_bucket(s3_vault: VaultPaths,
                                                      s3_endpoint: str) -> None:
    RawZone(s3_vault).import_paths([SAMPLE])
    report = build_papers(s3_vault)
    keys = _keys(s3_endpoint, s3_vault.remote)
    assert "vault/tables/papers.parquet" in keys and "vault/tables/papers_rejected.parquet" in keys
    assert not (s3_vault.home / "tables" / "papers.parquet").exists()  # nothing local
    store = s3_vault.store
    assert not store.local and store.url.startswith("s3://")
    papers = store.read(PAPERS)
    assert papers.height == report.rows == store.rows(PAPERS) > 100
    assert "papers" in store.names() and PAPERS_REJECTED.name in store.names()
    # A second process (a fresh store) sees the same table; an append lands whole.
    assert VaultPaths.from_env().store.read(PAPERS).equals(papers)
    store.append(PAPERS, papers.head(1))
    assert store.rows(PAPERS) == papers.height + 1
    assert not any(".tmp" in key for key in _keys(s3_endpoint, s3_vault.remote))


def test_index_lives_in_the_bucket(s3_vault: VaultPaths, s3_endpoint: str,
                                   tmp_path: Path) -> None:
    from testing.splits_vault import CUTOFF, papers_frame, views_frame
    from vault_pipeline.embeddings.embedders import load_embedder
    from vault_pipeline.index.lance_index import build_index, index_metadata_of, open_index
    from vault_pipeline.index.search import search_vault
    from vault_pipeline.splits.build import build_splits
    from vault_pipeline.splits.settings import SplitSettings

    s3_vault.store.write(PAPERS, papers_frame())
    with s3_vault.store.writing("views") as tmp:
        views_frame().write_parquet(tmp)
    build_splits(s3_vault, SplitSettings(cutoff=CUTOFF))
    report = build_index(s3_vault, load_embedder())
    assert report.rows > 0
    assert any(key.startswith("vault/index/views_index.lance/")
               for key in _keys(s3_endpoint, s3_vault.remote))
    assert not (s3_vault.home / "index").exists()
    assert open_index(s3_vault).count_rows() == report.rows
    assert index_metadata_of(s3_vault)["rows"] == str(report.rows)
    hits = search_vault(s3_vault, "graph neural networks", k=3, backend="torch")
    assert len(hits) == 3

    # `vault export --with-index` snapshots the index from the bucket into the export.
    import json

    import fsspec
    import lancedb
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app
    from vault_pipeline.datasets.export import export_datasets
    from vault_pipeline.datasets.training import build_training

    build_training(s3_vault)
    url = f"{s3_vault.remote}/exports/with-index"
    export_datasets(s3_vault, url, include_index=True)
    manifest = json.loads(fsspec.filesystem("s3").cat_file(f"{url}/manifest.json"))
    copied = [e["path"] for e in manifest["files"] if e["table"] == "vault/index"]
    assert any(p.startswith("vault/index/views_index.lance/_versions/") for p in copied)
    assert any(p.startswith("vault/index/views_index.lance/data/") for p in copied)
    checked = CliRunner().invoke(app, ["export", url, "--check"])
    assert checked.exit_code == 0 and "every file matches" in checked.output, checked.output
    from vault_pipeline.index.snapshot import fetch_index

    index_url = f"{s3_vault.remote}/index/views_index.lance"
    copy = tmp_path / "copy" / "views_index.lance"
    assert fetch_index(index_url, copy) == report.rows
    assert lancedb.connect(str(copy.parent)).open_table("views_index").count_rows() == report.rows
    # A file gone under the copy (a compaction meanwhile): the copy is refused, not exported.
    fs = fsspec.filesystem("s3", use_listings_cache=False)
    fs.rm([k for k in fs.find(index_url) if "/data/" in k])
    with pytest.raises(VaultError, match="changed while it was copied"):
        fetch_index(index_url, tmp_path / "broken" / "views_index.lance")


def test_cli_materializes_queries_and_reports_on_the_bucket(s3_vault: VaultPaths,
                                                           s3_endpoint: str) -> None:
    """`vault import`, `vault materialize`, `vault sql` and `vault status` with
    ``VAULT_HOME=s3://…``: the tables land in the bucket, and SQL reads them there (no DuckDB
    extension), as read-only as on a local root."""
    import json

    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app

    runner = CliRunner()
    env = {"DAGSTER_HOME": str(s3_vault.dagster_home)}
    assert runner.invoke(app, ["import", str(SAMPLE)], env=env).exit_code == 0
    built = runner.invoke(app, ["materialize", "--select", "papers", "-q"], env=env)
    assert built.exit_code == 0, built.output
    assert "vault/tables/papers.parquet" in _keys(s3_endpoint, s3_vault.remote)
    assert not (s3_vault.home / "tables" / "papers.parquet").exists()
    assert not (s3_vault.home / "vault.duckdb").exists()  # its views would need httpfs

    def sql(text: str):
        return runner.invoke(app, ["sql", text, "-f", "json"], env=env)

    counted = sql("SELECT count(*) AS n, count(DISTINCT arxiv_id) AS ids FROM papers "
                  "WHERE title <> ''")
    assert counted.exit_code == 0, counted.output
    assert json.loads(counted.output) == [{"n": 221, "ids": 221}]
    joined = sql("SELECT count(*) AS n, (SELECT count(*) FROM papers_rejected) AS rejected "
                 "FROM papers a JOIN papers b USING (arxiv_id)")
    assert joined.exit_code == 0, joined.output
    assert json.loads(joined.output) == [{"n": 221, "rejected": 0}]
    for statement, word in [("COPY (SELECT 1) TO 'out.csv'", "read-only"),
                            ("CREATE TABLE t AS SELECT 1", "read-only"),
                            ("INSTALL httpfs", "read-only"),
                            ("SET enable_external_access = true", "read-only"),
                            (f"SELECT * FROM read_parquet('{s3_vault.remote}/tables/"
                             "papers.parquet')", "disabled"),
                            ("SELECT * FROM nope", "does not exist")]:
        refused = sql(statement)
        assert refused.exit_code == 1 and "Traceback" not in refused.output, refused.output
        assert refused.output.startswith("error:") and word in refused.output, refused.output
    assert sql("SELECT count(*) AS n FROM papers").output == counted.output.replace(
        ', "ids": 221', "")
    status = runner.invoke(app, ["status"], env=env)
    assert status.exit_code == 0, status.output
    assert f"vault at {s3_vault.remote}" in status.output
    line = next(li for li in status.output.splitlines() if li.startswith("papers "))
    assert line.split()[1:3] == ["221", f"{s3_vault.store.size(PAPERS):,}"]
    as_json = json.loads(runner.invoke(app, ["status", "--json"], env=env).output)
    assert {"name": "papers", "rows": 221}.items() <= next(
        t for t in as_json["tables"] if t["name"] == "papers").items()


def test_exports_are_published_to_the_bucket_manifest_last(s3_vault: VaultPaths,
                                                           s3_endpoint: str) -> None:
    """`vault export s3://…` and the dataset_export stage on an object-store root: the
    export is built and verified locally, then every file is put whole, manifest last; the
    manifest read back from the bucket lists exactly the keys there, `--check` verifies them
    from the bucket and catches a changed object."""
    import json

    import fsspec
    from typer.testing import CliRunner

    from testing.splits_vault import CUTOFF, papers_frame, views_frame
    from vault_pipeline.cli.app import app
    from vault_pipeline.datasets.export import export_datasets
    from vault_pipeline.datasets.stage import EXPORT_STAGE, run_export
    from vault_pipeline.datasets.training import build_training
    from vault_pipeline.pipeline.stage import RunContext
    from vault_pipeline.splits.build import build_splits
    from vault_pipeline.splits.settings import SplitSettings

    s3_vault.store.write(PAPERS, papers_frame())
    with s3_vault.store.writing("views") as tmp:
        views_frame().write_parquet(tmp)
    build_splits(s3_vault, SplitSettings(cutoff=CUTOFF, validation=0.25, test=0.25, seed=7))
    build_training(s3_vault)
    url = f"{s3_vault.remote}/exports/mine"
    report = export_datasets(s3_vault, url)
    assert report.out_dir == url and report.files > 5
    prefix = url.removeprefix("s3://").partition("/")[2] + "/"
    keys = {k[len(prefix):] for k in _keys(s3_endpoint, s3_vault.remote) if k.startswith(prefix)}
    fs = fsspec.filesystem("s3")
    manifest = json.loads(fs.cat_file(f"{url}/manifest.json"))
    assert {entry["path"] for entry in manifest["files"]} | {"manifest.json"} == keys
    assert not list((s3_vault.home / "tmp").glob("export-*"))  # the local build is removed
    with pytest.raises(VaultError, match="--overwrite"):
        export_datasets(s3_vault, url)
    with pytest.raises(VaultError, match="the index does not exist yet"):
        export_datasets(s3_vault, f"{s3_vault.remote}/exports/other", include_index=True)
    fs.pipe_file(f"{s3_vault.remote}/exports/photos/cat.jpg", b"x")
    with pytest.raises(VaultError, match="holds no export"):
        export_datasets(s3_vault, f"{s3_vault.remote}/exports/photos", overwrite=True)
    fs.pipe_file(f"{url}/stale.txt", b"left by an older export")
    export_datasets(s3_vault, url, overwrite=True)
    assert not fs.exists(f"{url}/stale.txt")  # keys the new export lacks are removed
    runner = CliRunner()
    checked = runner.invoke(app, ["export", url, "--check"])
    assert checked.exit_code == 0 and "every file matches" in checked.output, checked.output
    fs.pipe_file(f"{url}/splits.parquet", b"changed")
    changed = runner.invoke(app, ["export", url, "--check"])
    assert changed.exit_code == 1 and "problem(s) against its manifest" in changed.output
    context = RunContext(settings=EXPORT_STAGE.used_settings(s3_vault.home))
    latest = run_export(s3_vault, None, context)  # type: ignore[arg-type]
    assert latest.out_dir == f"{s3_vault.remote}/exports/latest"
    assert fs.exists(f"{latest.out_dir}/manifest.json")


def test_the_graph_runs_end_to_end_on_the_bucket(s3_vault: VaultPaths, s3_endpoint: str,
                                                 tmp_path: Path) -> None:
    """`vault import` and `vault materialize` with ``VAULT_HOME=s3://…``: the whole default
    graph on a slice of the sample that reaches every stage, then `vault sql` and `vault
    search`; tables, index and export land in the bucket, none in the cache. (`vault demo`
    on the whole sample is the local end-to-end test's, tests/cli/test_cli.py.)"""
    import json

    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app

    runner = CliRunner()
    # the console script in a process of its own: in this one, the demo and the threaded
    # S3 server would share one interpreter lock
    output, exit_code = vault_command("import", str(small_inbox(tmp_path / "inbox")), env={},
                                      cwd=s3_vault.home)
    assert exit_code == 0, output[-3000:]
    output, exit_code = vault_command("materialize", env={}, cwd=s3_vault.home)
    assert exit_code == 0, output[-3000:]
    assert "check FAIL" not in output, output[-3000:]
    keys = _keys(s3_endpoint, s3_vault.remote)
    for key in ("vault/tables/papers.parquet", "vault/tables/splits.parquet",
                "vault/exports/latest/manifest.json"):
        assert key in keys
    assert any(k.startswith("vault/index/views_index.lance/") for k in keys)
    assert not list((s3_vault.home / "tables").glob("*.parquet"))
    counted = runner.invoke(app, ["sql", "SELECT (SELECT count(*) FROM papers) AS papers, "
                                  "(SELECT count(*) FROM splits) AS splits", "-f", "json"])
    assert json.loads(counted.output) == [{"papers": SMALL_INBOX_PAPERS,
                                           "splits": SMALL_INBOX_PAPERS}], counted.output
    found = runner.invoke(app, ["search", "test generation for web applications", "--k", "3"])
    assert found.exit_code == 0, found.output
    hits = [json.loads(line) for line in found.output.splitlines() if line.startswith("{")]
    assert len(hits) == 3 and all(hit["arxiv_id"] for hit in hits), found.output
    checked = runner.invoke(app, ["export", f"{s3_vault.remote}/exports/latest", "--check"])
    assert checked.exit_code == 0, checked.output

    # A second refresh on the bucket does no stage work, as on a local root.
    import fsspec
    from dagster import DagsterInstance

    def runs() -> int:
        with DagsterInstance.from_config(str(s3_vault.dagster_home)) as instance:
            return len(instance.get_run_records())

    fs = fsspec.filesystem("s3", use_listings_cache=False)
    bucket = s3_vault.remote.removeprefix("s3://").split("/")[0]
    before = {key: fs.info(f"{bucket}/{key}")["ETag"] for key in keys}
    dagster_runs = runs()
    again = runner.invoke(app, ["materialize"])
    assert again.exit_code == 0 and "nothing to do:" in again.output, again.output
    assert runs() == dagster_runs  # no Dagster run was even started
    assert {key: fs.info(f"{bucket}/{key}")["ETag"] for key in before} == before
    assert _keys(s3_endpoint, s3_vault.remote) == keys  # nothing written, nothing removed
    # A table rewritten in the bucket: what depends on it is stale, what does not is not.
    views = f"{s3_vault.remote}/tables/views.parquet"
    fs.pipe_file(views, fs.cat_file(views))
    status = json.loads(runner.invoke(app, ["status", "--json"]).output)
    assert "splits" in status["stale_assets"] and "papers" not in status["stale_assets"]


# one writer per root: the lock object, taken with a conditional put --------------------------

def test_two_writers_race_for_the_lock_and_exactly_one_wins(s3_vault: VaultPaths) -> None:
    import threading

    from vault_pipeline.store.object_lock import LOCK_KEY, ObjectLock

    writers = [ObjectLock(s3_vault.remote, f"writer {i}", heartbeat_s=0) for i in range(8)]
    start = threading.Barrier(len(writers))
    outcome: dict[int, str] = {}

    def race(i: int) -> None:
        start.wait()
        try:
            writers[i].acquire(0)
            outcome[i] = "won"
        except VaultError as exc:
            outcome[i] = str(exc)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(writers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [i for i, result in outcome.items() if result == "won"]
    assert len(outcome) == 8 and len(winners) == 1, outcome
    refusal = next(r for r in outcome.values() if r != "won")
    assert refusal.startswith(f"the vault at {s3_vault.remote} is in use by writer "
                              f"{winners[0]} (owner ") and "\n" not in refusal, refusal
    import fsspec

    fs = fsspec.filesystem("s3")
    assert fs.exists(f"{s3_vault.remote}/{LOCK_KEY}")
    writers[winners[0]].release()
    assert not fs.exists(f"{s3_vault.remote}/{LOCK_KEY}")
    writers[(winners[0] + 1) % 8].acquire(0)  # free again: the next writer gets it
    writers[(winners[0] + 1) % 8].release()


def test_a_stale_lock_is_taken_over_and_its_holder_notices(s3_vault: VaultPaths) -> None:
    import time

    from vault_pipeline.store.object_lock import LockLost, ObjectLock

    crashed = ObjectLock(s3_vault.remote, "vault demo", heartbeat_s=0,
                         clock=lambda: time.time() - 1000)  # last beat 1000 s ago
    crashed.acquire(0)
    fresh = ObjectLock(s3_vault.remote, "vault materialize", heartbeat_s=0)
    with pytest.raises(VaultError, match="in use by vault demo"):  # not stale at 2000 s
        ObjectLock(s3_vault.remote, "x", stale_after_s=2000, heartbeat_s=0).acquire(0)
    fresh.acquire(0)  # default rule: no heartbeat for 300 s, taken over
    with pytest.raises(LockLost):
        crashed.beat()  # the old holder's next heartbeat finds the lock is not its own
    crashed.release()
    assert crashed.was_lost
    with pytest.raises(VaultError, match="taken over by another writer"):  # no more writes
        s3_vault.store.write(PAPERS, PAPERS.empty())
    with pytest.raises(VaultError, match="in use by vault materialize"):
        ObjectLock(s3_vault.remote, "third", heartbeat_s=0).acquire(0)  # not removed by it
    fresh.release()
    assert not fresh.was_lost


def test_the_holder_beats_and_waiters_get_it_when_it_is_released(s3_vault: VaultPaths) -> None:
    import json
    import threading
    import time

    import fsspec

    from vault_pipeline.store.object_lock import LOCK_KEY, ObjectLock

    fs = fsspec.filesystem("s3", use_listings_cache=False)
    holder = ObjectLock(s3_vault.remote, "vault demo", heartbeat_s=0.05)
    holder.acquire(0)
    first = json.loads(fs.cat_file(f"{s3_vault.remote}/{LOCK_KEY}"))
    time.sleep(0.4)
    later = json.loads(fs.cat_file(f"{s3_vault.remote}/{LOCK_KEY}"))
    assert later["heartbeat"] > first["heartbeat"] and later["token"] == first["token"]
    assert {"owner", "host", "pid", "started", "command"} <= set(later)
    threading.Timer(0.3, holder.release).start()
    waiter = ObjectLock(s3_vault.remote, "vault materialize", heartbeat_s=0)
    waiter.acquire(5)  # waits for the release instead of refusing
    assert not holder.was_lost
    waiter.release()


def test_a_second_writer_on_another_machine_is_refused_in_one_line(s3_vault: VaultPaths
                                                                  ) -> None:
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app
    from vault_pipeline.store.object_lock import ObjectLock

    other = ObjectLock(s3_vault.remote, "vault demo", heartbeat_s=0)  # as another machine
    other.acquire(0)
    runner = CliRunner()
    refused = runner.invoke(app, ["materialize", "--select", "papers"])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    lines = [li for li in refused.output.splitlines() if li.strip()]
    assert len(lines) == 1 and "is in use by vault demo (owner " in lines[0], refused.output
    other.release()


def test_appends_from_two_machines_lose_no_row(s3_vault: VaultPaths) -> None:
    import threading
    from datetime import UTC, datetime

    import polars as pl

    from vault_pipeline.schemas import IMPORT_REJECTS

    def rows(tag: str) -> pl.DataFrame:
        return pl.DataFrame({"path": [tag], "sha256": [None], "reason": ["test"],
                             "rejected_at": [datetime.now(UTC)]}, schema=IMPORT_REJECTS.polars)

    stores = [VaultPaths.from_env().store for _ in range(4)]  # one store per "machine"
    start = threading.Barrier(4)

    def append(i: int) -> None:
        start.wait()
        for j in range(3):
            stores[i].append(IMPORT_REJECTS, rows(f"{i}-{j}"))

    threads = [threading.Thread(target=append, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    table = s3_vault.store.read(IMPORT_REJECTS)
    assert sorted(table["path"].to_list()) == sorted(
        f"{i}-{j}" for i in range(4) for j in range(3))


def test_a_crash_mid_write_leaves_the_previous_table(s3_vault: VaultPaths,
                                                     s3_endpoint: str, monkeypatch) -> None:
    import polars as pl
    import pyarrow.parquet as pq

    store = s3_vault.store
    frame = pl.DataFrame({"arxiv_id": ["a"], "title": ["old"]})
    with store.writing("papers") as tmp:
        frame.write_parquet(tmp)
    with pytest.raises(RuntimeError), store.writing("papers") as tmp, \
            pq.ParquetWriter(tmp, frame.to_arrow().schema) as writer:
        writer.write_table(pl.DataFrame({"arxiv_id": ["b"], "title": ["new"]}).to_arrow())
        raise RuntimeError("killed after the first row group")
    assert store.read_optional("papers").equals(frame)

    call_s3 = store.fs._call_s3

    async def dropped(method, *args, **kwargs):  # the connection drops during the upload
        if method == "put_object":
            raise ConnectionError("connection reset")
        return await call_s3(method, *args, **kwargs)

    monkeypatch.setattr(store.fs, "_call_s3", dropped)
    with pytest.raises(ConnectionError), store.writing("papers") as tmp:
        pl.DataFrame({"arxiv_id": ["c"], "title": ["new"]}).write_parquet(tmp)
    assert VaultPaths.from_env().store.read_optional("papers").equals(frame)
    assert [k for k in _keys(s3_endpoint, s3_vault.remote) if not k.endswith(
        checksums.SUFFIX)] == ["vault/tables/papers.parquet"]


def _flip(store, table: str) -> None:
    """One byte of a table's object changed, its size kept (as bit rot or a bad copy)."""
    data = bytearray(store.fs.cat_file(store.path(table)))
    data[len(data) // 2] ^= 0xFF
    store.fs.pipe_file(store.path(table), bytes(data))


def test_a_damaged_table_on_the_bucket_is_set_aside_and_rebuilt(s3_vault: VaultPaths,
                                                                s3_endpoint: str) -> None:
    """A flipped byte in a table's object: the read that finds it moves the object and its
    record under ``quarantine/`` (kept, with its problem) and says so in one line; a plain
    rebuild then writes the table again. `vault verify`'s fetch-and-hash does the same."""
    from vault_pipeline.store.repair import set_aside_damaged_objects

    RawZone(s3_vault).import_paths([SAMPLE])
    build_papers(s3_vault)
    store = s3_vault.store
    good = store.read(PAPERS)
    _flip(store, "papers")
    with pytest.raises(VaultError) as found:
        VaultPaths.from_env().store.read(PAPERS)
    line = str(found.value)
    assert "\n" not in line and "table 'papers' was damaged" in line
    assert "moved to s3://" in line and "`vault materialize` builds it again" in line
    keys = _keys(s3_endpoint, s3_vault.remote)
    assert "vault/tables/papers.parquet" not in keys
    kept = [k for k in keys if k.startswith("vault/quarantine/")]
    assert any(k.endswith("/tables/papers.parquet") for k in kept), kept
    assert any(k.endswith("papers.parquet.problem.txt") for k in kept), kept
    assert set_aside_damaged_objects(s3_vault) == []  # nothing else is damaged
    build_papers(s3_vault)
    assert store.read(PAPERS).equals(good)
    _flip(store, "papers")
    [aside] = set_aside_damaged_objects(s3_vault)
    assert "table 'papers' was damaged" in aside and not store.exists(PAPERS)
    assert set_aside_damaged_objects(VaultPaths.from_env()) == []


def _local_files(folder: Path) -> list[Path]:
    """Files under a local folder, hidden ones (sidecar caches aside) left out."""
    return [p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".meta.json")
            and not any(part.startswith(".") for part in p.relative_to(folder).parts)]


def test_a_harvest_on_a_bucket_root_lands_in_the_bucket(s3_vault: VaultPaths, s3_endpoint: str,
                                                        tmp_path: Path, monkeypatch) -> None:
    """`vault harvest openreview` with ``VAULT_HOME=s3://…``: every page is put in the bucket
    (file first, sidecar last; no temporary key), nothing stays in the local cache, and the
    reviews stage of another machine (a fresh cache) reads the pages from there."""
    from typer.testing import CliRunner

    from testing.sources_replay import ReplayServer, Reply, data
    from vault_pipeline.cli.app import app
    from vault_pipeline.reviews.build import build_reviews
    from vault_pipeline.schemas import SUBMISSIONS

    venue, json_type = "ICLR.cc/2025/Conference", "application/json; charset=utf-8"
    with ReplayServer() as server:
        server.add("/or2/groups", Reply(body=data("openreview_group.json"),
                                        content_type=json_type), id=venue)
        server.add("/or2/notes", Reply(body=data("openreview_notes_p1.json"),
                                       content_type=json_type), count="true")
        server.add("/or2/notes", Reply(body=data("openreview_notes_p2.json"),
                                       content_type=json_type), after="Gq7tR2bC4d")
        monkeypatch.setenv("VAULT_OPENREVIEW_URL", f"{server.url}/or2")
        monkeypatch.setenv("VAULT_OPENREVIEW_INTERVAL", "0")
        (s3_vault.home / "harvest.toml").write_text("[openreview]\npage_size = 2\n")
        result = CliRunner().invoke(app, ["harvest", "openreview", "--venue", venue])
        assert result.exit_code == 0, result.output
    keys = [k for k in _keys(s3_endpoint, s3_vault.remote) if k.startswith("vault/raw/")]
    sidecars = [k for k in keys if k.endswith(".meta.json")]
    assert len(sidecars) == 3 and all(k.removesuffix(".meta.json") in keys for k in sidecars)
    assert not [k for k in keys if "import-" in k or ".fetch-" in k or "incoming" in k]
    assert _local_files(s3_vault.raw) == []  # nothing of the zone kept on this machine
    monkeypatch.setenv("VAULT_CACHE", str(tmp_path / "other-machine"))
    other = VaultPaths.from_env().ensure()
    zone = RawZone(other)
    assert zone.location == f"{s3_vault.remote}/raw"
    assert sorted(f.kind for f in zone.files()) == [
        "openreview_groups", "openreview_notes", "openreview_notes"]
    build_reviews(other)
    assert other.store.read(SUBMISSIONS).height == 3
    assert len(_local_files(other.raw)) == 3  # fetched once, for the parser
    from vault_pipeline.raw.zone import raw_location

    assert raw_location(other) == f"{s3_vault.remote}/raw"


def test_the_zone_on_a_bucket_is_checked_and_commits_sidecar_last(
        s3_vault: VaultPaths, s3_endpoint: str, tmp_path: Path, monkeypatch) -> None:
    """A file put without its sidecar (a crash between the two) is not in the zone; a
    missing object stops every read with a one-line error; an object altered in the bucket
    is refused when fetched; importing the original again restores it."""
    import boto3

    source = SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json"
    zone = RawZone(s3_vault)

    def crash(self, relative: str, data: bytes) -> None:
        raise OSError("killed before the sidecar")

    with monkeypatch.context() as patch:
        patch.setattr(RawZone, "_write", crash)
        with pytest.raises(OSError):
            zone.add_file(source)
    assert RawZone(s3_vault).files() == []  # a file without its sidecar is not in the zone
    record, new = RawZone(s3_vault).add_file(source)
    assert new and RawZone(s3_vault).files() == [record]
    bucket, _, prefix = s3_vault.remote.removeprefix("s3://").partition("/")
    key = f"{prefix}/raw/{record.path}"
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    client.put_object(Bucket=bucket, Key=key, Body=body[::-1])  # same size, other bytes
    monkeypatch.setenv("VAULT_CACHE", str(tmp_path / "fresh"))
    fresh = VaultPaths.from_env().ensure()
    with pytest.raises(VaultError, match="content altered in the object store") as err:
        RawZone(fresh).absolute(record)
    assert "\n" not in str(err.value)
    client.delete_object(Bucket=bucket, Key=key)
    with pytest.raises(VaultError, match="raw zone damaged, 1 file"):
        RawZone(fresh).files()
    report = RawZone(fresh).import_paths([source])
    assert [r.sha256 for r in report.restored] == [record.sha256]
    assert RawZone(fresh).absolute(record).read_bytes() == source.read_bytes()


def test_a_refresh_on_the_bucket_sees_new_raw_files(s3_vault: VaultPaths,
                                                    s3_endpoint: str) -> None:
    """The raw zone's fingerprint (what decides whether the stages reading it are stale) is
    the bucket's listing, not the local cache's: a file imported on the bucket changes it, a
    listing that caches sidecars locally does not; `papers` then rebuilds with the file."""
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app
    from vault_pipeline.freshness import fingerprints

    runner = CliRunner()
    env = {"DAGSTER_HOME": str(s3_vault.dagster_home)}

    def papers() -> None:
        result = runner.invoke(app, ["materialize", "--select", "papers"], env=env)
        assert result.exit_code == 0 and "materialized papers" in result.output, result.output

    def imported(name: str) -> None:
        assert runner.invoke(app, ["import", str(SAMPLE / name)], env=env).exit_code == 0

    imported("q_testing_s0_m10_bc5a6c384fe9.json")
    papers()
    first, stamp = s3_vault.store.rows(PAPERS), fingerprints._raw_stamp(s3_vault)
    RawZone(s3_vault).files()
    assert fingerprints._raw_stamp(s3_vault) == stamp
    imported("arxiv-single.xml")
    assert fingerprints._raw_stamp(s3_vault) != stamp
    papers()
    assert s3_vault.store.rows(PAPERS) > first


def test_a_damaged_index_on_the_bucket_is_one_line_then_set_aside_and_rebuilt(
        s3_vault: VaultPaths, s3_endpoint: str) -> None:
    """The index stage records its objects' sizes and ETags beside the index; an object
    rewritten afterwards (zeroed, same size) makes every read one line naming it and the
    repair; `vault verify`'s check and the next build move the index under ``quarantine/``
    and build it again."""
    from testing.splits_vault import CUTOFF, papers_frame, views_frame
    from vault_pipeline.executors.settings import ExecutorSettings
    from vault_pipeline.index.lance_index import open_index
    from vault_pipeline.index.layout import INDEX_FOLDER
    from vault_pipeline.index.stage import STAGE as INDEX_STAGE
    from vault_pipeline.pipeline.stage import RunContext
    from vault_pipeline.splits.build import build_splits
    from vault_pipeline.splits.settings import SplitSettings
    from vault_pipeline.store.folder_outputs import location
    from vault_pipeline.store.repair import set_aside_damaged_objects

    def build(log: list[str]) -> None:
        INDEX_STAGE.run(s3_vault, INDEX_STAGE.resolve(home=s3_vault.home), RunContext(
            log=log.append, settings={"compute": ExecutorSettings(),
                                      "splits": SplitSettings(cutoff=CUTOFF)}))

    def zero_largest() -> str:
        fs, folder = location(s3_vault, INDEX_FOLDER)
        sizes = {k: v["size"] for k, v in fs.find(folder, detail=True).items()}
        key = max(sizes, key=sizes.get)
        fs.pipe_file(key, bytes(sizes[key]))
        return key[len(folder) + 1:]

    s3_vault.store.write(PAPERS, papers_frame())
    with s3_vault.store.writing("views") as tmp:
        views_frame().write_parquet(tmp)
    build_splits(s3_vault, SplitSettings(cutoff=CUTOFF))
    build([])
    rows = open_index(s3_vault).count_rows()
    assert "vault/index/views_index.lance.objects.json" in _keys(s3_endpoint, s3_vault.remote)
    assert set_aside_damaged_objects(s3_vault, [INDEX_FOLDER]) == []

    name = zero_largest()
    with pytest.raises(VaultError) as found:
        open_index(s3_vault)
    line = str(found.value)
    assert "\n" not in line and f"{name} altered" in line and "vault materialize" in line
    log: list[str] = []
    build(log)  # the build sets the damaged index aside first, then builds it whole
    assert any("repaired:" in entry and "moved to quarantine/" in entry for entry in log), log
    assert open_index(s3_vault).count_rows() == rows
    kept = [k for k in _keys(s3_endpoint, s3_vault.remote) if k.startswith("vault/quarantine/")]
    assert any(k.endswith(f"index/views_index.lance/{name}") for k in kept), kept
    assert any(k.endswith("views_index.lance.problem.txt") for k in kept), kept

    zero_largest()
    [aside] = set_aside_damaged_objects(s3_vault, [INDEX_FOLDER])
    assert "index/views_index.lance was damaged" in aside
    assert not any(k.startswith("vault/index/views_index.lance")
                   for k in _keys(s3_endpoint, s3_vault.remote))


def test_a_record_written_meanwhile_is_kept_not_overwritten(s3_vault: VaultPaths,
                                                            tmp_path: Path) -> None:
    """Two writers record their puts of one table at once: the one that read the record
    before the other's write landed loses its conditional put, reads again and adds its own,
    so the record accepts both (else the winning put could be taken for damage)."""
    import json

    import polars as pl

    from vault_pipeline.store.checksums import sha256_file
    from vault_pipeline.store.tables import _recorded_puts

    store, other = s3_vault.store, VaultPaths.from_env().store
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pl.DataFrame({"x": [1, 2]}).write_parquet(first)
    pl.DataFrame({"x": [3, 4]}).write_parquet(second)
    real, raced = store.fs.cat_file, []

    def cat_file(path, *args, **kwargs):
        data = real(path, *args, **kwargs)
        if path.endswith(".sum.json") and not raced:  # the other's record lands meanwhile
            raced.append(path)
            other._record_object("papers", second)
        return data

    other._record_object("papers", first)  # a record to read, so the race has a version
    store.fs.cat_file = cat_file
    try:
        store._record_object("papers", first)
    finally:
        store.fs.cat_file = real
    assert raced
    saved = json.loads(real(store._sidecar("papers")))
    assert {put["sha256"] for put in _recorded_puts(saved)} == {sha256_file(first),
                                                               sha256_file(second)}
