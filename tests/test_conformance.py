"""The conformance matrix: one turn contract on every path (docs/protocol.md, "The turn contract").

The same scripted behaviours are played by the openai, autogen, camel and langgraph plugins in process,
by the same four with ``--tools mcp`` (each framework's own MCP client over real HTTP on 127.0.0.1), and by
an external client that uses the MCP SDK over real HTTP. Every path must give the same ``result.json``
counters and the same trajectory apart from timings:

- per framework, in process and over MCP agree on every field of every turn event (tokens included: the
  scripted models count the characters they are sent, so equal tokens mean the model read the same text);
- across the nine paths the game record agrees: tool, arguments, ok, the result text, the error kind,
  effects, refusals, raw calls, status, infrastructure and harness errors.

An external client has no model the harness could see, so the behaviours about the model service (a 500,
a model that does not answer, a reply with no call) are played by the eight framework paths only.

The same behaviours are also played through ``agentworld seat`` (one subprocess per look or call, as a person or
a command-line agent plays a seat) where that command can send them: it checks the tool's name and the JSON
before anything is sent (a typo in a shell costs no turn), so broken JSON, a list of arguments and an unknown
tool (chat under no_communication too) never reach the game from it.

The task is tiny (three agents on the fixture world; the verifier passes at the end of round 1), so the
whole matrix runs in well under a minute.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentworld.core.play.mcp_sdk import structured_content
from agentworld.core import plugins
from agentworld.core.play.calls import wire_arguments
from agentworld.core.play.episode import Episode
from agentworld.core.play.policies import OraclePolicy, Policy
from agentworld.core.play.protocol import TeamSpec
from agentworld.core.play.records import EpisodeResult, TurnEvent
from agentworld.core.tasks.task import Task, parse_task
from agentworld.core.world.engine import EmbeddedWorld
from agentworld.core.world.observation import Observation
from agentworld.core.world.tools import TOOLS
from agentworld.mcp_server.clients import mcp_session
from agentworld.mcp_server.server import EpisodeMcpServer
from agentworld.mcp_server.turns import ExternalSeatsTeam
from agentworld.plugins.agents.fakes import ModelFault

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import fixture_world  # noqa: E402

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

pytestmark = [pytest.mark.anyio,
              pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")]

FRAMEWORKS = ["openai", "autogen", "camel", "langgraph"]
TURN_TIMEOUT = 6.0  # long enough for any scripted turn (a framework's first one builds its agent) on a busy machine
# the turn timeout of the behaviour whose model never answers: its model's answer never comes, so that turn
# ends at the timeout whatever the load; the other turns of that episode must fit in it, so it is as long as theirs
HANG_TIMEOUT = TURN_TIMEOUT
TIMING = {"timestamp", "model_latency_s", "harness_s"}

TIP = {
    "id": "conformance_tip",
    "category": "gathering",
    "task": {"name": "Tree tip", "description": "The scout sees a tree the woodcutter cannot; logs are needed."},
    "objectives": {"primary": "the woodcutter holds logs"},
    "rounds": 3,
    "max_action_steps": 4,
    "agent_1": {"username": "scout", "location": {"x": 24, "y": 7}, "role": "scout"},
    "agent_2": {"username": "woodcutter", "location": {"x": 6, "y": 24}, "role": "woodcutter",
                "inventory_items": [{"item": "bronze_axe", "count": 1}]},
    "agent_3": {"username": "helper", "location": {"x": 7, "y": 25}, "role": "helper"},
    "verifier": {"checks": [{"check": "item_count", "item": "logs", "count": 1, "agent": "agent_2"}]},
    "reference_solution": {
        "agent_1": [{"tool": "chat", "args": {"message": "oak_tree#3 stands next to me"}}],
        "agent_2": [{"tool": "harvest_resource", "args": {"targetInstance": "oak_tree#3"}}],
        "agent_3": [{"tool": "sleep", "args": {"seconds": 1}}],
    },
}

FAULT_500, HANG = ModelFault("500"), ModelFault("hang")


class ChatTip(Policy):
    """The chat-dependent exchange: the scout tells the id of the tree only it can see; the woodcutter
    harvests whatever id the chat it received names (and has nothing to go on without it)."""

    name = "chat_tip"

    def decide(self, turn: Any) -> Any:
        obs = turn.observation
        if turn.agent_id == "agent_1":
            tree = next(e.id for e in obs.nearby if e.kind == "resource")
            return "chat", {"message": f"{tree} stands next to me, woodcutter"}
        if turn.agent_id == "agent_2":
            ids = re.findall(r"\w+#\d+", " ".join(m.text for m in obs.chat))
            return ("harvest_resource", {"targetInstance": ids[0]}) if ids else ("sleep", {"seconds": 1})
        return "sleep", {"seconds": 1}


class Scripted(Policy):
    """Each agent's scripted model answers first (one per model request), then the base policy."""

    name = "scripted"

    def __init__(self, base: Policy, script: dict[str, list[Any]]):
        self.base = base
        self.script = {a: list(answers) for a, answers in script.items()}

    def decide(self, turn: Any) -> Any:
        queue = self.script.get(turn.agent_id)
        if queue:
            return queue.pop(0)
        return self.base.decide(turn)


