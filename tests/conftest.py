"""Shared fixtures: every test gets its own data root, never the user's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from vault_pipeline.store.paths import VaultPaths

DATA = Path(__file__).parent / "data"
SAMPLE = Path(__file__).parents[1] / "vault_pipeline" / "sample" / "raw"


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ONNX exports of the embedding model go to one folder of the session, not the user's."""
    folder = tmp_path_factory.mktemp("model-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VAULT_MODEL_CACHE", str(folder))
        yield folder


@pytest.fixture
def vault_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> VaultPaths:
    """A fresh, empty vault; VAULT_HOME and DAGSTER_HOME point into it."""
    paths = VaultPaths(tmp_path / "vault").ensure()
    monkeypatch.setenv("VAULT_HOME", str(paths.home))
    monkeypatch.setenv("DAGSTER_HOME", str(paths.dagster_home))
    return paths


@pytest.fixture
def sample_vault(vault_paths: VaultPaths) -> VaultPaths:
    """The bundled sample imported and `papers` built (221 papers)."""
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app

    runner = CliRunner()
    assert runner.invoke(app, ["import", str(SAMPLE)]).exit_code == 0
    built = runner.invoke(app, ["materialize", "--select", "papers", "-q"])
    assert built.exit_code == 0, built.output
    return vault_paths


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One test file per worker (its module fixtures built once), except where a test names
    its own group: the tests that read the one `vault demo` of a worker share ``demo``, and
    the files that start a Ray cluster share ``ray`` (two clusters at once on a small runner
    contend for its cores and ports)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker with ``--dist loadgroup``, every test must carry its group in its
    id (``...@demo``), as pytest-xdist writes it: if a pytest release stops reading that,
    the groups above are silently ignored and the suite does its slowest work twice."""
    if getattr(session.config.option, "loadgroup", False):
        ungrouped = [item.nodeid for item in session.items if "@" not in item.nodeid]
        if ungrouped:
            raise pytest.UsageError(
                f"--dist loadgroup has no effect with pytest {pytest.__version__} (e.g. "
                f"{ungrouped[0]} carries no group): install the pytest the dev extra pins")


@dataclass(frozen=True)
class DemoRun:
    """The vault `vault demo` built, with what the command printed and its exit code."""

    paths: VaultPaths
    output: str
    exit_code: int


def small_inbox(folder: Path) -> Path:
    """A slice of the sample that still reaches every stage (metadata, e-prints, PDFs, one
    OpenReview venue): a whole run of the graph in seconds, not minutes."""
    folder.mkdir()
    lines = (SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_bytes().splitlines()
    (folder / "metadata.jsonl").write_bytes(b"\n".join(lines[:24]) + b"\n")
    for name in ("q_testing_s0_m10_bc5a6c384fe9.json", "arXiv-2202.12139v1.tar.gz",
                 "2202.12139v1.pdf", "2204.08348v3.pdf", "1401.2122v5.gz",
                 "openreview-iclr2024-constructed.json"):
        shutil.copy(SAMPLE / name, folder)
    return folder


SMALL_INBOX_PAPERS = 24 + 10  # old-style metadata lines, and the API page of e-prints and PDFs


def vault_script() -> str:
    """The installed `vault` console script beside this Python."""
    script = shutil.which("vault", path=str(Path(sys.executable).parent))
    assert script, "the vault console script is not installed beside this Python"
    return script


def vault_command(*args: str, env: dict[str, str], cwd: Path, timeout_s: float = 900
                  ) -> tuple[str, int]:
    """The installed `vault` console script in a process of its own, as the README runs it:
    its spawned workers re-import the CLI, which an in-process run never shows."""
    try:
        result = subprocess.run([vault_script(), *args], env={**os.environ, **env}, cwd=cwd,
                                capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        told = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        pytest.fail(f"vault {' '.join(args)} ran past {timeout_s:g} s:\n{told[-3000:]}")
    return result.stdout + result.stderr, result.returncode


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> DemoRun:
    """`vault demo` on the bundled sample through the console script, once per worker: the
    end-to-end run is the suite's slowest step, and the tests of the ``demo`` group only
    read what it built."""
    paths = VaultPaths(tmp_path_factory.mktemp("demo") / "vault").ensure()
    output, exit_code = vault_command("demo", cwd=paths.home, env={
        "VAULT_HOME": str(paths.home), "DAGSTER_HOME": str(paths.dagster_home)})
    return DemoRun(paths, output, exit_code)


@pytest.fixture
def demo_vault(demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch) -> DemoRun:
    """The demo's vault as the current one (VAULT_HOME and DAGSTER_HOME point into it)."""
    monkeypatch.setenv("VAULT_HOME", str(demo_run.paths.home))
    monkeypatch.setenv("DAGSTER_HOME", str(demo_run.paths.dagster_home))
    return demo_run
