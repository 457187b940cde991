"""Scratch files are read and written whatever their folder is called."""

from __future__ import annotations

import polars as pl

from vault_pipeline.duplicates import scratch


def test_a_folder_with_a_quote_in_its_name(tmp_path) -> None:
    work = tmp_path / "it's here"
    work.mkdir()
    out = scratch.Appender(work / "rows.parquet", {"id": pl.String, "n": pl.Int64})
    out(pl.DataFrame({"id": ["a", "b", "a"], "n": [1, 2, 3]}))
    with scratch.connect(work) as db:
        copied = scratch.copy_to(db, f"SELECT id, sum(n) AS n FROM {scratch.scan(out.close())} "
                                     "GROUP BY id ORDER BY id", work / "sums.parquet")
        assert scratch.frame(db, f"SELECT * FROM {scratch.scan(copied)}").rows() == \
            [("a", 4), ("b", 2)]
