"""A team sees only what an agent may see (docs/protocol.md, "What a team is given").

A hostile team factory, run through the real runner, walks everything it is handed: the TeamSpec, the view
``Team.start`` receives and every Turn (its port included), recursively through instance dicts, slots,
dataclass and pydantic fields, mappings, sequences, bound methods' ``__self__`` and functions' closure cells
and defaults (not module globals: from there any in-process code can import the harness; the process
boundary of ``--tools mcp`` and external seats is the hard one). It must find no world, task, episode,
turn gate, verifier or checkpoint, no reference-solution step, and no other agent's state. The oracle
baseline, and only it, finds the reference plan (its documented grant): the walker's positive control.
"""

from __future__ import annotations

import dataclasses
import json
import types
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterator

import pytest
from pydantic import BaseModel

from agentworld.core import plugins
from agentworld.core.hookspecs import hookimpl
from agentworld.core.play.episode import Episode, GateRecord, TurnGate
from agentworld.core.play.policies import IdlePolicy, PolicyTeam
from agentworld.core.play.protocol import Team, Turn, TurnOutcome
from agentworld.core.play.view import ReferencePlan
from agentworld.core.runs.runner import LocalExecutor, Runner
from agentworld.core.runs.run_spec import build_spec
from agentworld.core.tasks.plans import rounds_needed
from agentworld.core.tasks.task import AgentDef, CheckSpec, Step, Task, VerifierSpec, find_task
from agentworld.core.tasks.verify import Checkpoint, VerifyContext, VerifyResult
from agentworld.core.world.api import PlayerState, World
from agentworld.core.world.engine_state import Player
from agentworld.core.world.observation import Observation

FORBIDDEN: tuple[type, ...] = (World, Task, AgentDef, Step, VerifierSpec, CheckSpec, Checkpoint, VerifyContext,
                               VerifyResult, Episode, TurnGate, GateRecord, PlayerState, Player, ReferencePlan)
ATOMS = (str, bytes, int, float, bool, complex, type(None), type, types.ModuleType, types.CodeType)
pytestmark = pytest.mark.anyio
TASK = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path
VARIANT = f"short_horizon:{rounds_needed(find_task(TASK).reference_solution)}"  # a horizon the plan fits in


def reachable(root: Any, name: str, limit: int = 100_000, strict: bool = True) -> Iterator[tuple[str, Any]]:
    """Every object reachable from ``root`` the way a curious team would follow references (``strict``: more
    than ``limit`` objects is a failure, else the walk just stops there)."""
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [(name, root)]
    while stack:
        path, obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if len(seen) >= limit:
            assert not strict, f"walked more than {limit} objects from {name}: something big is reachable"
            return
        yield path, obj
        if isinstance(obj, ATOMS):
            continue
        children: list[tuple[str, Any]] = []
        if isinstance(obj, Mapping):
            children += [(f"{path}[{k!r}]", v) for k, v in list(obj.items())]
            children += [(f"{path}.keys()", k) for k in list(obj.keys())]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            children += [(f"{path}[{i}]", v) for i, v in enumerate(list(obj))]
        if isinstance(obj, BaseModel):
            children += [(f"{path}.{k}", getattr(obj, k, None)) for k in type(obj).model_fields]
            children += [(f"{path}.<private>", obj.__pydantic_private__), (f"{path}.<extra>", obj.__pydantic_extra__)]
        if dataclasses.is_dataclass(obj):
            children += [(f"{path}.{f.name}", getattr(obj, f.name, None)) for f in dataclasses.fields(obj)]
        if hasattr(obj, "__dict__") and not isinstance(obj, types.FunctionType):
            children += [(f"{path}.{k}", v) for k, v in vars(obj).items()]
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()) if isinstance(getattr(cls, "__slots__", ()), tuple) else ():
                if hasattr(obj, slot):
                    children.append((f"{path}.{slot}", getattr(obj, slot)))
        if isinstance(obj, types.MethodType):
            children += [(f"{path}.__self__", obj.__self__), (f"{path}.__func__", obj.__func__)]
        if isinstance(obj, types.FunctionType):
            cells = [c.cell_contents for c in (obj.__closure__ or ()) if _filled(c)]
            children += [(f"{path}.<closure>", c) for c in cells]
            children += [(f"{path}.__defaults__", obj.__defaults__), (f"{path}.__kwdefaults__", obj.__kwdefaults__)]
        if isinstance(obj, weakref.ref):
            children.append((f"{path}()", obj()))
        if isinstance(obj, (property, staticmethod, classmethod)):
            children.append((f"{path}.__func__", getattr(obj, "__func__", None)))
        stack.extend(children)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


