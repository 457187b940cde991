"""The live harvests as declared stages: their assets are generated from the declarations
(partitions, pool, raw-zone output, run config from the settings class), a run reads the
config of the vault it runs on (not the one the code was imported for), and `vault harvest`
runs the same declarations."""

from __future__ import annotations

import dagster as dg
import pytest
from typer.testing import CliRunner

from assets import VaultResource
from assets.harvest_sources import openreview_harvest_asset
from testing.sources_replay import ReplayServer, Reply, data
from tests.conftest import SAMPLE
from vault_pipeline.cli.app import app
from vault_pipeline.definitions import build_defs
from vault_pipeline.papers.build import build_papers
from vault_pipeline.pipeline.settings import settings_fields
from vault_pipeline.pipeline.stage import RunContext
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.sources import stage as harvest
from vault_pipeline.store.paths import VaultPaths

VENUE = "ICLR.cc/2025/Conference"
JSON = "application/json; charset=utf-8"


def _serve_venue(server: ReplayServer) -> None:
    server.add("/or2/groups", Reply(body=data("openreview_group.json"), content_type=JSON),
               id=VENUE)
    server.add("/or2/notes", Reply(body=data("openreview_notes_p1.json"), content_type=JSON),
               invitation=f"{VENUE}/-/Submission", count="true")
    server.add("/or2/notes", Reply(body=data("openreview_notes_p2.json"), content_type=JSON),
               after="Gq7tR2bC4d")


def _other_vault(tmp_path, file: str, server: ReplayServer) -> VaultPaths:
    """A vault X whose own config file points OpenReview at the replay server."""
    home = VaultPaths(tmp_path / "x").ensure()
    section = "[harvest.openreview]" if file == "vault.toml" else "[openreview]"
    (home.home / file).write_text(
        f'{section}\napi_url = "{server.url}/or2"\ninterval_s = 0\npage_size = 2\n'
        f'venues = [{{id = "{VENUE}"}}]\n')
    return home


def test_every_live_harvest_is_declared_and_generated() -> None:
    defs = build_defs()
    graph = defs.resolve_asset_graph()
    for stage in harvest.STAGES:
        node = graph.get(dg.AssetKey(stage.name))
        assert node.group_name == "harvest" and node.pools == {stage.pool}, stage.name
        assert {k.to_user_string() for k in node.parent_keys} == set(stage.inputs)
        op = defs.get_assets_def(stage.name).op
        fields = set(op.config_schema.as_field().config_type.fields)
        assert fields == set(settings_fields(stage.settings)), stage.name
    days = defs.get_assets_def("arxiv_oai_harvest")
    assert days.partitions_def.get_first_partition_key() == "2007-05-23"
    assert days.backfill_policy.max_partitions_per_run == harvest.ARXIV_DAYS_PER_RUN
    with pytest.raises(ValueError, match="partitioned"):
        from assets.stages import stage_asset

        stage_asset(harvest.OPENREVIEW_STAGE)


@pytest.mark.parametrize("file", ["harvest.toml", "vault.toml"])
def test_a_partition_runs_on_the_config_of_its_own_vault(vault_paths, tmp_path, file) -> None:
    """VAULT_HOME (the import-time home) is another vault: the partitions, the service URL
    and the page size all come from X's file, and the files land in X's raw zone."""
    with ReplayServer() as server:
        _serve_venue(server)
        x = _other_vault(tmp_path, file, server)
        asset = openreview_harvest_asset(x)
        assert asset.partitions_def.get_partition_keys() == [VENUE]
        result = dg.materialize([asset], partition_key=VENUE,
                                resources={"vault": VaultResource(home=str(x.home))})
        assert result.success
        assert [s.query.get("after") for s in server.requests("/or2/notes")] == [
            None, "Gq7tR2bC4d"]
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert (metadata["pages"].value, metadata["notes"].value) == (2, 3)
    assert metadata["path"].value == str(x.raw)
    assert len(RawZone(x).files()) == 3 and RawZone(vault_paths).files() == []


def test_the_decisions_sensor_refresh_reaches_the_run(vault_paths, tmp_path) -> None:
    with ReplayServer() as server:
        _serve_venue(server)
        x = _other_vault(tmp_path, "harvest.toml", server)
        asset = openreview_harvest_asset(x)
        resources = {"vault": VaultResource(home=str(x.home))}
        dg.materialize([asset], partition_key=VENUE, resources=resources)
        again = dg.materialize([asset], partition_key=VENUE, resources=resources)
        skipped = again.get_asset_materialization_events()[0].materialization.metadata
        assert skipped["skipped"].value is True and len(server.requests("/or2/notes")) == 2
        refresh = {"ops": {"openreview_harvest": {"config": {"refresh": True}}}}
        dg.materialize([asset], partition_key=VENUE, resources=resources,
                       run_config=refresh)
        assert len(server.requests("/or2/notes")) == 4


