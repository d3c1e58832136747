"""How the MCP server answers a request (mcp_server/transport.py), over real HTTP on 127.0.0.1: on the SDK 1.x a
response ready within ``stream_after`` seconds is one JSON body on a connection that stays open for the next
request (on 2.x the SDK's own transport answers it on an SSE stream); a call that waits longer gets an SSE
stream from then on, carrying its progress notifications; ``stream_after`` 0 keeps the SDK's SSE for
everything; the SDK's own handling still answers what is not a plain request."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import httpx
import pytest

from agentworld.core.play.mcp_sdk import SDK_MAJOR
from agentworld.mcp_server.server import EpisodeMcpServer

sys.path.insert(0, str(Path(__file__).parent))
from test_mcp_server import relay_episode  # noqa: E402

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
READ_TURN = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "agentworld://turn"}}


async def _open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    r = await http.post(url, json=INIT)
    assert r.status_code == 200, r.text
    session = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


def _client(server: EpisodeMcpServer, agent: str, **kwargs) -> httpx.AsyncClient:
    return httpx.AsyncClient(headers={**ACCEPT, "Authorization": f"Bearer {server.token(agent)}"}, **kwargs)


def _sse_data(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


@pytest.mark.skipif(SDK_MAJOR >= 2, reason="answer-when-ready is written on the SDK 1.x's transport; the SDK 2.x "
                                           "answers on its own SSE stream (the next test)")
async def test_a_quick_answer_is_one_json_body_on_a_kept_connection(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server, _client(server, "agent_1") as http:
        session = await _open_session(http, server.url)
        answers = [await http.post(server.url, json={**READ_TURN, "id": 10 + i}, headers=session) for i in range(3)]
        for i, r in enumerate(answers):
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json"), r.headers
            body = r.json()
            assert body["id"] == 10 + i and json.loads(body["result"]["contents"][0]["text"])["you"] == "agent_1"
        # a whole JSON body ends the response, so the connection is reused (an SSE answer that the SDK client
        # closes early is not): the three requests come from one local port
        ports = {r.extensions["network_stream"].get_extra_info("client_addr")[1] for r in answers}
        assert len(ports) == 1, ports


@pytest.mark.skipif(SDK_MAJOR < 2, reason="the SDK 2.x's own transport (on 1.x: the test before)")
async def test_on_the_sdk_2_a_quick_answer_is_the_sdks_own_sse_stream(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server, _client(server, "agent_1") as http:
        session = await _open_session(http, server.url)
        for i in range(3):
            r = await http.post(server.url, json={**READ_TURN, "id": 10 + i}, headers=session)
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream"), r.headers
            body = [m for m in _sse_data(r.text) if "id" in m]
            assert [m["id"] for m in body] == [10 + i]
            assert json.loads(body[0]["result"]["contents"][0]["text"])["you"] == "agent_1"


async def test_a_call_that_waits_longer_switches_to_a_stream_with_its_progress(tmp_path):
    ep, _ = relay_episode(tmp_path, turn_timeout=5)
    async with EpisodeMcpServer(ep, turn_timeout=5, progress_every=0.2) as server, \
            _client(server, "agent_2", timeout=httpx.Timeout(10)) as http:
        assert server.stream_after == 0.2  # the progress interval, by default
        session = await _open_session(http, server.url)
        run = asyncio.create_task(ep.run())
        try:
            # bob calls during alice's turn: his call waits (nobody plays alice) past stream_after
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "sleep", "arguments": {"seconds": 1}, "_meta": {"progressToken": "p3"}}}
            async with http.stream("POST", server.url, json=call, headers=session) as r:
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
                events = []
                async for line in r.aiter_lines():
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))
                        if len(events) == 2:
                            break
            assert [e.get("method") for e in events] == ["notifications/progress"] * 2, events
            assert events[0]["params"]["progressToken"] == "p3"
            assert events[0]["params"]["message"].startswith("waiting for your turn: it is alice's turn")
            # the stream was given up: the call never runs, and the next call of bob is taken
            await asyncio.sleep(0.3)
        finally:
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
    assert not any(e.type == "turn" and e.agent == "agent_2" and e.tool for e in ep.events)


async def test_stream_after_zero_keeps_sse_and_the_sdk_answers_the_rest(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep, stream_after=0) as server, _client(server, "agent_1") as http:
        session = await _open_session(http, server.url)
        r = await http.post(server.url, json=READ_TURN, headers=session)
        assert r.headers["content-type"].startswith("text/event-stream")
        assert [m["id"] for m in _sse_data(r.text) if "id" in m] == [2]
    ep2, _ = relay_episode(tmp_path / "2")
    async with EpisodeMcpServer(ep2) as server, _client(server, "agent_1") as http:
        session = await _open_session(http, server.url)
        # what is not a plain request of the session goes through the SDK as before: its errors, its statuses
        wrong = await http.post(server.url, json=READ_TURN, headers={**session, "mcp-session-id": "nope"})
        assert wrong.status_code == 404
        old = await http.post(server.url, json=READ_TURN, headers={**session, "mcp-protocol-version": "1999-01-01"})
        # (the SDK 2.x takes an unknown version for the 2026 protocol's stateless requests and refuses their form)
        assert old.status_code == 400 and ("Unsupported protocol version" if SDK_MAJOR == 1 else "params._meta") in old.text
        only_json = await http.post(server.url, json=READ_TURN, headers={**session, "Accept": "application/json"})
        assert only_json.status_code == 406
        note = await http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                               headers=session)
        assert note.status_code == 202
