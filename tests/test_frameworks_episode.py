"""Whole episodes through the four framework plugins: starter tasks solved with ``scripted:oracle``, the
same trajectory as the framework-free oracle team action for action (in process and over MCP), a
user-defined ``--team-factory`` team, and a real local OpenAI-compatible HTTP server that fails now and
then (500, malformed answer, timeout) without the episode losing anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from agentworld.core import plugins
from agentworld.core.play.episode import Episode
from agentworld.core.play.models import load_team_factory
from agentworld.core.play.protocol import Team, TeamSpec, Turn, TurnOutcome
from agentworld.core.play.records import TurnEvent
from agentworld.core.tasks.task import Task, load_task
from agentworld.core.play.trajectory import read_events
from agentworld.core.play.view import ReferencePlan, TeamView
from agentworld.core.play.policies import make_policy

sys.path.insert(0, str(Path(__file__).parent))
from openai_stub_server import OpenAIStubServer  # noqa: E402

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ["openai", "autogen", "langgraph", "camel"]


# suite v1's 3- and 10-agent starter tasks (5- and 8-round plans): small fixtures for the plumbing below (the
# shipped task_08_convoy and the fixture tests/data/task_01_staff.yaml are longer chains; tests/test_episode.py plays every shipped task)
FIXTURES = (ROOT / "tests" / "data" / "small_staff.yaml", ROOT / "tests" / "data" / "small_convoy.yaml")


@pytest.fixture(scope="module")
def tasks() -> dict[int, Task]:
    """A 3-agent and a 10-agent task, by team size."""
    by_size = {len(t.agents): t for t in map(load_task, FIXTURES)}
    assert sorted(by_size) == [3, 10], sorted(by_size)
    return by_size


def team_spec(task: Task, model: str, **options: Any) -> Callable[[TeamView], TeamSpec]:
    """The spec a team is built with from the episode's view, as the runner makes it (the plan for the
    oracle's models only)."""
    plan = ReferencePlan.of(task) if model in ("", "scripted:oracle") else None
    return lambda view: TeamSpec(view=view, model=model, seed=0, agent_ids=view.agent_ids, options=options,
                                 reference_plan=plan)


def built(framework: str, spec: Callable[[TeamView], TeamSpec]) -> Callable[[TeamView], Team]:
    return lambda view: plugins.get("framework", framework)(spec(view))


async def play(task: Task, build: Callable[[TeamView], Team], out: Path, framework: str) -> tuple[Any, list[TurnEvent]]:
    result = await Episode(task, seed=0, out_dir=out, framework=framework, model="scripted:oracle",
                           build_team=build).run()
    events = [e for e in read_events(out / "trajectory.jsonl") if isinstance(e, TurnEvent)]
    return result, events


def actions(events: list[TurnEvent]) -> list[tuple]:
    return [(e.round, e.agent, e.tool, e.arguments, e.ok, e.result) for e in events]


@pytest.fixture(scope="module")
def oracle_runs(tasks, tmp_path_factory) -> dict[int, list[tuple]]:
    import anyio

    runs = {}
    for size, task in tasks.items():
        if size not in (3, 10):
            continue
        out = tmp_path_factory.mktemp(f"oracle{size}")
        result, events = anyio.run(play, task, built("oracle", team_spec(task, "")), out, "oracle")
        assert result.success, f"the oracle must solve {task.id}"
        runs[size] = actions(events)
    return runs


@pytest.mark.parametrize("size", [3, 10])
async def test_frameworks_solve_starter_tasks_like_the_oracle(size, tasks, oracle_runs, tmp_path):
    task = tasks[size]
    for framework in FRAMEWORKS:
        result, events = await play(task, built(framework, team_spec(task, "scripted:oracle")), tmp_path / framework,
                                    framework)
        assert result.success, f"{framework} did not solve {task.id}: {result.message}"
        assert actions(events) == oracle_runs[size], f"{framework} diverged from the oracle on {task.id}"
        assert result.infra_errors == 0 and result.refused_calls == 0
        # the framework's accounting reaches the trajectory
        assert all(e.tokens_in > 0 and e.tokens_out > 0 for e in events)
        assert result.tokens_in == sum(e.tokens_in for e in events)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_tools_over_mcp_give_the_same_trajectory(framework, tasks, oracle_runs, tmp_path):
    task = tasks[3]
    result, events = await play(task, built(framework, team_spec(task, "scripted:oracle", tools="mcp")), tmp_path,
                                framework)
    assert result.success and actions(events) == oracle_runs[3]