BEHAVIOURS: dict[str, dict[str, list[Any]]] = {
    "oracle": {},
    "malformed_json": {"agent_3": [("move_character", '{"x": 8, "y": ')]},
    "unknown_tool": {"agent_3": [("fly_to_the_moon", {"height": 3})]},
    "wrong_types": {"agent_3": [("move_character", {"x": "east", "y": [1]})]},
    "array_arguments": {"agent_3": [("sleep", "[1, 2]")]},
    "chat_dependent": {},
    "no_call": {"agent_3": [None]},
    "service_500_twice": {"agent_3": [FAULT_500, FAULT_500]},
    "model_times_out": {"agent_3": [HANG]},
    "bare_sleep": {"agent_3": [("sleep", {})]},  # sleep needs no argument: a wait, not an action
    "chat_refused": {},  # no_communication: the scout's chat is an unknown tool, not a chat
}
VARIANTS = {"chat_refused": "no_communication"}
MODEL_ONLY = {"no_call", "service_500_twice", "model_times_out"}  # not playable by an external client
SEAT_CLI = {"oracle", "wrong_types", "chat_dependent", "bare_sleep"}  # what `agentworld seat` sends as it is
CLI_TURN_TIMEOUT = 120.0  # a subprocess per call starts Python each time: no turn of this path may time out


def tip_task() -> Task:
    return parse_task(json.loads(json.dumps(TIP)), "conformance_tip.yaml", "conformance_tip")


def policy(behaviour: str, task: Task) -> Policy:
    base = ChatTip() if behaviour in ("chat_dependent", "chat_refused") else OraclePolicy(task)
    return Scripted(base, BEHAVIOURS[behaviour])


def new_episode(task: Task, team: Any, framework: str, turn_timeout: float = TURN_TIMEOUT,
                build_team: Any = None, variant: str = "vanilla") -> Episode:
    return Episode(task, team, world=EmbeddedWorld(fixture_world(), seed=0), framework=framework,
                   model="scripted", turn_timeout=turn_timeout, build_team=build_team, variant=variant)


@pytest.fixture(scope="module", autouse=True)
def warm_frameworks():
    """Import the four frameworks once, so that no behaviour's first turn pays for the imports."""
    import autogen_agentchat.agents  # noqa: F401
    import camel.agents  # noqa: F401
    import langgraph.graph  # noqa: F401
    import openai  # noqa: F401
    yield


async def play_framework(framework: str, tools: str, behaviour: str) -> tuple[EpisodeResult, list[TurnEvent]]:
    task = tip_task()
    options = {"tools": tools, "retries": 2, "backoff": 0.01, "timeout": 30}

    def build(view: Any) -> Any:
        team = plugins.get("framework", framework)(TeamSpec(view=view, model="scripted:oracle", seed=0,
                                                            agent_ids=view.agent_ids, options=options))
        team._policy = policy(behaviour, task)  # the scripted model's answers, behind the framework's own model API
        return team

    ep = new_episode(task, None, framework, HANG_TIMEOUT if behaviour == "model_times_out" else TURN_TIMEOUT,
                     build_team=build, variant=VARIANTS.get(behaviour, "vanilla"))
    result = await ep.run()
    return result, [e for e in ep.events if isinstance(e, TurnEvent)]


async def external_seat(url: str, token: str, agent_id: str, plan: Policy) -> None:
    """A plain MCP SDK client: waits for its turn, reads its observation, then calls one tool per result."""
    async with mcp_session(url + "?observation=data", token) as session:  # each result's observation as data
        while True:  # the first observation: wait until it is this seat's turn
            state = json.loads((await session.read_resource("agentworld://turn")).contents[0].text)
            if state["episode"]["over"] or state.get("your_turn"):
                break
            await asyncio.sleep(0.01)
        obs = state.get("observation")
        while obs is not None:
            observation = Observation.model_validate(obs)
            decision = plan.decide(SimpleNamespace(agent_id=agent_id, observation=observation,
                                                   round=observation.round, tools=list(TOOLS.values())))
            name, args = decision
            r = await session.call_tool(name, wire_arguments(args))
            data = structured_content(r)
            if data["episode"]["over"] or not data.get("active", True):
                return
            obs = data.get("observation")


