"""`agentworld seat brief|look|call` against a real `agentworld serve` episode on 127.0.0.1, driven as a
subprocess the way a person or a command-line agent uses it; and the outcome every seat is told after the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from agentworld.core.play.mcp_sdk import is_error, structured_content
from agentworld.core.tasks.task import find_task, parse_task
from agentworld.core.world.engine import EmbeddedWorld
from agentworld.mcp_server.clients import mcp_session
from agentworld.mcp_server.plugin import serve_episode
from agentworld.mcp_server.seats import read_seats_file
from agentworld.mcp_server.server import EpisodeMcpServer

sys.path.insert(0, str(Path(__file__).parent))
from test_mcp_server import RELAY, relay_episode, relay_task, turn_events  # noqa: E402
from worldfix import fixture_world  # noqa: E402

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

pytestmark = pytest.mark.anyio

CLI = [sys.executable, "-c", "import sys; sys.argv[0] = 'agentworld'; from agentworld.core.cli import main; main()"]
TURN_TIMEOUT = 120.0  # a subprocess per call starts Python each time: never let a slow machine lose a turn


async def seat(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run `agentworld seat ARGS...`; (exit status, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(*CLI, "seat", *args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    return proc.returncode, out.decode(), err.decode()


@contextlib.asynccontextmanager
async def serving(tmp_path: Path, task: Any, seat_options: tuple[str, ...], **kw: Any):
    """`agentworld serve` (serve_episode) in a task of its own; yields (seats file path, the serve task, the
    episode's end: a future of its result)."""
    announced = asyncio.get_running_loop().create_future()
    ended = asyncio.get_running_loop().create_future()
    serve = asyncio.create_task(serve_episode(
        task, seat_options=seat_options, seats_path=str(tmp_path / "seats.json"), out_dir=str(tmp_path / "ep"),
        announce=lambda server, path: announced.set_result(path),
        on_end=lambda result, linger: ended.set_result(result), **kw))
    done, _ = await asyncio.wait([announced, serve], return_when=asyncio.FIRST_COMPLETED)
    if serve in done:
        serve.result()  # raises what went wrong at start
    try:
        yield announced.result(), serve, ended
    finally:
        if not serve.done():
            serve.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serve


async def test_a_seat_from_a_terminal_plays_task_01_beside_two_oracles(tmp_path):
    """The lumberjack is played through `agentworld seat` alone (its calls are the reference plan's for that
    agent, read from the task); the woodworker and the wizard are oracle seats in the server. It succeeds."""
    task = find_task(STAFF)
    plan = [(step.tool, step.args) for step in task.reference_solution["agent_1"]]
    async with serving(tmp_path, task, ("agent_2=oracle", "agent_3=oracle"), turn_timeout=TURN_TIMEOUT,
                       linger=60) as (seats_path, serve, ended):
        who = ["--seats", str(seats_path), "--agent", "lumberjack"]  # a username works as well as agent_1
        code, out, err = await seat("brief", *who)
        assert code == 0 and err == ""
        assert "You are lumberjack" in out and "Team objective:" in out
        assert "- transfer_items(targetPlayer: string, itemKey: string, count: integer = 1)" in out
        assert f"agentworld seat call TOOL '{{\"arg\": value}}' --seats {seats_path} --agent lumberjack" in out
        assert 'in double quotes, e.g. KEY="it\'s"' in out  # pilots lost calls to "don't" in '...'
        assert "chat message=" not in out  # a no-communication seat read a chat example as a chat it lacked
        # the end is a printed line, not only exit status 3, which some shells and tools do not show
        assert ('The episode has ended when a command prints a line starting "The episode is over", which says how '
                "it ended (the command also exits with status 3). That line is the end even where your shell shows "
                "no exit status") in out

        code, out, err = await seat("look", *who, "--json")
        first = json.loads(out)
        assert code == 0 and first["your_turn"] and first["round"] == 1 and first["agent_id"] == "agent_1"
        assert first["observation"]["username"] == "lumberjack" and "Round 1/25" in first["observation_text"]

        outputs = []
        for i, (tool, args) in enumerate(plan):
            as_json = ["--json"] if i == 2 else []
            code, out, err = await seat("call", tool, json.dumps(args), *who, *as_json)
            outputs.append((code, out, err))
            if ended.done():
                break
            assert code == 0, (tool, out, err)
        result = await ended
        assert result.success and result.end_reason == "verifier_passed", result
        # every call but the last printed its outcome, then the observation of the lumberjack's next turn
        code, out, err = outputs[0]
        outcome = out.split("\n\n--- Your observation now ---\nRound 2/25")[0]
        assert outcome and outcome in (tmp_path / "ep" / "trajectory.jsonl").read_text()  # the turn's result text
        assert out.rstrip().endswith(f"Your turn: agentworld seat call TOOL '{{...}}' --seats {seats_path} "
                                     f"--agent lumberjack")
        code, out, err = outputs[2]  # --json: one object with the outcome and the next observation as data
        data = json.loads(out)
        assert (data["tool"], data["executed"], data["ok"], data["your_turn"]) == ("harvest_resource", True, True, True)
        assert "+4 logs" in data["result"] and data["observation"]["round"] == data["round"] == 4
        assert any(slot["key"] == "logs" for slot in data["observation"]["inventory"])
        # the call that ended the episode says so and exits 3
        code, out, err = outputs[-1]
        assert code == 3 and "The episode is over: success, checkpoints 3/3" in out, out
        # later commands, during --linger, are told the outcome too
        code, out, err = await seat("look", *who)
        assert code == 3 and out.startswith("The episode is over: success"), out
        code, out, err = await seat("call", "sleep", *who)
        assert code == 3 and "The episode is over" in out and "not executed" in out
    events = [json.loads(line) for line in (tmp_path / "ep" / "trajectory.jsonl").read_text().splitlines()]
    mine = [(e["tool"], e["arguments"]) for e in events if e.get("type") == "turn" and e.get("agent") == "agent_1"]
    assert mine == plan[:len(mine)] and len(mine) == len(outputs)  # every call ran once, in order


async def test_a_terminal_seat_beside_a_model_teammate_and_an_oracle(tmp_path):
    """`serve --seat agent_2=openai --seat agent_3=oracle`: the openai framework (its model scripted, offline)
    and the oracle play beside a seat played with `agentworld seat`."""
    pytest.importorskip("openai")  # the openai framework's extra (a server-only install has none)
    async with serving(tmp_path, relay_task(), ("agent_2=openai", "agent_3=oracle"), turn_timeout=TURN_TIMEOUT,
                       world=EmbeddedWorld(fixture_world(), seed=0), linger=0) as (seats_path, serve, ended):
        seats = read_seats_file(seats_path)
        assert [s.player for s in seats.seats] == ["external", "openai", "oracle"]
        code, out, err = await seat("call", "transfer_items", "targetPlayer=bob", "itemKey=logs", "count=3",
                                    "--seats", str(seats_path), "--agent", "alice")
        result = await ended
    assert code == 3 and out.startswith("Gave 3 logs to bob.") and "The episode is over: success" in out, (out, err)
    assert result.success and [e.agent for e in turn_events_of(tmp_path / "ep")] == ["agent_1", "agent_2", "agent_3"]


def turn_events_of(folder: Path) -> list[Any]:
    from agentworld.core.play.trajectory import read_events

    return [e for e in read_events(folder / "trajectory.jsonl") if e.type == "turn"]


async def test_a_seat_that_left_is_told_how_a_lost_episode_ended(tmp_path):
    """An episode lost at the round budget: alice leaves in round 1 (complete) and her client goes away; her
    next call, made while the episode runs, waits for the end and tells it; after the end a client that
    connects anew is told the outcome by a call, by a read, and by `agentworld seat look`."""
    lost = json.loads(json.dumps(RELAY))
    lost["verifier"]["checks"][0]["count"] = 30  # more logs than exist: the idle team cannot pass it
    lost["max_action_steps"] = 10  # the idle seats outlast the 4 rounds: it ends at the round budget
    task = parse_task(lost, "mcp_relay.yaml", "mcp_relay")
    async with serving(tmp_path, task, ("agent_2=idle", "agent_3=idle"), turn_timeout=TURN_TIMEOUT,
                       world=EmbeddedWorld(fixture_world(), seed=0), linger=60) as (seats_path, serve, ended):
        alice = read_seats_file(seats_path).seat("agent_1")
        async with mcp_session(alice.url, alice.token) as s:
            left = await s.call_tool("complete", {"response": "my part is done"})
        assert not is_error(left) and structured_content(left)["active"] is False
        assert structured_content(left)["executed"] is True
        async with mcp_session(alice.url, alice.token) as s:  # a new client, while the episode may still run
            waited = await s.call_tool("sleep", {"seconds": 1})
        result = await ended
        assert not result.success and result.end_reason == "round_budget" and result.rounds == 4
        text = waited.content[0].text
        assert is_error(waited) and structured_content(waited)["executed"] is False
        assert "The episode is over: not solved, checkpoints 0/1 (PSR 0.00); it ended in round 4" in text, text
        # after the end, clients that connect anew
        async with mcp_session(alice.url, alice.token) as s:
            after = await s.call_tool("sleep", {"seconds": 1})
            turn = json.loads((await s.read_resource("agentworld://turn")).contents[0].text)
            observation = (await s.read_resource("agentworld://observation")).contents[0].text
        episode = structured_content(after)["episode"]
        assert is_error(after) and (episode["over"], episode["success"], episode["end_reason"], episode["rounds"],
                                  episode["psr"]) == (True, False, "round_budget", 4, 0.0)
        assert turn["episode_over"] and turn["active"] is False and turn["episode"]["end_reason"] == "round_budget"
        assert observation.startswith("The episode is over: not solved")
        assert "actions left" not in observation and "\nRound " not in observation  # no round under way any more
        code, out, err = await seat("look", "--seats", str(seats_path), "--agent", "agent_1")
        assert code == 3 and out.startswith("The episode is over: not solved, checkpoints 0/1"), (out, err)
        assert not serve.done()  # still answering, though no session was open when the episode ended
    events = [e for e in (json.loads(x) for x in (tmp_path / "ep" / "trajectory.jsonl").read_text().splitlines())
              if e.get("type") == "turn" and e.get("agent") == "agent_1"]
    assert [e["tool"] for e in events] == ["complete"]  # the calls after she left never ran


async def test_a_left_seat_is_told_it_left_while_the_episode_runs(tmp_path):
    """A read while the seat is out and the episode still runs says so, and how to learn the outcome."""
    ep, _ = relay_episode(tmp_path, turn_timeout=TURN_TIMEOUT)
    async with EpisodeMcpServer(ep, turn_timeout=TURN_TIMEOUT) as server:
        async with mcp_session(server.url, server.token("agent_1")) as s:
            run = asyncio.create_task(ep.run())
            await s.call_tool("complete", {})
            observation = (await s.read_resource("agentworld://observation")).contents[0].text
            turn = json.loads((await s.read_resource("agentworld://turn")).contents[0].text)
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
    assert observation.startswith("You have left the episode (you declared your part done in round 1)")
    assert "still running" in observation
    assert turn["active"] is False and turn["episode"] == {"over": False}
    assert turn["left"] == "you declared your part done in round 1"


async def test_errors_are_one_line_and_name_the_fix(tmp_path):
    """Bad seats file, unknown agent, an in-process seat, bad JSON, unknown tool, no server: one line on
    stderr naming the argument, exit status 1, nothing sent."""
    ep, _ = relay_episode(tmp_path, turn_timeout=TURN_TIMEOUT)
    async with EpisodeMcpServer(ep, turn_timeout=TURN_TIMEOUT, players={"agent_2": "oracle"}) as server:
        seats_file = tmp_path / "seats.json"
        seats_file.write_text(json.dumps({"task_id": "mcp_relay", "url": server.url, "turn_timeout_s": 5, "seats": [
            s.model_dump() for s in server.seats]}))
        broken = tmp_path / "broken.json"
        broken.write_text("{")
        with socket.socket() as sock:  # a port nobody listens on
            sock.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        me = ["--seats", str(seats_file), "--agent", "agent_1"]
        cases = [
            (["look", "--seats", str(tmp_path / "nope.json"), "--agent", "agent_1"], "--seats", "no such file"),
            (["look", "--seats", str(broken), "--agent", "agent_1"], "--seats", "not a seats file"),
            (["look", "--seats", str(seats_file), "--agent", "agent_9"], "--agent agent_9", "seats: agent_1 (alice)"),
            (["look", "--seats", str(seats_file), "--agent", "bob"], "--agent bob", "played in process by oracle"),
            (["look", "--seats", str(seats_file)], "--agent is missing", "agent_3 (carol)"),
            (["look", "--url", server.url], "--url needs the seat's token", "--token TOKEN"),
            (["call", "transfer_items", '{"targetPlayer": "bob", ', *me], "not valid JSON", "single quotes"),
            (["call", "transfer_items", '["bob"]', *me], "must be a JSON object", "got a list"),
            (["call", "transfer_item", '{"targetPlayer": "bob"}', *me], "TOOL 'transfer_item'",
             "did you mean transfer_items?"),
            (["look", "--url", dead, "--token", "aw_x"], "cannot reach the server", "not running"),
            (["look", "--url", server.url, "--token", "aw_wrong"], "refused the token", "seats file"),
        ]
        for args, names, fix in cases:
            code, out, err = await seat(*args, env={"AGENTWORLD_TOKEN": ""})
            assert code == 1 and out == "", (args, out, err)
            assert err.startswith("agentworld seat: ") and err.count("\n") == 1, err
            assert names in err and fix in err and "Traceback" not in err, err
    assert turn_events(ep) == [] and not ep.gate.stray  # nothing reached the game


async def test_a_call_longer_than_the_servers_wait_bound_is_sent_again_and_runs_once(tmp_path):
    """The server answers a call that waited its bound in vain with executed=false; the command sends it again
    (it cannot run twice) until the turn opens."""
    ep, _ = relay_episode(tmp_path, turn_timeout=TURN_TIMEOUT)
    async with EpisodeMcpServer(ep, turn_timeout=TURN_TIMEOUT, wait_timeout=0.3) as server:
        answered: list[str | None] = []
        call = server.tracker.call

        async def counting(*a: Any, **kw: Any) -> Any:
            out = await call(*a, **kw)
            answered.append(out[0].error)
            return out

        server.tracker.call = counting  # type: ignore[method-assign]
        env = {"AGENTWORLD_URL": server.url, "AGENTWORLD_TOKEN": server.token("agent_1")}
        args = json.dumps({"targetPlayer": "bob", "itemKey": "logs", "count": 3})
        cli = asyncio.create_task(seat("call", "transfer_items", args, "--json", env=env))
        while answered.count("timeout") < 2:  # it has waited out the bound twice, and called again each time
            assert not cli.done(), cli.result()
            await asyncio.sleep(0.05)
        others = [asyncio.create_task(play_step(server, a)) for a in ("agent_2", "agent_3")]
        result = await ep.run()
        code, out, err = await cli
        await asyncio.gather(*others)
    data = json.loads(out)
    assert code == 3 and data["executed"] and data["ok"] and data["episode"]["success"], (out, err)
    assert result.success and result.refused_calls == 0
    assert [(e.agent, e.tool) for e in turn_events(ep)][0] == ("agent_1", "transfer_items")


async def play_step(server: EpisodeMcpServer, agent_id: str) -> None:
    async with mcp_session(server.url, server.token(agent_id)) as s:
        step = server.episode.task.reference_solution[agent_id][0]
        await s.call_tool(step.tool, step.args)


async def test_ctrl_c_abandons_a_waiting_call_which_never_runs(tmp_path):
    ep, _ = relay_episode(tmp_path, turn_timeout=1)
    async with EpisodeMcpServer(ep, turn_timeout=1) as server:
        env = {"AGENTWORLD_URL": server.url, "AGENTWORLD_TOKEN": server.token("agent_1")}
        proc = await asyncio.create_subprocess_exec(
            *CLI, "seat", "call", "transfer_items", "targetPlayer=bob", "itemKey=logs", "count=3",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, **env})
        while "agent_1" not in server.tracker.waiting:  # the call waits: the episode has not started
            assert proc.returncode is None
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 130 and "abandoned: a call still waiting for your turn never runs" in err.decode(), (out, err)
        while "agent_1" in server.tracker.waiting:  # the server drops it when the connection closes
            await asyncio.sleep(0.05)
        result = await ep.run()  # nobody plays: every turn times out, the abandoned call included
    first = turn_events(ep)[0]
    assert (first.agent, first.tool, first.error) == ("agent_1", None, "timeout")
    assert not result.success and result.refused_calls == 0


