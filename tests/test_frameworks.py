"""The four framework teams, turn by turn, against a small gate double and the local OpenAI stub server.

These tests drive each framework's real code path (AutoGen AssistantAgent, LangGraph graph, CAMEL ChatAgent,
openai SDK) offline. Episode-level tests (starter tasks, trajectories) are in test_frameworks_episode.py.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path

import pytest

from agentworld.core.world.effects import ToolResult
from agentworld.core.world.observation import Observation
from agentworld.core.play import calls
from agentworld.core.play.protocol import TeamSpec, Turn
from agentworld.core.world.tools import TOOLS
from agentworld.plugins.agents.common import HistoryBudget, drop_count, openai_groups, trim_openai_history

sys.path.insert(0, str(Path(__file__).parent))
from openai_stub_server import OpenAIStubServer  # noqa: E402

pytestmark = pytest.mark.anyio
FRAMEWORKS = ["openai", "autogen", "langgraph", "camel"]


@pytest.fixture(autouse=True)
def _quiet_logs():
    # CAMEL logs every failed model request with a traceback; the fault tests make many on purpose.
    logging.getLogger("camel").setLevel(logging.CRITICAL)
    yield


class GateDouble:
    """Stands in for the episode's turn gate: the first call of a turn runs (argument check only), any further
    call in the same turn is refused. ``log`` keeps (agent, tool, args, verdict)."""

    def __init__(self):
        self.log: list[tuple[str, str, object, str]] = []

    def port(self, agent_id: str):
        gate, state = self, {"used": False}

        class Port:
            async def call(self, tool, arguments=None):
                arguments = calls.as_emitted(arguments)  # as the real gate reads a call handed over as emitted
                if state["used"]:
                    gate.log.append((agent_id, tool, arguments, "refused"))
                    return ToolResult.fail("refused", "Refused: you already acted this turn (one tool call per turn).")
                state["used"] = True
                if tool not in TOOLS:
                    gate.log.append((agent_id, tool, arguments, "unknown"))
                    return ToolResult.fail("unknown_tool", f"no tool named {tool}")
                try:
                    TOOLS[tool].parse(arguments)
                except ValueError as exc:
                    gate.log.append((agent_id, tool, arguments, "bad_args"))
                    return ToolResult.fail("bad_args", str(exc))
                gate.log.append((agent_id, tool, arguments, "ok"))
                return ToolResult(ok=True, text=f"{tool}: done at round")

        Port.agent_id = agent_id
        return Port()


def make_turn(gate: GateDouble, agent_id: str, rnd: int, padding: int = 400) -> Turn:
    obs = Observation(agent_id=agent_id, username=agent_id.upper(), round=rnd, max_rounds=50, x=10 + rnd, y=5,
                      biome="meadow", hp=20, max_hp=20)
    text = obs.render_text()
    return Turn(agent_id=agent_id, username=agent_id.upper(), round=rnd, observation=obs, observation_text=text,
                system_prompt=f"You are {agent_id.upper()}. Call exactly one tool per turn.",
                user_prompt=f"{text}\n{'(map notes) ' * (padding // 12)}\nCall one tool.",
                tools=list(TOOLS.values()), port=gate.port(agent_id))


class ScriptPolicy:
    """A scripted policy double: plays a fixed list of calls per agent, then sleeps."""

    def __init__(self, script):
        self.script = {a: list(calls) for a, calls in script.items()}
        self.asked: list[tuple[str, int]] = []

    def decide(self, turn):
        self.asked.append((turn.agent_id, turn.round))
        calls = self.script.get(turn.agent_id) or []
        return calls.pop(0) if calls else ("sleep", {"seconds": 1})


def team_for(framework: str, model: str = "scripted:oracle", **options):
    mod = importlib.import_module(f"agentworld.plugins.agents.{framework}_agent")
    return mod.make_team(TeamSpec(view=None, model=model, seed=0, agent_ids=["agent_1", "agent_2"], options=options))


SCRIPT = {"agent_1": [("move_character", {"x": 3, "y": 4}), ("craft_item", {"skill": "fletching", "itemKey": "stick"})],
          "agent_2": [("harvest_resource", {"targetInstance": "oak_tree#1"}), ("sleep", {"minutes": 99})]}


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_scripted_model_one_call_per_turn(framework):
    team = team_for(framework)
    team._policy = policy = ScriptPolicy(SCRIPT)  # the fakes ask the team's policy for the current turn
    gate = GateDouble()
    outcomes = []
    for rnd in (1, 2, 3):
        for agent in ("agent_1", "agent_2"):
            outcomes.append(await team.act(make_turn(gate, agent, rnd)))
    await team.aclose()
    assert policy.asked == [(a, r) for r in (1, 2, 3) for a in ("agent_1", "agent_2")]  # asked once per turn
    assert [(a, t, args) for a, t, args, _ in gate.log] == [
        ("agent_1", "move_character", {"x": 3, "y": 4}), ("agent_2", "harvest_resource", {"targetInstance": "oak_tree#1"}),
        ("agent_1", "craft_item", {"skill": "fletching", "itemKey": "stick"}), ("agent_2", "sleep", {"minutes": 99}),
        ("agent_1", "sleep", {"seconds": 1}), ("agent_2", "sleep", {"seconds": 1})]
    # bad arguments reach the gate unvalidated by the framework: the gate's message is what the model sees
    assert gate.log[3][3] == "bad_args"
    for o in outcomes:
        assert o.model_calls == 1 and o.infra_error is None and len(o.raw_calls) == 1
        assert o.tokens_in > 0 and o.tokens_out > 0 and o.model_latency_s >= 0
    # history grows: the second turn of an agent sends more than its first
    assert outcomes[2].tokens_in > outcomes[0].tokens_in


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_policy_passing_means_no_call(framework):
    team = team_for(framework)
    team._policy = type("Pass", (), {"decide": lambda self, turn: None})()
    gate = GateDouble()
    outcome = await team.act(make_turn(gate, "agent_1", 1))
    await team.aclose()
    assert gate.log == [] and outcome.raw_calls == [] and outcome.infra_error is None
    assert "nothing useful" in outcome.thinking


def test_history_budget_helpers():
    assert drop_count([5, 5, 5, 5], 10) == 2
    assert drop_count([50, 5], 10) == 1  # the newest group always stays, even over budget
    assert drop_count([1, 1], 10) == 0
    history = []
    for i in range(6):
        history += [{"role": "user", "content": "u" * 400},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"c{i}", "type": "function", "function": {"name": "sleep", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"}]
    budget = HistoryBudget(2000)
    folded = trim_openai_history(history, budget, incoming_chars=400)
    assert folded == 12 and history[0]["role"] == "user"  # 4 whole turns folded, 2 kept
    _, groups = openai_groups(history)
    assert len(groups) == 2 and budget.turns_folded == 4 and "sleep x4" in budget.summary()
    assert sum(len(m.get("content") or "") for m in history) + 400 + len(budget.summary()) <= 2000


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_history_stays_within_budget(framework):
    """Against the stub server we see exactly what each framework sends: old turns are folded into the
    summary line, the rest fits the budget, and context_trimmed reports how many messages went."""
    budget = 2000
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 1})) as server:
        team = team_for(framework, "openai-compatible:qwen-local", base_url=server.base_url, context_budget=budget)
        gate = GateDouble()
        outcomes = [await team.act(make_turn(gate, "agent_1", rnd, padding=500)) for rnd in range(1, 11)]
        await team.aclose()
    trimmed = [o.context_trimmed for o in outcomes]
    assert sum(trimmed) > 0 and trimmed[0] == 0
    last = server.requests[-1]["messages"]
    summaries = [m for m in last if isinstance(m.get("content"), str) and m["content"].startswith("[History summary")]
    assert len(summaries) == 1 and "sleep x" in summaries[0]["content"]
    history = [m for m in last if m["role"] != "system" and m not in summaries]
    chars = sum(len(m["content"]) if isinstance(m.get("content"), str) else 0 for m in history)
    assert chars <= budget, f"{framework} sent {chars} chars of history over a {budget}-char budget"
    # the conversation stays valid: every tool result follows its assistant call
    ids = {c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls") or []}
    assert all(m["tool_call_id"] in ids for m in history if m["role"] == "tool")
    assert len(gate.log) == 10  # every turn still acted


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_second_call_is_refused_and_the_model_reads_why(framework):
    double = [("sleep", {"seconds": 1}), ("move_character", {"x": 1, "y": 1})]
    with OpenAIStubServer(lambda body: double, thought="Resting first, then walking.") as server:
        team = team_for(framework, "openai-compatible:qwen-local", base_url=server.base_url, tool_choice="required")
        gate = GateDouble()
        first = await team.act(make_turn(gate, "agent_1", 1))
        await team.act(make_turn(gate, "agent_1", 2))
        await team.aclose()
    assert [v for *_, v in gate.log] == ["ok", "refused", "ok", "refused"]
    assert [c["name"] for c in first.raw_calls] == ["sleep", "move_character"]
    assert first.thinking == "Resting first, then walking."  # the model's words beside its calls are kept
    tool_msgs = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert any("FAILED (refused)" in m["content"] and "one tool call per turn" in m["content"] for m in tool_msgs)
    first_request = server.requests[0]
    assert first_request.get("tool_choice") == "required" and first_request.get("parallel_tool_calls") is False
    assert sorted(t["function"]["name"] for t in first_request["tools"]) == sorted(TOOLS)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_model_service_faults_are_retried_then_reported(framework):
    # Every fault is made by the stub (an error, a broken body, a closed connection), none by a clock: the
    # client's timeout is far beyond any answer the stub gives, even on a loaded machine.
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 2})) as server:
        team = team_for(framework, "openai-compatible:qwen-local", base_url=server.base_url, timeout=60,
                        retries=2, backoff=0.01)
        gate = GateDouble()
        # turn 1: three faults in a row, one of each kind -> attempts exhausted -> infra error, no call
        server.faults.extend(["500", "malformed", "drop"])
        failed = await team.act(make_turn(gate, "agent_1", 1))
        # turn 2: one fault, then success on the retry
        server.faults.extend(["empty"])
        recovered = await team.act(make_turn(gate, "agent_1", 2))
        await team.aclose()
    assert failed.infra_error and "3 time(s)" in failed.infra_error and failed.model_calls == 3
    assert failed.raw_calls == []
    assert recovered.infra_error is None and recovered.model_calls == 2 and recovered.tokens_in > 0
    assert [(t, v) for _, t, _, v in gate.log] == [("sleep", "ok")]  # only turn 2 acted
    assert server.log == ["500", "malformed", "drop", "empty", "ok"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_a_model_answer_that_never_comes_times_out_and_is_retried(framework):
    """The stub never answers (it holds the request until it stops), so the request's timeout decides nothing
    but when the wait ends: every attempt times out whatever the machine's load, and each is retried."""
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 2})) as server:
        team = team_for(framework, "openai-compatible:qwen-local", base_url=server.base_url, timeout=0.3,
                        retries=1, backoff=0.01)
        gate = GateDouble()
        server.faults.extend(["timeout", "timeout"])
        failed = await team.act(make_turn(gate, "agent_1", 1))
        await team.aclose()
    assert failed.infra_error and "model service failed 2 time(s)" in failed.infra_error, failed.infra_error
    assert "0.3s" in failed.infra_error or "imeout" in failed.infra_error or "timed out" in failed.infra_error
    assert failed.model_calls == 2 and failed.raw_calls == [] and gate.log == []
    assert server.log == ["timeout", "timeout"]


