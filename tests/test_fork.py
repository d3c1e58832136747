"""`agentworld fork EPISODE_DIR --at-round R`: the first R-1 rounds replay the parent's calls, then another team
plays on, primed with each agent's earlier turns. An oracle fork of an oracle episode reproduces it; a random
fork diverges; a framework team's first prompt carries the agent's history (read off a real HTTP model stub);
the fork's record names its parent and replays."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core import plugins
from agentworld.core.cli import _load_commands, cli
from agentworld.core.play.fork import FORK_FILE, ForkError, check_prefix, events_from, run_fork
from agentworld.core.play.history import HistoryTurn, render_history
from agentworld.core.play.records import TurnEvent
from agentworld.core.play.replay import check_episode, comparable
from agentworld.core.play.trajectory import read_events
from tests.openai_stub_server import OpenAIStubServer

_load_commands()
TASK = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the fixture task: 3 agents, 10 rounds with the oracle: a chat in round 1, a hand-over, a craft
AT = 4


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("parent") / "run"
    r = invoke("run", "--task", TASK, "--framework", "oracle", "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    (folder,) = [p for p in (out / "episodes").iterdir() if p.is_dir()]
    return folder


def fork(parent: Path, out: Path, framework: str, at: int = AT, **kw):
    return asyncio.run(run_fork(parent, at, plugins.get("framework", framework), out_dir=out, framework=framework,
                                **kw))


def later(folder: Path, at: int = AT) -> list[dict]:
    return [comparable(e) for e in events_from(read_events(folder), at)]


def result_view(folder: Path) -> dict:
    data = json.loads((folder / "result.json").read_text())
    return {k: v for k, v in data.items() if k not in ("episode_id", "wall_s", "harness_s", "framework", "model")}


def test_an_oracle_fork_of_an_oracle_episode_reproduces_it(parent: Path, tmp_path: Path):
    outcome = fork(parent, tmp_path / "f", "oracle")
    assert outcome.primed is True and outcome.history_turns == {"agent_1": AT - 1, "agent_2": AT - 1, "agent_3": AT - 1}
    mine, theirs = later(tmp_path / "f"), later(parent)
    assert len(mine) == len(theirs) > 10
    assert mine == theirs  # every turn and tick from round R on, field for field (timings aside)
    assert result_view(tmp_path / "f") == result_view(parent)
    assert json.loads((tmp_path / "f" / "result.json").read_text())["success"]
    # the same fork twice gives the same trajectory (determinism of the whole construction)
    fork(parent, tmp_path / "g", "oracle")
    assert later(tmp_path / "g", 1) == later(tmp_path / "f", 1)


def test_a_random_fork_from_the_same_round_diverges(parent: Path, tmp_path: Path):
    fork(parent, tmp_path / "r", "random")
    assert check_prefix(tmp_path / "r") is None  # the first R-1 rounds are still the parent's
    mine, theirs = later(tmp_path / "r"), later(parent)
    first = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b)
    assert mine[first]["round"] == AT  # it diverges in the first round it plays
    assert result_view(tmp_path / "r") != result_view(parent)


def test_the_fork_record_names_its_parent_and_replays(parent: Path, tmp_path: Path):
    out = tmp_path / "f"
    fork(parent, out, "random")
    start = read_events(out)[0]
    assert start.fork is not None
    assert (start.fork.parent_episode_id, start.fork.at_round) == (read_events(parent)[0].episode_id, AT)
    assert start.fork.parent_framework == "oracle" and start.framework == "random"
    assert start.fork.parent_record_sha256
    saved = json.loads((out / FORK_FILE).read_text())
    assert saved["origin"]["at_round"] == AT and saved["primed"] is True
    report = asyncio.run(check_episode(out))  # replay of a fork replays its record, prefix included
    assert report.ok, [m.text() for m in report.mismatches]
    # the prefix check names the first turn of the prefix that no longer matches an edited parent
    edited = tmp_path / "parent_copy"
    edited.mkdir()
    for f in parent.iterdir():
        if f.is_file():
            (edited / f.name).write_bytes(f.read_bytes())
    lines = (edited / "trajectory.jsonl").read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if '"round":2' in line and '"type":"turn"' in line)
    ev = json.loads(lines[i])
    ev["result"] = "edited"
    lines[i] = json.dumps(ev)
    (edited / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    m = check_prefix(out, edited)
    assert m is not None and m.round == 2 and m.field == "result"


def test_a_fork_refuses_a_round_the_parent_did_not_play(parent: Path, tmp_path: Path):
    last = json.loads((parent / "result.json").read_text())["rounds"]
    with pytest.raises(ForkError, match=f"played rounds 1 to {last}"):
        fork(parent, tmp_path / "x", "oracle", at=last + 1)
    r = CliRunner().invoke(cli, ["fork", str(parent), "--at-round", "0", "--framework", "oracle"])
    assert r.exit_code == 2 and "--at-round" in r.output
    r = CliRunner().invoke(cli, ["fork", str(parent), "--at-round", "3", "--framework", "oracle", "--framework",
                                 "random"])
    assert r.exit_code != 0 and "one team" in r.output


def test_fork_command_runs_and_says_what_it_did(parent: Path, tmp_path: Path):
    out = tmp_path / "cli"
    r = invoke("fork", str(parent), "--at-round", str(AT), "--framework", "oracle", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert f"at round {AT}: rounds 1-{AT - 1} replayed" in r.output
    assert "primed with their history: yes" in r.output and "prefix identical to the parent's record: yes" in r.output
    assert "SUCCESS" in r.output
    r = invoke("fork", str(parent), "--at-round", str(AT), "--framework", "oracle", "--out", str(out))
    assert r.exit_code != 0 and "already holds an episode" in r.output
    r = invoke("fork", str(parent), "--at-round", "2", "--framework", "idle", "--out", str(tmp_path / "j"), "--json")
    data = json.loads(r.output)
    assert data["prefix_matches_parent"] and data["origin"]["at_round"] == 2 and not data["success"]


def test_history_is_kept_within_the_budget_newest_first():
    turns = [HistoryTurn(round=r, observation=f"obs {r} " + "x" * 200, tool="sleep", call="sleep()",
                         result=f"slept {r}") for r in range(1, 11)]
    full = render_history(turns, 11)
    assert all(f"--- Round {r} ---" in full for r in range(1, 11)) and "left out" not in full
    short = render_history(turns, 11, budget=1200)
    assert len(short) <= 1200
    assert "--- Round 10 ---" in short and "--- Round 1 ---" not in short
    assert "earlier turn(s) left out to fit your context budget" in short and "sleep x" in short
    assert render_history([], 3) == ""


FRAMEWORKS = [f for f, mod in (("openai", "openai"), ("langgraph", "langgraph"), ("autogen", "autogen_agentchat"),
                               ("camel", "camel")) if importlib.util.find_spec(mod) is not None]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_forked_agents_first_prompt_carries_their_history(parent: Path, tmp_path: Path, framework: str):
    """A framework team behind a real HTTP model stub: the first request each agent's model receives holds the
    agent's own earlier turns (its observation with the chat it received, its call and the result)."""
    logging.getLogger("camel").setLevel(logging.CRITICAL)
    # each agent leaves after its first turn: the episode ends in round R (its first prompt is all we read)
    with OpenAIStubServer(lambda body: ("complete", {"response": "done"})) as server:
        fork(parent, tmp_path / "m", framework, model="openai-compatible:qwen-local",
             options={"base_url": server.base_url, "tools": "inproc"})
        requests = list(server.requests)
    turns = [e for e in read_events(parent) if isinstance(e, TurnEvent) and e.round < AT]
    first = {}  # agent -> the text of the first request made for it
    names = {e.agent: e.username for e in turns}
    for body in requests:
        text = json.dumps(body["messages"])
        for agent, username in names.items():
            if agent not in first and f"It is your turn ({username}, round {AT}" in text:
                first[agent] = text
    assert set(first) == set(names)
    for agent, text in first.items():
        mine = [e for e in turns if e.agent == agent]
        assert "Earlier in this episode. You take over in round" in text
        for e in mine:
            assert f"--- Round {e.round} ---" in text
            assert json.dumps(e.result)[1:-1][:60] in text  # the result it read back
            if e.tool:
                assert f"Your call: {e.tool}(" in text
    # the chat a teammate sent in the prefix reached its recipients' history
    chats = [e for e in turns if e.effects.chat is not None and e.effects.chat.recipients]
    assert chats, "the oracle episode of task_01_staff chats in round 1"
    for c in chats:
        for recipient in c.effects.chat.recipients:
            agent = next(a for a, u in names.items() if u == recipient or a == recipient)
            assert json.dumps(c.effects.chat.message)[1:-1][:40] in first[agent]


@pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="the openai framework is not installed")
def test_a_framework_team_with_the_scripted_oracle_over_mcp_continues_the_plan(parent: Path, tmp_path: Path):
    """The scripted oracle behind a framework (its policy primed through FrameworkTeam.prime), its tools over
    the episode's MCP server (ForkTeam passes the successor's tool server on): the world sees the parent's
    calls from round R on (only the model's side of the turn events, text and tokens, differs)."""
    out = tmp_path / "mcp"
    outcome = fork(parent, out, "openai", model="scripted:oracle", options={"tools": "mcp"})
    assert outcome.primed is True
    world = ("round", "agent", "tool", "arguments", "ok", "result", "error", "effects", "status", "type")

    def seen(folder: Path) -> list[dict]:
        return [{k: v for k, v in e.items() if k in world} for e in later(folder)]

    assert seen(out) == seen(parent)
    tokens = ("tokens_in", "tokens_out")  # the framework's model spends (estimated) tokens; the oracle none
    assert {k: v for k, v in result_view(out).items() if k not in tokens} == \
        {k: v for k, v in result_view(parent).items() if k not in tokens}
