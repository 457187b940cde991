"""What the data card states, read back from the export's own files: rows of every table
file, papers per split, the vault's views, the targets' view provenance and licenses, the
evaluation papers marked. The card is rendered from these facts only, so every number it
shows is one a reader can recount in the folder; `card.card_disagreements` re-reads a
folder and says where its `README.md` no longer matches it (a file edited after the
export)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from vault_pipeline.datasets.training import ROLES
from vault_pipeline.splits.assign import TARGET_SPLITS

CARD = "README.md"
VAULT_PAPERS, VAULT_VIEWS = "vault/papers", "vault/views"


@dataclass(frozen=True)
class CardFacts:
    rows: dict[str, int]  # table name ("gap_finder/train", "splits", "vault/views") -> rows
    sizes: dict[str, int]  # Parquet path -> bytes
    split_counts: dict[str, int]  # papers per split of splits.parquet
    views: list[dict[str, Any]]  # the targets' view provenance, with targets per group
    licenses: list[dict[str, Any]]  # the targets' licenses, with targets per license
    evaluation_marked: int  # distinct papers marked `evaluation_paper` in the files

    @property
    def examples(self) -> int:
        return sum(self.rows.get(f"{r}/{s}", 0) for r in ROLES for s in TARGET_SPLITS)

    def present(self, role: str) -> list[str]:
        """The role's non-empty splits (`datasets` loads no file of zero rows)."""
        return [s for s in TARGET_SPLITS if self.rows.get(f"{role}/{s}")]


def _read(folder: Path, name: str) -> pl.DataFrame | None:
    file = folder / f"{name}.parquet"
    return pl.read_parquet(file) if file.is_file() else None


def _groups(frame: pl.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    present = [c for c in columns if c in frame.columns]
    if frame.is_empty() or not present:
        return []
    per_paper = frame.unique("arxiv_id", keep="first")
    return per_paper.group_by(present).len("rows").sort(present, nulls_last=True).to_dicts()


def read_facts(folder: Path) -> CardFacts:
    """The facts of the export in ``folder`` (its Parquet files; the card is not read)."""
    rows, sizes, frames = {}, {}, []
    names = [f"{r}/{s}" for r in ROLES for s in TARGET_SPLITS] + ["splits", VAULT_PAPERS,
                                                                    VAULT_VIEWS]
    for name in names:
        file = folder / f"{name}.parquet"
        if file.is_file():
            rows[name] = pq.ParquetFile(file).metadata.num_rows
            sizes[f"{name}.parquet"] = file.stat().st_size
            if "/" in name and not name.startswith("vault/"):
                frames.append(pl.read_parquet(file))
    examples = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    splits = _read(folder, "splits")
    counts = {} if splits is None or splits.is_empty() else dict(
        sorted(splits.group_by("split").len().iter_rows()))
    marked: set[str] = set()
    for frame in (examples, _read(folder, VAULT_PAPERS)):
        if frame is not None and "evaluation_paper" in frame.columns:
            marked |= set(frame.filter(pl.col("evaluation_paper"))["arxiv_id"].to_list())
    return CardFacts(rows, sizes, counts,
                     _groups(examples, ["views_backend", "views_model",
                                        "views_prompt_version"]),
                     _groups(examples, ["license"]), len(marked))
