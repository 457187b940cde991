"""Fault injection: what a hostile query, a damaged raw zone, concurrent runs or a wrong
path do to a vault. Each test asserts what a user would check: nothing lost, duplicated or
let in, and errors as one line."""

from __future__ import annotations

import collections
import contextlib
import errno
import gzip
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from filelock import FileLock
from typer.testing import CliRunner

from testing.ideas_faulty import CRASH, HANG, HUGE, FaultyBackend
from tests.conftest import SAMPLE, SMALL_INBOX_PAPERS, small_inbox, vault_script
from tests.ideas.test_ideas_build import _papers
from vault_pipeline.cli.app import app
from vault_pipeline.documents.build import JOURNAL, TEXT_COLUMNS, DocumentsConfig, build_documents
from vault_pipeline.documents.convert import Task, convert_task
from vault_pipeline.documents.outcome import TIMEOUT, Conversion
from vault_pipeline.documents.workers import PoolSettings
from vault_pipeline.ideas.build import build_masked_records
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.raw import zone as zone_module
from vault_pipeline.raw.detect import Detection
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import (
    DOCUMENT_ATTEMPTS,
    DOCUMENTS,
    LLM_FAILURES,
    MASKED_RECORDS,
    PAPERS,
)
from vault_pipeline.sources.context import HarvestContext
from vault_pipeline.sources.http import HarvestError, PoliteClient
from vault_pipeline.sources.limiter import SharedRateLimiter
from vault_pipeline.sources.settings import RetrySettings
from vault_pipeline.store import checksums
from vault_pipeline.store.lock import LOCK_NAME
from vault_pipeline.store.paths import VaultPaths

runner = CliRunner()

SAMPLE_FILES = sum(1 for f in SAMPLE.rglob("*") if f.is_file())  # the sample's raw files


def vault(*args: str):
    return runner.invoke(app, list(args))


