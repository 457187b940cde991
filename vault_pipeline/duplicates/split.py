"""Which of a method's current texts are stored unchanged and which are new, worked out on
disk: the texts' (id, text hash) and the stored rows' are written to scratch Parquet and
matched by DuckDB joins (spilling past their memory limit), so what stays in memory is one
bit a text and one a stored row, never the ids or hashes. The row numbers of a comparison
(stored rows first, then the new) are named by a scratch file too (:class:`RowIds`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from vault_pipeline.duplicates import scratch
from vault_pipeline.duplicates.exact import PAIR_COLUMNS, empty_pairs
from vault_pipeline.duplicates.texts import Batches, present

KEYS = {"seq": pl.Int64, "id": pl.String, "text_sha256": pl.String}
STORED_KEYS = {"ord": pl.Int64, "id": pl.String, "text_sha256": pl.String}
KEY_READ = ("id", "method", "params", "text_sha256")  # what the split reads of stored rows


def sha(texts: list[str | None]) -> list[str | None]:
    return [None if t is None else hashlib.sha256(t.encode()).hexdigest() for t in texts]


def mine(batch: pl.DataFrame, method: str, params: str) -> pl.DataFrame:
    """A stored batch's rows of one method under ``params``."""
    return batch.filter((pl.col("method") == method) & (pl.col("params") == params))


def _mask(db, sql: str, size: int) -> np.ndarray:
    marked = np.zeros(size, dtype=bool)
    for batch in scratch.batches(db, sql, 1 << 16):
        marked[batch.to_series().to_numpy()] = True
    return marked


@dataclass
class Split:
    """One method's texts against its stored rows: ``current`` marks, by row of
    :func:`texts.present`, the first text of each id (what the method compares), ``new``
    those of them not stored unchanged; ``old`` marks the stored rows (the method's, in
    table order) whose id and text hash are a current text's."""

    method: str
    params: str
    current: np.ndarray
    new: np.ndarray
    old: np.ndarray

    @property
    def n_new(self) -> int:
        return int(self.new.sum())

    @property
    def n_old(self) -> int:
        return int(self.old.sum())

    def texts(self, source: Batches, which: np.ndarray, flag: np.ndarray | None = None
              ) -> Iterator[pl.DataFrame]:
        """The (id, text) rows of ``source`` marked in ``which`` (:attr:`current` or
        :attr:`new`), in order, a batch at a time; with ``flag``, a column `new` of it."""
        seq = 0
        for batch in present(source):
            picked = which[seq:seq + batch.height]
            if flag is not None:
                batch = batch.with_columns(new=pl.Series(flag[seq:seq + batch.height]))
            seq += batch.height
            if picked.any():
                yield batch.filter(pl.Series(picked))

    def stored_rows(self, stored: Batches) -> Iterator[pl.DataFrame]:
        """The stored rows marked :attr:`old`, every column, a batch at a time."""
        ord_ = 0
        for batch in stored():
            rows = mine(batch, self.method, self.params)
            picked = self.old[ord_:ord_ + rows.height]
            ord_ += rows.height
            if picked.any():
                yield rows.filter(pl.Series(picked))


def split(source: Batches, stored: Batches, method: str, params: str, work: Path) -> Split:
    """Read the texts' keys and the stored rows' keys to ``work``; join them there."""
    keys = scratch.Appender(work / "text_keys.parquet", KEYS)
    for batch in present(source):
        keys(pl.DataFrame({"seq": np.arange(keys.rows, keys.rows + batch.height),
                           "id": batch["id"],
                           "text_sha256": pl.Series(sha(batch["text"].to_list()),
                                                    dtype=pl.String)}, schema=KEYS))
    theirs = scratch.Appender(work / "stored_keys.parquet", STORED_KEYS)
    for batch in stored(KEY_READ):
        rows = mine(batch, method, params)
        theirs(rows.select(ord=pl.int_range(theirs.rows, theirs.rows + rows.height,
                                            dtype=pl.Int64), id="id",
                           text_sha256="text_sha256"))
    texts, rows = scratch.scan(keys.close()), scratch.scan(theirs.close())
    current = work / "current.parquet"
    with scratch.connect(work) as db:
        scratch.copy_to(db, (  # the first row of an id is its record, even when its text is null
            f"SELECT seq, id, text_sha256 FROM (SELECT *, row_number() OVER "
            f"(PARTITION BY id ORDER BY seq) AS n FROM {texts}) "
            f"WHERE n = 1 AND text_sha256 IS NOT NULL"), current)
        now = scratch.scan(current)
        unchanged = (f"SELECT s.ord, s.id FROM {rows} s SEMI JOIN {now} c "
                     f"ON s.id = c.id AND s.text_sha256 = c.text_sha256")
        return Split(method, params,
                     _mask(db, f"SELECT seq FROM {now}", keys.rows),
                     _mask(db, f"SELECT c.seq FROM {now} c ANTI JOIN ({unchanged}) o "
                               f"ON c.id = o.id", keys.rows),
                     _mask(db, f"SELECT ord FROM ({unchanged})", theirs.rows))


class RowIds:
    """The id of each row of one comparison, in the order rows are added (stored rows
    first, then the new), in a scratch file; pairs of row numbers are named from it."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.out = scratch.Appender(work / "row_ids.parquet", {"row": pl.Int64,
                                                               "id": pl.String})

    def add(self, ids: pl.Series) -> None:
        start = self.out.rows
        self.out(pl.DataFrame({"row": np.arange(start, start + ids.len()), "id": ids},
                              schema={"row": pl.Int64, "id": pl.String}))

    def named(self, rows: pl.DataFrame) -> pl.DataFrame:
        """Row-number pairs (``a``, ``b``, ``score``, ...) with ids for ``a`` and ``b``."""
        if rows.is_empty():
            return rows.with_columns(pl.col("a", "b").cast(pl.String))
        ids = scratch.scan(self.out.close())
        with scratch.connect(self.work) as db:
            db.register("pairs", rows.to_arrow())
            return scratch.frame(db, f"SELECT p.* REPLACE (x.id AS a, y.id AS b) FROM pairs p "
                                     f"JOIN {ids} x ON x.row = p.a JOIN {ids} y ON y.row = p.b")

    def kept(self, previous: Batches, method: str, n_old: int) -> pl.DataFrame:
        """Pairs of ``method`` found before between two of the first ``n_old`` rows (texts
        stored unchanged)."""
        mine_ = pl.concat([empty_pairs(), *(b.filter(pl.col("method") == method)
                                            .select(list(PAIR_COLUMNS)) for b in previous())])
        if mine_.is_empty() or n_old == 0:
            return empty_pairs()
        ids = scratch.scan(self.out.close())
        old = f"(SELECT id FROM {ids} WHERE row < {int(n_old)})"
        with scratch.connect(self.work, ordered=True) as db:
            db.register("previous", mine_.to_arrow())
            return scratch.frame(db, f"SELECT * FROM previous WHERE a IN {old} AND b IN {old}"
                                 ).cast(PAIR_COLUMNS)