def leaks(root: Any, name: str, agent_ids: set[str] | None = None, allowed: tuple[type, ...] = (),
          strict: bool = True) -> list[str]:
    """What ``root`` leads to that a team must not see; ``agent_ids``: the agents whose own state is fine."""
    found = []
    for path, obj in reachable(root, name, limit=100_000 if strict else 20_000, strict=strict):
        if isinstance(obj, FORBIDDEN) and not isinstance(obj, allowed):
            found.append(f"{path}: {type(obj).__name__}")
        elif isinstance(obj, Observation) and agent_ids is not None and obj.agent_id not in agent_ids:
            found.append(f"{path}: another agent's observation ({obj.agent_id})")
    return found


# ------------------------------------------------------------------------------------------------ the team
FINDINGS: dict[str, list[str]] = {}
GRANTED: dict[str, list[str]] = {}


class HostileTeam(Team):
    """Plays the wrapped framework's team, after walking everything it is handed."""

    def __init__(self, spec: Any, inner: Team, key: str):
        self.inner, self.key = inner, key
        self.allowed = (ReferencePlan,) if spec.reference_plan is not None else ()
        GRANTED[key] = [type(o).__name__ for _, o in reachable(spec, "spec") if isinstance(o, ReferencePlan)]
        self.look(spec, "spec", set(spec.agent_ids))

    def look(self, root: Any, name: str, own: set[str]) -> None:
        FINDINGS.setdefault(self.key, []).extend(leaks(root, name, own, self.allowed))

    @property
    def tool_server(self) -> str | None:  # type: ignore[override]
        return self.inner.tool_server

    async def start(self, view: Any) -> None:
        assert not hasattr(view, "world") and not hasattr(view, "task") and not hasattr(view, "gate")
        self.look(view, "view", set(view.agent_ids))
        GRANTED.setdefault(self.key + ":mcp", []).extend(a.agent_id for a in view.agents if a.mcp is not None)
        await self.inner.start(view)

    async def act(self, turn: Turn) -> TurnOutcome:
        assert [n for n in dir(turn.port) if not n.startswith("_")] == ["agent_id", "call"]
        self.look(turn, f"turn[{turn.round},{turn.agent_id}]", {turn.agent_id})
        return await self.inner.act(turn)

    async def aclose(self) -> None:
        await self.inner.aclose()


def hostile_team(spec: Any) -> Team:
    """The ``hostile`` framework: the framework named in the options, walked."""
    inner = plugins.get("framework", spec.options["inner"])(spec)
    return HostileTeam(spec, inner, spec.options["key"])


@pytest.fixture
def hostile_framework():
    """``--framework hostile``, registered as a third-party plugin would be."""
    plugin = types.ModuleType("hostile_team_plugin")

    @hookimpl
    def register_frameworks(register):
        register("hostile", hostile_team, description="walks what it is given")

    plugin.register_frameworks = register_frameworks
    plugins.register_plugin(plugin, name="hostile-team-plugin")
    yield
    plugins.unregister_plugin("hostile-team-plugin")


async def run_hostile(tmp_path: Path, key: str, inner: str, model: str, tools: str = "inproc") -> dict[str, Any]:
    spec = build_spec({"tasks": [TASK], "frameworks": ["hostile"], "models": [model], "variants": [VARIANT],
                       "turn_timeout": 30, "options": {"inner": inner, "key": key, "tools": tools}})
    await Runner(spec, tmp_path / key, executor=LocalExecutor()).run()
    results = [json.loads(line) for line in (tmp_path / key / "results.jsonl").read_text().splitlines()]
    assert len(results) == 1, results
    return results[0]


PATHS = [("random", "random", "scripted:random", "inproc"), ("openai-inproc", "openai", "scripted:random", "inproc"),
         ("langgraph-mcp", "langgraph", "scripted:random", "mcp"), ("openai-oracle", "openai", "scripted:oracle", "inproc")]


@pytest.mark.parametrize("key,inner,model,tools", PATHS, ids=[p[0] for p in PATHS])
async def test_a_hostile_team_finds_nothing_it_may_not_see(tmp_path, hostile_framework, key, inner, model, tools):
    FINDINGS.pop(key, None)
    result = await run_hostile(tmp_path, key, inner, model, tools)
    assert result["end_reason"] != "error" and result["harness_errors"] == 0 and result["infra_errors"] == 0, result
    assert result["actions"] > 0
    assert FINDINGS[key] == [], "\n".join(FINDINGS[key][:20])
    start = json.loads(next((tmp_path / key).rglob("trajectory.jsonl")).read_text().splitlines()[0])
    if key == "openai-oracle":  # the one privileged baseline: handed the plan, and recorded as such
        assert GRANTED[key] == ["ReferencePlan"] and start["grants"] == ["reference_plan"]
        assert result["success"]
    else:
        assert GRANTED[key] == [] and start["grants"] == []
    # over MCP the view, and only it, carries the team's seats (URL and token)
    assert GRANTED[key + ":mcp"] == (["agent_1", "agent_2", "agent_3"] if tools == "mcp" else [])


