"""The game's MCP server on the MCP SDK 1.x: FastMCP with the episode's tools and resources, behind the
answer-when-ready transport (``mcp_server/transport.py``). ``mcp_server/app_v2.py`` is the same server on
the SDK 2.x; ``mcp_server/server.py`` picks the one of the installed SDK and holds everything else.

Both answer through the same owner (:class:`~agentworld.mcp_server.server.EpisodeMcpServer`): its tool
definitions, ``answer_call(request, name, arguments, progress)`` and ``answer_read(request, uri)``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, Iterable

# first: the transport refuses an MCP SDK whose internals it does not know, with the fix (before mcp's imports)
from .transport import answer_when_ready, live_sessions, mcp_path_first, request_context, set_server_version
from mcp import types  # noqa: E402
from mcp.server.fastmcp import Context, FastMCP  # noqa: E402
from mcp.server.fastmcp.exceptions import ResourceError  # noqa: E402
from mcp.server.lowlevel.helper_types import ReadResourceContents  # noqa: E402
from starlette.requests import Request  # noqa: E402


class _QuietSessionClose(logging.Filter):
    """mcp 1.30 logs a full traceback (rendered by rich: ~0.2 s of CPU on the server loop) whenever a client
    ends its session while the standalone SSE stream is open. That is a normal close, not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (record.getMessage().startswith("Error in standalone SSE writer")
                    and type(exc).__name__ in ("ClosedResourceError", "BrokenResourceError"))


logging.getLogger("mcp.server.streamable_http").addFilter(_QuietSessionClose())


class GameMcp(FastMCP):
    """FastMCP bound to one episode; tools and resources answer for the calling seat (``owner``)."""

    def __init__(self, owner: Any, instructions: str, version: str, **settings: Any):
        self.owner = owner
        super().__init__("agentworld", instructions=instructions, log_level="WARNING", **settings)
        # the server's version in serverInfo; without it the SDK reads mcp's package metadata for every new
        # session (about 6 ms each: 0.6 s of the episode's loop for 100 seats)
        set_server_version(self, version)

    def _request(self) -> Request | None:
        rc = request_context(self)
        req = rc.request if rc is not None else None
        return req if isinstance(req, Request) else None

    async def list_tools(self) -> list[types.Tool]:
        return self.owner.tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        rc = request_context(self)  # FastMCP's Context (a pydantic model) is built only to report progress
        req = rc.request if rc is not None and isinstance(rc.request, Request) else None

        async def progress(waited: float, message: str) -> None:
            # only sent when the request asked for progress (a progressToken in _meta); never fails the call
            with contextlib.suppress(Exception):
                await Context(request_context=rc, fastmcp=self).report_progress(round(waited, 1), None, message)

        return await self.owner.answer_call(req, name, arguments, progress)

    async def list_resources(self) -> list[types.Resource]:
        return [types.Resource(uri=uri, name=name, description=desc, mimeType=mime)
                for uri, name, desc, mime in self.owner.resources()]

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        return []

    async def read_resource(self, uri: Any) -> Iterable[ReadResourceContents]:
        try:
            text, mime = self.owner.answer_read(self._request(), str(uri))
        except LookupError as refused:
            raise ResourceError(str(refused.args[0])) from None
        return [ReadResourceContents(content=text, mime_type=mime)]


def game_app(owner: Any, *, instructions: str, version: str, host: str, path: str, security: Any, max_sessions: int,
             max_body_bytes: int, session_idle_timeout: float, stream_after: float,
             routes: Iterable[tuple[str, Callable]]) -> tuple[Any, Callable[[], set[str] | None]]:
    """The ASGI app serving ``owner``'s episode at ``path`` (and ``routes``: GET path -> endpoint), and a
    function giving the session ids the SDK still serves."""
    mcp = GameMcp(owner, instructions, version, host=host, streamable_http_path=path, transport_security=security,
                  max_sessions=max_sessions, max_request_body_size=max_body_bytes,
                  session_idle_timeout=session_idle_timeout)
    answer_when_ready(mcp, stream_after)
    for route, endpoint in routes:
        mcp.custom_route(route, methods=["GET"])(endpoint)
    return mcp_path_first(mcp), lambda: live_sessions(mcp)


def bare_app(sleep: Callable[[Request, int], Any], *, path: str, stream_after: float) -> Any:
    """A server with one tool, ``sleep(seconds)``, answered by ``await sleep(http_request, seconds)`` (text):
    the floor ``bench mcp-load`` measures the game against, on the same transport."""
    mcp = FastMCP("bare", log_level="WARNING", streamable_http_path=path)

    # no output schema, as the game's tools (else clients validate it)
    @mcp.tool(name="sleep", structured_output=False)
    async def sleep_tool(seconds: int) -> str:
        """Return at once (parallel), or at this seat's next turn (serial)."""
        return await sleep(mcp.get_context().request_context.request, seconds)

    answer_when_ready(mcp, stream_after)
    return mcp_path_first(mcp)