async def test_max_wait_returns_in_time_without_cutting_a_call_off(tmp_path):
    """`call --max-wait`: before the turn opens nothing is sent (exit 4); in an open turn the call runs, and when
    the next turn does not open in time its outcome is shown from the observation's Last action (exit 4)."""
    ep, _ = relay_episode(tmp_path, turn_timeout=TURN_TIMEOUT)
    async with EpisodeMcpServer(ep, turn_timeout=TURN_TIMEOUT) as server:
        env = {"AGENTWORLD_URL": server.url, "AGENTWORLD_TOKEN": server.token("agent_1")}
        give = ("call", "transfer_items", "targetPlayer=bob", "itemKey=logs", "count=3", "--max-wait", "1")
        code, out, err = await seat(*give, env=env)  # the episode has not started: no turn opens
        assert code == 4 and out.startswith("Nothing was sent: it is still not your turn after 1 s"), (out, err)
        run = asyncio.create_task(ep.run())
        code, out, err = await seat(*give, "--json", env=env)  # bob never calls: alice's next turn cannot open
        assert out, (code, err)
        data = json.loads(out)
        assert code == 4 and (data["sent"], data["executed"], data["your_turn"]) == (True, True, False), (out, err)
        assert "Last action: Gave 3 logs to bob." in data["observation_text"]
        assert [(e.agent, e.tool) for e in turn_events(ep)] == [("agent_1", "transfer_items")]
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run