def test_cli_materialize_reads_the_home_it_is_given(vault_paths, tmp_path) -> None:
    """`vault materialize --home X` with VAULT_HOME elsewhere: X's `vault.toml` gives the
    harvest config ([harvest]) and the stage's own settings ([arxiv_fulltext_harvest])."""
    x = VaultPaths(tmp_path / "x").ensure()
    RawZone(x).import_paths([SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json"])
    build_papers(x)
    pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    with ReplayServer() as server:
        server.add("/pdf/2202.12139v1", Reply(body=pdf, content_type="application/pdf"))
        (x.home / "vault.toml").write_text(
            f'[harvest.arxiv]\npdf_url = "{server.url}/pdf"\ninterval_s = 0\n'
            '[arxiv_fulltext_harvest]\nids = ["2202.12139"]\nkinds = ["pdf"]\n')
        result = CliRunner().invoke(app, ["materialize", "--home", str(x.home), "--select",
                                          "arxiv_fulltext_harvest"])
        assert result.exit_code == 0, result.output
        assert [s.path for s in server.log] == ["/pdf/2202.12139v1"]
    assert [f.original_name for f in RawZone(x).files(["pdf"])] == ["2202.12139v1.pdf"]
    assert RawZone(vault_paths).files() == []


def test_the_cli_runs_the_declared_stage(vault_paths, monkeypatch) -> None:
    """`vault harvest openreview` is the stage's run: options are its flags, and a run of
    the stage itself sees the cursor the command left."""
    with ReplayServer() as server:
        _serve_venue(server)
        monkeypatch.setenv("VAULT_OPENREVIEW_URL", f"{server.url}/or2")
        monkeypatch.setenv("VAULT_OPENREVIEW_INTERVAL", "0")
        (vault_paths.home / "harvest.toml").write_text("[openreview]\npage_size = 2\n")
        result = CliRunner().invoke(app, ["harvest", "openreview", "--venue", VENUE])
        assert result.exit_code == 0, result.output
        assert f"{VENUE}: 3 submissions in 2 pages" in result.output
        stage = harvest.OPENREVIEW_STAGE
        report = stage.run(vault_paths, stage.resolve(home=vault_paths.home),
                           RunContext(partition=VENUE))
        assert report.skipped and len(server.requests("/or2/notes")) == 2
        refreshed = stage.run(vault_paths, stage.resolve(home=vault_paths.home,
                                                         flags={"refresh": True}),
                              RunContext(partition=VENUE))
        assert refreshed.pages == 2


def test_cli_s2_walk_and_fulltext_run_their_stages(vault_paths, monkeypatch) -> None:
    """`vault harvest s2 IDS --walk`: the lookup stage, `citations` rebuilt by its stage,
    then the walk's stage; `vault harvest arxiv fulltext` with its scope options as flags."""
    from pathlib import Path

    from tests.conftest import DATA

    RawZone(vault_paths).import_paths([SAMPLE])  # holds 2202.12139, not hep-th/9901001
    build_papers(vault_paths)
    ids = ["ARXIV:2611.00001", "ARXIV:2611.00002", "ARXIV:2611.00003"]
    pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    with ReplayServer() as server:
        server.add("/graph/v1/paper/batch", Reply(body=data("s2_batch.json"),
                                                  content_type="application/json"),
                   method="POST")
        server.add("/api/query", Reply(body=(Path(DATA) / "atom_old_style.xml").read_bytes()))
        server.add("/pdf/1401.2122", Reply(body=pdf, content_type="application/pdf"))
        for name, path in {"S2_URL": "/graph/v1", "ARXIV_API_URL": "/api/query",
                           "ARXIV_PDF_URL": "/pdf"}.items():
            monkeypatch.setenv(f"VAULT_{name}", f"{server.url}{path}")
        for name in ("ARXIV", "S2"):
            monkeypatch.setenv(f"VAULT_{name}_INTERVAL", "0")
        runner = CliRunner()
        walked = runner.invoke(app, ["harvest", "s2", *ids, "--walk"])
        assert walked.exit_code == 0, walked.output
        assert "walk: 1 cited arXiv papers were missing" in walked.output
        assert [s.query["id_list"] for s in server.requests("/api/query")] == ["hep-th/9901001"]
        assert "requests sent (s2: 1, arxiv: 1)" in walked.output
        # the sample holds 2202.12139v1.pdf already: only 1401.2122's PDF is asked for
        fetched = runner.invoke(app, ["harvest", "arxiv", "fulltext", "--id", "2202.12139",
                                      "--id", "1401.2122", "--kind", "pdf"])
        assert fetched.exit_code == 0, fetched.output
        assert "1 new file(s)" in fetched.output
        assert [s.path for s in server.requests() if s.path.startswith("/pdf")] == [
            "/pdf/1401.2122"]
    assert "1401.2122.pdf" in {f.original_name for f in RawZone(vault_paths).files(["pdf"])}
