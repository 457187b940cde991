"""Snapshot JSON lines: Polars fast path, and exact per-line rejects when a line is bad."""

import gzip
import json
from datetime import date
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLE
from vault_pipeline.parse.snapshot import parse_snapshot

SNAPSHOT = SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl"
LINES = SNAPSHOT.read_bytes().splitlines()


def _parse(path: Path, chunk_bytes: int = 1 << 20) -> tuple[pl.DataFrame, list]:
    frames, rejects = [], []
    for batch in parse_snapshot(path, chunk_bytes=chunk_bytes):
        frames.append(batch.candidates)
        rejects += batch.rejects
    return pl.concat(frames), rejects


def test_sample_snapshot_fields() -> None:
    frame, rejects = _parse(SNAPSHOT)
    assert rejects == []
    assert frame.height == 100
    first = frame.row(0, named=True)
    assert first["raw_id"] == "0704.0001v2"
    # names as parsed: "First Last Suffix"; `finalize` collapses and strips the whitespace
    assert [n.strip() for n in first["authors"]] == [
        "C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C. -P. Yuan"]
    assert first["published"] == date(2007, 4, 2)
    assert first["updated"] == date(2007, 7, 24)
    assert first["position"] == 1
    assert frame.get_column("position").to_list() == list(range(1, 101))


def test_corrupt_line_is_rejected_with_its_number(tmp_path: Path) -> None:
    lines = list(LINES)
    lines[41] = lines[41][:60]  # line 42 cut in the middle of a string
    path = tmp_path / "snap.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    frame, rejects = _parse(path, chunk_bytes=8_000)
    assert frame.height == 99
    assert [(r.position, r.reason.split(":")[0]) for r in rejects] == [(42, "invalid JSON")]
    assert 42 not in frame.get_column("position").to_list()


def test_non_utf8_line_and_gzip(tmp_path: Path) -> None:
    lines = list(LINES[:10])
    lines[1] = lines[1].replace(b"Sparsity", "Spärsity".encode("latin-1"))
    assert b"Sp\xe4rsity" in lines[1]
    path = tmp_path / "snap.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines)))  # no newline after the last line
    frame, rejects = _parse(path)
    assert frame.height == 9
    assert [(r.position, r.reason.split(" at ")[0]) for r in rejects] == [(2, "invalid UTF-8")]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=st.sets(st.integers(0, 99), max_size=8), chunk=st.integers(2_000, 60_000),
       junk=st.sampled_from([b"{", b"not json", b"[1, 2]", b'{"id": "0704.0001", "ti',
                             b"\xff\xfe garbage"]))
def test_every_line_is_loaded_or_rejected(tmp_path: Path, bad: set[int], chunk: int,
                                          junk: bytes) -> None:
    lines = [junk if i in bad else line for i, line in enumerate(LINES)]
    path = tmp_path / "snap.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    frame, rejects = _parse(path, chunk_bytes=chunk)
    assert sorted(r.position for r in rejects) == sorted(i + 1 for i in bad)
    loaded = frame.get_column("position").to_list()
    assert sorted(loaded) == [i + 1 for i in range(100) if i not in bad]
    good_ids = {json.loads(LINES[i])["id"] for i in range(100) if i not in bad}
    assert {r.split("v")[0] for r in frame.get_column("raw_id")} == good_ids
