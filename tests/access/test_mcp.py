"""The MCP face: an MCP client lists the tools (with the OpenAI file's schemas) and calls
them, in process and over stdio against `vault tools mcp`."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from tests.access.world_vault import NEAR_DUPLICATE, TARGET
from vault_pipeline.access import specs
from vault_pipeline.access.mcp_server import build_server

pytest.importorskip("mcp")


async def _exercise(client) -> tuple[list, dict, dict, dict]:
    listed = await client.list_tools()
    found = await client.call_tool("search_prior_art", {
        "problem_setting": "expert routing", "challenge": "tokens dropped", "k": 5})
    hidden = await client.call_tool("get_paper", {"id": NEAR_DUPLICATE})
    bad = await client.call_tool("get_paper", {"id": 7})
    return listed.tools, found, hidden, bad


def test_in_process_client_lists_and_calls(toolbox) -> None:
    from mcp import Client

    session = toolbox.session("2026-01-01", TARGET)

    async def main():
        async with Client(build_server(session)) as client:
            return await _exercise(client)

    tools, found, hidden, bad = anyio.run(main)
    assert [t.name for t in tools] == list(specs.TOOLS)
    assert [t.input_schema for t in tools] == [specs.parameters(n) for n in specs.TOOLS]
    ids = [hit["id"] for hit in found.structured_content["results"]]
    assert ids and NEAR_DUPLICATE not in ids and TARGET not in ids
    assert json.loads(found.content[0].text) == found.structured_content
    assert hidden.is_error and hidden.structured_content["error"] == "not_found"
    assert bad.is_error and bad.structured_content["error"] == "bad_arguments"
    assert [c.tool for c in session.calls] == ["search_prior_art", "get_paper", "get_paper"]


def test_stdio_server_of_the_cli(world_paths) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = [sys.executable, "-c", "from vault_pipeline.cli.app import app; app()", "tools",
               "mcp", "--home", str(world_paths.home), "--as-of", "2026-01-01",
               "--target", TARGET, "--session-id", "mcp-1"]
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})

    async def main():
        async with Client(params, read_timeout_seconds=120) as client:
            return await _exercise(client)

    tools, found, hidden, bad = anyio.run(main)
    assert len(tools) == len(specs.TOOLS) and bad.is_error
    assert NEAR_DUPLICATE not in [h["id"] for h in found.structured_content["results"]]
    assert hidden.structured_content["error"] == "not_found"
    import polars as pl

    log = pl.read_parquet(world_paths.table("tool_calls")).filter(
        pl.col("session_id") == "mcp-1")
    assert log["tool"].to_list() == ["search_prior_art", "get_paper", "get_paper"]


def test_an_unknown_query_encoder_is_a_one_line_error(world_paths) -> None:
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app

    result = CliRunner().invoke(app, ["tools", "mcp", "--home", str(world_paths.home),
                                      "--query-encoder", "bm25"])
    assert result.exit_code == 1
    assert "query encoder 'bm25': use one of model, static" in result.output
    assert "Traceback" not in result.output
