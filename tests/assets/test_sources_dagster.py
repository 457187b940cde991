"""The live layer in Dagster and on the command line: the schedule harvests yesterday, the
decisions sensor ticks with a JSON cursor and keeps its place when a poll fails, dry runs send
nothing, a CLI harvest goes where the environment points it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import dagster as dg
from typer.testing import CliRunner

from testing.sources_replay import ReplayServer, Reply, data
from vault_pipeline.cli.app import app
from vault_pipeline.definitions import build_defs

defs = build_defs()

JSON = "application/json"


def _env(monkeypatch, server: ReplayServer, vault_paths) -> None:
    monkeypatch.setenv("VAULT_ARXIV_OAI_URL", f"{server.url}/oai")
    monkeypatch.setenv("VAULT_OPENREVIEW_URL", f"{server.url}/or2")
    monkeypatch.setenv("VAULT_S2_URL", f"{server.url}/graph/v1")
    for name in ("ARXIV", "OPENREVIEW", "S2"):
        monkeypatch.setenv(f"VAULT_{name}_INTERVAL", "0")


def test_the_schedule_asks_for_yesterday() -> None:
    schedule = defs.get_schedule_def("arxiv_daily_harvest_schedule")
    now = datetime(2026, 11, 11, 4, 30, tzinfo=UTC)
    with dg.build_schedule_context(scheduled_execution_time=now) as context:
        requests = list(schedule.evaluate_tick(context).run_requests or [])
    assert [r.partition_key for r in requests] == ["2026-11-10"]
    assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED


def test_live_harvests_stay_out_of_the_offline_refresh() -> None:
    job = defs.resolve_job_def("refresh_from_raw")
    keys = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
    assert {"submissions", "citations"} <= keys
    assert not keys & {"arxiv_oai_harvest", "openreview_harvest", "s2_harvest"}


def test_decisions_sensor_requests_refreshes_and_keeps_its_place(vault_paths, monkeypatch
                                                                 ) -> None:
    sensor = defs.get_sensor_def("openreview_decisions_sensor")
    counts = {"n": 3}

    def count(seen) -> Reply:
        if "NeurIPS" in seen.query["content.venueid"]:
            return Reply(500, "down", content_type="text/plain")
        return Reply(body=json.dumps({"notes": [], "count": counts["n"]}), content_type=JSON)

    with ReplayServer() as server:
        server.add("/or2/notes", count)
        _env(monkeypatch, server, vault_paths)
        with dg.build_sensor_context(resources={"vault": defs.resources["vault"]},
                                     repository_def=defs.get_repository_def()) as context:
            first = sensor.evaluate_tick(context)
            cursor = json.loads(first.cursor)
            assert sorted(r.partition_key for r in first.run_requests) == [
                "ICLR.cc/2024/Conference", "ICLR.cc/2025/Conference"]
            assert first.run_requests[0].run_config["ops"]["openreview_harvest"]["config"] == {
                "refresh": True}
            assert "NeurIPS.cc/2025/Conference" not in cursor  # failed: tried again next tick
        with dg.build_sensor_context(cursor=first.cursor,
                                     resources={"vault": defs.resources["vault"]},
                                     repository_def=defs.get_repository_def()) as context:
            second = sensor.evaluate_tick(context)
            assert not second.run_requests and "NeurIPS" in second.skip_message
        counts["n"] = 4
        with dg.build_sensor_context(cursor=second.cursor,
                                     resources={"vault": defs.resources["vault"]},
                                     repository_def=defs.get_repository_def()) as context:
            third = sensor.evaluate_tick(context)
            assert len(third.run_requests) == 2


def test_dry_run_sends_nothing(vault_paths, monkeypatch) -> None:
    with ReplayServer() as server:
        _env(monkeypatch, server, vault_paths)
        runner = CliRunner()
        for args in (["arxiv", "oai", "--from", "2026-11-10"], ["openreview"],
                     ["s2", "ARXIV:2611.00001"], ["arxiv", "search", "cat:cs.LG"],
                     ["openreview-pdfs"]):
            result = runner.invoke(app, ["harvest", *args, "--dry-run"])
            assert result.exit_code == 0, result.output
            assert "would" in result.output
        assert server.log == []
        result = runner.invoke(app, ["harvest", "arxiv", "oai", "--from", "2026-11-10",
                                     "--dry-run"])
        assert f"{server.url}/oai?verb=ListRecords" in result.output


def test_cli_harvest_then_materialize(vault_paths, monkeypatch) -> None:
    with ReplayServer() as server:
        server.add("/oai", Reply(body=data("oai_listrecords_p1.xml")),
                   metadataPrefix="arXivRaw")
        server.add("/oai", Reply(body=data("oai_listrecords_p2.xml")),
                   resumptionToken="7000001|1001")
        server.add("/oai", Reply(body=data("oai_listrecords_p3.xml")),
                   resumptionToken="7000001|2001")
        _env(monkeypatch, server, vault_paths)
        runner = CliRunner()
        result = runner.invoke(app, ["harvest", "arxiv", "oai", "--from", "2026-11-10"])
        assert result.exit_code == 0, result.output
        assert "6 records, 3 pages" in result.output
        again = runner.invoke(app, ["harvest", "arxiv", "oai", "--from", "2026-11-10"])
        assert "already harvested" in again.output and len(server.log) == 3
    result = runner.invoke(app, ["materialize", "--select", "papers"])
    assert result.exit_code == 0, result.output
    out = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM papers", "--format", "csv"])
    assert out.output.splitlines()[-1] == "6"


def test_an_unreachable_service_is_one_line_and_exit_1(vault_paths, monkeypatch) -> None:
    monkeypatch.setenv("VAULT_S2_URL", "http://127.0.0.1:9/graph/v1")
    monkeypatch.setenv("VAULT_S2_INTERVAL", "0")
    config = vault_paths.home / "harvest.toml"
    config.write_text("[retry]\nmax_attempts = 2\nbackoff_base_s = 0.01\n")
    result = CliRunner().invoke(app, ["harvest", "s2", "ARXIV:2611.00001"])
    assert result.exit_code == 1
    assert "gave up after 2 attempts (network error" in result.output


def test_yesterday_is_utc() -> None:
    from vault_pipeline.sources.oai_pmh import yesterday

    assert yesterday() == (datetime.now(UTC) - timedelta(days=1)).date()