async def test_small_budget_is_recorded_in_the_trajectory(tasks, oracle_runs, tmp_path):
    task = tasks[10]
    result, events = await play(task, built("autogen", team_spec(task, "scripted:oracle", context_budget=3000)),
                                tmp_path, "autogen")
    assert result.success and actions(events) == oracle_runs[10]  # trimming never changes what is played
    assert sum(e.context_trimmed for e in events) > 0


async def test_team_factory_langgraph_planner(tasks, oracle_runs, tmp_path, monkeypatch):
    """docs/example_plugin's LangGraph planner team, loaded like --team-factory, plays under the protocol."""
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "example_plugin"))
    factory = load_team_factory("agentworld_nearest.langgraph_planner:make_team")
    task = tasks[3]
    spec = team_spec(task, "scripted:oracle")
    result, events = await play(task, lambda view: factory(spec(view)), tmp_path, "planner")
    assert result.success and actions(events) == oracle_runs[3]
    assert all(e.thinking.startswith("You hold:") for e in events)  # the planner node ran every turn


class CurrentTurn(Team):
    """Wraps a team, exposes the turn being played (for the stub server's policy) and queues faults."""

    def __init__(self, inner: Team, server: OpenAIStubServer, faults: dict[int, list[str]]):
        self.inner, self.server, self.faults = inner, server, faults
        self.turn: Turn | None = None
        self.step = 0

    @property
    def tool_server(self) -> str | None:  # the wrapped team's (--tools mcp: the episode serves its tools)
        return getattr(self.inner, "tool_server", None)

    async def start(self, view: Any) -> None:
        await self.inner.start(view)

    async def act(self, turn: Turn) -> TurnOutcome:
        self.turn = turn
        self.server.faults.extend(self.faults.get(self.step, []))
        self.step += 1
        return await self.inner.act(turn)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("framework", ["openai", "langgraph"])
async def test_real_http_model_server_with_faults(framework, tasks, oracle_runs, tmp_path):
    task = tasks[3]
    policy = make_policy("oracle", 0, task)
    holder: dict[str, CurrentTurn] = {}
    with OpenAIStubServer(lambda body: policy.decide(holder["team"].turn)) as server:
        # The stub makes every fault itself; the request timeout is far beyond any answer it gives, so no
        # outcome here depends on how busy the machine is (a timeout is test_frameworks.py's, with an answer
        # that never comes).
        options = {"base_url": server.base_url, "timeout": 60, "retries": 2, "backoff": 0.01}
        # Recoverable faults (each followed by a good answer within the retries): nothing changes.
        inner = built(framework, team_spec(task, "openai-compatible:qwen-local", **options))
        faults = {0: ["500"], 2: ["malformed"], 4: ["drop"], 6: ["empty"]}
        result, events = await play(task, lambda view: holder.setdefault("team", CurrentTurn(inner(view), server, faults)),
                                    tmp_path / "recovered", framework)
        assert result.success and result.infra_errors == 0
        assert actions(events) == oracle_runs[3]
        assert server.log.count("ok") == len(events) and len(server.log) == len(events) + 4
        retried = [e for e in events if e.step in (0, 2, 4, 6)]
        assert all(e.model_latency_s > 0 for e in retried)

        # An outage longer than the retries: that turn is an infrastructure error, the episode goes on.
        policy = make_policy("oracle", 0, task)
        server.log.clear()
        holder.clear()
        inner = built(framework, team_spec(task, "openai-compatible:qwen-local", **options))
        result, events = await play(task, lambda view: holder.setdefault("team", CurrentTurn(inner(view), server,
                                                                                               {1: ["500"] * 3})),
                                    tmp_path / "outage", framework)
    assert result.infra_errors == 1
    failed = events[1]
    assert failed.tool is None and failed.error == "infra" and "model service failed 3 time(s)" in failed.infra_error
    assert all(e.infra_error is None and e.tool is not None for e in events if e is not failed)
    # nothing lost: every agent plays the oracle's steps in order, the failed agent one turn later
    for agent in task.agent_ids:
        played = [(e.tool, e.arguments) for e in events if e.agent == agent and e.tool]
        planned = [(t, a) for _, ag, t, a, _, _ in oracle_runs[3] if ag == agent]
        assert played[:len(planned)] == planned[:len(played)]
    assert len(events) == sum(1 for e in events)  # every turn recorded
    assert result.end_reason in ("verifier_passed", "round_budget", "no_active_agents")


def test_cli_run_with_a_framework_and_the_scripted_model(tasks, tmp_path):
    task = tasks[3]
    agentworld = Path(sys.executable).with_name("agentworld")
    out = subprocess.run([str(agentworld), "run", "--task", str(task.path), "--framework", "langgraph",
                          "--model", "scripted:oracle", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    results = list(tmp_path.glob("results.jsonl"))
    assert results and '"success": true' in results[0].read_text().replace('"success":true', '"success": true')