async def play_external(behaviour: str) -> tuple[EpisodeResult, list[TurnEvent]]:
    task = tip_task()
    plan = policy(behaviour, task)
    ep = new_episode(task, ExternalSeatsTeam(turn_timeout=TURN_TIMEOUT), "mcp",
                     variant=VARIANTS.get(behaviour, "vanilla"))
    async with EpisodeMcpServer(ep, turn_timeout=TURN_TIMEOUT) as server:
        seats = [asyncio.create_task(external_seat(server.url, server.token(a), a, plan)) for a in task.agent_ids]
        result = await ep.run()
        await asyncio.wait_for(asyncio.gather(*seats), 10)
    return result, [e for e in ep.events if isinstance(e, TurnEvent)]


async def seat_cli_seat(env: dict[str, str], agent_id: str, plan: Policy) -> None:
    """`agentworld seat look`, then `agentworld seat call` per turn (--json), deciding on the observation each
    printed, until the episode is over or the seat has left."""
    from test_seat_cli import seat

    code, out, err = await seat("look", "--json", env=env)
    state = json.loads(out)
    obs = state.get("observation") if state["your_turn"] else None
    while obs is not None:
        observation = Observation.model_validate(obs)
        name, args = plan.decide(SimpleNamespace(agent_id=agent_id, observation=observation,
                                                 round=observation.round, tools=list(TOOLS.values())))
        code, out, err = await seat("call", name, json.dumps(args), "--json", env=env)
        assert code in (0, 3), (name, args, out, err)
        data = json.loads(out)
        if data["episode"]["over"] or not data["your_turn"]:
            return
        obs = data["observation"]


async def play_seat_cli(behaviour: str) -> tuple[EpisodeResult, list[TurnEvent]]:
    task = tip_task()
    plan = policy(behaviour, task)
    ep = new_episode(task, ExternalSeatsTeam(turn_timeout=CLI_TURN_TIMEOUT), "mcp", CLI_TURN_TIMEOUT,
                     variant=VARIANTS.get(behaviour, "vanilla"))
    async with EpisodeMcpServer(ep, turn_timeout=CLI_TURN_TIMEOUT) as server:
        seats = [asyncio.create_task(seat_cli_seat({"AGENTWORLD_URL": server.url, "AGENTWORLD_TOKEN": server.token(a)},
                                                   a, plan)) for a in task.agent_ids]
        result = await ep.run()
        await asyncio.wait_for(asyncio.gather(*seats), 300)
    return result, [e for e in ep.events if isinstance(e, TurnEvent)]


COUNTERS = {"success", "end_reason", "rounds", "actions", "chats", "waits", "tool_errors", "no_calls", "refused_calls",
            "infra_errors", "harness_errors", "psr"}


def game_record(e: TurnEvent, *, attempts: bool = True) -> dict[str, Any]:
    """A turn as the game saw it (what must agree across frameworks, whose prompts and tokens differ)."""
    d = e.model_dump(include={"round", "agent", "tool", "arguments", "ok", "result", "error", "effects",
                              "refused", "counts_as_action", "status", "infra_error", "harness_error", "raw_calls"})
    if attempts:
        d["attempts"] = [(a.ok, a.error) for a in e.attempts]
    return d


def whole(e: TurnEvent) -> dict[str, Any]:
    d = e.model_dump(exclude=TIMING)
    d["attempts"] = [{k: v for k, v in a.items() if k != "latency_s"} for a in d["attempts"]]
    return d


