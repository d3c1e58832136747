"""Framework overhead per agent-turn: the time each framework itself adds, with the scripted model.

Plays starter tasks with ``--model scripted:oracle`` through ``openai``, ``autogen``, ``langgraph`` and
``camel`` (and the ``oracle`` team with no framework, as the floor). For every turn the team records its
``act`` time, the time inside the model call (the scripted policy, behind the framework's own model
interface) and the time inside the tool call (gate + world + recording: the harness). Framework overhead
= act − model − tool: message building, memory/checkpointing, tool dispatch, the framework's own
machinery. The first turn of each agent includes building its agent objects; it is reported separately.

Usage: ``python benchmarks/bench_frameworks.py [--tasks ID ...] [--repeat N] [--frameworks ...] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentworld.core.play.episode import Episode
from agentworld.core.play.protocol import Team, TeamSpec, Turn, TurnOutcome
from agentworld.core.tasks.task import Task, find_task, load_suite
from agentworld.core.world.datapack import load_world

STAFF = Path(__file__).resolve().parents[1] / "tests" / "data" / "task_01_staff.yaml"  # the 3-agent starter, now a fixture
FRAMEWORKS = ("oracle", "openai", "autogen", "langgraph", "camel")


class Timed(Team):
    """Times each ``act`` of the wrapped team (for the no-framework oracle floor)."""

    def __init__(self, inner: Team):
        self.inner = inner
        self.act_s: list[float] = []

    @property
    def tool_server(self) -> str | None:  # the wrapped team's (--tools mcp: the episode serves its tools)
        return getattr(self.inner, "tool_server", None)

    async def start(self, view: Any) -> None:
        await self.inner.start(view)

    async def act(self, turn: Turn) -> TurnOutcome:
        t0 = time.perf_counter()
        out = await self.inner.act(turn)
        self.act_s.append(time.perf_counter() - t0)
        return out

    async def aclose(self) -> None:
        await self.inner.aclose()


def make_team(framework: str, task: Task, seed: int, view: Any) -> Team:
    """The framework's team built from the episode's view, as the runner builds it (the oracle's plan granted)."""
    from agentworld.core import plugins
    from agentworld.core.play.view import privileged_grants

    model = "" if framework == "oracle" else "scripted:oracle"
    plan, _ = privileged_grants(task, framework, model)
    return plugins.get("framework", framework)(TeamSpec(view=view, model=model, seed=seed,
                                                        agent_ids=view.agent_ids, reference_plan=plan))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


async def measure(framework: str, task: Task, repeat: int) -> dict[str, Any]:
    first, steady, act, model, tool = [], [], [], [], []
    successes, wall = 0, 0.0
    for seed in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            ep = Episode(task, seed=seed, out_dir=Path(tmp), framework=framework, model="scripted:oracle",
                         build_team=lambda view, seed=seed: Timed(make_team(framework, task, seed, view)))
            team = ep.team
            result = await ep.run()
            wall += time.perf_counter() - t0
        successes += int(result.success)
        timings = getattr(team.inner, "timings", None)
        if timings is None:  # no framework: the whole act is policy + tool
            act.extend(team.act_s)
            continue
        seen: set[str] = set()
        for t in timings:
            (steady if t.agent_id in seen else first).append(t.framework_s)
            seen.add(t.agent_id)
            act.append(t.total_s)
            model.append(t.model_s)
            tool.append(t.tool_s)
    ms = 1000.0
    return {"framework": framework, "task": task.id, "agents": len(task.agents), "episodes": repeat,
            "success": f"{successes}/{repeat}", "turns": len(act),
            "act_ms_mean": statistics.fmean(act) * ms if act else 0.0,
            "model_ms_mean": statistics.fmean(model) * ms if model else None,
            "tool_ms_mean": statistics.fmean(tool) * ms if tool else None,
            "overhead_ms_median": statistics.median(steady) * ms if steady else None,
            "overhead_ms_mean": statistics.fmean(steady) * ms if steady else None,
            "overhead_ms_p95": pct(steady, 0.95) * ms if steady else None,
            "first_turn_ms_mean": statistics.fmean(first) * ms if first else None,
            "episode_wall_s": wall / repeat}


def pick_tasks(ids: list[str]) -> list[Task]:
    """The given task ids; by default the original 3- and 10-agent starter tasks (the figures in
    docs/plugins.md), or else the smallest and the largest team of the suite."""
    if ids:
        return [find_task(i) for i in ids]
    try:
        return [find_task(str(STAFF)), find_task("task_08_convoy")]
    except (KeyError, ValueError, FileNotFoundError):
        by_size = sorted(load_suite("main", validate=False), key=lambda t: (len(t.agents), t.id))
        return [by_size[0], by_size[-1]] if len(by_size) > 1 else by_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=[], help="task ids or files (default: tests/data/task_01_staff.yaml and task_08_convoy)")
    ap.add_argument("--frameworks", nargs="*", default=list(FRAMEWORKS))
    ap.add_argument("--repeat", type=int, default=2, help="episodes per framework and task (seeds 0..N-1)")
    ap.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = ap.parse_args()

    t0 = time.perf_counter()
    load_world()
    warm = time.perf_counter() - t0
    rows = []
    try:
        tasks = pick_tasks(args.tasks)
    except KeyError as exc:  # an unknown id: the message lists the known ones
        raise SystemExit(str(exc.args[0])) from None
    for task in tasks:
        for fw in args.frameworks:
            rows.append(asyncio.run(measure(fw, task, args.repeat)))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    def f(v: float | None, digits: int = 2) -> str:
        return "-" if v is None else f"{v:.{digits}f}"

    table = Table(title="Framework overhead per agent-turn (scripted:oracle; times in ms)")
    for col in ("task", "n", "framework", "solved", "turns", "act", "model", "tool",
                "ovh med", "ovh mean", "ovh p95", "1st turn", "episode s"):
        table.add_column(col, justify="right" if col not in ("task", "framework") else "left")
    for r in rows:
        table.add_row(r["task"], str(r["agents"]), r["framework"], r["success"], str(r["turns"]),
                      f(r["act_ms_mean"]), f(r["model_ms_mean"]), f(r["tool_ms_mean"]),
                      f(r["overhead_ms_median"]), f(r["overhead_ms_mean"]), f(r["overhead_ms_p95"]),
                      f(r["first_turn_ms_mean"], 1), f(r["episode_wall_s"]))
    console = Console(width=max(140, Console().width))
    console.print(f"world load {warm:.2f} s (once per process)")
    console.print(table)
    console.print("overhead = act − model − tool, per turn after each agent's first; 'oracle' has no framework "
                  "(its act is policy + tool).")


if __name__ == "__main__":
    main()
