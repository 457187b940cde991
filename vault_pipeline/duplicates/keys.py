"""The records' exact keys on disk: every record (:mod:`.records`) with its keys
(:func:`exact.with_keys`) is appended to a scratch Parquet file a batch at a time, one row
an id is kept by DuckDB (as :func:`records.gather` keeps them), and the exact pairs and the
clusters' member details are DuckDB group-bys and joins over that file (spilling past the
memory limit). Only the records that share a key or link to an arXiv paper, and the members
of clusters, are ever read back into memory."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from vault_pipeline.duplicates import scratch
from vault_pipeline.duplicates.exact import KEY_COLUMNS, keyed_pairs, with_keys
from vault_pipeline.duplicates.records import ARXIV, S2

KEYED = {"id": pl.String, "source": pl.String, "arxiv_ref": pl.String, "ref_how": pl.String,
         "date": pl.Date, **KEY_COLUMNS}


class RecordKeys:
    """One row an id, with its keys, in ``work/records.parquet``."""

    def __init__(self, work: Path, records: Iterable[pl.DataFrame]) -> None:
        """``records``: frames of :data:`records.COLUMNS` (papers, then submissions, then
        S2 papers: the first row of an id is its record, the last of an S2 id)."""
        self.work, self.path = work, work / "records.parquet"
        raw = scratch.Appender(work / "records_raw.parquet", {**KEYED, "seq": pl.Int64})
        for frame in records:
            raw(with_keys(frame).select(list(KEYED)).with_columns(
                seq=pl.int_range(raw.rows, raw.rows + frame.height, dtype=pl.Int64)))
        with self._db() as db:
            scratch.copy_to(db, (
                f"SELECT * EXCLUDE (seq, n) FROM (SELECT *, row_number() OVER "
                f"(PARTITION BY id ORDER BY CASE WHEN source = '{S2}' THEN -seq ELSE seq END)"
                f" AS n FROM {scratch.scan(raw.close())}) WHERE n = 1"), self.path)
            counts = scratch.frame(db, f"SELECT source, count(*) AS n FROM {self._scan} "
                                       "GROUP BY source ORDER BY source")
        self.by_source = dict(counts.iter_rows())
        self.height = sum(self.by_source.values())

    def _db(self):
        return scratch.connect(self.work)

    @property
    def _scan(self) -> str:
        return scratch.scan(self.path)

    def exact_pairs(self) -> pl.DataFrame:
        """:func:`exact.exact_pairs` of every record, from the records that can pair: those
        sharing a DOI or a title + author with another, those naming an arXiv paper that is
        a record, and those papers."""
        r = self._scan
        with self._db() as db:
            subset = scratch.frame(db, f"""
                SELECT * FROM {r} WHERE
                  doi_key IN (SELECT doi_key FROM {r} WHERE doi_key IS NOT NULL
                              GROUP BY doi_key HAVING count(*) > 1)
                  OR ta IN (SELECT ta FROM {r} WHERE ta IS NOT NULL
                            GROUP BY ta HAVING count(*) > 1)
                  OR arxiv_ref IN (SELECT id FROM {r} WHERE source = '{ARXIV}')
                  OR (source = '{ARXIV}' AND id IN (SELECT arxiv_ref FROM {r}
                                                   WHERE arxiv_ref IS NOT NULL))""")
        return keyed_pairs(subset.cast(KEYED))

    def members(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """(`id`, `source`, `date`) of the records in ``pairs`` (what a cluster's canonical
        member is chosen by)."""
        ids = pl.concat([pairs["a"], pairs["b"]]).unique().to_frame("id")
        with self._db() as db:
            db.register("wanted", ids.to_arrow())
            return scratch.frame(db, f"SELECT r.id, r.source, r.date FROM {self._scan} r "
                                     "SEMI JOIN wanted w ON r.id = w.id"
                                 ).cast({"id": pl.String, "source": pl.String,
                                         "date": pl.Date})
