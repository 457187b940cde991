"""Progress of the long stages: the library reports through a callback, the CLI draws bars
from it; nothing is reported when no one listens."""

from __future__ import annotations

import io

import dagster as dg
from rich.console import Console

from testing.splits_vault import CUTOFF, write_vault
from vault_pipeline.cli.progress import stage_bars
from vault_pipeline.embeddings.embedders import load_embedder
from vault_pipeline.index.lance_index import build_index
from vault_pipeline.pipeline import progress
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings


def test_index_reports_each_batch(vault_paths) -> None:
    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    heard: list[tuple[int, int | None, str]] = []
    report = build_index(vault_paths, load_embedder(), progress=lambda *a: heard.append(a))
    assert report.embedded > 0
    assert sum(done for done, _, _ in heard) == report.embedded
    assert {total for _, total, _ in heard} == {report.embedded}
    heard.clear()
    build_index(vault_paths, load_embedder(), progress=lambda *a: heard.append(a))
    assert heard == []  # nothing new: nothing embedded, nothing reported


def test_stage_callbacks_reach_the_installed_sink_only() -> None:
    heard = []
    report = progress.for_stage("documents")
    report(1, 3, "documents: converting pdf")  # no sink: dropped
    with progress.reporting(lambda *a: heard.append(a)):
        report(2, 3, "documents: converting pdf")
    report(1, 3, "after")
    assert heard == [("documents", 2, 3, "documents: converting pdf")]


def test_cli_draws_a_bar_for_a_stage_run_by_dagster(vault_paths) -> None:
    from assets import VaultResource
    from assets.index import index as asset

    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    with stage_bars(console) as bars:
        result = dg.materialize([asset], resources={"vault": VaultResource()})
        task = bars.tasks[0]
        assert task.description == "index: embedding views"
        assert task.completed == task.total and task.total > 0
    assert result.success
    assert "index: embedding views" in screen.getvalue()
