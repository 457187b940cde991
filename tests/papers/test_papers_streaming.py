"""A plain snapshot is staged by one Polars streaming query. It must give exactly what the
batch reader gives (rows, rejects, line numbers), judge doubtful lines strictly, step aside
on a line it cannot read, and never fall back to in-memory execution."""

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLE
from vault_pipeline.papers.build import build_papers, stream_snapshot
from vault_pipeline.parse.finalize import finalize, finalize_plan, rejected_rows, valid_rows
from vault_pipeline.parse.snapshot import parse_snapshot, scan_snapshot, snapshot_candidates
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import PAPERS_REJECTED
from vault_pipeline.store.paths import VaultPaths

SNAPSHOT = SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl"
RECORD = json.loads(SNAPSHOT.read_text().splitlines()[0])
SHA = "0" * 64
REJECT_KEYS = ["position", "reason", "record_id"]


def _parse_rejects(rejects: list) -> pl.DataFrame:
    return pl.DataFrame([{k: getattr(r, k) for k in REJECT_KEYS} for r in rejects],
                        schema={k: PAPERS_REJECTED.polars[k] for k in REJECT_KEYS})


def _batch_reader(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    valid, rejected = [], []
    for batch in parse_snapshot(path):
        rows, refused = finalize(batch.candidates, SHA)
        valid.append(rows)
        rejected.append(refused)
        rejected.append(_parse_rejects(batch.rejects))
    return pl.concat(valid), pl.concat([r.select(REJECT_KEYS) for r in rejected])


def _streamed(path: Path, part: Path) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """Stage with the streaming query, then judge its suspect lines as the build does."""
    from vault_pipeline.parse.snapshot import reread_lines

    streamed = stream_snapshot(path, SHA, part)
    staged, suspects = streamed.rows, streamed.suspects
    valid = [pl.read_parquet(part)]
    refused = [streamed.rejects.select(REJECT_KEYS)]
    assert streamed.passes == (1 if valid[0].height == len(path.read_bytes().splitlines())
                               else 2)
    if suspects:
        batch = reread_lines(suspects)
        rows, bad = finalize(batch.candidates, SHA)
        valid.append(rows)
        refused += [bad.select(REJECT_KEYS), _parse_rejects(batch.rejects)]
    return pl.concat(valid), pl.concat(refused), staged


names = st.text(alphabet=st.sampled_from(["A", "b", " ", "\n", "é", "\u00a0"]), max_size=6)
changes = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["0704.0001", "hep-th/9901001", "math.GT/0309136", "x", ""]),
    "title": names,
    "abstract": names,
    "doi": st.one_of(st.none(), names),
    "comments": st.one_of(st.none(), names),
    "categories": st.sampled_from(["hep-ph", "cs.LG  math.ST", " ", ""]),
    "versions": st.lists(st.fixed_dictionaries({
        "version": st.sampled_from(["v1", "v2", "vx"]),
        "created": st.sampled_from(["Mon, 2 Apr 2007 19:18:42 GMT",
                                    "Tue, 24 Jul 2007 20:10:27 GMT", "soon"])}), max_size=3),
    "authors": st.sampled_from(["A. One, B. Two and C. Three", "", "Solo"]),
    "authors_parsed": st.lists(st.lists(names, min_size=1, max_size=4), max_size=3),
})
lines = st.one_of(changes.map(lambda c: json.dumps(RECORD | c)),
                  changes.map(lambda c: json.dumps(RECORD | c, ensure_ascii=False)),
                  st.sampled_from(["", "null"]))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(lines, min_size=1, max_size=8))
def test_streamed_snapshot_equals_the_batch_reader(tmp_path: Path, batch: list[str]) -> None:
    path = tmp_path / "snap.jsonl"
    path.write_text("\n".join(batch) + "\n")
    expected_rows, expected_rejects = _batch_reader(path)
    rows, rejects, _ = _streamed(path, tmp_path / "part.parquet")
    assert rows.schema == expected_rows.schema
    assert _as_multiset(rows) == _as_multiset(expected_rows)
    assert _as_multiset(rejects) == _as_multiset(expected_rejects)


