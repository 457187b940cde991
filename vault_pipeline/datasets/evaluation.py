"""The evaluation sets inside a dataset export (`vault export`, the `dataset_export` asset):
``evaluation/<set>/data.parquet`` and ``data.jsonl`` for each set, with the set's data card
as ``evaluation/<set>/README.md`` (its YAML header lets `datasets.load_dataset(that folder)`
load it as one `test` split), plus the ideas, the quarantined extractions and the
exclusions. Every file is listed in the export's manifest like the training files; the
cards' metrics go into the manifest under `evaluation`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vault_pipeline.datasets.manifest import FileEntry, write_pair
from vault_pipeline.evalsets.build import TABLES
from vault_pipeline.schemas import (
    EVAL_CARDS,
    EVAL_EXCLUDED,
    EVAL_IDEA_FAILURES,
    EVAL_IDEAS,
    TableSchema,
)
from vault_pipeline.store.paths import VaultPaths

FOLDER = "evaluation"
EXTRA = {"ideas": EVAL_IDEAS, "idea_failures": EVAL_IDEA_FAILURES, "excluded": EVAL_EXCLUDED}


def _header(name: str, rows: int) -> str:
    lines = ["---", "license: other", "language:", "- en",
             f"pretty_name: Research Idea Vault evaluation set {name}"]
    if rows:  # `datasets` refuses a data file of no rows
        lines += ["configs:", "- config_name: default", "  data_files:",
                  "  - split: test", "    path: data.parquet"]
    return "\n".join([*lines, "---", ""])


def _schema_doc(schema: TableSchema) -> list[dict[str, str]]:
    return [{"name": c.name, "type": str(c.type), "doc": c.doc} for c in schema.columns]


def add_evaluation_sets(paths: VaultPaths, staging: Path, manifest: dict[str, Any]) -> int:
    """Write the evaluation sets the vault has into ``staging`` and list them in
    ``manifest``; returns the number of sets written (0 when none were built)."""
    store = paths.store
    cards_frame = store.read_optional(EVAL_CARDS)
    if cards_frame is None:
        return 0
    cards = {r["set_name"]: r for r in cards_frame.iter_rows(named=True)}
    evaluation: dict[str, Any] = {}
    wanted = [(name, schema, cards.get(name)) for name, schema in TABLES.items()]
    wanted += [(name, schema, None) for name, schema in EXTRA.items()]
    for name, schema, card in wanted:
        frame = store.read_optional(schema)
        if frame is None:
            continue
        folder = staging / FOLDER / name
        written = write_pair(frame, folder, "data", schema)
        label = f"{FOLDER}/{name}"
        entries = [FileEntry.of(staging, f, label, frame.height) for f in written]
        if card is not None:
            readme = folder / "README.md"
            readme.write_text(_header(name, frame.height) + card["card"], encoding="utf-8")
            entries.append(FileEntry.of(staging, readme, f"{label}/card", None))
            evaluation[name] = {"table": schema.name, "rows": frame.height,
                                "settings_fingerprint": card["settings_fingerprint"],
                                "built_at": str(card["built_at"]),
                                "metrics": json.loads(card["metrics"])}
        manifest["tables"].append({"name": label, "rows": frame.height,
                                   "schema": _schema_doc(schema),
                                   "files": [e.path for e in entries if e.rows is not None]})
        manifest["files"] += [e.as_dict() for e in entries]
    manifest["evaluation"] = evaluation
    return len(evaluation)
