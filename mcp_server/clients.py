"""MCP clients for one seat: each framework's own MCP client, pointed at a seat URL and bearer token.

Framework teams with ``--tools mcp`` find their seats (URL, token) in the view ``Team.start`` receives (the
episode starts the server: ``mcp_server.plugin.start_tool_server``) and build each agent's tool objects from
its framework's own client opened here: ``mcp_session`` (openai),
``autogen_server_params`` for an ``McpWorkbench`` (autogen), ``langchain_session`` + ``load_mcp_tools``
(langgraph), ``camel_client`` (camel). Every helper sends ``Authorization: Bearer <token>``, so even clients
that open a new MCP session per call act as the right character. Heavy framework imports happen inside the
helpers. Signatures::

    # the tool source FrameworkTeam.start(view) opens (plugins/agents/common.py) from the view's seats
    source = McpToolSource.from_view(view)                      # await source.call(agent_id, tool, args) -> ToolResult
    url, token = source.seat(agent_id)                          # for a framework's own MCP client
    value = await source.hold(client_context)                   # kept open by a task of its own, closed in aclose
    await source.aclose()                                       # closes clients and sessions

    seat_headers(token) -> dict[str, str]
    to_tool_result(call_tool_result) -> ToolResult              # ok / error / text, as the gate produced them
    seat_result(is_error, text) -> ToolResult                   # the same from the text alone (clients that drop
                                                                #   structuredContent, e.g. AutoGen's McpWorkbench)

    # raw MCP SDK (the plain openai agent, external scripts)
    async with mcp_session(url, token) as session: ...          # initialized mcp.ClientSession
    await openai_tool_schemas(session) -> list[dict]            # OpenAI function schemas from list_tools
    openai_function_schema(mcp_tool) -> dict                    # one listed tool's OpenAI function schema
    held = await hold_open(any_async_context_manager)          # held.value; await held.aclose() from any task
    McpToolCaller({agent_id: (url, token)})                     # await caller(agent_id, tool, args) -> ToolResult;
                                                                #   fits plugins/agents/common.ToolRouter(mcp_call=)
                                                                #   await caller.aclose()
    # AutoGen (autogen_ext.tools.mcp)
    autogen_server_params(url, token) -> StreamableHttpServerParams
    async with autogen_workbench(url, token) as workbench: ...  # McpWorkbench: AssistantAgent(workbench=...)
    await autogen_tools(url, token, session=None) -> list[StreamableHttpMcpToolAdapter]

    # LangChain / LangGraph (langchain_mcp_adapters)
    langchain_connection(url, token) -> dict                    # a MultiServerMCPClient connection
    async with langchain_session(url, token) as session: ...    # MultiServerMCPClient(...).session(): one session
    await langchain_tools(url, token) -> list[BaseTool]         # a new session per call (header identity)
    async with langchain_session_tools(url, token) as tools: ...  # one persistent session

    # CAMEL (camel.toolkits.MCPToolkit, or our adapter over a ClientSession)
    camel_config(url, token) -> dict                            # MCPToolkit(config_dict=...)
    async with camel_client(url, token) as client: ...          # camel.utils.mcp_client.MCPClient (one session)
    async with camel_toolkit(url, token) as toolkit: toolkit.get_tools()   # 12 tools: see camel_toolkit
    async with camel_seat_tools(url, token) as tools: ...       # all 13, over one session
    await camel_function_tools(session) -> list[FunctionTool]   # honours isError ("ERROR: ..." prefix)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
from typing import Any, AsyncIterator, get_args

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from ..core.world.effects import ErrorKind, ToolResult
from ..core.play.mcp_sdk import http, input_schema, is_error, structured_content

log = logging.getLogger("agentworld.mcp")

# A call made early waits for the agent's turn, so reads must be allowed to take long.
READ_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 30.0


def seat_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def to_tool_result(result: types.CallToolResult) -> ToolResult:
    """Back to the gate's ToolResult (ok, error kind, the outcome text without the appended observation)."""
    data = structured_content(result) or {}
    if "ok" in data:
        return ToolResult(ok=bool(data["ok"]), text=str(data.get("result", "")), error=data.get("error"))
    return seat_result(is_error(result), result_text(result))


