"""`vault export OUT_DIR`: the training datasets as files a trainer loads in one line.

Layout: ``<role>/<split>.parquet`` and ``<role>/<split>.jsonl`` for each producer role and
target split, ``splits.parquet`` (the whole partition, with reasons), ``README.md`` (the
data card, whose YAML header lets `datasets.load_dataset(OUT_DIR, role)` find the files) and
``manifest.json`` (tables, row counts, schemas, sha256 of every file, cutoff, seed,
provenance, project version). The evaluation sets, when built, go to ``evaluation/<set>/``
(`vault_pipeline.datasets.evaluation`). The export is written in a scratch folder next to OUT_DIR
and renamed into place, so OUT_DIR is either the previous export or the new one, never half."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..errors import VaultError
from ..index.lance_index import index_metadata_of
from ..integrity.report import build_report
from ..paths import VaultPaths
from ..schemas import SPLITS, TRAINING_EXAMPLES
from ..splits.assign import TARGET_SPLITS
from .card import data_card
from .evaluation import add_evaluation_sets
from .manifest import (
    INTEGRITY_FILE,
    MANIFEST,
    FileEntry,
    build_manifest,
    verify_export,
    write_manifest,
    write_pair,
)
from .training import ROLES


@dataclass(frozen=True)
class ExportReport:
    out_dir: Path
    files: int
    rows: dict[str, int]
    cutoff: str
    seed: int


def _check_target(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise VaultError(f"{out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        if not (out_dir / MANIFEST).exists():
            raise VaultError(f"{out_dir} is not empty and holds no export: choose another "
                             "folder")
        if not overwrite:
            raise VaultError(f"{out_dir} already holds an export: pass --overwrite to "
                             "replace it")


def export_datasets(paths: VaultPaths, out_dir: Path, overwrite: bool = False,
                    index_info: dict[str, str] | None = None) -> ExportReport:
    """Write the export of the vault's current `training_examples` and `splits`."""
    out_dir = out_dir.expanduser().resolve()
    _check_target(out_dir, overwrite)
    examples = paths.store.read_required(TRAINING_EXAMPLES, TRAINING_EXAMPLES.names)
    splits = paths.store.read_required(SPLITS, SPLITS.names)
    if splits.is_empty():
        raise VaultError("the splits table is empty: nothing to export")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        files: list[FileEntry] = []
        for role in ROLES:
            for split in TARGET_SPLITS:
                part = examples.filter((pl.col("role") == role) & (pl.col("split") == split))
                written = write_pair(part, staging / role, split, TRAINING_EXAMPLES)
                files += [FileEntry.of(staging, f, f"{role}/{split}", part.height)
                          for f in written]
        written = write_pair(splits, staging, "splits", SPLITS)
        files += [FileEntry.of(staging, f, "splits", splits.height) for f in written]
        if index_info is None:
            index_info = index_metadata_of(paths)
        manifest = build_manifest(files, examples, splits, index_info)
        add_evaluation_sets(paths, staging, manifest)
        integrity = build_report(paths)
        report_file = staging / INTEGRITY_FILE
        report_file.write_text(json.dumps(integrity, indent=2, sort_keys=True) + "\n",
                               encoding="utf-8")
        manifest["files"].append(FileEntry.of(staging, report_file, "integrity_report",
                                              None).as_dict())
        card = staging / "README.md"
        card.write_text(data_card(manifest, examples, integrity), encoding="utf-8")
        manifest["files"].append(FileEntry.of(staging, card, "data_card", None).as_dict())
        write_manifest(staging, manifest)
        problems = verify_export(staging)
        if problems:
            raise VaultError(f"export does not verify: {problems[0]}")
        _swap_into_place(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    rows = {t["name"]: t["rows"] for t in manifest["tables"]}
    return ExportReport(out_dir, len(manifest["files"]), rows, manifest["cutoff"],
                        manifest["seed"])


def _swap_into_place(staging: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` by ``staging`` with two renames (the old export is removed only
    once the new one is in place)."""
    old = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        out_dir.rename(old)
    staging.rename(out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
