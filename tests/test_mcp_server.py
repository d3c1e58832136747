"""The MCP server over real streamable HTTP on 127.0.0.1, with the official MCP Python SDK client.

A small relay task on the fixture world (tests/worldfix.py) keeps these fast: alice gives 3 logs to bob,
bob gives them to carol; the verifier passes at the end of round 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from pathlib import Path

import httpx
import pytest

from agentworld.core.play.mcp_sdk import input_schema, is_error, structured_content
from agentworld.core.play.episode import Episode
from agentworld.core.play.records import TurnEvent
from agentworld.core.tasks.task import parse_task
from agentworld.core.world.tools import TOOL_NAMES, TOOLS
from agentworld.core.play.trajectory import read_events
from agentworld.core.world.engine import EmbeddedWorld
from agentworld.mcp_server.clients import mcp_session, to_tool_result
from agentworld.mcp_server.server import EpisodeMcpServer, observation_as_data
from agentworld.mcp_server.turns import ExternalSeatsTeam, MixedTeam

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import fixture_world  # noqa: E402

pytestmark = pytest.mark.anyio

RELAY = {
    "id": "mcp_relay",
    "category": "trading",
    "task": {"name": "Log relay", "description": "Get the logs to carol."},
    "objectives": {"primary": "carol holds 3 logs"},
    "rounds": 4,
    "max_action_steps": 4,
    "agent_1": {"username": "alice", "location": {"x": 5, "y": 24}, "role": "supplier",
                "inventory_items": [{"item": "logs", "count": 3}]},
    "agent_2": {"username": "bob", "location": {"x": 6, "y": 24}, "role": "courier"},
    "agent_3": {"username": "carol", "location": {"x": 7, "y": 24}, "role": "receiver"},
    "verifier": {"checks": [{"check": "item_count", "item": "logs", "count": 3, "agent": "agent_3"}]},
    "reference_solution": {
        "agent_1": [{"tool": "transfer_items", "args": {"targetPlayer": "bob", "itemKey": "logs", "count": 3}}],
        "agent_2": [{"tool": "transfer_items", "args": {"targetPlayer": "carol", "itemKey": "logs", "count": 3}}],
        "agent_3": [{"tool": "chat", "args": {"message": "got them, thanks"}}],
    },
}


def relay_task():
    return parse_task(json.loads(json.dumps(RELAY)), "mcp_relay.yaml", "mcp_relay")


def relay_episode(tmp_path: Path, *, turn_timeout: float = 5.0, routes=None) -> tuple[Episode, ExternalSeatsTeam]:
    task = relay_task()
    external = ExternalSeatsTeam(turn_timeout=turn_timeout)
    team = MixedTeam(routes or {a: external for a in task.agent_ids})
    ep = Episode(task, team, world=EmbeddedWorld(fixture_world(), seed=0), out_dir=tmp_path / "ep",
                 framework="mcp", model="external", turn_timeout=turn_timeout)
    return ep, external


def turn_events(ep: Episode) -> list[TurnEvent]:
    return [e for e in ep.events if isinstance(e, TurnEvent)]


async def until(condition, what: str, limit_s: float = 60.0) -> None:
    """Wait until ``condition()`` holds, for a step the test set in motion (a call reaching the server, a
    disconnect noticed). Bounded by a limit only a broken server reaches: the test orders its steps by what
    happened, not by guessing how long it takes on this machine."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while not condition():
        assert loop.time() < deadline, f"{what}: not within {limit_s:g} s"
        await asyncio.sleep(0.01)


def waiting(server: EpisodeMcpServer, *agents: str) -> bool:
    """Whether each agent's call has reached the server and waits for its turn."""
    return all(a in server.tracker.waiting for a in agents)


