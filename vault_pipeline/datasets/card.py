"""The data card (`README.md` of an export): what the data is, how to load it, how it was
made, and under which licenses. Its YAML header declares one Hugging Face `datasets` config
per role, so `load_dataset(OUT_DIR, "gap_finder")` finds the files without arguments."""

from __future__ import annotations

from typing import Any

import polars as pl

from ..integrity.report import card_lines
from ..splits.assign import TARGET_SPLITS
from .training import ROLES

ARXIV_LICENSES = "https://arxiv.org/help/license"


def _yaml_header(manifest: dict[str, Any]) -> str:
    rows = {t["name"]: t["rows"] for t in manifest["tables"]}
    configs = []
    for role in ROLES:  # empty splits are left out: `datasets` refuses a file of no rows
        present = [s for s in TARGET_SPLITS if rows.get(f"{role}/{s}")]
        if present:
            configs += [f"- config_name: {role}", "  data_files:"]
            configs += [f"  - split: {s}\n    path: {role}/{s}.parquet" for s in present]
    lines = ["---", "license: other", "language:", "- en",
             "pretty_name: Research Idea Vault training datasets"]
    lines += ["configs:", *configs] if configs else []
    return "\n".join([*lines, "---"])


def _data_files(rows: dict[str, int]) -> str:
    """The `data_files` argument for the gap finder's non-empty splits (`datasets` cannot
    load a split of no rows; those files are still here, for Polars and others)."""
    present = [s for s in TARGET_SPLITS if rows.get(f"gap_finder/{s}")] or ["train"]
    return "{" + ", ".join(f'"{s}": "gap_finder/{s}.parquet"' for s in present) + "}"


def _table(header: tuple[str, ...], rows: list[tuple]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def data_card(manifest: dict[str, Any], examples: pl.DataFrame,
              integrity: dict[str, Any] | None = None) -> str:
    rows = {t["name"]: t["rows"] for t in manifest["tables"]}
    counts = [(role, view, *(rows.get(f"{role}/{s}", 0) for s in TARGET_SPLITS))
              for role, view in ROLES.items()]
    views = manifest["provenance"]["views"]
    provenance = _table(("backend", "model", "prompt", "targets"),
                        [(v.get("views_backend"), v.get("views_model"),
                          v.get("views_prompt_version"), v["rows"]) for v in views]) \
        if views else "No targets, so no views were exported."
    licenses = manifest["licenses"]
    license_rows = _table(("license", "targets"),
                          [(v.get("license") or "not stated (arXiv's default license)",
                            v["rows"]) for v in licenses]) if licenses else "No targets."
    index = manifest["provenance"].get("index") or {}
    classifier = ", ".join(c["classifier"] for c in manifest["provenance"]["split_classifier"])
    empty_note = ("\n**This export has no targets**: no paper of the vault is published on or "
                  "after the cutoff and passes the target criteria. The files exist, empty, "
                  "with their schema.\n" if examples.is_empty() else "")
    return f"""{_yaml_header(manifest)}

# Research Idea Vault: training datasets

Cutoff **{manifest['cutoff']}**, seed **{manifest['seed']}**, exported by
research-idea-vault {manifest['project_version']} on {manifest['created_at']}.
{empty_note}
Each row pairs a post-cutoff target paper with one producer role: the role's **inputs**
(`problem_setting`, `challenge`: the target's problem and what fails) and its **reference
artifact** (`reference`: the target's own research gap, intuition or proposal), with the
arXiv ids the target cites (`reference_citations`, and `citations_in_vault`, the ones a
retrieval-grounded answer could find). Texts are results-masked by the integrity gate (see
"Results masking" below for what it removed and how well it is measured to work). One
partition (train / validation / test) is shared by every role, so a
paper is never a training target for one role and a test target for another.

| role | reference view | {" | ".join(TARGET_SPLITS)} |
|---|---|{"---|" * len(TARGET_SPLITS)}
{chr(10).join("| " + " | ".join(str(v) for v in row) + " |" for row in counts)}

Papers per split of the whole vault (`splits.parquet`, with the reason for each paper):
{", ".join(f"{k} {v}" for k, v in manifest['split_counts'].items())}.

## Loading

```python
from datasets import load_dataset
ds = load_dataset("parquet", data_files={_data_files(rows)})
ds = load_dataset("path/to/this/folder", "gap_finder")   # same, from the header above

import polars as pl
train = pl.read_parquet("gap_finder/train.parquet")      # or pl.read_ndjson(".../train.jsonl")
```

`manifest.json` lists every file with its sha256, rows and schema.

## How it was made

- Papers published before the cutoff form the retrievable vault; those on or after it are
  targets when methodological (classifier: {classifier or "none needed"}), when their five
  views exist, and when at least the configured share of their cited work is in the vault
  (where citations are known); targets are split by a seeded hash of the id.
- Views (results-masked decomposition of each paper):

{provenance}

- Retrieval index used with these targets: {index.get("embedder", "not built")}.

## Results masking

Read from `integrity.json` (the integrity report of the vault at export time):

{card_lines(integrity)}

## Licenses

- arXiv metadata (ids, titles, categories, dates) is CC0 ({ARXIV_LICENSES}).
- The view texts are derived from each paper's full text, which stays under that paper's own
  license, recorded per row in `license` (a null license means arXiv's non-exclusive
  distribution license). Respect it when redistributing or training:

{license_rows}
"""
