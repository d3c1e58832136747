"""The game's MCP server on the MCP SDK 2.x: the SDK's low-level ``Server`` with the episode's handlers passed
to its constructor (``on_call_tool(ctx, params)`` ...), served by its own ``streamable_http_app``. Public API
only (the session ids it still serves are read in ``mcp_server/transport.py``). ``mcp_server/app_v1.py`` is
the same server on the SDK 1.x.

The difference a client may notice: on 1.x the transport answers a request whose result is ready within
``stream_after`` seconds as one JSON body (``mcp_server/transport.py``); the SDK 2.x answers every request
on its own SSE stream (progress notifications and results alike, as the MCP spec allows). Results, errors,
progress and the turn contract are the same on both.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

# first: the SDK's version check (an SDK agentworld does not know is refused with the fix)
from .transport import live_sessions, path_first
from mcp import types  # noqa: E402
from mcp.server import Server, ServerRequestContext  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.routing import Route  # noqa: E402

RESOURCE_NOT_FOUND = -32002  # the MCP spec's error code for a resource it does not have


def _request(ctx: ServerRequestContext) -> Request | None:
    return ctx.request if isinstance(ctx.request, Request) else None


def game_app(owner: Any, *, instructions: str, version: str, host: str, path: str, security: Any, max_sessions: int,
             max_body_bytes: int, session_idle_timeout: float, stream_after: float,
             routes: Iterable[tuple[str, Callable]]) -> tuple[Any, Callable[[], set[str] | None]]:
    """The ASGI app serving ``owner``'s episode at ``path`` (and ``routes``: GET path -> endpoint), and a
    function giving the session ids the SDK still serves. (``stream_after`` has no 2.x counterpart: every
    answer is an SSE stream.)"""

    async def list_tools(ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=owner.tools)

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        async def progress(waited: float, message: str) -> None:
            # a no-op unless the request asked for progress (a progressToken in _meta); never fails the call
            try:
                await ctx.session.report_progress(round(waited, 1), None, message)
            except Exception:
                pass

        return await owner.answer_call(_request(ctx), params.name, params.arguments or {}, progress)

    async def list_resources(ctx: ServerRequestContext, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=desc, mimeType=mime)
            for uri, name, desc, mime in owner.resources()])

    async def list_resource_templates(ctx: ServerRequestContext, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resourceTemplates=[])

    async def read_resource(ctx: ServerRequestContext,
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text, mime = owner.answer_read(_request(ctx), uri)
        except LookupError as refused:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=str(refused.args[0])) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mimeType=mime, text=text)])

    server: Server = Server("agentworld", version=version, instructions=instructions, on_list_tools=list_tools,
                            on_call_tool=call_tool, on_list_resources=list_resources,
                            on_list_resource_templates=list_resource_templates, on_read_resource=read_resource)
    app = server.streamable_http_app(
        streamable_http_path=path, host=host, transport_security=security, max_sessions=max_sessions,
        max_request_body_size=max_body_bytes, session_idle_timeout=session_idle_timeout,
        custom_starlette_routes=[Route(route, endpoint, methods=["GET"]) for route, endpoint in routes])
    return path_first(app, server.session_manager, path), lambda: live_sessions(server)


def bare_app(sleep: Callable[[Request, int], Any], *, path: str, stream_after: float) -> Any:
    """A server with one tool, ``sleep(seconds)``, answered by ``await sleep(http_request, seconds)`` (text):
    the floor ``bench mcp-load`` measures the game against, on the same transport."""
    tool = types.Tool(name="sleep", description="Return at once (parallel), or at this seat's next turn (serial).",
                      inputSchema={"type": "object", "properties": {"seconds": {"type": "integer"}},
                                   "required": ["seconds"]})

    async def list_tools(ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = await sleep(_request(ctx), int((params.arguments or {}).get("seconds", 1)))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: Server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(streamable_http_path=path)
    return path_first(app, server.session_manager, path)