def test_the_walker_finds_what_the_old_contract_handed_over():
    """The walker is not blind: the old hand-over (the episode at start, the task in the spec, a port whose
    call closed over the gate) is found, and so is the plan in the oracle's spec."""
    task = find_task(TASK)
    ep = Episode(task, PolicyTeam(IdlePolicy()))
    try:
        old_start = {f.split(": ")[1] for f in leaks(ep, "episode", strict=False)}  # start(episode), as it was
        assert {"Episode", "TurnGate", "EmbeddedWorld", "Player"} <= old_start, old_start
        old_spec = {f.split(": ")[1] for f in leaks(types.SimpleNamespace(task=task), "spec")}  # TeamSpec.task
        assert {"Task", "AgentDef", "Step", "VerifierSpec"} <= old_spec, old_spec
        gate = ep.gate

        async def call(tool: str, arguments: Any = None) -> Any:  # the port as it was: a closure over the gate
            return await gate.call("agent_1", tool, arguments)

        # the old port reaches the whole world through the gate (over 100,000 objects once earlier tests in the
        # same process have played the mechanics): the walk may stop at its limit, as long as it found the gate
        old_port = types.SimpleNamespace(agent_id="agent_1", call=call)
        assert any("TurnGate" in f for f in leaks(old_port, "port", strict=False))
        assert leaks(ep.gate.port("agent_1"), "port") == []  # the port as it is
        assert leaks(ep.view(), "view") == []
        assert any("ReferencePlan" in f for f in leaks(ReferencePlan.of(task), "plan"))
    finally:
        ep.world.close()


async def test_a_team_that_returns_none_from_act_loses_nothing(tmp_path):
    """``act`` returning None is "nothing to report": the call it made is the turn's action, and a turn with
    no call is a no-call turn (docs/protocol.md); anything else that is not a TurnOutcome is a harness error."""

    class Sloppy(Team):
        async def act(self, turn: Turn) -> Any:
            if turn.agent_id == "agent_1":
                await turn.port.call("sleep", {"seconds": 1})
                return None
            if turn.agent_id == "agent_2":
                return None
            return "done"  # not a TurnOutcome

    task = find_task(TASK).model_copy(update={"rounds": 2})
    result = await Episode(task, Sloppy(), out_dir=tmp_path).run()
    events = [json.loads(line) for line in (tmp_path / "trajectory.jsonl").read_text().splitlines()]
    turns = {(e["round"], e["agent"]): e for e in events if e["type"] == "turn"}
    assert turns[(1, "agent_1")]["tool"] == "sleep" and turns[(1, "agent_1")]["ok"]
    assert turns[(1, "agent_2")]["error"] == "no_call"
    assert turns[(1, "agent_3")]["error"] == "harness_error" and "not a TurnOutcome" in turns[(1, "agent_3")]["harness_error"]
    assert (result.waits, result.no_calls, result.harness_errors) == (2, 2, 2)
    assert result.actions == 0  # sleeps are waits, not actions
    assert result.end_reason == "round_budget"


async def test_refused_calls_with_unstorable_arguments_are_sanitised(tmp_path):
    """A refused call (out of turn, or a second call) whose arguments hold a lone surrogate, a huge string or
    deep nesting is stored sanitised, in ``refused`` and in ``raw_calls``; the episode goes on."""
    deep: Any = "bottom"
    for _ in range(300):
        deep = [deep]
    bad = {"message": "hi \ud800", "blob": "x" * 50_000, "deep": deep}

    class Rude(Team):
        async def act(self, turn: Turn) -> TurnOutcome:
            await turn.port.call("sleep", {"seconds": 1})
            await turn.port.call("chat\udfff", bad)  # a second call: refused
            await turn.port.call("chat", json.dumps({"message": "x" * 50_000}))  # refused, JSON text
            return TurnOutcome()

    task = find_task(TASK).model_copy(update={"rounds": 1})
    result = await Episode(task, Rude(), out_dir=tmp_path).run()
    raw = (tmp_path / "trajectory.jsonl").read_bytes()
    raw.decode("utf-8")  # written as valid UTF-8
    events = [json.loads(line) for line in raw.splitlines()]
    turn = next(e for e in events if e["type"] == "turn")
    assert result.refused_calls == 2 * len(task.agents) and result.waits == len(task.agents)
    refused = turn["refused"][0]
    assert refused["tool"] == "chat\ufffd" and refused["arguments"]["message"] == "hi \ufffd"
    assert len(refused["arguments"]["blob"]) < 4_100 and "cut" in refused["arguments"]["blob"]
    assert len(json.dumps(refused["arguments"]["deep"])) < 200
    assert len(turn["refused"][1]["arguments"]["message"]) < 4_100
    assert [c["name"] for c in turn["raw_calls"]] == ["sleep", "chat\ufffd", "chat"]
    assert turn["raw_calls"][1]["arguments"] == refused["arguments"]