def one_line_error(result, code: int = 1) -> str:
    """The single `error:` line of a failed command (and no traceback)."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def papers_count() -> int:
    result = vault("sql", "SELECT count(*) AS n FROM papers", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)[0]["n"]


# 1. `vault sql` is read-only -----------------------------------------------------------------

@pytest.mark.parametrize("statement", [
    "COPY (SELECT 1 AS x) TO '{tables}/papers.parquet'",
    "COPY (SELECT 1 AS x) TO '{tables}/papers.parquet' (FORMAT parquet, USE_TMP_FILE false)",
    "ATTACH '{home}/evil.duckdb' AS evil",
    "CREATE TABLE t AS SELECT 1",
    "SELECT 1; COPY (SELECT 1) TO '{home}/out.csv'",
    "SET enable_external_access = true",
    "INSTALL httpfs",
])
def test_sql_refuses_writes_and_leaves_the_vault_as_it_was(sample_vault: VaultPaths,
                                                            statement: str) -> None:
    before = sorted(p.name for p in sample_vault.home.rglob("*") if p.is_file())
    text = statement.format(tables=sample_vault.tables, home=sample_vault.home)
    assert "read-only" in one_line_error(vault("sql", text))
    assert papers_count() == 221
    assert sorted(p.name for p in sample_vault.home.rglob("*") if p.is_file()) == before


def test_sql_reads_only_the_vault_tables(sample_vault: VaultPaths, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    assert "disabled" in one_line_error(vault("sql", f"SELECT * FROM read_csv('{outside}')"))
    table = sample_vault.table("papers")
    direct = vault("sql", f"SELECT count(*) AS n FROM read_parquet('{table}')", "-f", "json")
    assert json.loads(direct.output) == [{"n": 221}]


# 9. exit codes and one-line errors ------------------------------------------------------------

@pytest.mark.parametrize("command", [("status",), ("sql", "SELECT 1"), ("search", "graphs")])
def test_read_only_commands_never_create_a_vault(tmp_path: Path, command) -> None:
    home = tmp_path / "not-a-vault"
    assert "no vault at" in one_line_error(vault(*command, "--home", str(home)))
    assert not home.exists()


@pytest.mark.parametrize("command", [("status",), ("import", "."), ("materialize",),
                                     ("sql", "SELECT 1")])
def test_home_pointing_at_a_file_is_one_line(tmp_path: Path, command) -> None:
    file = tmp_path / "a-file"
    file.write_text("x")
    one_line_error(vault(*command, "--home", str(file)))
    assert file.read_text() == "x"


def test_a_bad_cutoff_is_one_line(sample_vault: VaultPaths, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("ops: {splits: {config: {cutoff: '2025-13-45'}}}")
    result = vault("materialize", "--select", "splits", "--config", str(config))
    one_line_error(result)
    assert "cutoff '2025-13-45' is not a date" in result.output
    assert len(result.output.splitlines()) < 10, result.output


# 10 and 9. a vault of PDFs only; warning-level checks -----------------------------------------

def test_pdfs_without_metadata_build_empty_splits_and_warnings_exit_0(
        vault_paths: VaultPaths, tmp_path: Path) -> None:
    assert vault("import", str(SAMPLE / "2202.12139v1.pdf")).exit_code == 0
    config = tmp_path / "floor.yaml"  # a success floor no source can reach: a warning
    config.write_text("ops: {documents_documents_success_rate: {config: "
                      "{min_success_rate: 1.5}}}")
    result = vault("materialize", "--select", "documents", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "check WARN documents_success_rate" in result.output
    assert "check FAIL" not in result.output
    strict = vault("materialize", "--select", "documents", "--config", str(config), "--strict")
    assert strict.exit_code == 1
    assert "check WARN documents_success_rate" in strict.output
    built = vault("materialize", "--select", "key:papers or key:splits")
    assert built.exit_code == 0, built.output
    splits = vault("sql", "SELECT count(*) AS n FROM splits", "--format", "json")
    assert json.loads(splits.output) == [{"n": 0}]


# 2. one bad raw file never stops a table ----------------------------------------------------

def test_a_deeply_nested_line_is_one_rejected_row(vault_paths: VaultPaths,
                                                  tmp_path: Path) -> None:
    lines = (SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_bytes().splitlines()
    nested = b'{"id": "2401.00001", "title": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    snapshot = tmp_path / "snapshot.jsonl"
    snapshot.write_bytes(b"\n".join([lines[0], nested, *lines[1:]]) + b"\n")
    assert vault("import", str(snapshot)).exit_code == 0
    assert vault("materialize", "--select", "papers", "-q").exit_code == 0
    assert papers_count() == len(lines)
    rejected = vault("sql", "SELECT position, reason FROM papers_rejected", "-f", "json")
    assert json.loads(rejected.output) == [{"position": 2, "reason": "JSON nested too deeply"}]


def test_a_truncated_gzip_is_refused_at_import(vault_paths: VaultPaths, tmp_path: Path) -> None:
    whole = gzip.compress((SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_bytes())
    cut = tmp_path / "snapshot.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])  # an interrupted download
    result = vault("import", str(cut))
    assert "1 rejected" in result.output and "truncated or corrupt" in result.output
    assert RawZone(vault_paths).files() == []


def test_a_truncated_gzip_already_stored_is_quarantined_and_the_rest_builds(
        sample_vault: VaultPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = gzip.compress(b"".join(
        line.replace(b'"id":"', b'"id":"9') + b"\n" for line in
        (SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_bytes().splitlines()))
    cut = tmp_path / "old.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    # stored by an older version that checked only the first lines
    with monkeypatch.context() as patched:
        patched.setattr(zone_module, "detect",
                        lambda _: Detection("arxiv_snapshot", "gzip", ".jsonl.gz"))
        RawZone(sample_vault).add_file(cut)
    assert vault("materialize", "--select", "papers", "-q").exit_code == 0
    assert papers_count() == 221
    rejected = vault("sql", "SELECT snippet, reason FROM papers_rejected", "-f", "json")
    [row] = json.loads(rejected.output)
    assert row["snippet"] == "old.jsonl.gz" and "end-of-stream" in row["reason"]


# 3. a missing or altered raw file is never silent -------------------------------------------

def _stored(paths: VaultPaths, original_name: str) -> Path:
    zone = RawZone(paths)
    [record] = [r for r in zone.files(check=False) if r.original_name == original_name]
    return zone.absolute(record)


def test_a_deleted_raw_file_fails_the_build_and_import_restores_it(
        sample_vault: VaultPaths) -> None:
    name = "arxiv-metadata-oai-snapshot.sample.jsonl"
    _stored(sample_vault, name).unlink()
    failed = vault("materialize", "--select", "papers")
    assert failed.exit_code == 1
    assert "raw zone damaged" in failed.output and name in failed.output
    assert papers_count() == 221  # the table of the last good build is kept
    verify = vault("verify")
    assert f"1 of {SAMPLE_FILES} raw file(s) damaged" in one_line_error(verify)
    assert "missing" in verify.output
    restored = vault("import", str(SAMPLE / name))
    assert "restored" in restored.output
    assert vault("verify").exit_code == 0
    assert vault("materialize", "--select", "papers", "-q").exit_code == 0
    assert papers_count() == 221


def test_a_bit_flip_is_found_by_verify_and_by_the_periodic_check(
        sample_vault: VaultPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _stored(sample_vault, "arxiv-single.xml")
    stored.chmod(0o644)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01
    stored.write_bytes(bytes(data))
    result = vault("verify")
    assert f"1 of {SAMPLE_FILES} raw file(s) damaged" in one_line_error(result)
    assert "content altered" in result.output
    monkeypatch.setattr(zone_module, "FULL_CHECK_DAYS", 0)  # the periodic full check is due
    failed = vault("materialize", "--select", "papers")
    assert failed.exit_code == 1 and "content altered" in failed.output
    assert "restored" in vault("import", str(SAMPLE / "arxiv-single.xml")).output
    assert vault("verify").exit_code == 0


# 4. one run at a time; concurrent imports lose nothing --------------------------------------

def test_a_second_run_refuses_while_the_vault_is_in_use(sample_vault: VaultPaths) -> None:
    other = FileLock(sample_vault.home / LOCK_NAME)  # as another process would hold it
    with other:
        (sample_vault.home / ".vault.lock.json").write_text(
            '{"pid": 4242, "since": "2026-01-01T00:00:00+00:00", "command": "vault materialize"}')
        refused = vault("materialize", "--select", "papers")
        assert "in use by vault materialize (pid 4242" in one_line_error(refused)
        waited = vault("materialize", "--select", "papers", "--wait", "0.5")
        assert "after waiting 0.5 s" in one_line_error(waited)
    assert vault("materialize", "--select", "papers", "-q").exit_code == 0
    assert not (sample_vault.home / ".vault.lock.json").exists()


def test_concurrent_imports_keep_every_reject_row(vault_paths: VaultPaths,
                                                  tmp_path: Path) -> None:
    runs = []
    for n in range(4):
        inbox = tmp_path / f"inbox{n}"
        inbox.mkdir()
        for k in range(5):
            (inbox / f"bad{k}.txt").write_text(f"not a response {n} {k}")
        runs.append(subprocess.Popen(
            [sys.executable, "-c", "from vault_pipeline.cli.app import app; app()", "import",
             str(inbox)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    for run in runs:
        output, _ = run.communicate(timeout=120)
        assert b"5 rejected" in output, output
    rows = vault("sql", "SELECT count(*) AS n, count(DISTINCT path) AS paths "
                        "FROM import_rejects", "-f", "json")
    assert json.loads(rows.output) == [{"n": 20, "paths": 20}]


# 5. transient conversion failures are retried -------------------------------------------------

def failing_while_marked(task: Task) -> Conversion:
    """Runs in the worker: a timeout while the vault's scratch holds a `fail` marker."""
    if (Path(task.scratch).parent / "fail").exists():
        return Conversion.failure(TIMEOUT, "ran past the limit")
    return convert_task(task)