async def test_max_wait_bounds_the_wait_for_the_end_after_leaving(tmp_path):
    """`call complete --max-wait`: the seat leaves; the episode runs on (bob's turn waits), so the command
    returns in time saying so (exit 4) instead of waiting for the end."""
    ep, _ = relay_episode(tmp_path, turn_timeout=TURN_TIMEOUT)
    async with EpisodeMcpServer(ep, turn_timeout=TURN_TIMEOUT) as server:
        env = {"AGENTWORLD_URL": server.url, "AGENTWORLD_TOKEN": server.token("agent_1")}
        run = asyncio.create_task(ep.run())
        code, out, err = await seat("call", "complete", "--max-wait", "1", env=env)
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    assert code == 4, (out, err)
    assert "--- Your observation now ---\nYou have left the episode" in out and "still running" in out
    assert out.rstrip().endswith("You have left the episode (you declared your part done in round 1). To learn "
                                 "how it ends: agentworld seat look (it waits for the end).")


def test_seat_is_a_registered_command():
    from click.testing import CliRunner

    from agentworld.core.cli import cli
    from agentworld.core.plugins import register_commands

    register_commands(cli, lazy=True)
    out = CliRunner().invoke(cli, ["seat", "--help"])
    assert out.exit_code == 0 and "brief" in out.output and "look" in out.output and "call" in out.output


