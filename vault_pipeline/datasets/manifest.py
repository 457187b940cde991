"""The export manifest (`manifest.json`): what every file is, its sha256, size and rows, the
schema of every table, the cutoff and seed of the split, where the texts came from (views
backend, model and prompt; the split classifier; the index's embedder) and the project
version. :func:`verify_export` checks a folder against it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from vault_pipeline.datasets.artifacts import ARTIFACT_NAMES
from vault_pipeline.datasets.training import ROLES, TEMPLATES
from vault_pipeline.schemas import SPLITS, TRAINING_EXAMPLES, TableSchema
from vault_pipeline.store.atomic import atomic_write_bytes
from vault_pipeline.store.tables import write_parquet

MANIFEST = "manifest.json"
INTEGRITY_FILE = "integrity.json"  # the integrity report the card quotes
FORMAT = "research-idea-vault/export/1"
PROJECT = "research-idea-vault"


def sha256_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_pair(frame: pl.DataFrame, folder: Path, stem: str,
               schema: TableSchema, jsonl: bool = True) -> list[Path]:
    """Parquet (typed, with the schema's docs) and, unless ``jsonl`` is off, JSON lines
    (dates as ISO strings)."""
    folder.mkdir(parents=True, exist_ok=True)
    parquet = folder / f"{stem}.parquet"
    write_parquet(parquet, frame, schema)
    if not jsonl:
        return [parquet]
    lines = folder / f"{stem}.jsonl"
    frame.select(schema.names).write_ndjson(lines)
    return [parquet, lines]


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the export folder, POSIX style
    table: str
    format: str
    rows: int | None
    bytes: int
    sha256: str

    @classmethod
    def of(cls, root: Path, file: Path, table: str, rows: int | None) -> FileEntry:
        kind = {".parquet": "parquet", ".jsonl": "jsonl", ".md": "markdown",
                ".json": "json"}.get(file.suffix, "binary")  # the index snapshot's files
        return cls(file.relative_to(root).as_posix(), table, kind, rows, file.stat().st_size,
                   sha256_file(file))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _schema(schema: TableSchema) -> list[dict[str, str]]:
    return [{"name": c.name, "type": str(c.type), "doc": c.doc} for c in schema.columns]


def project_version() -> str:
    try:
        return metadata.version(PROJECT)
    except metadata.PackageNotFoundError:
        return "unknown"


def _counts(frame: pl.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    present = [c for c in columns if c in frame.columns]
    if frame.is_empty() or not present:
        return []
    grouped = frame.group_by(present).len("rows").sort(present, nulls_last=True)
    return grouped.to_dicts()


def build_manifest(files: list[FileEntry], examples: pl.DataFrame, splits: pl.DataFrame,
                   index_info: dict[str, str],
                   schemas: dict[str, TableSchema] | None = None) -> dict[str, Any]:
    """The manifest of ``files``; a table's schema is ``schemas[name]`` (the training
    examples' when not named there)."""
    schemas = {"splits": SPLITS, **(schemas or {})}
    tables = []
    for entry in files:
        if not any(t["name"] == entry.table for t in tables):
            schema = schemas.get(entry.table, TRAINING_EXAMPLES)
            tables.append({"name": entry.table, "rows": entry.rows, "schema": _schema(schema),
                           "files": []})
        next(t for t in tables if t["name"] == entry.table)["files"].append(entry.path)
    per_paper = examples.unique("arxiv_id") if not examples.is_empty() else examples
    return {
        "format": FORMAT, "project": PROJECT, "project_version": project_version(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "cutoff": str(splits["cutoff"][0]) if splits.height else None,
        "seed": int(splits["seed"][0]) if splits.height else None,
        "split_counts": dict(sorted(splits.group_by("split").len().iter_rows())),
        "roles": {role: {"inputs": ["problem_setting", "challenge"], "reference_view": view,
                         "artifact": ARTIFACT_NAMES[role], "template": TEMPLATES[role]}
                  for role, view in ROLES.items()},
        "provenance": {
            "views": _counts(per_paper, ["views_backend", "views_model",
                                         "views_prompt_version"]),
            "split_classifier": _counts(splits.filter(pl.col("classifier").is_not_null()),
                                        ["classifier"]),
            "index": index_info,
        },
        "licenses": _counts(per_paper, ["license"]),
        "tables": tables,
        "files": [f.as_dict() for f in files],
    }


def write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    text = json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n"
    atomic_write_bytes(root / MANIFEST, text.encode())


def verify_export(root: Path) -> list[str]:
    """Every problem with an export folder: files missing, changed, unlisted, or row
    counts that differ from the manifest. Empty when it verifies."""
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return [f"cannot read {MANIFEST}: {exc}"]
    if manifest.get("format") != FORMAT:
        return [f"unknown export format {manifest.get('format')!r}"]
    problems = []
    listed = set()
    for entry in manifest["files"]:
        file = root / entry["path"]
        listed.add(entry["path"])
        if not file.is_file():
            problems.append(f"{entry['path']}: missing")
            continue
        if file.stat().st_size != entry["bytes"] or sha256_file(file) != entry["sha256"]:
            problems.append(f"{entry['path']}: sha256 differs from the manifest")
            continue
        if entry["format"] == "parquet" and pq.ParquetFile(file).metadata.num_rows \
                != entry["rows"]:
            problems.append(f"{entry['path']}: row count differs from the manifest")
        if entry["format"] == "jsonl" and _lines(file) != entry["rows"]:
            problems.append(f"{entry['path']}: line count differs from the manifest")
    extra = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                   if p.is_file() and p.name != MANIFEST)
    problems += [f"{name}: not in the manifest" for name in extra if name not in listed]
    return problems


def _lines(file: Path) -> int:
    with file.open("rb") as handle:
        return sum(1 for line in handle if line.strip())