async def test_client_errors_are_not_retried():
    from agentworld.plugins.agents.common import ModelServiceError, TurnMeter, call_model
    from agentworld.core.play.models import ModelSpec

    class Unauthorized(Exception):
        status_code = 401

    calls = []

    async def request():
        calls.append(1)
        raise Unauthorized("bad key")

    meter = TurnMeter()
    with pytest.raises(ModelServiceError, match="not retried"):
        await call_model(request, ModelSpec.parse("scripted:oracle", retries=3, backoff=0), meter)
    assert len(calls) == 1 and meter.model_calls == 1


def test_bad_tools_option_is_named():
    with pytest.raises(ValueError, match="tools='grpc'"):
        team_for("openai", tools="grpc")


async def test_openai_paper_prompt_layout():
    """prompt_layout=paper: the observation rides in the system message (fresh each turn), a per-task user
    message states the objective, and the history holds only short nudges, calls and results."""
    import types

    view = types.SimpleNamespace(objective="Bring the wizard a staff.")  # the TeamView's field the layout reads
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 1})) as server:
        mod = importlib.import_module("agentworld.plugins.agents.openai_agent")
        team = mod.make_team(TeamSpec(view=view, model="openai-compatible:qwen-local", seed=0, agent_ids=["agent_1"],
                                      options={"base_url": server.base_url, "prompt_layout": "paper"}))
        gate = GateDouble()
        for rnd in (1, 2, 3):
            await team.act(make_turn(gate, "agent_1", rnd))
        await team.aclose()
    last = server.requests[-1]["messages"]
    assert last[0]["role"] == "system" and "Round 3/50" in last[0]["content"] and "Round 1/50" not in last[0]["content"]
    assert last[1] == {"role": "user", "content": "Task: Bring the wizard a staff."}
    assert not any("Round 1/50" in (m.get("content") or "") for m in last[1:])
    assert [m["content"] for m in last if m["role"] == "user"][1:] == [
        f"Round {r}: it is your turn, AGENT_1. Make exactly one tool call." for r in (1, 2, 3)]
    with pytest.raises(ValueError, match="prompt_layout='poem'"):
        team_for("openai", prompt_layout="poem")


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_no_turn_lost_or_counted_twice_by_the_budget(framework):
    """Every turn's prompt is either still in the history or counted once in the summary, also when a turn
    failed at the model service in between."""
    import re

    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 1})) as server:
        team = team_for(framework, "openai-compatible:qwen-local", base_url=server.base_url, context_budget=2500,
                        retries=1, backoff=0.0)
        gate = GateDouble()
        for rnd in range(1, 13):
            if rnd == 7:
                server.faults.extend(["500", "500"])  # this turn fails after its retry
            await team.act(make_turn(gate, "agent_1", rnd, padding=400))
        await team.aclose()
    last = server.requests[-1]["messages"]
    summary = next(m["content"] for m in last if (m.get("content") or "").startswith("[History summary"))
    folded = int(re.search(r"your (\d+) earliest turns", summary).group(1))
    prompts = [m for m in last if m["role"] == "user" and "Call one tool." in (m.get("content") or "")]
    assert folded + len(prompts) == 12
    assert len(gate.log) == 11  # the failed turn made no call
