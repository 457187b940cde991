"""An export's retrievable vault (``vault/`` of `vault export`) as a session sees it: the
same catalog rule over the export's own `papers` (held version and its day) and `views`, so a
trainer that loads the files instead of calling the tools cuts them the same way."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl

from vault_pipeline.access.world import CATALOG_COLUMNS, Catalog, World, empty_catalog, make_world
from vault_pipeline.errors import VaultError


def export_catalog(export_dir: Path | str) -> Catalog:
    """The export's papers as a catalog (columns an export does not carry are null)."""
    root = Path(export_dir)
    papers_file = root / "vault" / "papers.parquet"
    if not papers_file.exists():
        raise VaultError(f"{root} holds no retrievable vault (vault/papers.parquet)")
    papers = pl.read_parquet(papers_file)
    if "version_created" not in papers.columns:
        raise VaultError(f"{root} was exported before papers carried the day of their held "
                         "version: export again to cut it at a date")
    template = empty_catalog()
    for column in CATALOG_COLUMNS:
        if column not in papers.columns:
            papers = papers.with_columns(pl.lit(None, template.schema[column]).alias(column))
    manifest = root / "manifest.json"
    cutoff = (date.fromisoformat(json.loads(manifest.read_text())["cutoff"])
              if manifest.exists() else None)
    return Catalog(papers.select(CATALOG_COLUMNS).cast(template.schema), cutoff)


def _target_title(root: Path, target: str) -> str | None:
    """The target's title from the export's training files (targets are not in vault/)."""
    for file in sorted(root.glob("*/*.parquet")):
        if file.parent.name in ("vault", "evaluation"):
            continue
        found = (pl.scan_parquet(file).filter(pl.col("arxiv_id") == target).select("title")
                 .head(1).collect())
        if found.height:
            return found["title"][0]
    return None


def export_world(export_dir: Path | str, as_of: str | date, target: str | None = None,
                 title: str | None = None) -> World:
    root = Path(export_dir)
    catalog = export_catalog(root)
    if target is not None and title is None:
        title = _target_title(root, target)
    return make_world(catalog, as_of, target, title)


def session_vault(export_dir: Path | str, as_of: str | date, target: str | None = None,
                  title: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(papers, views) of the export's retrievable vault that a session cut at ``as_of``
    without ``target`` may see."""
    root = Path(export_dir)
    world = export_world(root, as_of, target, title)
    papers = world.filter(pl.read_parquet(root / "vault" / "papers.parquet"))
    views = world.filter(pl.read_parquet(root / "vault" / "views.parquet"))
    return papers, views