def _as_multiset(frame: pl.DataFrame) -> list[str]:
    """Rows in any order (a streamed part keeps line order, suspects are appended)."""
    return sorted(json.dumps(row, default=str, sort_keys=True) for row in frame.to_dicts())


def test_one_name_authors_are_judged_by_the_strict_reader(tmp_path: Path) -> None:
    """``[["ATLAS Collaboration"]]`` is a real one-name entry (kept); a bare string where
    an entry belongs is what ``json_decode`` would wrap into one (refused)."""
    path = tmp_path / "snap.jsonl"
    kept = RECORD | {"id": "0704.0002", "authors_parsed": [["ATLAS Collaboration"]]}
    wrapped = RECORD | {"id": "0704.0003", "authors_parsed": [["Doe", "J.", ""], "Roe"]}
    path.write_text("\n".join(json.dumps(r) for r in (RECORD, kept, wrapped)) + "\n")
    rows, rejects, staged = _streamed(path, tmp_path / "part.parquet")
    assert staged == 1  # only the first line needed no second look
    assert sorted(rows.get_column("arxiv_id")) == ["0704.0001", "0704.0002"]
    assert rows.filter(pl.col("arxiv_id") == "0704.0002").item(0, "authors").to_list() == [
        "ATLAS Collaboration"]
    assert rejects.select("position", "reason").rows() == [
        (3, "fields of unexpected types for the snapshot schema")]


def test_build_streams_a_plain_snapshot_and_reads_a_broken_one_line_exact(
        tmp_path: Path) -> None:
    lines = SNAPSHOT.read_bytes().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\n".join([*lines[:41], lines[41][:60], *lines[42:]]) + b"\n")
    plain = VaultPaths(tmp_path / "plain").ensure()
    RawZone(plain).import_paths([SNAPSHOT])
    report = build_papers(plain)
    assert (report.streamed_files, report.rows, report.rejected) == (1, 100, 0)
    assert report.stream_passes == 1  # every line a row: no second pass for rejects

    damaged = VaultPaths(tmp_path / "damaged").ensure()
    RawZone(damaged).import_paths([broken])
    report = build_papers(damaged)
    assert (report.streamed_files, report.rows, report.rejected) == (0, 99, 1)
    (reject,) = pl.read_parquet(damaged.table("papers_rejected")).to_dicts()
    assert reject["position"] == 42 and reject["reason"].startswith("invalid JSON")
    assert not list(damaged.scratch.iterdir())


def test_a_byte_order_mark_opening_the_file_is_skipped_by_both_readers(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    second = RECORD | {"id": "0704.0009"}
    path.write_text("\ufeff" + json.dumps(RECORD) + "\n" + json.dumps(second) + "\n")
    rows, rejects = _batch_reader(path)
    assert sorted(rows.get_column("arxiv_id")) == ["0704.0001", "0704.0009"]
    assert rejects.is_empty()
    streamed, refused, staged = _streamed(path, tmp_path / "part.parquet")
    assert staged == 2 and refused.is_empty()
    assert _as_multiset(streamed) == _as_multiset(rows)


@pytest.mark.parametrize("plan", ["valid", "rejected"])
def test_the_streaming_plan_has_no_in_memory_fallback(plan: str) -> None:
    """A node the streaming engine cannot run (``replace`` once was one) would hold the
    whole snapshot in memory; Polars marks such nodes in the physical plan's graph."""
    finalized = finalize_plan(snapshot_candidates(scan_snapshot(SNAPSHOT), "_suspect", "_text"),
                              SHA)
    query = valid_rows(finalized) if plan == "valid" else rejected_rows(finalized, "_text")
    graph = query.show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    assert "in-memory engine fallback" in graph  # the legend: the marker is still this colour
    fallback = 'fillcolor="0.0 0.3 1.0"'
    assert [line for line in graph.splitlines() if fallback in line and "->" not in line
            and "label=<" not in line] == []
