"""Decontamination of the held-out targets: a training target holding a test target's
13-grams is named for removal, an overlap with the vault is counted, the card says both."""

from __future__ import annotations

import polars as pl

from vault_pipeline.datasets.card import _leakage_note
from vault_pipeline.duplicates.decontamination import decontaminate
from vault_pipeline.duplicates.settings import DuplicatesSettings

TEST_TEXT = ("We adapt the capacity of every expert to the observed routing load so that no "
             "token is dropped when the batch is uneven across the experts of the layer.")


def test_overlaps_with_training_and_vault_are_found_and_carded() -> None:
    splits = pl.DataFrame({"arxiv_id": ["t1", "t2", "tr1", "tr2", "v1", "v2"],
                           "split": ["test", "validation", "train", "train", "vault", "vault"]})
    views = pl.DataFrame({
        "arxiv_id": ["t1", "t2", "tr1", "tr2", "v1", "v2"], "view": ["proposal"] * 6,
        "text": [TEST_TEXT, "A different validation target about black hole entropy.",
                 "Copied: " + TEST_TEXT, "An unrelated training target on graph drawing.",
                 TEST_TEXT + " Again.", "Nothing shared with any held-out target here."]})
    found = decontaminate(splits, views, DuplicatesSettings())
    summary = found.summary()
    assert summary["removed"] == ["tr1"]
    assert found.against_vault.select("query", "match").rows() == [("t1", "v1")]
    assert summary["held_out_targets"] == 2
    note = _leakage_note({"decontamination": {**summary, "policy": {"aliases": 1}}})
    assert "1 overlap a retrievable vault paper" in note and "1 training targets" in note
    assert "1 aliases" in note
    assert _leakage_note({}) == "Not measured for this export."
