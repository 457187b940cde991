"""Fault injection on the LanceDB index: its files are recorded when the index stage writes
them; a file zeroed or removed afterwards (size and mtime kept) makes every read one line
naming the file and the repair, and the next build sets it aside and builds it again."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from testing.splits_vault import CUTOFF, write_vault
from vault_pipeline.cli.app import app
from vault_pipeline.errors import VaultError
from vault_pipeline.executors.settings import ExecutorSettings
from vault_pipeline.index.lance_index import index_metadata_of, open_index
from vault_pipeline.index.layout import index_table_dir
from vault_pipeline.index.search import search_vault
from vault_pipeline.index.stage import STAGE
from vault_pipeline.pipeline.stage import RunContext
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store import checksums
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.repair import quarantine_damaged

FOLDER = "index/views_index.lance"


def build(paths: VaultPaths, log: list[str]) -> None:
    settings = STAGE.resolve(home=paths.home)
    STAGE.run(paths, settings, RunContext(log=log.append,
                                          settings={"compute": ExecutorSettings(),
                                                    "splits": SplitSettings(cutoff=CUTOFF)}))


@pytest.fixture
def indexed(vault_paths: VaultPaths) -> VaultPaths:
    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    build(vault_paths, [])
    return vault_paths


def _largest(paths: VaultPaths):
    return max((p for p in index_table_dir(paths).rglob("*") if p.is_file()),
               key=lambda p: p.stat().st_size)


def zero_largest(paths: VaultPaths) -> str:
    file = _largest(paths)
    before = file.stat()
    file.write_bytes(bytes(before.st_size))
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    return str(file.relative_to(index_table_dir(paths)))


def test_a_zeroed_index_file_is_one_line_on_every_read(indexed: VaultPaths) -> None:
    assert search_vault(indexed, "experts", k=1)
    name = zero_largest(indexed)
    for read in (lambda: open_index(indexed), lambda: index_metadata_of(indexed),
                 lambda: search_vault(indexed, "experts", k=1)):
        with pytest.raises(VaultError) as caught:
            read()
        message = str(caught.value)
        assert "\n" not in message and name in message and "vault materialize" in message
    result = CliRunner().invoke(app, ["search", "experts", "--local"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    status = CliRunner().invoke(app, ["status", "--json"])
    assert "damaged" in json.loads(status.output)["index"]


def test_the_repair_sets_a_damaged_index_aside_and_the_next_build_makes_it_again(
        indexed: VaultPaths) -> None:
    zero_largest(indexed)
    found = quarantine_damaged(indexed, [FOLDER])
    assert [f.path for f in found] == [FOLDER]
    assert not index_table_dir(indexed).exists()
    log: list[str] = []
    build(indexed, log)
    assert search_vault(indexed, "experts", k=1)
    assert checksums.check_folder(index_table_dir(indexed)) is None


def test_the_index_stage_verifies_what_it_builds_upon(indexed: VaultPaths) -> None:
    """The build brings the index in step in place: a damaged one is set aside first."""
    name = next(iter(json.loads(checksums.sidecar(index_table_dir(indexed)).read_text())
                     ["files"]))
    (index_table_dir(indexed) / name).unlink(missing_ok=True)
    log: list[str] = []
    build(indexed, log)
    assert any("was damaged" in line and "quarantine/" in line for line in log), log
    assert search_vault(indexed, "experts", k=1)
