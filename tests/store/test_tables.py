"""The table store: reads and writes by schema, atomically, on a local folder and on any
fsspec filesystem (an in-memory one stands in for object storage)."""

from __future__ import annotations

import fsspec
import polars as pl
import pyarrow as pa
import pytest

from vault_pipeline.errors import VaultError
from vault_pipeline.schemas import Column, TableSchema
from vault_pipeline.store import checksums
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.tables import TableStore

SPLITS = TableSchema("splits", "A table of two columns.", (
    Column("arxiv_id", pa.string(), "Id.", False), Column("split", pa.string(), "Split.")))


def _splits(n: int) -> pl.DataFrame:
    return pl.DataFrame({"split": ["vault"] * n, "arxiv_id": [f"2401.{i:05d}" for i in range(n)]})


@pytest.fixture(params=["local", "memory"])
def store(request, tmp_path) -> TableStore:
    if request.param == "local":
        return TableStore(tmp_path / "tables")
    fs = fsspec.filesystem("memory")
    root = f"/vault-{tmp_path.name}/tables"
    return TableStore(root, fs)


def test_absent_tables(store: TableStore) -> None:
    assert not store.exists(SPLITS) and store.rows(SPLITS) == 0 and store.names() == []
    assert store.read_optional(SPLITS) is None
    assert store.read(SPLITS).columns == SPLITS.names
    with pytest.raises(VaultError, match="vault materialize --select splits") as err:
        store.read_required(SPLITS)
    assert "\n" not in str(err.value)


def test_round_trip_by_schema(store: TableStore) -> None:
    assert store.write(SPLITS, _splits(3)) == 3
    frame = store.read_required(SPLITS, ("arxiv_id", "split"))
    assert frame.columns == SPLITS.names and frame.height == 3
    assert store.rows(SPLITS) == 3 and store.names() == ["splits"]
    assert store.scan(SPLITS).select(pl.len()).collect().item() == 3
    with pytest.raises(VaultError, match="lacks columns"):
        store.read_required(SPLITS, ("no_such_column",))


def test_append_keeps_rows(store: TableStore) -> None:
    store.append(SPLITS, _splits(1))
    assert store.append(SPLITS, _splits(2)) == 3


def test_batches_read_and_write_a_table_without_holding_it(store: TableStore) -> None:
    assert list(store.batches(SPLITS)) == []  # never written: no batches
    assert store.write_batches(SPLITS, (_splits(n) for n in (3, 0, 4))) == 7
    got = list(store.batches(SPLITS, ["arxiv_id"], rows=2))
    assert [b.height for b in got] == [2, 2, 2, 1]
    assert pl.concat(got).equals(pl.concat([_splits(3), _splits(4)]).select("arxiv_id"))
    assert store.read(SPLITS).equals(pl.concat([_splits(3), _splits(4)]).select(SPLITS.names))
    with pytest.raises(ValueError, match="lacks columns"):
        store.write_batches(SPLITS, [pl.DataFrame({"split": ["vault"]})])
    assert store.rows(SPLITS) == 7  # a failed streamed write leaves the table


def test_a_failed_write_leaves_the_table(tmp_path) -> None:
    store = VaultPaths(tmp_path).store
    store.write(SPLITS, _splits(2))
    with pytest.raises(ValueError, match="lacks columns"):
        store.write(SPLITS, pl.DataFrame({"arxiv_id": ["x"]}))
    assert store.rows(SPLITS) == 2
    assert [p.name for p in (tmp_path / "tables").iterdir() if not p.name.endswith(
        checksums.SUFFIX)] == ["splits.parquet"]
