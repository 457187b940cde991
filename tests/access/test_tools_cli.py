"""`vault tools schema` and `vault search --as-of/--target`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.access.world_vault import NEAR_DUPLICATE, TARGET
from vault_pipeline.access import specs
from vault_pipeline.cli.app import app

runner = CliRunner()


def test_schema_command_prints_the_shipped_file() -> None:
    result = runner.invoke(app, ["tools", "schema", "--check"])
    assert result.exit_code == 0, result.output
    assert result.stdout == specs.render() == specs.shipped()


def test_search_under_a_cutoff_and_target(world_paths) -> None:
    base = ["search", "expert routing drops tokens when load is uneven", "--local", "-k", "30",
            "--mode", "vector", "--home", str(world_paths.home)]
    free = runner.invoke(app, base)
    cut = runner.invoke(app, [*base, "--as-of", "2026-01-01", "--target", TARGET])
    early = runner.invoke(app, [*base, "--as-of", "2024-03-01"])
    assert free.exit_code == cut.exit_code == early.exit_code == 0, cut.output
    ids = [{json.loads(line)["arxiv_id"] for line in r.stdout.splitlines() if line.strip()}
           for r in (free, cut, early)]
    assert NEAR_DUPLICATE in ids[0] and NEAR_DUPLICATE not in ids[1]
    assert ids[2] == {"2401.00001", "2402.00002"}
    bad = runner.invoke(app, [*base, "--as-of", "2025"])
    assert bad.exit_code == 1 and "not a day" in bad.output
