"""`vault tools mcp`: the agent tools as a Model Context Protocol server (stdio), with the
official `mcp` package's low-level server, so the tool list carries exactly the schemas of
`specs` (the OpenAI file's) and each call goes to the same `Session.call`. One server process
is one session: its cutoff and target are fixed when it starts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server

    from vault_pipeline.access.tools import Session


def build_server(session: Session) -> Server:
    """An MCP server whose tools answer in ``session``'s world."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server

    from vault_pipeline.access import specs, wire

    tools = [types.Tool(name=name, description=specs.description(name),
                        input_schema=specs.parameters(name)) for name in specs.TOOLS]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        answer = await anyio.to_thread.run_sync(session.call, params.name, params.arguments)
        text = wire.dumps(answer)
        return types.CallToolResult(content=[types.TextContent(text=text)],
                                    structured_content=answer, is_error="error" in answer)

    return Server("research-idea-vault", instructions=(
        "Tools over a results-masked research vault, cut at "
        f"{session.world.as_of.isoformat()}: search prior art and mechanisms, read papers "
        "and their citations."), on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(session: Session, on_close=None) -> None:
    """Serve ``session`` over stdin/stdout until the client disconnects."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(session)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        if on_close is not None:
            on_close()
