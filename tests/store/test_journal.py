"""The one crash-resume journal: parts written atomically per kind, read back by the next
run, cleared once the tables are written."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from vault_pipeline.schemas import Column, TableSchema
from vault_pipeline.store.journal import Journal

DONE = TableSchema("done", "Finished rows.", (Column("id", pa.string(), "Id.", False),
                                              Column("n", pa.int64(), "A count.")))
FAILED = TableSchema("failed", "Failed rows.", (Column("id", pa.string(), "Id.", False),))


def test_rows_are_buffered_then_kept(tmp_path) -> None:
    journal = Journal(tmp_path / "j", {"done": DONE}, flush_every=2)
    assert journal.scan().collect().columns == ["id", "n"]  # nothing yet: its schema
    journal.add({"id": "a", "n": 1})
    assert journal.parts() == []  # buffered
    journal.add({"id": "b", "n": None})
    journal.add({"id": "c", "n": 3})
    journal.flush()
    again = Journal(tmp_path / "j", {"done": DONE})  # the next run, after a crash
    assert sorted(again.scan().collect()["id"]) == ["a", "b", "c"]
    again.clear()
    assert not (tmp_path / "j").exists()


def test_batches_of_several_kinds(tmp_path) -> None:
    journal = Journal(tmp_path / "j", {"records": DONE, "failures": FAILED})
    journal.save({"records": pl.DataFrame({"n": [1], "id": ["a"]}),
                  "failures": pl.DataFrame({"id": ["b"]})}, key="batch1")
    assert [p.name for p in journal.parts("failures")] == ["batch1.failures.parquet"]
    assert journal.load("records")[0].columns == ["id", "n"]  # cast to its schema


def test_a_damaged_part_is_set_aside_and_its_work_done_again(tmp_path) -> None:
    from tests.store.test_checksums import flip
    from vault_pipeline.store import checksums

    journal = Journal(tmp_path / "j", {"done": DONE})
    journal.save({"done": pl.DataFrame({"id": ["a"], "n": [1]})}, key="one")
    journal.save({"done": pl.DataFrame({"id": ["b"], "n": [2]})}, key="two")
    flip(tmp_path / "j" / "two.done.parquet")  # size and mtime kept
    checksums._trusted.clear()  # as the next run finds it
    again = Journal(tmp_path / "j", {"done": DONE})
    assert again.scan().collect()["id"].to_list() == ["a"]
    assert (tmp_path / "j" / "two.done.parquet.damaged").is_file()
