"""Fault injection on derived files: a table or the index damaged after it was written (cut
short, a byte flipped with its size and mtime kept, zeroed) is found on read, one line naming
the file and the repair, and set aside by the repair so the next build rebuilds it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from vault_pipeline.errors import VaultError
from vault_pipeline.schemas import Column, TableSchema
from vault_pipeline.store import checksums
from vault_pipeline.store.paths import VaultPaths
from vault_pipeline.store.repair import QUARANTINE, quarantine_damaged
from vault_pipeline.store.sql import damaged_tables, query

ROWS = 5000
SPLITS = TableSchema("splits", "Two columns.", (
    Column("arxiv_id", pa.string(), "Id.", False), Column("split", pa.string(), "Split.")))
OTHER = dataclasses.replace(SPLITS, name="other")


def _splits(n: int = ROWS) -> pl.DataFrame:
    return pl.DataFrame({"arxiv_id": [f"2401.{i:05d}" for i in range(n)],
                         "split": ["vault"] * n})


def flip(path: Path, at: int | None = None) -> None:
    """Change one byte in place, then put the size and mtime back as they were."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    at = len(data) // 2 if at is None else at
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def zero(path: Path) -> None:
    before = path.stat()
    path.write_bytes(bytes(before.st_size))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.fixture
def written(vault_paths: VaultPaths) -> VaultPaths:
    vault_paths.store.write(SPLITS, _splits())
    checksums._trusted.clear()  # as a new process finds it
    return vault_paths


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("damage", [flip, cut, zero])
def test_a_damaged_table_is_one_line_on_every_read(written: VaultPaths, damage) -> None:
    store, file = written.store, written.table("splits")
    damage(file)
    checksums._trusted.clear()
    for read in (lambda: store.read(SPLITS), lambda: store.scan(SPLITS).collect(),
                 lambda: store.rows(SPLITS)):
        with pytest.raises(VaultError) as caught:
            read()
        message = one_line(caught)
        assert str(file) in message and "vault materialize" in message


def test_a_flip_in_a_trusted_file_is_found_within_the_process(written: VaultPaths) -> None:
    store = written.store
    assert store.read(SPLITS).height == ROWS  # trusted now, by its stat
    flip(written.table("splits"))  # the ctime moved: hashed again
    with pytest.raises(VaultError, match="content altered"):
        store.read(SPLITS)


def test_the_repair_moves_the_file_aside_and_the_table_reads_as_absent(
        written: VaultPaths) -> None:
    file = written.table("splits")
    flip(file)
    checksums._trusted.clear()
    found = quarantine_damaged(written)
    assert [f.path for f in found] == ["tables/splits.parquet"]
    assert "content altered" in str(found[0]) and "\n" not in str(found[0])
    assert not file.exists() and not checksums.sidecar(file).exists()
    kept = written.home / found[0].moved_to
    assert kept.is_file() and kept.is_relative_to(written.home / QUARANTINE)
    assert written.store.read(SPLITS).height == 0
    written.store.write(SPLITS, _splits(3))  # the rebuild
    assert written.store.read(SPLITS).height == 3 and quarantine_damaged(written) == []


def test_an_intact_vault_has_nothing_to_repair(written: VaultPaths) -> None:
    assert quarantine_damaged(written) == []
    assert written.store.read(SPLITS).height == ROWS


def test_a_table_rewritten_whole_by_another_tool_is_a_new_version(written: VaultPaths) -> None:
    _splits(7).write_parquet(written.table("splits"))  # size and mtime change
    checksums._trusted.clear()
    assert written.store.read(SPLITS).height == 7
    assert quarantine_damaged(written) == []


def test_a_write_cut_off_before_its_rename_keeps_the_previous_table(written: VaultPaths,
                                                                    tmp_path: Path) -> None:
    file = written.table("splits")
    other = tmp_path / "next.parquet"
    _splits(9).write_parquet(other)
    checksums.begin(file, other)  # the record of the next version, never renamed in
    checksums._trusted.clear()
    assert written.store.read(SPLITS).height == ROWS


def test_sql_and_the_catalog_leave_out_only_the_damaged_table(written: VaultPaths) -> None:
    written.store.write(OTHER, _splits(2))
    cut(written.table("splits"))
    checksums._trusted.clear()
    assert list(damaged_tables(written)) == ["splits"]
    assert query(written, "SELECT count(*) FROM other").fetchall() == [(2,)]
    with pytest.raises(VaultError) as caught:
        query(written, "SELECT count(*) FROM splits")
    assert "splits.parquet" in one_line(caught) and "vault materialize" in str(caught.value)


def test_a_folder_output_is_judged_file_by_file(tmp_path: Path) -> None:
    folder = tmp_path / "views_index.lance"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "a.lance").write_bytes(b"x" * 100)
    (folder / "_latest.manifest").write_bytes(b"m" * 10)
    assert checksums.check_folder(folder) is None  # no record: not judged
    checksums.commit_folder(folder)
    assert checksums.check_folder(folder) is None
    zero(folder / "data" / "a.lance")
    assert "data/a.lance altered" in checksums.check_folder(folder)
    checksums.open_folder(folder)  # a build in progress: not judged
    assert checksums.check_folder(folder) is None
    checksums.commit_folder(folder)
    (folder / "_latest.manifest").unlink()
    assert checksums.check_folder(folder) == "_latest.manifest is missing"


def test_an_object_cut_short_is_one_line_and_a_whole_rewrite_a_new_version(tmp_path) -> None:
    import fsspec

    from vault_pipeline.store.tables import TableStore

    fs = fsspec.filesystem("memory")
    store = TableStore(f"/vault-{tmp_path.name}/tables", fs)
    store.write(SPLITS, _splits())
    data = fs.cat_file(store.path(SPLITS))
    fs.pipe_file(store.path(SPLITS), data[: len(data) // 2])
    with pytest.raises(VaultError) as caught:
        store.read(SPLITS)
    assert "not a whole Parquet object" in one_line(caught)
    other = tmp_path / "other.parquet"
    _splits(4).write_parquet(other)
    fs.pipe_file(store.path(SPLITS), other.read_bytes())  # another tool's put
    assert store.read(SPLITS).height == 4


def test_a_flip_that_still_decodes_is_damage_not_a_new_version(tmp_path) -> None:
    """A byte flipped in an object where Parquet does not notice (a page header, a
    statistic): the size kept is what gives it away, wherever the byte is."""
    import fsspec

    from vault_pipeline.store.tables import TableStore, readable

    fs = fsspec.filesystem("memory")
    store = TableStore(f"/vault-{tmp_path.name}/tables", fs)
    store.write(SPLITS, _splits())
    data = fs.cat_file(store.path(SPLITS))
    quiet = []
    for at in range(4, len(data) - 8, 7):
        flipped = bytearray(data)
        flipped[at] ^= 0xFF
        if readable(bytes(flipped)) is None:
            quiet.append(bytes(flipped))
        if len(quiet) == 3:
            break
    assert quiet, "no flip that decodes: the case this test is about did not arise"
    for flipped in quiet:
        store.write(SPLITS, _splits())
        fs.pipe_file(store.path(SPLITS), flipped)
        with pytest.raises(VaultError) as caught:
            store.read(SPLITS)
        assert "size kept" in one_line(caught) and not store.exists(SPLITS)
