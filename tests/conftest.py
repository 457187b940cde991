"""Shared fixtures: every test gets its own data root, never the user's."""

from __future__ import annotations

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
    """The bundled sample imported and `papers` built (219 papers)."""
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app

    runner = CliRunner()
    assert runner.invoke(app, ["import", str(SAMPLE)]).exit_code == 0
    built = runner.invoke(app, ["materialize", "--select", "papers", "-q"])
    assert built.exit_code == 0, built.output
    return vault_paths
