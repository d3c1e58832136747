"""``agentworld mcp-stdio``: a stdio MCP client reaches its seat through the bridge subprocess."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from agentworld.core.play.mcp_sdk import input_schema, is_error
from agentworld.core.world.tools import TOOL_NAMES, TOOLS
from agentworld.mcp_server.server import EpisodeMcpServer

sys.path.insert(0, str(Path(__file__).parent))
from test_mcp_server import relay_episode, turn_events, until, waiting  # noqa: E402

MARKET = str(Path(__file__).parent / "data" / "market_day.yaml")  # retired task_03_market, a fixture

pytestmark = pytest.mark.anyio
CLI = [sys.executable, "-c", "from agentworld.core.cli import main; main()", "mcp-stdio"]


async def test_stdio_bridge_relays_tools_resources_and_calls(tmp_path):
    ep, _ = relay_episode(tmp_path, turn_timeout=0.3)  # bob and carol never call: their turns pass quickly
    async with EpisodeMcpServer(ep, turn_timeout=0.3) as server:
        params = StdioServerParameters(command=CLI[0], args=CLI[1:] + ["--url", server.url,
                                                                       "--token", server.token("agent_1")])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            assert [t.name for t in tools] == list(TOOL_NAMES)
            assert all(input_schema(t) == TOOLS[t.name].json_schema() for t in tools)
            brief = (await s.read_resource("agentworld://brief")).contents[0].text
            assert "alice" in brief
            # the call first, through the bridge's process; the episode starts once it waits at the server
            call = asyncio.create_task(s.call_tool("transfer_items", {"targetPlayer": "bob", "itemKey": "logs",
                                                                      "count": 3}))
            await until(lambda: waiting(server, "agent_1"), "alice's call through the bridge waiting")
            run = asyncio.create_task(ep.run())
            r = await call
            assert not is_error(r) and "Gave 3 logs to bob" in r.content[0].text, r.content[0].text
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
    assert [(e.agent, e.tool, e.ok) for e in turn_events(ep)][0] == ("agent_1", "transfer_items", True)


async def test_stdio_bridge_with_a_bad_token_exits_with_a_clear_error(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        proc = await asyncio.create_subprocess_exec(*CLI, "--url", server.url, "--token", "wrong",
                                                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert "refused the token (401)" in err.decode() and "unknown bearer token" in err.decode()


def test_cli_commands_explain_bad_options():
    from click.testing import CliRunner

    from agentworld.core.cli import _load_commands, cli

    _load_commands()
    runner = CliRunner()
    r = runner.invoke(cli, ["serve", "--task", MARKET, "--seat", "agent_2"])
    assert r.exit_code != 0 and "expected AGENT_ID=PLAYER" in r.output
    r = runner.invoke(cli, ["serve", "--task", MARKET, "--turn-timeout", "0"])
    assert r.exit_code != 0 and "--turn-timeout" in r.output
    r = runner.invoke(cli, ["mcp-stdio", "--url", "http://127.0.0.1:9/mcp"], env={"AGENTWORLD_TOKEN": ""})
    assert r.exit_code != 0 and "--token" in r.output
    r = runner.invoke(cli, ["mcp-stdio", "--url", "http://127.0.0.1:9/mcp", "--token", "x"])
    assert r.exit_code != 0 and "cannot reach the AgentWorld MCP server" in r.output