@pytest.mark.parametrize("behaviour", list(BEHAVIOURS))
async def test_every_path_scores_the_same_behaviour_the_same(behaviour):
    # The paths are independent episodes, played at once: most of a path's time is waiting (a hanging model's
    # turn timeout, the seat command's Python start-ups), and a framework path's own work is a few tenths of
    # a second, far inside any turn's timeout even while the others play.
    plays = {f"{framework}/{tools}": play_framework(framework, tools, behaviour)
             for framework in FRAMEWORKS for tools in ("inproc", "mcp")}
    if behaviour not in MODEL_ONLY:
        plays["external/mcp-sdk"] = play_external(behaviour)
    if behaviour in SEAT_CLI:
        plays["external/seat-cli"] = play_seat_cli(behaviour)
    runs: dict[str, tuple[EpisodeResult, list[TurnEvent]]] = dict(zip(plays, await asyncio.gather(*plays.values())))

    ref_result, ref_events = runs["openai/inproc"]
    counters = ref_result.model_dump(include=COUNTERS)
    for path, (result, events) in runs.items():
        assert result.model_dump(include=COUNTERS) == counters, path
        framework_path = not path.startswith("external")
        assert [game_record(e, attempts=framework_path) for e in events] == [
            game_record(e, attempts=framework_path) for e in ref_events], path
    for framework in FRAMEWORKS:  # in process and over MCP: every field, tokens and thinking included
        inproc, over_mcp = runs[f"{framework}/inproc"][1], runs[f"{framework}/mcp"][1]
        assert [whole(e) for e in over_mcp] == [whole(e) for e in inproc], framework

    # what each behaviour must have been scored as (the same everywhere, checked once)
    helper = next(e for e in ref_events if e.agent == "agent_3")
    expect = {
        "oracle": (True, None), "chat_dependent": (True, None),
        "malformed_json": (False, "bad_args"), "unknown_tool": (False, "unknown_tool"),
        "wrong_types": (False, "bad_args"), "array_arguments": (False, "bad_args"),
        "no_call": (False, "no_call"), "service_500_twice": (True, None), "model_times_out": (False, "infra"),
        "bare_sleep": (True, None), "chat_refused": (True, None),
    }[behaviour]
    assert (helper.ok, helper.error) == expect, helper.result
    # the scout and the woodcutter solve it whatever the helper does (unless their chat is taken away)
    assert ref_result.success == (behaviour != "chat_refused")
    if behaviour in ("oracle", "chat_dependent", "bare_sleep"):  # the helper waited; the scout's tip was a chat
        assert helper.tool == "sleep" and not helper.counts_as_action
        assert (ref_result.chats, ref_result.waits, ref_result.actions) == (1, 1, 1)
    if behaviour == "bare_sleep":
        assert helper.arguments == {} and helper.parsed_arguments == {"seconds": None}
    if behaviour == "chat_refused":  # a chat the episode does not offer: a tool error that uses the budget
        scout = next(e for e in ref_events if e.agent == "agent_1")
        assert (scout.tool, scout.ok, scout.error, scout.counts_as_action) == ("chat", False, "unknown_tool", True)
        assert "chat is disabled" in scout.result
        assert (ref_result.chats, ref_result.tool_errors) == (0, sum(1 for e in ref_events if e.agent == "agent_1"))
    if behaviour == "malformed_json":
        assert "not valid JSON" in helper.result and helper.raw_calls[0].arguments == '{"x": 8, "y": '
        assert helper.counts_as_action and ref_result.tool_errors == 1
    if behaviour == "array_arguments":
        assert "must be a JSON object, got list" in helper.result and helper.raw_calls[0].arguments == [1, 2]
    if behaviour == "unknown_tool":
        assert "Unknown tool 'fly_to_the_moon'" in helper.result and helper.counts_as_action
    if behaviour == "no_call":
        assert helper.tool is None and ref_result.no_calls == 1 and helper.counts_as_action
    if behaviour == "service_500_twice":
        failed = (False, "HTTP 500: Error code: 500 - scripted model service: internal server error")
        assert [(a.ok, a.error) for a in helper.attempts] == [failed, failed, (True, None)]
        assert ref_result.infra_errors == 0
    if behaviour == "model_times_out":
        assert helper.tool is None and not helper.counts_as_action and ref_result.infra_errors == 1
        assert f"did not answer within the {HANG_TIMEOUT:g} s turn timeout" in helper.infra_error
        assert ref_result.no_calls == 0
    if behaviour == "chat_dependent":
        woodcutter = next(e for e in ref_events if e.agent == "agent_2")
        assert woodcutter.tool == "harvest_resource" and woodcutter.ok
        assert woodcutter.arguments == {"targetInstance": "oak_tree#3"}


# -- budgets: a run's token budget stops the running episode in every framework ----------------------------------
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_a_token_budget_smaller_than_one_episode_stops_it_in_every_framework(framework, tmp_path):
    from agentworld.core.runs.run_spec import build_spec
    from agentworld.core.runs.runner import Runner, read_results_file

    spec = build_spec({"tasks": [STAFF], "frameworks": [framework], "models": ["scripted:oracle"],
                       "concurrency": 1, "max_tokens_total": 1500})
    summary = await Runner(spec, tmp_path / "run").run()
    assert summary.stop_reason and "token budget" in summary.stop_reason
    (result,) = read_results_file(tmp_path / "run" / "results.jsonl")
    full_turns = 3 * 4  # the oracle needs several rounds of its three agents
    assert result.end_reason == "budget_stop" and not result.success
    assert result.turns is not None and 1 <= result.turns < full_turns
    # stopped at the first turn boundary past the budget: at most one turn's tokens over it
    assert 1500 <= result.tokens_in + result.tokens_out < 1500 + 2000
    folder = next((tmp_path / "run").glob("episodes/*/"))
    assert (folder / "result.json").is_file()  # the partial episode is kept like any other