def test_key_value_arguments_follow_the_tool_schema():
    from types import SimpleNamespace

    from agentworld.core.cli.seat import parse_arguments
    from agentworld.core.world.tools import TOOLS

    def tool(name):
        return SimpleNamespace(inputSchema=TOOLS[name].json_schema(), input_schema=TOOLS[name].json_schema())

    assert parse_arguments(("x=450", "y=397"), tool("move_character")) == {"x": 450, "y": 397}
    assert parse_arguments(("message=it's 5", "global=true"), tool("send_chat_message")) == {
        "message": "it's 5", "global": True}
    assert parse_arguments(("targetPlayer=123",), tool("transfer_items")) == {"targetPlayer": "123"}
    # a value that does not fit is sent as written: the game refuses it, as it would any model's
    assert parse_arguments(("x=east",), tool("move_character")) == {"x": "east"}
    assert parse_arguments(('{"x": 1, "y": 2}',), tool("move_character")) == {"x": 1, "y": 2}
    assert parse_arguments((), tool("stop_action")) == {}



def test_the_seat_briefs_example_coordinates_name_no_place_of_the_world():
    # the example move once read (450,397), Hearthmoor's workbench: two no-communication pilots took it for a clue
    # to a village their briefs did not locate, and one used it. Examples must be made-up numbers.
    import re

    from agentworld.core.cli.seat import ARGS_HELP, Target, how_to_play
    from agentworld.core.tasks.task import world_index

    text = how_to_play(Target(url="http://127.0.0.1:1/mcp", token="t", how="--seats s.json --agent agent_1")) + ARGS_HELP
    pairs = {(int(x), int(y)) for x, y in re.findall(r'"x\\?": (\d+), \\?"y\\?": (\d+)', text)}
    pairs |= {(int(x), int(y)) for x, y in re.findall(r"x=(\d+) y=(\d+)", text)}
    assert pairs, "the brief should still show an example move"
    w = world_index()
    places = [(lm.x, lm.y) for lm in w.landmarks.values()] + [(s.x, s.y) for s in w.loaded.stations]
    for x, y in pairs:
        near = [p for p in places if abs(p[0] - x) + abs(p[1] - y) <= 30]
        assert not near, f"example move ({x},{y}) is within 30 tiles of a real place {near}"
