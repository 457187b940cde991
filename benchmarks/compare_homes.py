"""Compare the tables of two data roots (e.g. the demo's before and after a refactoring):

    python benchmarks/compare_homes.py HOME_A HOME_B

Every Parquet file under either root (tables, exports, cached vectors) and the LanceDB index
are read; columns that hold a time, a duration or a run id are left out (they differ from run
to run by nature); rows are sorted on every remaining column, and the two are compared value
for value.
Prints one line per table and exits 1 when any table differs or exists on one side only."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

VOLATILE_NAMES = ("run_id", "built_at", "created_at", "failed_at", "received_at", "read_at",
                  "converted_at", "exported_at", "updated_at_run")


def _volatile(name: str, dtype: pl.DataType) -> bool:
    return (dtype in (pl.Datetime, pl.Time) or isinstance(dtype, pl.Datetime)
            or name in VOLATILE_NAMES or name.endswith(("_at", "_ms", "_seconds")))


def _comparable(frame: pl.DataFrame) -> pl.DataFrame:
    """Without volatile columns; nested values as JSON text, so every column sorts."""
    kept = frame.select([c for c, t in frame.schema.items() if not _volatile(c, t)])
    nested = [c for c, t in kept.schema.items() if t.is_nested() or t == pl.Object]
    if nested:
        kept = kept.with_columns(pl.struct(c).struct.json_encode().alias(c) for c in nested)
    return kept.sort(kept.columns, nulls_last=True) if kept.width else kept


def _tables(home: Path) -> dict[str, pl.DataFrame]:
    found = {str(p.relative_to(home)): pl.read_parquet(p) for p in home.rglob("*.parquet")
             if "dagster" not in p.parts}
    lance = home / "index"
    if lance.is_dir():
        import lancedb

        db = lancedb.connect(str(lance))
        for name in db.list_tables().tables:
            found[f"index/{name}"] = pl.from_arrow(db.open_table(name).to_arrow())
    return found


def compare(a: Path, b: Path) -> int:
    left, right = _tables(a), _tables(b)
    differing = 0
    for name in sorted(set(left) | set(right)):
        if name not in left or name not in right:
            print(f"{name}: only in {a if name in left else b}")
            differing += 1
            continue
        x, y = _comparable(left[name]), _comparable(right[name])
        ignored = left[name].width - x.width
        if x.schema != y.schema:
            print(f"{name}: columns differ: {x.schema} vs {y.schema}")
            differing += 1
        elif not x.equals(y):
            diff = x.join(y, on=x.columns, how="anti").height
            print(f"{name}: {x.height} vs {y.height} rows, {diff} rows of A not in B")
            differing += 1
        else:
            print(f"{name}: identical ({x.height} rows, {x.width} columns compared, "
                  f"{ignored} volatile left out)")
    print(f"{len(set(left) | set(right))} tables, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
