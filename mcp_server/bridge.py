"""``agentworld mcp-stdio --url URL --token TOKEN``: relay a stdio MCP client to a seat on the HTTP server.

Desktop assistants and coding agents that only start MCP servers as subprocesses speak MCP over
stdin/stdout. The bridge is a transport relay: every JSON-RPC message read on stdin is posted to the
streamable HTTP endpoint with the seat's bearer token, and everything the server sends back is written to
stdout. Nothing is interpreted, so tools, resources and errors are exactly the server's.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

from .clients import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, seat_headers
from ..core.play.mcp_sdk import http  # httpx on the MCP SDK 1.x, httpx2 on 2.x: what its client takes


class BridgeError(RuntimeError):
    pass


def whoami_url(url: str) -> str:
    base = url.rstrip("/")
    return (base[: -len("/mcp")] if base.endswith("/mcp") else base) + "/whoami"


def refusal_message(r: Any) -> str:
    """The message of the server's refusal (a JSON-RPC error body), or the body as it came."""
    try:
        return str(r.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return r.text


async def check_seat(url: str, token: str) -> dict[str, Any]:
    """Ask the server who this token is, so a bad URL or token fails at once with a clear message."""
    try:
        async with http.AsyncClient(headers=seat_headers(token), timeout=CONNECT_TIMEOUT_S) as client:
            r = await client.get(whoami_url(url))
    except http.HTTPError as exc:
        raise BridgeError(f"cannot reach the AgentWorld MCP server at {url}: {exc}. Is `agentworld serve` "
                          f"running, and is --url the 'url' from its seats file?") from None
    if r.status_code in (401, 403):
        raise BridgeError(f"the server refused the token ({r.status_code}): {refusal_message(r)}")
    if r.status_code != 200:
        raise BridgeError(f"{whoami_url(url)} answered {r.status_code}: is --url an AgentWorld MCP endpoint?")
    return r.json()


async def relay(url: str, token: str) -> None:
    client = http.AsyncClient(headers=seat_headers(token), timeout=http.Timeout(CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S))
    async with client, streamable_http_client(url, http_client=client) as (from_http, to_http, *_), \
            stdio_server() as (from_stdio, to_stdio):
        async with anyio.create_task_group() as tg:
            async def pump(source: Any, sink: Any) -> None:
                async for message in source:
                    if isinstance(message, Exception):  # a transport error: report, keep relaying
                        print(f"agentworld mcp-stdio: {message}", file=sys.stderr, flush=True)
                        continue
                    await sink.send(message)
                tg.cancel_scope.cancel()  # either side closed: the bridge is done

            tg.start_soon(pump, from_stdio, to_http)
            tg.start_soon(pump, from_http, to_stdio)


async def run_bridge(url: str, token: str) -> None:
    seat = await check_seat(url, token)
    print(f"agentworld mcp-stdio: relaying stdio to {url} as {seat['username']} ({seat['agent_id']})",
          file=sys.stderr, flush=True)
    await relay(url, token)
