"""Each framework's own MCP client reaches its seat through the helpers in mcp_server/clients.py, and a
framework team with ``--tools mcp`` records the same trajectory as in process (scripted oracle model)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import pytest

from agentworld.core.play.episode import Episode
from agentworld.core.world.tools import TOOL_NAMES, openai_tools
from agentworld.mcp_server import clients
from agentworld.mcp_server.server import EpisodeMcpServer

sys.path.insert(0, str(Path(__file__).parent))
from test_mcp_server import relay_episode, relay_task, turn_events, until, waiting  # noqa: E402

pytestmark = pytest.mark.anyio
STEP = {a: (s[0].tool, s[0].args) for a, s in relay_task().reference_solution.items()}

SMALL_MARKET = Path(__file__).parent / "data" / "small_market.yaml"  # a small fixture (tests/data/README.md)
# what each framework's extra installs (a server-only install has none: its framework cases skip)
FRAMEWORK_MODULE = {"openai": "openai", "autogen": "autogen_agentchat", "langgraph": "langgraph", "camel": "camel"}


async def test_autogen_langchain_and_camel_clients_play_their_seats(tmp_path):
    for module in ("camel", "langchain_mcp_adapters", "autogen_ext"):  # the framework extras (SDK 1.x clients)
        pytest.importorskip(module)
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        url = server.url
        outputs: dict[str, str] = {}

        async def autogen_seat():
            async with clients.autogen_workbench(url, server.token("agent_1")) as wb:
                assert [t["name"] for t in await wb.list_tools()] == list(TOOL_NAMES)
                r = await wb.call_tool(*STEP["agent_1"])
                assert not r.is_error
                outputs["agent_1"] = r.to_text()

        async def langchain_seat():
            tools = {t.name: t for t in await clients.langchain_tools(url, server.token("agent_2"))}
            assert list(tools) == list(TOOL_NAMES)
            tool, args = STEP["agent_2"]
            outputs["agent_2"] = str(await tools[tool].ainvoke(args))

        async def camel_seat():
            async with clients.camel_toolkit(url, server.token("agent_3")) as tk:
                # camel-ai's own wrapper cannot take a parameter named `global` (a Python keyword)
                assert sorted(t.get_function_name() for t in tk.get_tools()) == sorted(
                    set(TOOL_NAMES) - {"send_chat_message"})
            async with clients.camel_seat_tools(url, server.token("agent_3")) as camel_tools:
                tools = {t.get_function_name(): t for t in camel_tools}
                assert list(tools) == list(TOOL_NAMES)
                tool, args = STEP["agent_3"]
                outputs["agent_3"] = str(await tools[tool].async_call(**args))

        seats = [asyncio.create_task(f()) for f in (camel_seat, langchain_seat, autogen_seat)]
        await until(lambda: waiting(server, *ep.agent_ids), "every seat's call waiting")  # then play
        result = await ep.run()
        await asyncio.gather(*seats)
    assert result.success
    assert "Gave 3 logs to bob" in outputs["agent_1"] and "Gave 3 logs to carol" in outputs["agent_2"]
    assert [(e.agent, e.tool, e.ok) for e in turn_events(ep)] == [
        ("agent_1", "transfer_items", True), ("agent_2", "transfer_items", True), ("agent_3", "chat", True)]


async def test_raw_sdk_helpers_give_the_openai_schemas_and_mark_failures(tmp_path):
    """The raw MCP SDK helpers (the plain openai agent's and external scripts', on the SDK 1.x or 2.x): the
    listed tools as the in-process OpenAI schemas, and a malformed call back as the gate's failure."""
    ep, _ = relay_episode(tmp_path, turn_timeout=0.3)  # bob and carol play nothing: alice's next turn comes soon
    async with EpisodeMcpServer(ep, turn_timeout=0.3) as server, \
            clients.mcp_session(server.url, server.token("agent_1")) as s:
        assert await clients.openai_tool_schemas(s) == openai_tools()
        call = asyncio.create_task(s.call_tool("move_character", {"x": "east", "y": 1}))  # malformed: the turn's
        await until(lambda: waiting(server, "agent_1"), "alice's call waiting")  # action, a bad_args error
        run = asyncio.create_task(ep.run())
        out = clients.to_tool_result(await call)
        assert (out.ok, out.error) == (False, "bad_args") and out.text.startswith("move_character: argument 'x'")
        assert turn_events(ep)[0].error == "bad_args" and turn_events(ep)[0].counts_as_action
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run


async def test_framework_client_helpers_list_the_tools_and_mark_failures(tmp_path):
    for module in ("camel", "langchain_mcp_adapters", "autogen_ext"):  # the framework extras (SDK 1.x clients)
        pytest.importorskip(module)
    ep, _ = relay_episode(tmp_path, turn_timeout=0.3)
    async with EpisodeMcpServer(ep, turn_timeout=0.3) as server, \
            clients.mcp_session(server.url, server.token("agent_1")) as s:
        camel_tools = {t.get_function_name(): t for t in await clients.camel_function_tools(s)}
        call = asyncio.create_task(camel_tools["move_character"].async_call(x="east", y=1))  # malformed: the turn's action,
        await until(lambda: waiting(server, "agent_1"), "alice's call waiting")  # a bad_args error
        run = asyncio.create_task(ep.run())
        out = await call
        assert out.startswith("ERROR: [bad_args] move_character: argument 'x'")
        assert turn_events(ep)[0].error == "bad_args" and turn_events(ep)[0].counts_as_action
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
        async with clients.langchain_session_tools(server.url, server.token("agent_2")) as lc_tools:
            assert [t.name for t in lc_tools] == list(TOOL_NAMES)
        ag_tools = await clients.autogen_tools(server.url, server.token("agent_3"))
        assert [t.name for t in ag_tools] == list(TOOL_NAMES)
        assert ag_tools[0].schema["parameters"]["properties"].keys() == {"x", "y"}


@pytest.mark.parametrize("framework", ["openai", "autogen", "langgraph", "camel"])
async def test_framework_team_over_mcp_matches_in_process(tmp_path, framework):
    pytest.importorskip(FRAMEWORK_MODULE[framework])  # the framework's extra
    from agentworld.core import plugins
    from agentworld.core.play.protocol import TeamSpec
    from agentworld.core.play.view import ReferencePlan

    from agentworld.core.tasks.task import find_task

    task = find_task(str(SMALL_MARKET), validate=False)  # suite v1's market: 4 agents, solved in 3 rounds

    async def play(tools: str):
        def build(view):
            return plugins.get("framework", framework)(TeamSpec(view=view, model="scripted:oracle", seed=0,
                                                                agent_ids=view.agent_ids, options={"tools": tools},
                                                                reference_plan=ReferencePlan.of(task)))

        ep = Episode(task, framework=framework, turn_timeout=30, build_team=build)
        result = await ep.run()
        return result, [(e.agent, e.tool, e.arguments, e.ok, e.result, e.error) for e in turn_events(ep)]

    inproc, mcp = await play("inproc"), await play("mcp")
    assert len(inproc[1]) >= len(task.agent_ids) and mcp[0].success == inproc[0].success
    assert mcp[1] == inproc[1]


def test_seat_clients_share_one_verifying_tls_context():
    """Every seat's httpx client reuses one TLS context (loading the CA bundle per client cost ~50 ms each),
    and it is httpx's verifying default, not a weakened one."""
    import ssl

    from agentworld.mcp_server.clients import shared_ssl_context

    ctx = shared_ssl_context()
    assert ctx is shared_ssl_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert ctx.get_ca_certs() or ctx.cert_store_stats()["x509_ca"] > 0