def test_timeouts_are_retried_within_a_budget_then_on_request(vault_paths: VaultPaths) -> None:
    RawZone(vault_paths).import_paths([SAMPLE / "2405.13786v1.pdf"])
    marker = vault_paths.scratch / "fail"
    marker.touch()

    def build(**kwargs) -> tuple[int, dict]:
        timeout_s = kwargs.pop("timeout_s", 60)
        config = DocumentsConfig(pool=PoolSettings(workers=1, timeout_s=timeout_s), **kwargs)
        report = build_documents(vault_paths, config, convert=failing_while_marked)
        [row] = pl.read_parquet(vault_paths.table(DOCUMENT_ATTEMPTS.name)).to_dicts()
        return report.converted, row

    assert [build()[1]["tries"] for _ in range(3)] == [1, 2, 3]  # the budget: 3 tries
    assert build()[0] == 0
    converted, row = build(timeout_s=120)  # a longer limit: a new try
    assert converted == 1 and row["limits"].startswith("timeout_s 120") and row["tries"] == 4
    assert build(timeout_s=120)[0] == 0
    marker.unlink()  # the cause is gone: still left alone until asked
    assert build(timeout_s=120)[0] == 0
    converted, row = build(timeout_s=120, retry_failed=True)
    assert converted == 1 and row["status"] == "ok" and row["tries"] is None
    assert build(timeout_s=120, retry_failed=True)[0] == 0  # a success is never redone


