"""One built vault for every access test (the index build is the slow part)."""

from __future__ import annotations

import pytest

from tests.access.world_vault import write
from vault_pipeline.store.paths import VaultPaths


@pytest.fixture(scope="session")
def world_paths(tmp_path_factory: pytest.TempPathFactory, model_cache) -> VaultPaths:
    paths = VaultPaths(tmp_path_factory.mktemp("access") / "vault").ensure()
    write(paths)
    return paths


@pytest.fixture(scope="session")
def toolbox(world_paths):
    from vault_pipeline.access.tools import Toolbox

    return Toolbox(world_paths)
