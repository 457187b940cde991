"""The README's Python snippets run as written, on a small vault with a real index."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from testing.splits_vault import CUTOFF, write_vault
from vault_pipeline.embeddings.embedders import load_embedder
from vault_pipeline.index.lance_index import build_index
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths

README = Path(__file__).parents[2] / "README.md"


def snippets() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", README.read_text(encoding="utf-8"),
                      flags=re.MULTILINE | re.DOTALL)


def test_every_python_snippet_of_the_readme_runs(tmp_path, monkeypatch) -> None:
    paths = VaultPaths(tmp_path / "vault_home").ensure()  # the snippets' "vault_home"
    write_vault(paths)
    build_splits(paths, SplitSettings(cutoff=CUTOFF))
    build_index(paths, load_embedder())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VAULT_HOME", str(paths.home))
    monkeypatch.setenv("DAGSTER_HOME", str(paths.dagster_home))
    found = snippets()
    assert len(found) >= 2
    for number, code in enumerate(found, 1):
        scope: dict = {}
        exec(compile(code, f"README.md python snippet {number}", "exec"), scope)
    assert isinstance(scope["papers"], pl.DataFrame)
    assert scope["papers"].height == pl.read_parquet(paths.table("papers")).height
    assert scope["index"].count_rows() > 0