# The error kinds a framework seat's result text can start with (``[kind] text``, see seat_result).
_ERROR_KINDS = frozenset(get_args(ErrorKind))


def seat_result(is_error: bool, text: str) -> ToolResult:
    """The gate's ToolResult back from a result's text alone, for clients that keep only text and ``isError``.

    For a seat played by a framework team the server answers with the outcome text alone, and a failure as
    ``[<error kind>] <text>`` with ``isError`` set (``EpisodeMcpServer._result``); this is its inverse. (The
    server writes ``ok``/``failed`` for an empty outcome text, which comes back as that word.)"""
    if not is_error:
        return ToolResult(ok=True, text=text)
    kind, sep, rest = text.partition("] ")
    if text.startswith("[") and sep and kind[1:] in _ERROR_KINDS:
        return ToolResult(ok=False, text=rest, error=kind[1:])
    # not framed by the server: the client itself failed (transport, session) and says so in its text
    return ToolResult(ok=False, text=text, error=None)


# -- raw MCP SDK --------------------------------------------------------------------------------------
@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CA bundle, verification on), made once per process. Every
    ``httpx.AsyncClient`` otherwise loads the CA bundle anew (about 50 ms of CPU each): a process that opens
    one session per seat, say 100, would spend seconds on it before its first call. (``http`` is httpx on
    the MCP SDK 1.x, httpx2 on 2.x: the HTTP library its client takes; core/play/mcp_sdk.py.)"""
    return http.create_ssl_context()


@contextlib.asynccontextmanager
async def mcp_session(url: str, token: str, *, read_timeout: float = READ_TIMEOUT_S) -> AsyncIterator[ClientSession]:
    """An initialized ``mcp.ClientSession`` for one seat over streamable HTTP."""
    client = http.AsyncClient(headers=seat_headers(token), verify=shared_ssl_context(),
                              timeout=http.Timeout(CONNECT_TIMEOUT_S, read=read_timeout))
    async with client, streamable_http_client(url, http_client=client) as (read, write, *_), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def openai_function_schema(tool: types.Tool) -> dict[str, Any]:
    """One listed MCP tool as an OpenAI function-calling schema (the server lists ``ToolSpec.json_schema()``,
    so this equals the tool's ``ToolSpec.openai_schema()``)."""
    return {"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                             "parameters": input_schema(tool)}}


async def openai_tool_schemas(session: ClientSession) -> list[dict[str, Any]]:
    """The seat's tools as OpenAI function-calling schemas (identical to core.tools.openai_tools())."""
    return [openai_function_schema(t) for t in (await session.list_tools()).tools]


class Held:
    """An async context manager kept open by a task of its own (see :func:`hold_open`)."""

    def __init__(self, value: Any, stop: asyncio.Event, task: asyncio.Task):
        self.value, self._stop, self._task = value, stop, task

    async def aclose(self) -> None:
        self._stop.set()
        await self._task


async def hold_open(cm: Any) -> Held:
    """Enter ``cm`` in a background task and keep it open until ``aclose()``.

    MCP client contexts (``mcp_session``, ``McpWorkbench``, ``MCPToolkit``) hold anyio cancel scopes, which
    must be exited by the task that entered them. A team opens them in one turn's task and closes them in
    ``aclose`` (another task; the episode runs each ``act`` under ``asyncio.wait_for``), so they are held
    by a task of their own instead."""
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def holder() -> None:
        try:
            async with cm as value:
                ready.set_result(value)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
                raise

    task = asyncio.create_task(holder(), name="agentworld-mcp-client")
    return Held(await ready, stop, task)


class McpToolCaller:
    """``await caller(agent_id, tool, args) -> ToolResult`` over one persistent MCP session per agent."""

    def __init__(self, seats: dict[str, tuple[str, str]]):
        self.seats = seats  # agent_id -> (url, token)
        self._held: dict[str, Held] = {}
        self._opening: dict[str, asyncio.Future] = {}

    async def session(self, agent_id: str) -> ClientSession:
        if agent_id in self._held:
            return self._held[agent_id].value
        if agent_id not in self.seats:
            raise KeyError(f"no MCP seat for {agent_id}; seats: {', '.join(self.seats)}")
        if agent_id not in self._opening:  # parallel first calls share one session
            url, token = self.seats[agent_id]
            self._opening[agent_id] = asyncio.ensure_future(hold_open(mcp_session(url, token)))
        try:
            held = await asyncio.shield(self._opening[agent_id])
        finally:
            if self._opening.get(agent_id) is not None and self._opening[agent_id].done():
                self._opening.pop(agent_id, None)
        self._held[agent_id] = held
        return held.value

    async def __call__(self, agent_id: str, tool: str, arguments: dict[str, Any] | None) -> ToolResult:
        session = await self.session(agent_id)
        return to_tool_result(await session.call_tool(tool, arguments or {}))

    async def aclose(self) -> None:
        held, self._held = list(self._held.values()), {}
        for h in held:
            await h.aclose()


# -- AutoGen ------------------------------------------------------------------------------------------
def autogen_server_params(url: str, token: str) -> Any:
    from autogen_ext.tools.mcp import StreamableHttpServerParams

    return StreamableHttpServerParams(url=url, headers=seat_headers(token), timeout=CONNECT_TIMEOUT_S,
                                      sse_read_timeout=READ_TIMEOUT_S)


@contextlib.asynccontextmanager
async def autogen_workbench(url: str, token: str) -> AsyncIterator[Any]:
    """An AutoGen ``McpWorkbench`` holding one session for the seat (``AssistantAgent(workbench=...)``)."""
    from autogen_ext.tools.mcp import McpWorkbench

    async with McpWorkbench(autogen_server_params(url, token)) as workbench:
        yield workbench


async def autogen_tools(url: str, token: str, session: ClientSession | None = None) -> list[Any]:
    """AutoGen tool adapters; with ``session`` they reuse it, else each call opens its own session."""
    from autogen_ext.tools.mcp import mcp_server_tools

    return await mcp_server_tools(autogen_server_params(url, token), session=session)


# -- LangChain / LangGraph ---------------------------------------------------------------------------
def langchain_connection(url: str, token: str) -> dict[str, Any]:
    from datetime import timedelta

    return {"transport": "streamable_http", "url": url, "headers": seat_headers(token),
            "timeout": timedelta(seconds=CONNECT_TIMEOUT_S), "sse_read_timeout": timedelta(seconds=READ_TIMEOUT_S)}


@contextlib.asynccontextmanager
async def langchain_session(url: str, token: str, name: str = "agentworld") -> AsyncIterator[ClientSession]:
    """One initialized MCP session for the seat, opened by langchain-mcp-adapters' ``MultiServerMCPClient``
    (``load_mcp_tools(session)`` then gives LangChain tools that all use it)."""
    from langchain_mcp_adapters.client import MultiServerMCPClient

    async with MultiServerMCPClient({name: langchain_connection(url, token)}).session(name) as session:
        yield session


async def langchain_tools(url: str, token: str) -> list[Any]:
    """LangChain tools; each call opens a new MCP session (identity travels in the header)."""
    from langchain_mcp_adapters.tools import load_mcp_tools

    return await load_mcp_tools(None, connection=langchain_connection(url, token))  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def langchain_session_tools(url: str, token: str) -> AsyncIterator[list[Any]]:
    """LangChain tools over one persistent MCP session for the seat."""
    from langchain_mcp_adapters.tools import load_mcp_tools

    async with mcp_session(url, token) as session:
        yield await load_mcp_tools(session)


# -- CAMEL --------------------------------------------------------------------------------------------
def camel_config(url: str, token: str, name: str = "agentworld") -> dict[str, Any]:
    return {"mcpServers": {name: {"url": url, "type": "streamable_http", "headers": seat_headers(token),
                                  "timeout": READ_TIMEOUT_S}}}


@contextlib.asynccontextmanager
async def camel_client(url: str, token: str) -> AsyncIterator[Any]:
    """A connected CAMEL ``MCPClient`` (the client ``MCPToolkit`` holds one of per server) for the seat.

    ``await client.list_mcp_tools()`` lists the 13 tools and ``await client.call_tool(name, args)`` returns the
    full ``CallToolResult`` (``isError`` and ``structuredContent`` included). Its read timeout defaults to
    10 s; a call made early waits for the turn, so it gets :data:`READ_TIMEOUT_S`."""
    from camel.utils.mcp_client import MCPClient

    config = camel_config(url, token)["mcpServers"]["agentworld"]
    config = {**config, "timeout": CONNECT_TIMEOUT_S, "sse_read_timeout": READ_TIMEOUT_S}
    async with MCPClient(config, timeout=READ_TIMEOUT_S) as client:
        yield client


@contextlib.asynccontextmanager
async def camel_toolkit(url: str, token: str) -> AsyncIterator[Any]:
    """A connected CAMEL ``MCPToolkit`` for the seat.

    Two limits of camel-ai 0.2.90's MCP wrapper: it drops ``send_chat_message`` (it builds a Python
    signature, and the paper's parameter ``global`` is a Python keyword), and it ignores ``isError``.
    :func:`camel_seat_tools` has neither problem."""
    from camel.toolkits import MCPToolkit

    async with MCPToolkit(config_dict=camel_config(url, token)) as toolkit:
        yield toolkit


async def camel_function_tools(session: ClientSession) -> list[Any]:
    """CAMEL ``FunctionTool``s over an existing session; failures come back prefixed with ``ERROR:``."""
    from camel.toolkits import FunctionTool

    def caller(name: str) -> Any:  # the name is bound here, not a parameter a model could set
        async def call(**kwargs: Any) -> str:
            r = await session.call_tool(name, kwargs)
            text = result_text(r)
            return f"ERROR: {text}" if is_error(r) else text

        call.__name__ = name
        return call

    out = []
    for t in (await session.list_tools()).tools:
        out.append(FunctionTool(caller(t.name), openai_tool_schema=openai_function_schema(t)))
    return out


# -- the tool source of a framework team with --tools mcp -------------------------------------------------
class McpToolSource(McpToolCaller):
    """The MCP tool source a framework team opens in ``Team.start(view)`` from its agents' seats in the view
    (the episode started the server: ``mcp_server.plugin.start_tool_server``). ``await source.call(agent_id,
    tool, args)`` goes through the episode's MCP server with that agent's token; ``aclose`` closes the
    team's clients and sessions (the server is the episode's to stop)."""

    def __init__(self, seats: dict[str, tuple[str, str]]):
        super().__init__(seats)
        self._clients: list[Held] = []  # framework-native clients opened through hold()

    @classmethod
    def from_view(cls, view: Any) -> "McpToolSource":
        seats = {a.agent_id: (a.mcp.url, a.mcp.token) for a in view.agents if a.mcp is not None}
        if not seats:
            raise RuntimeError("tools over MCP: the team's view has no MCP seats; the episode starts the MCP "
                               "server for a team whose tool_server is 'mcp' (agentworld run --tools mcp)")
        return cls(seats)

    def seat(self, agent_id: str) -> tuple[str, str]:
        """``(url, token)`` of the agent's seat, for a framework's own MCP client."""
        if agent_id not in self.seats:
            raise KeyError(f"no MCP seat for {agent_id}; seats: {', '.join(self.seats)}")
        return self.seats[agent_id]

    async def hold(self, cm: Any) -> Any:
        """Enter a framework's MCP client context (a task of its own keeps it open: see :func:`hold_open`);
        it is closed in :meth:`aclose`. Returns what the context yields."""
        held = await hold_open(cm)
        self._clients.append(held)
        return held.value

    async def call(self, agent_id: str, tool: str, arguments: dict[str, Any] | None) -> ToolResult:
        return await self(agent_id, tool, arguments)

    async def aclose(self) -> None:
        clients, self._clients = self._clients, []
        for held in reversed(clients):
            try:
                await held.aclose()
            except Exception as exc:  # noqa: BLE001 - one client failing to close must not keep the others open
                log.warning("closing an MCP client failed: %s", exc)
        await super().aclose()


@contextlib.asynccontextmanager
async def camel_seat_tools(url: str, token: str) -> AsyncIterator[list[Any]]:
    """All 13 tools as CAMEL ``FunctionTool``s over one MCP session for the seat (failures marked ``ERROR:``)."""
    async with mcp_session(url, token) as session:
        yield await camel_function_tools(session)