async def test_lists_the_13_tools_with_the_core_schemas(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        assert server.url.startswith("http://127.0.0.1:")
        async with mcp_session(server.url, server.token("agent_1")) as s:
            tools = (await s.list_tools()).tools
            assert [t.name for t in tools] == list(TOOL_NAMES)
            for t in tools:
                assert input_schema(t) == TOOLS[t.name].json_schema()
                assert t.description == TOOLS[t.name].description
            uris = sorted(str(r.uri) for r in (await s.list_resources()).resources)
            assert uris == ["agentworld://brief", "agentworld://observation", "agentworld://turn"]
            brief = (await s.read_resource("agentworld://brief")).contents[0].text
            assert "alice" in brief
            turn = json.loads((await s.read_resource("agentworld://turn")).contents[0].text)
            assert turn["you"] == "agent_1" and turn["your_turn"] is False


async def test_clients_play_the_relay_to_success_in_turn_order(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        outputs: dict[str, list] = {}

        async def play(agent_id: str) -> None:
            steps = [(s.tool, s.args) for s in ep.task.reference_solution[agent_id]]
            # alice asks for her observation as data too (?observation=data); the others get its text only
            url = server.url + ("?observation=data" if agent_id == "agent_1" else "")
            async with mcp_session(url, server.token(agent_id)) as s:
                for tool, args in steps:
                    outputs.setdefault(agent_id, []).append(await s.call_tool(tool, args))

        # start the clients in reverse order: each call waits for its agent's turn
        clients = [asyncio.create_task(play(a)) for a in reversed(ep.agent_ids)]
        await until(lambda: waiting(server, *ep.agent_ids), "every seat's first call waiting")
        result = await ep.run()
        await asyncio.gather(*clients)
    assert result.success and result.end_reason == "verifier_passed" and result.rounds == 1
    assert [(e.agent, e.tool, e.ok) for e in turn_events(ep)] == [
        ("agent_1", "transfer_items", True), ("agent_2", "transfer_items", True), ("agent_3", "chat", True)]
    first = outputs["agent_1"][0]
    text = first.content[0].text
    assert not is_error(first) and "Gave 3 logs to bob" in text and "--- Your observation now ---" in text
    assert structured_content(first)["observation"]["username"] == "alice"
    second = outputs["agent_2"][0]
    assert "--- Your observation now ---" in second.content[0].text and "observation" not in structured_content(second)
    assert set(structured_content(second)) == {"ok", "error", "result", "executed", "turn", "episode", "active"}
    assert structured_content(second)["executed"] is True
    # the recorded trajectory is on disk like any other run
    events = read_events(tmp_path / "ep" / "trajectory.jsonl")
    assert events[0].type == "start" and events[-1].type == "end"


async def test_wrong_or_missing_token_is_refused_with_401(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        async with httpx.AsyncClient() as http:
            r = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert r.status_code == 401 and "missing bearer token" in r.json()["error"]["message"]
            assert r.json()["error"]["data"] == {"status": 401, "reason": "unauthorized"}
            r = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers={"Authorization": "Bearer not-a-seat"})
            assert r.status_code == 401 and "unknown bearer token" in r.json()["error"]["message"]
        with pytest.raises(Exception):
            async with mcp_session(server.url, "not-a-seat") as s:
                await s.list_tools()


async def test_observation_url_parameter_is_checked(tmp_path):
    """?observation=data or =text (the default); any other value is refused with 400 naming the parameter."""
    assert observation_as_data(b"") == (False, None)
    assert observation_as_data(b"observation=data") == (True, None)
    assert observation_as_data(b"observation=text&other=1") == (False, None)
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {server.token('agent_1')}"}) as http:
            r = await http.post(server.url + "?observation=json", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            error = r.json()["error"]
            assert r.status_code == 400 and error["data"] == {"status": 400, "reason": "bad_request"}
            assert "URL parameter observation" in error["message"] and "?observation=data" in error["message"]
        async with mcp_session(server.url + "?observation=data", server.token("agent_1")) as s:
            assert len((await s.list_tools()).tools) == 13


async def test_refusals_are_clear_and_do_not_disturb_the_episode(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep, wait_timeout=1.0) as server:
        async with mcp_session(server.url, server.token("agent_1")) as alice, \
                mcp_session(server.url + "?observation=data", server.token("agent_2")) as bob, \
                mcp_session(server.url, server.token("agent_3")) as carol:
            # out of turn (no turn is open yet): the call waits, then times out without executing
            r = await bob.call_tool("chat", {"message": "hello"})
            assert is_error(r) and "Timed out waiting for your turn" in r.content[0].text
            assert to_tool_result(r).error == "timeout"
            # two calls of one agent before its turn: the newer replaces the older (a client that gave up on
            # a call sends its next one), so exactly one executes
            give = {"targetPlayer": "bob", "itemKey": "logs", "count": 3}
            server.tracker.wait_timeout = 300.0  # from here on a call waits as long as its turn takes to come
            older = asyncio.create_task(alice.call_tool("transfer_items", give))
            await until(lambda: waiting(server, "agent_1"), "alice's first call waiting")
            newer = asyncio.create_task(alice.call_tool("transfer_items", give))
            r = await older
            assert is_error(r) and "Not executed: a newer call of yours replaced it" in r.content[0].text
            run = asyncio.create_task(ep.run())
            # bob's token acts only as bob, whatever it asks for; carol's chat ends the episode
            b = asyncio.create_task(bob.call_tool("transfer_items", {"targetPlayer": "carol", "itemKey": "logs",
                                                                     "count": 3}))
            c = asyncio.create_task(carol.call_tool("chat", {"message": "got them"}))
            r, rb, rc = await newer, await b, await c
            assert not is_error(r) and not is_error(rb) and not is_error(rc)
            assert structured_content(rb)["observation"]["username"] == "bob"
            result = await run
            r = await carol.call_tool("chat", {"message": "anyone?"})
            assert is_error(r) and "The episode is over (success" in r.content[0].text
            assert structured_content(r)["episode"]["over"] and structured_content(r)["episode"]["success"]
    assert result.success and result.rounds == 1
    events = turn_events(ep)
    assert [(e.agent, e.tool) for e in events] == [
        ("agent_1", "transfer_items"), ("agent_2", "transfer_items"), ("agent_3", "chat")]
    assert all(e.ok for e in events)
    assert result.refused_calls == 0  # the replaced call never ran: nothing to refuse


async def test_malformed_calls_use_the_turn_as_in_process(tmp_path):
    """Over MCP as in process: unknown tools and bad arguments are the turn's action (the gate decides)."""
    ep, _ = relay_episode(tmp_path, turn_timeout=2)
    async with EpisodeMcpServer(ep, turn_timeout=2) as server:
        async with mcp_session(server.url + "?observation=data", server.token("agent_1")) as alice, \
                mcp_session(server.url, server.token("agent_2")) as bob, \
                mcp_session(server.url, server.token("agent_3")) as carol:
            run = asyncio.create_task(ep.run())
            a = asyncio.create_task(alice.call_tool("transfer_items", {"targetPlayer": "bob", "count": "three"}))
            b = asyncio.create_task(bob.call_tool("fly_to_the_moon", {}))
            c = asyncio.create_task(carol.call_tool("move_character", {"_raw_arguments": '{"x": 3,'}))
            ra, rb, rc = await a, await b, await c
            assert is_error(ra) and "missing argument 'itemKey'" in ra.content[0].text
            assert is_error(rb) and "Unknown tool 'fly_to_the_moon'" in rb.content[0].text
            assert is_error(rc) and "not valid JSON" in rc.content[0].text
            # each result came with the seat's next turn: the observation of round 2
            assert structured_content(ra)["observation"]["round"] == 2
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
    events = turn_events(ep)[:3]
    assert [(e.tool, e.error, e.counts_as_action) for e in events] == [
        ("transfer_items", "bad_args", True), ("fly_to_the_moon", "unknown_tool", True),
        ("move_character", "bad_args", True)]
    assert events[2].arguments == {"_raw_arguments": '{"x": 3,'}


async def test_a_session_cannot_be_used_with_another_seats_token(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            r = await http.post(server.url, json=init, headers={**accept, "Authorization": f"Bearer {server.token('agent_1')}"})
            assert r.status_code == 200
            sid = r.headers["mcp-session-id"]
            r = await http.post(server.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                headers={**accept, "Authorization": f"Bearer {server.token('agent_2')}",
                                         "mcp-session-id": sid})
            assert r.status_code == 403 and "belongs to another seat" in r.json()["error"]["message"]


async def test_a_turn_without_a_call_is_lost_and_the_client_is_told(tmp_path):
    # alice's lost turn is a call that never comes (it ends at the timeout whatever the load); bob's and carol's
    # calls must come within it, so it is the suite's usual seat timeout, not a short one
    ep, _ = relay_episode(tmp_path, turn_timeout=5)
    async with EpisodeMcpServer(ep, turn_timeout=5) as server:
        async with mcp_session(server.url, server.token("agent_1")) as alice, \
                mcp_session(server.url, server.token("agent_2")) as bob_s, \
                mcp_session(server.url, server.token("agent_3")) as carol_s:
            async def bob() -> None:  # round 1: nothing to give yet; each result comes at the seat's next turn
                await bob_s.call_tool("sleep", {"seconds": 1})
                r = await bob_s.call_tool("transfer_items", {"targetPlayer": "carol", "itemKey": "logs", "count": 3})
                assert not is_error(r), r.content[0].text

            async def carol() -> None:
                await carol_s.call_tool("sleep", {"seconds": 1})
                await carol_s.call_tool("chat", {"message": "got them"})

            run = asyncio.create_task(ep.run())
            others = [asyncio.create_task(bob()), asyncio.create_task(carol())]
            while not turn_events(ep):  # alice sleeps through her turn of round 1
                await asyncio.sleep(0.01)
            r = await alice.call_tool("transfer_items", {"targetPlayer": "bob", "itemKey": "logs", "count": 3})
            assert not is_error(r) and "you lost 1 turn(s)" in r.content[0].text
            await asyncio.gather(*others)
            result = await run
    events = turn_events(ep)
    assert (events[0].agent, events[0].tool, events[0].error) == ("agent_1", None, "timeout")
    assert result.success and result.rounds == 2


async def test_mixed_seats_external_clients_with_an_in_process_oracle(tmp_path):
    from agentworld.core.play.policies import PolicyTeam, make_policy

    task = relay_task()
    external = ExternalSeatsTeam(turn_timeout=5)
    oracle = PolicyTeam(make_policy("oracle", 0, task))
    ep, _ = relay_episode(tmp_path, routes={"agent_1": external, "agent_2": oracle, "agent_3": external})
    async with EpisodeMcpServer(ep, players={"agent_2": "oracle"}) as server:
        assert [s.player for s in server.seats] == ["external", "oracle", "external"]

        async def play(agent_id: str) -> None:
            async with mcp_session(server.url, server.token(agent_id)) as s:
                for step in ep.task.reference_solution[agent_id]:
                    assert not is_error((await s.call_tool(step.tool, step.args)))

        clients = [asyncio.create_task(play(a)) for a in ("agent_1", "agent_3")]
        result = await ep.run()
        await asyncio.gather(*clients)
    assert result.success
    assert [e.tool for e in turn_events(ep)] == ["transfer_items", "transfer_items", "chat"]


async def test_serve_writes_a_seats_file_and_plays_external_and_oracle_seats(tmp_path, monkeypatch):
    from agentworld.mcp_server.plugin import serve_episode

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # the default seats folder: private, outside the run
    from agentworld.mcp_server.seats import read_seats_file

    announced = asyncio.get_running_loop().create_future()

    def announce(server, path):
        announced.set_result(path)

    async def players():
        seats = read_seats_file(await announced)
        assert seats.task_id == "mcp_relay" and seats.url.startswith("http://127.0.0.1:")
        by_id = {s.agent_id: s for s in seats.seats}
        assert by_id["agent_2"].player == "oracle" and by_id["agent_2"].token == ""
        assert by_id["agent_1"].username == "alice" and by_id["agent_1"].role == "supplier"

        async def play(agent_id):
            seat = by_id[agent_id]
            async with mcp_session(seat.url, seat.token) as s:
                for step in RELAY["reference_solution"][agent_id]:
                    r = await s.call_tool(step["tool"], step["args"])
                    assert not is_error(r), r.content[0].text

        await asyncio.gather(play("agent_1"), play("agent_3"))

    client = asyncio.create_task(players())
    result = await serve_episode(relay_task(), seat_options=("agent_2=oracle",), turn_timeout=5, out_dir=str(tmp_path / "ep"),
                                 world=EmbeddedWorld(fixture_world(), seed=0), announce=announce, linger=0)
    await client
    assert result.success and result.framework == "mcp"
    seats_path = announced.result()
    assert seats_path == tmp_path / "agentworld" / "seats-mcp_relay-s0.json"
    assert seats_path.stat().st_mode & 0o077 == 0 and seats_path.parent.stat().st_mode & 0o077 == 0  # owner only
    assert not (tmp_path / "ep" / "seats.json").exists()  # tokens stay out of the episode folder
    assert (tmp_path / "ep" / "result.json").exists() and (tmp_path / "ep" / "trajectory.jsonl").exists()


async def test_serve_seats_the_agents_of_the_variant(tmp_path):
    """Under single_agent only agent_1 plays: no other seat is offered or waited for, and the in-process team
    is built for the task as the variant makes it."""
    from agentworld.mcp_server.plugin import serve_episode

    announced = []
    # carol's logs alone are a hand-off (n/a for one agent, who holds them from the start); being at (9,24) is not
    solo_relay = json.loads(json.dumps(RELAY))
    solo_relay["verifier"]["checks"].append({"check": "at_location", "x": 9, "y": 24, "agent": "agent_3"})
    with pytest.raises(ValueError, match="single_agent does not apply to mcp_relay: .*hand-offs"):
        await serve_episode(relay_task(), seat_options=("agent_1=idle",), variant="single_agent",
                            out_dir=str(tmp_path / "na"), world=EmbeddedWorld(fixture_world(), seed=0))
    task = parse_task(solo_relay, "mcp_relay.yaml", "mcp_relay")
    result = await serve_episode(task, seat_options=("agent_1=idle",), variant="single_agent",
                                 turn_timeout=5, connect_timeout=1, out_dir=str(tmp_path / "ep"), linger=0,
                                 world=EmbeddedWorld(fixture_world(), seed=0),
                                 announce=lambda server, path: announced.append([s.agent_id for s in server.seats]))
    assert announced == [["agent_1"]]
    assert result.n_agents == 1 and result.variant == "single_agent" and result.infra_errors == 0


async def test_serve_names_a_bad_seat_option(tmp_path):
    from agentworld.mcp_server.plugin import serve_episode

    with pytest.raises(ValueError, match="expected AGENT_ID=PLAYER"):
        await serve_episode(relay_task(), seat_options=("agent_2",), out_dir=str(tmp_path))
    with pytest.raises(ValueError, match="unknown agent.*agent_9"):
        await serve_episode(relay_task(), seat_options=("agent_9=oracle",), out_dir=str(tmp_path),
                            world=EmbeddedWorld(fixture_world(), seed=0))


async def test_clients_play_a_starter_task_to_success_like_the_oracle(tmp_path):
    """Every seat of a small task is an MCP client replaying its part of the reference solution (then
    `complete`, as the oracle does); the episode succeeds with the oracle's exact trajectory."""
    from agentworld.core.tasks.task import find_task
    from agentworld.core.play.policies import PolicyTeam, make_policy

    task = find_task(str(Path(__file__).parent / "data" / "small_market.yaml"), validate=False)  # small fixture
    oracle = Episode(task, PolicyTeam(make_policy("oracle", 0, task)))
    await oracle.run()
    external = ExternalSeatsTeam(turn_timeout=10)
    ep = Episode(task, external, out_dir=tmp_path / "ep", framework="mcp", turn_timeout=10)
    async with EpisodeMcpServer(ep) as server:
        async def play(agent_id: str) -> None:
            plan = [(s.tool, s.args) for s in task.reference_solution.get(agent_id, [])]
            plan.append(("complete", {"response": "my part of the plan is done"}))
            async with mcp_session(server.url, server.token(agent_id)) as s:
                for tool, args in plan:
                    r = await s.call_tool(tool, args)
                    data = structured_content(r)
                    if data["turn"].get("episode_over") or data["error"] in ("not_active", "refused"):
                        return

        clients = [asyncio.create_task(play(a)) for a in task.agent_ids]
        result = await ep.run()
        await asyncio.gather(*clients)
    assert result.success and result.refused_calls == 0
    assert [(e.agent, e.tool, e.arguments, e.result) for e in turn_events(ep)] == [
        (e.agent, e.tool, e.arguments, e.result) for e in turn_events(oracle)]


def test_the_observation_in_results_leaves_chat_for_the_next_turn():
    from agentworld.core.world.api import PlayerSpec
    from agentworld.mcp_server.server import peek_observation

    world = EmbeddedWorld(fixture_world(), seed=0)
    world.add_player(PlayerSpec(agent_id="agent_1", username="alice", x=5, y=24))
    world.add_player(PlayerSpec(agent_id="agent_2", username="bob", x=6, y=24))
    assert world.chat("agent_1", "meet at the forge").ok
    peeked = peek_observation(world, "agent_2")
    assert [m.text for m in peeked.chat] == ["meet at the forge"]
    assert [m.text for m in world.observe("agent_2").chat] == ["meet at the forge"]  # still there for the turn
    assert world.observe("agent_2").chat == []


async def test_a_busy_port_is_a_clear_error(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        ep2, _ = relay_episode(tmp_path)
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{server.port}.*another --port"):
            await EpisodeMcpServer(ep2, port=server.port).start()


async def test_two_calls_sent_together_during_the_turn_take_it_once(tmp_path):
    ep, _ = relay_episode(tmp_path)
    async with EpisodeMcpServer(ep) as server:
        async with mcp_session(server.url, server.token("agent_1")) as alice, \
                mcp_session(server.url, server.token("agent_2")) as bob, \
                mcp_session(server.url, server.token("agent_3")) as carol:
            run = asyncio.create_task(ep.run())
            while not json.loads((await alice.read_resource("agentworld://turn")).contents[0].text)["your_turn"]:
                await asyncio.sleep(0.01)
            give = {"targetPlayer": "bob", "itemKey": "logs", "count": 3}
            pair = asyncio.gather(alice.call_tool("transfer_items", give), alice.call_tool("transfer_items", give))
            rest = asyncio.gather(
                bob.call_tool("transfer_items", {"targetPlayer": "carol", "itemKey": "logs", "count": 3}),
                carol.call_tool("chat", {"message": "got them"}))
            results = await pair
            assert sorted(is_error(r) for r in results) == [False, True]
            await rest
            result = await run
    assert result.success and result.rounds == 1 and result.refused_calls == 1
    assert [e.tool for e in turn_events(ep)] == ["transfer_items", "transfer_items", "chat"]


# -- what an external seat is told ----------------------------------------------------------------------------
NEWS = {
    "id": "mcp_news", "category": "trading",
    "task": {"name": "News", "description": "Logs change hands, a teammate talks, a dragon strikes."},
    "objectives": {"primary": "bob holds 3 logs"}, "rounds": 3, "max_action_steps": 4,
    "agent_1": {"username": "alice", "location": {"x": 5, "y": 24}, "role": "supplier",
                "inventory_items": [{"item": "logs", "count": 3}]},
    "agent_2": {"username": "bob", "location": {"x": 6, "y": 24}, "role": "receiver"},
    "agent_3": {"username": "carol", "location": {"x": 36, "y": 4}, "role": "explorer"},  # beside the dragon
    "verifier": {"checks": [{"check": "item_count", "item": "logs", "count": 3, "agent": "agent_2"}]},
}


async def _when_my_turn(session) -> dict:
    while True:
        state = json.loads((await session.read_resource("agentworld://turn")).contents[0].text)
        if state["your_turn"] or state["episode"]["over"]:
            return state
        await asyncio.sleep(0.01)


async def test_chat_notes_and_deaths_reach_the_seat_and_the_end_is_told(tmp_path):
    task = parse_task(json.loads(json.dumps(NEWS)), "mcp_news.yaml", "mcp_news")
    ep = Episode(task, ExternalSeatsTeam(turn_timeout=5), world=EmbeddedWorld(fixture_world(), seed=0),
                 out_dir=tmp_path / "ep", framework="mcp", turn_timeout=5)
    seen: dict[str, object] = {}
    async with EpisodeMcpServer(ep, turn_timeout=5) as server:
        async def alice():
            async with mcp_session(server.url + "?observation=data", server.token("agent_1")) as s:
                await _when_my_turn(s)
                seen["alice"] = await s.call_tool("transfer_items", {"targetPlayer": "bob", "itemKey": "logs",
                                                                     "count": 3})

        async def bob():
            async with mcp_session(server.url, server.token("agent_2")) as s:
                state = await _when_my_turn(s)
                seen["bob_turn"] = state
                seen["bob_resource"] = (await s.read_resource("agentworld://observation")).contents[0].text
                seen["bob_prompt"] = ep.gate.turns["agent_2"].observation_text  # what an in-process prompt shows
                seen["bob"] = await s.call_tool("chat", {"message": "thanks alice, the logs are here"})
                seen["bob_after"] = await s.call_tool("sleep", {"seconds": 1})

        async def carol():
            async with mcp_session(server.url + "?observation=data", server.token("agent_3")) as s:
                await _when_my_turn(s)
                seen["carol"] = await s.call_tool("sleep", {"seconds": 1})

        seats = [asyncio.create_task(f()) for f in (alice, bob, carol)]
        result = await ep.run()
        await asyncio.wait_for(asyncio.gather(*seats), 20)
    assert result.success and result.rounds == 1
    # bob's turn: the note of the transfer, in the observation resource and the turn's data, byte for byte
    # the observation of his in-process prompt
    assert "alice gave you 3 logs in round 1" in seen["bob_resource"]
    assert seen["bob_resource"] == seen["bob_prompt"]
    assert "alice gave you 3 logs in round 1." in seen["bob_turn"]["observation"]["notes"]
    # alice's result came when the episode ended: it tells the outcome and carries bob's chat, sent after her turn
    a = seen["alice"]
    assert "Gave 3 logs to bob" in a.content[0].text and "The episode is over: success" in a.content[0].text
    assert a.content[0].text.count("The episode is over") == 1, a.content[0].text  # said once, not twice
    assert [m["text"] for m in structured_content(a)["observation"]["chat"]] == ["thanks alice, the logs are here"]
    assert structured_content(a)["episode"]["over"] and structured_content(a)["episode"]["success"]
    assert structured_content(a)["episode"]["end_reason"] == "verifier_passed"
    assert structured_content(a)["episode"]["checkpoints_passed"] == structured_content(a)["episode"]["checkpoints_total"]
    # carol stood by the dragon: its strike at the end of the round reaches her result
    c = structured_content(seen["carol"])
    assert any("Dragon dragon#1" in n for n in c["observation"]["notes"]), c["observation"]["notes"]
    # a call after the end is told the outcome and is not executed
    after = seen["bob_after"]
    assert is_error(after) and "The episode is over (success" in after.content[0].text
    assert len(turn_events(ep)) == 3


async def test_a_call_whose_client_gave_up_never_runs_and_the_next_call_is_accepted(tmp_path):
    from agentworld.core.play.mcp_sdk import McpError, read_timeout
    from agentworld.core.play.policies import PolicyTeam, make_policy

    # no turn here is meant to time out (a seat left silent would hold its round for the turn timeout): carol
    # is played in process, and alice takes her turn of round 2 (sleep) while bob's second call waits
    external = ExternalSeatsTeam(turn_timeout=60)
    carol = PolicyTeam(make_policy("oracle", 0, relay_task()))
    ep, _ = relay_episode(tmp_path, turn_timeout=60,
                          routes={"agent_1": external, "agent_2": external, "agent_3": carol})
    async with EpisodeMcpServer(ep, turn_timeout=60, progress_every=0.1, players={"agent_3": "oracle"}) as server:
        async with mcp_session(server.url, server.token("agent_1")) as alice, \
                mcp_session(server.url, server.token("agent_2")) as bob:
            run = asyncio.create_task(ep.run())
            await _when_my_turn(alice)
            # during alice's turn bob calls with a short client timeout and gives up; his client keeps the
            # connection, so the server cannot tell, until his next call replaces the abandoned one
            with pytest.raises(McpError, match="(?i)timed out"):
                await bob.call_tool("sleep", {"seconds": 5}, read_timeout_seconds=read_timeout(0.3))
            progress: list[str] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append(message or "")

            second = asyncio.create_task(bob.call_tool("sleep", {"seconds": 6}, progress_callback=on_progress))
            await until(lambda: progress, "a progress note to bob's waiting call")  # it waits while alice thinks
            await alice.call_tool("transfer_items", {"targetPlayer": "bob", "itemKey": "logs", "count": 3})
            # bob's answer comes when his next turn opens, after alice's turn of round 2
            alice_waits = asyncio.create_task(alice.call_tool("sleep", {}))
            r = await second
            alice_waits.cancel()
            assert not is_error(r), r.content[0].text
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
    bob_turn = next(e for e in turn_events(ep) if e.agent == "agent_2")
    assert (bob_turn.tool, bob_turn.arguments, bob_turn.refused) == ("sleep", {"seconds": 6}, [])
    assert progress and progress[0].startswith("waiting for your turn: it is alice's turn (round 1)")


async def _raw_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """Initialize an MCP session by hand (plain HTTP, the client's headers carry the seat's token): the
    headers that name it on later requests."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    r = await http.post(url, json=init)
    session = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


async def test_a_call_whose_client_disconnected_never_runs(tmp_path):
    ep, _ = relay_episode(tmp_path, turn_timeout=1)
    accept = {"Accept": "application/json, text/event-stream"}
    async with EpisodeMcpServer(ep, turn_timeout=1) as server:
        headers = {**accept, "Authorization": f"Bearer {server.token('agent_1')}"}
        async with httpx.AsyncClient(headers=headers) as http:
            session = await _raw_session(http, server.url)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "transfer_items", "arguments": {"targetPlayer": "bob", "itemKey": "logs",
                                                                       "count": 3}}}
            post = asyncio.create_task(http.post(server.url, json=call, headers=session, timeout=None))
            await until(lambda: waiting(server, "agent_1"), "alice's call waiting")
            post.cancel()  # the client goes away while its call waits for the turn (its connection is closed)
            with contextlib.suppress(asyncio.CancelledError):
                await post
        # the server learns it when the connection's close reaches it
        await until(lambda: not waiting(server, "agent_1"), "the abandoned call noticed")
        result = await ep.run()  # nobody plays: every turn times out, the abandoned call included
    first = turn_events(ep)[0]
    assert (first.agent, first.tool, first.error) == ("agent_1", None, "timeout")
    assert not result.success and result.refused_calls == 0


@pytest.mark.parametrize("stream_after", [None, 0])
async def test_a_call_the_client_cancelled_never_runs(tmp_path, stream_after):
    """notifications/cancelled while the call waits for its turn: answered "Request cancelled" and never run,
    whether the transport answers the call itself (the default) or the SDK's session does (stream_after 0)."""
    ep, _ = relay_episode(tmp_path, turn_timeout=1)
    accept = {"Accept": "application/json, text/event-stream"}
    async with EpisodeMcpServer(ep, turn_timeout=1, stream_after=stream_after) as server:
        headers = {**accept, "Authorization": f"Bearer {server.token('agent_1')}"}
        async with httpx.AsyncClient(headers=headers, timeout=10) as http:
            session = await _raw_session(http, server.url)
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "transfer_items", "arguments": {"targetPlayer": "bob", "itemKey": "logs",
                                                                       "count": 3}}}
            pending = asyncio.create_task(http.post(server.url, json=call, headers=session))
            await until(lambda: waiting(server, "agent_1"), "the call waiting")  # no turn is open
            assert not pending.done()
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
            assert (await http.post(server.url, json=cancel, headers=session)).status_code == 202
            r = await asyncio.wait_for(pending, 60)
            assert r.status_code == 200 and "Request cancelled" in r.text
        run = asyncio.create_task(ep.run())  # nobody plays: alice's first turn times out, her call never ran
        while not turn_events(ep):
            await asyncio.sleep(0.05)
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    first = turn_events(ep)[0]
    assert (first.agent, first.tool, first.error, first.refused) == ("agent_1", None, "timeout", [])
