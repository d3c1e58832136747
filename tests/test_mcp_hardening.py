"""The MCP server's HTTP layer under hostile clients, on 127.0.0.1 with short limits: idle and slowloris
connections cut off, connection and per-seat session caps, malformed protocol input answered 4xx without a
traceback while other seats play on, the Host check for an exposed server, a 1 MB argument refused with a
short message, the seats file private from the start, tokens printed whole."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import socket
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from agentworld.core.play.mcp_sdk import is_error
from agentworld.mcp_server.clients import mcp_session
from agentworld.mcp_server.guard import HttpLimits, public_host, transport_security
from agentworld.mcp_server.seats import Seat, SeatsFile, write_seats_file
from agentworld.mcp_server.server import EpisodeMcpServer

sys.path.insert(0, str(Path(__file__).parent))
from test_mcp_server import relay_episode  # noqa: E402

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

pytestmark = pytest.mark.anyio

FAST = HttpLimits(header_timeout=0.5, idle_timeout=0.5, body_timeout=2.0)
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _headers(server: EpisodeMcpServer, agent: str) -> dict[str, str]:
    return {**ACCEPT, "Authorization": f"Bearer {server.token(agent)}"}


async def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (polled, bounded)."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        try:
            if sock.recv(4096) == b"":
                return True
        except BlockingIOError:
            pass
        except ConnectionResetError:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_idle_and_slowloris_connections_are_cut_off(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep, limits=FAST) as server:
        idle = socket.create_connection(("127.0.0.1", server.port))
        slow = socket.create_connection(("127.0.0.1", server.port))
        slow.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers that never end
        for _ in range(3):
            await asyncio.sleep(0.1)
            slow.send(b"X-Slow: 1\r\n")  # a byte now and then keeps no timer from firing but the header timer
        try:
            assert await _closed_within(idle, 5.0), "an idle connection stayed open"
            assert await _closed_within(slow, 5.0), "a slowloris connection stayed open"
        finally:
            idle.close()
            slow.close()
        async with mcp_session(server.url, server.token("agent_1")) as s:  # the server itself is fine
            assert len((await s.list_tools()).tools) == 13


async def test_connections_over_the_cap_are_closed_at_once(tmp_path):
    ep, _ = relay_episode(tmp_path)
    limits = HttpLimits(max_connections=3, header_timeout=30.0)
    async with EpisodeMcpServer(ep, limits=limits) as server:
        socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(5)]
        try:
            closed = [await _closed_within(s, 1.0) for s in socks]
            assert closed == [False, False, False, True, True]
        finally:
            for s in socks:
                s.close()


async def test_a_seat_cannot_hold_more_than_its_sessions(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep, limits=HttpLimits(max_sessions_per_seat=2)) as server:
        async with httpx.AsyncClient() as http:
            codes = [(await http.post(server.url, json=INIT, headers=_headers(server, "agent_1"))).status_code
                     for _ in range(3)]
            assert codes == [200, 200, 429]
            r = await http.post(server.url, json=INIT, headers=_headers(server, "agent_1"))
            assert r.status_code == 429 and "already has 2 open MCP sessions" in r.json()["error"]["message"]
            # another seat is not affected
            assert (await http.post(server.url, json=INIT, headers=_headers(server, "agent_2"))).status_code == 200


async def test_malformed_input_gets_4xx_without_traceback_and_other_seats_play_on(tmp_path, caplog):
    ep, _ = relay_episode(tmp_path)
    caplog.set_level(logging.INFO)
    async with EpisodeMcpServer(ep) as server:
        run = asyncio.create_task(ep.run())
        async with mcp_session(server.url, server.token("agent_1")) as alice, httpx.AsyncClient() as http:
            hostile = [
                b"[" * 1000 + b"]" * 1000,  # nesting of depth 1000
                json.dumps({**INIT, "params": {**INIT["params"], "x": json.loads("[" * 200 + "]" * 200)}}).encode(),
                b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}',  # invalid UTF-8
                b'{"jsonrpc": "2.0", "id": 1,',  # cut-off JSON
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat",'
                b'"arguments":{"message":"hi \\ud800"}}}',  # an unpaired surrogate: no character at all
            ]
            answers = await asyncio.gather(*(http.post(server.url, content=body, headers=_headers(server, "agent_2"))
                                             for body in hostile),
                                           alice.call_tool("transfer_items", {"targetPlayer": "bob",
                                                                              "itemKey": "logs", "count": 3}))
            *refused, alice_result = answers
            assert [r.status_code for r in refused] == [400, 400, 400, 400, 400]
            assert all(r.json()["error"]["code"] == -32700 for r in refused)
            assert "nested deeper than 64" in refused[0].json()["error"]["message"]
            assert "not UTF-8" in refused[2].json()["error"]["message"]
            assert "unpaired surrogate" in refused[4].json()["error"]["message"]
            assert not is_error(alice_result)  # the other seat's call went through meanwhile
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def test_a_one_megabyte_argument_is_refused_with_a_short_message(tmp_path):
    # a malformed call is its seat's turn (the turn contract), so each seat sends one in its own turn
    ep, _ = relay_episode(tmp_path, turn_timeout=2)
    async with EpisodeMcpServer(ep, turn_timeout=2) as server:
        async def seat(agent: str, tool: str, args: dict) -> None:
            async with mcp_session(server.url, server.token(agent)) as s:
                r = await s.call_tool(tool, args)
                text = r.content[0].text.split("--- Your observation now ---")[0]
                assert is_error(r) and "[bad_args]" in text and "at most" in text
                assert len(text) < 600, text[:200]

        run = asyncio.create_task(ep.run())
        await asyncio.gather(seat("agent_1", "chat", {"message": "x" * 1_000_000}),
                             seat("agent_2", "transfer_items", {"targetPlayer": "b" * 1_000_000, "itemKey": "logs"}),
                             seat("agent_3", "harvest_resource", {"targetInstance": "t" * 1_000_000}))
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run


def test_an_exposed_host_needs_its_names_and_publishes_them():
    with pytest.raises(ValueError, match="--allow-host"):
        transport_security("0.0.0.0")
    settings = transport_security("0.0.0.0", ["play.example.org"])
    assert "play.example.org:*" in settings.allowed_hosts and "127.0.0.1:*" in settings.allowed_hosts
    assert public_host("0.0.0.0", ["play.example.org"]) == "play.example.org"
    assert public_host("127.0.0.1") == "127.0.0.1"


def test_serve_refuses_an_exposed_host_without_allow_host():
    from agentworld.core.cli import _load_commands, cli

    _load_commands()
    res = CliRunner().invoke(cli, ["serve", "--task", STAFF, "--host", "0.0.0.0"])
    assert res.exit_code == 2 and "--allow-host" in res.output and "Traceback" not in res.output


async def test_the_host_check_accepts_allowed_names_only(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep, allow_hosts=["play.example.org"]) as server:
        async with httpx.AsyncClient() as http:
            ok = await http.post(server.url, json=INIT, headers={**_headers(server, "agent_1"),
                                                                 "Host": f"play.example.org:{server.port}"})
            bad = await http.post(server.url, json=INIT, headers={**_headers(server, "agent_1"),
                                                                  "Host": f"evil.example.net:{server.port}"})
            assert ok.status_code == 200 and bad.status_code == 421


def test_the_seats_file_is_private_from_the_start(tmp_path):
    seats = SeatsFile(task_id="t", url="http://127.0.0.1:1/mcp", turn_timeout_s=1.0,
                      seats=[Seat(agent_id="agent_1", username="a", token="aw_secret")])
    old = os.umask(0)  # even with a permissive umask
    try:
        path = write_seats_file(tmp_path / "new" / "seats.json", seats)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert not list(path.parent.glob(".*.tmp"))


def test_tokens_are_printed_whole_on_a_narrow_terminal(monkeypatch):
    from agentworld.mcp_server import plugin

    token = "aw_" + "T" * 120
    seat = Seat(agent_id="agent_1", username="alice", role="supplier", token=token)

    class FakeServer:
        url = "http://127.0.0.1:1/mcp"
        seats = [seat, Seat(agent_id="agent_2", username="bob", player="oracle")]

    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    monkeypatch.setenv("COLUMNS", "60")
    plugin._announce(FakeServer(), Path("/tmp/seats.json"))
    assert any(token in line for line in out.getvalue().splitlines())