# 6. a trickling server neither hangs a harvest nor holds the shared request slot ------------

class _Trickle(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        for _ in range(1000):  # a byte every 50 ms: each read is quick, the whole is not
            self.wfile.write(b"x")
            self.wfile.flush()
            time.sleep(0.05)

    def log_message(self, *args: object) -> None:
        return None


def test_a_trickling_server_is_cut_at_the_deadline(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    limiter = SharedRateLimiter(tmp_path, "arxiv", 0.0)
    policy = RetrySettings(max_attempts=1, timeout_s=1.0)
    started = time.monotonic()
    try:
        with PoliteClient(limiter, policy, "test") as client, \
                pytest.raises(HarvestError, match="within 1 s"):
            client.get(f"http://127.0.0.1:{server.server_port}/slow")
    finally:
        server.shutdown()
    assert time.monotonic() - started < 5
    with SharedRateLimiter(tmp_path, "arxiv", 0.0, lock_timeout_s=0.1).slot():
        pass  # the slot is free for the next harvest


class _Stall(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "10")
        self.end_headers()
        self.wfile.flush()
        time.sleep(10)  # headers, then nothing

    def log_message(self, *args: object) -> None:
        return None


def test_the_slot_is_held_while_a_body_is_read_and_no_longer_than_the_bound(
        tmp_path: Path) -> None:
    """One connection at a time (arXiv's rule): another harvest waits for the body, and
    waits at most the deadline plus one read timeout."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stall)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    policy = RetrySettings(max_attempts=1, timeout_s=1.0)
    errors: list[Exception] = []

    def harvest() -> None:
        with PoliteClient(SharedRateLimiter(tmp_path, "arxiv", 0.0), policy, "test") as client:
            try:
                client.get(f"http://127.0.0.1:{server.server_port}/stall")
            except HarvestError as exc:
                errors.append(exc)

    started = time.monotonic()
    first = threading.Thread(target=harvest)
    try:
        first.start()
        time.sleep(0.3)  # the first request has its headers by now
        with SharedRateLimiter(tmp_path, "arxiv", 0.0).slot():
            waited = time.monotonic() - started
        first.join()
    finally:
        server.shutdown()
    assert len(errors) == 1
    assert 0.9 < waited < 2 * policy.timeout_s + 1.0


def test_a_harvest_reports_the_requests_it_sent(vault_paths: VaultPaths) -> None:
    with HarvestContext.open(vault_paths) as ctx:
        ctx.counter("arxiv").sent += 2
        ctx.client("s2").counter.sent += 1
    assert ctx.requests_sent() == {"arxiv": 2, "s2": 1}


# 7 and 8. unbounded fields and the validation the README promises ---------------------------

def _record(arxiv_id: str, **fields: object) -> bytes:
    record = {"id": arxiv_id, "title": "A title", "abstract": "An abstract.",
              "authors": "A. Author", "categories": "cs.LG",
              "versions": [{"version": "v1", "created": "Mon, 2 Jan 2023 10:00:00 GMT"}],
              "authors_parsed": [["Author", "A.", ""]]} | fields
    return json.dumps(record).encode()


def test_oversized_fields_and_impossible_dates_are_rejected_with_reasons(
        vault_paths: VaultPaths, tmp_path: Path) -> None:
    swapped = [{"version": "v1", "created": "Tue, 5 Mar 2024 10:00:00 GMT"},
               {"version": "v2", "created": "Mon, 2 Jan 2023 10:00:00 GMT"}]
    lines = [
        _record("2301.00001"),
        _record("2301.00002", title="T" * 10_000_000),
        _record("2301.00003", abstract="word " * 4_000_000),
        _record("2301.00004", versions=swapped),
        _record("2301.00005", versions=[
            {"version": "v1", "created": "Mon, 7 Jan 1985 10:00:00 GMT"}]),
        _record("  2301.00006  "),
    ]
    snapshot = tmp_path / "hostile.jsonl"
    snapshot.write_bytes(b"\n".join(lines) + b"\n")
    assert vault("import", str(snapshot)).exit_code == 0
    assert vault("materialize", "--select", "papers", "-q").exit_code == 0
    kept = vault("sql", "SELECT arxiv_id FROM papers ORDER BY 1", "-f", "json")
    assert json.loads(kept.output) == [{"arxiv_id": "2301.00001"}, {"arxiv_id": "2301.00006"}]
    rejected = vault("sql", "SELECT record_id, reason, length(snippet) AS n "
                            "FROM papers_rejected ORDER BY 1", "-f", "json")
    rows = json.loads(rejected.output)
    assert [(r["record_id"], r["reason"]) for r in rows] == [
        ("2301.00002v1", "title over 2,000 characters"),
        ("2301.00003v1", "abstract over 20,000 characters"),
        ("2301.00004v2", "published after updated (v1 dated after a later version)"),
        ("2301.00005v1", "date outside arXiv's range (August 1991 to today)"),
    ]
    assert all(r["n"] <= 200 for r in rows)  # the reject log stays small too


# kill -9 in every stage: the lock dies with the run, the next run completes ----------------

STAGES_KILLED = ["papers", "documents", "masked_records", "splits", "index"]


def _kill_in_stage(stage: str, delay_s: float = 0.3) -> None:
    """Start `vault materialize`, SIGKILL its whole process group `delay_s` after Dagster
    starts the stage's step (read from the run's own log), and reap it."""
    run = subprocess.Popen([vault_script(), "materialize", "--verbose"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    started = f'Started execution of step "{stage}"'
    told: collections.deque[str] = collections.deque(maxlen=20)
    try:
        for line in run.stderr:  # type: ignore[union-attr]
            told.append(line)
            if started in line:
                time.sleep(delay_s)
                break
        else:
            pytest.fail(f"the run ended before the {stage} step started:\n{''.join(told)}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    assert run.returncode == -signal.SIGKILL


def test_runs_killed_in_each_stage_in_turn_leave_a_vault_the_next_run_completes(
        vault_paths: VaultPaths, tmp_path: Path) -> None:
    """One run killed in each stage in turn, each starting from what the killed one before
    it left, so that every kill's debris is met by the next run (a run that cannot get past
    it never reaches its own stage and fails the test naming it); then a run completes."""
    assert vault("import", str(small_inbox(tmp_path / "inbox"))).exit_code == 0
    for stage in STAGES_KILLED:
        _kill_in_stage(stage)
    result = vault("materialize", "-q")
    assert result.exit_code == 0, result.output
    assert papers_count() == SMALL_INBOX_PAPERS
    documents = vault("sql", "SELECT count(DISTINCT arxiv_id) AS papers, "
                             "count(DISTINCT forum_id) > 0 AS forums, "
                             "count(*) = count(DISTINCT arxiv_id) + count(DISTINCT forum_id) "
                             "AS one_row_each, "
                             "count(*) FILTER (status = 'ok' AND (text IS NULL OR text = '')) "
                             "AS empty FROM documents", "-f", "json")
    assert documents.exit_code == 0, documents.output
    # one row per paper and per OpenReview submission, none empty
    # (+1: the e-print 1401.2122 has no metadata in the slice; its row is kept, and says so)
    assert json.loads(documents.output) == [{"papers": SMALL_INBOX_PAPERS + 1, "forums": True,
                                             "one_row_each": True, "empty": 0}], \
        documents.output
    once = vault("sql", "SELECT (SELECT count(*) - count(DISTINCT arxiv_id) FROM masked_records)"
                        " + (SELECT count(*) - count(DISTINCT (arxiv_id, view)) FROM views)"
                        " + (SELECT count(*) - count(DISTINCT arxiv_id) FROM splits) AS dup",
                 "-f", "json")
    assert json.loads(once.output) == [{"dup": 0}], once.output
    assert vault("verify").exit_code == 0


# 7. the ideas stage runs each paper in a bounded worker --------------------------------------

def test_a_pathological_paper_is_quarantined_and_the_rest_complete(
        vault_paths: VaultPaths) -> None:
    ids = ["2401.00001", "2401.00002", HANG, CRASH, HUGE]
    vault_paths.store.write(PAPERS, _papers(ids))
    # the default cap: the offline judge's ONNX model and SciPy need more than 1 GB of address space
    settings = IdeasSettings(workers=2, paper_timeout_s=5, memory_mb=2048)
    report = build_masked_records(vault_paths, settings, FaultyBackend(), log=lambda _: None)
    records = vault_paths.store.read(MASKED_RECORDS)
    failures = {row["arxiv_id"]: row["reason"]
                for row in vault_paths.store.read(LLM_FAILURES).iter_rows(named=True)}
    assert sorted(records["arxiv_id"]) == ["2401.00001", "2401.00002"]
    assert sorted(failures) == [HANG, CRASH, HUGE]
    limits = "(timeout_s 5, memory_mb 2048)"
    assert failures[HANG].startswith(f"worker timeout {limits}: ran past 5 s")
    assert failures[CRASH].startswith(f"worker crashed {limits}: worker died with SIGSEGV")
    assert failures[HUGE].startswith(f"worker failed {limits}: MemoryError")
    assert (report.records, report.quarantined, report.new_failures) == (2, 3, 3)
    # quarantined: a rerun leaves them alone; under other limits they are asked again
    again = build_masked_records(vault_paths, settings, FaultyBackend(), log=lambda _: None)
    assert (again.reused, again.processed) == (5, 0)
    longer = settings.replace(paper_timeout_s=6)
    again = build_masked_records(vault_paths, longer, FaultyBackend(), log=lambda _: None)
    assert (again.reused, again.processed, again.quarantined) == (2, 3, 3)
    reasons = vault_paths.store.read(LLM_FAILURES).get_column("reason").to_list()
    assert all("(timeout_s 6, memory_mb 2048)" in reason for reason in reasons)


# an interrupted build's journal, written before `limits` and `tries` existed -----------------

def test_an_old_documents_journal_is_read_with_defaults(vault_paths: VaultPaths) -> None:
    """A run died under the old code (its part lacks the columns added since), the next one
    died under the new code: the run after reads both parts."""
    RawZone(vault_paths).import_paths([SAMPLE / "2405.13786v1.pdf",
                                       SAMPLE / "2204.08348v3.pdf"])
    config = DocumentsConfig(pool=PoolSettings(workers=1))
    assert build_documents(vault_paths, config).converted == 2
    texts = {r["sha256"]: r for r in vault_paths.store.read(DOCUMENTS).to_dicts()}
    journal = vault_paths.scratch / "documents-journal"
    journal.mkdir(parents=True)
    old_columns = [c for c in JOURNAL.names if c not in ("limits", "tries")]
    for name, attempt in zip(("a-old", "b-new"), vault_paths.store.read(DOCUMENT_ATTEMPTS)
                             .to_dicts(), strict=True):
        row = {**attempt, **{c: texts[attempt["sha256"]][c] for c in TEXT_COLUMNS}}
        frame = pl.DataFrame([row], schema=JOURNAL.polars)
        frame = frame.select(old_columns) if name == "a-old" else frame
        frame.write_parquet(journal / f"{name}.rows.parquet")
    for table in (DOCUMENTS, DOCUMENT_ATTEMPTS):  # as if the run had died before writing
        Path(vault_paths.store.path(table)).unlink()
    report = build_documents(vault_paths, config)
    assert (report.resumed, report.converted) == (2, 0)
    again = {r["sha256"]: r for r in vault_paths.store.read(DOCUMENTS).to_dicts()}
    assert {sha: (r["status"], r["text"]) for sha, r in again.items()} == {
        sha: (r["status"], r["text"]) for sha, r in texts.items()}
    assert not journal.exists()


# disk full while a table is written ------------------------------------------------------------

def test_a_full_disk_keeps_the_previous_table_and_a_rerun_completes(
        sample_vault: VaultPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    table = Path(sample_vault.store.path(PAPERS))
    before = table.read_bytes()
    real_atomic_path = checksums.atomic_path  # the tables' writes: recorded_path

    @contextlib.contextmanager
    def full_disk(target: Path):
        """The write to the temporary file runs out of space half-way."""
        with real_atomic_path(target) as tmp:
            yield tmp
            if target == table:
                with tmp.open("r+b") as handle:
                    handle.truncate(tmp.stat().st_size // 2)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checksums, "atomic_path", full_disk)
    result = vault("materialize", "-s", "papers", "--force")
    assert result.exit_code == 1 and "Traceback" not in result.output
    [failure] = [line for line in result.output.splitlines() if "no space left" in line]
    assert "table 'papers'" in failure and "previous version is intact" in failure
    assert table.read_bytes() == before  # the previous table, untouched
    assert not [p for p in table.parent.glob(".papers.parquet.*")  # no half-written file
                if not p.name.endswith(checksums.SUFFIX)]
    assert papers_count() == 221
    monkeypatch.setattr(checksums, "atomic_path", real_atomic_path)  # space freed
    assert vault("materialize", "-s", "papers", "--force").exit_code == 0
    assert papers_count() == 221
