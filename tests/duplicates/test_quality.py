"""The decontamination check: a retrievable view holding a held-out target's 13-grams fails
it, the same index without that row passes."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from vault_pipeline.duplicates import quality
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.schemas import SPLITS
from vault_pipeline.store.paths import VaultPaths

TARGET = ("We adapt the capacity of every expert to the observed routing load so that no "
          "token is dropped when the batch is uneven across the experts of the layer.")


class Table:
    """The few calls the check makes of a LanceDB table."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def count_rows(self) -> int:
        return len(self.rows)

    def search(self):
        return self

    def select(self, _columns):
        return self

    def limit(self, _n):
        return self

    def to_arrow(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows)


def test_overlap_check_fails_on_a_retrievable_copy(vault_paths: VaultPaths) -> None:
    store = vault_paths.store
    splits = pl.DataFrame({"arxiv_id": ["2601.00001", "2401.00002"],
                           "split": ["test", "vault"]})
    splits.write_parquet(store.path(SPLITS))
    pl.DataFrame({"arxiv_id": ["2601.00001"], "view": ["proposal"], "text": [TARGET]}
                 ).write_parquet(vault_paths.table("views"))
    settings = DuplicatesSettings()
    clean = Table([{"arxiv_id": "2401.00002", "view": "proposal",
                    "text": "A cascade of classifiers exits early on easy images."}])
    assert quality.no_retrievable_overlap(vault_paths, settings, table=clean).passed
    copied = Table([*clean.rows, {"arxiv_id": "2401.00002", "view": "intuition",
                                  "text": "Before: " + TARGET}])
    outcome = quality.no_retrievable_overlap(vault_paths, settings, table=copied)
    assert not outcome.passed
    assert outcome.metadata["overlapping"] == ["2601.00001 in 2401.00002: 100%"]
