"""Reference plans adapted to a changed task, checked by simulation against the embedded world.

A variant or an augmentation that moves spawns, removes chat or hands the team's work to one agent keeps a
task provable only if the reference plan is adapted with it. The helpers here build those plans. They
execute steps directly against an :class:`EmbeddedWorld` (the tasks layer sits below the episode loop), so
they know where each agent stands, what it wears and whether a step succeeds; the proofs then play the
adapted plan in a real episode.
"""

from __future__ import annotations

import math
from typing import Any

from ..world.tools import CHAT_TOOLS, FREE_TOOLS, TOOLS
from .task import Step, Task

IDLE_TOOLS = ("sleep", "complete", "stop_action")  # steps that only pass the time
Plan = dict[str, list[Step]]


def plan_world(task: Task, seed: int = 0) -> Any:
    """A fresh embedded world with the task's rules and agents, as an episode would start it."""
    from ..world.datapack import load_world
    from ..world.engine import EmbeddedWorld
    from .mobs import world_options as task_world_options

    world = EmbeddedWorld(load_world(), seed=seed, rules=dict(task.world_rules), mechanics=task.mechanics,
                          **task_world_options(task))
    for a in task.agents:
        world.add_player(a.player_spec())
    return world


def execute(world: Any, agent_id: str, step: Step) -> Any:
    """Run one plan step in ``world`` (a ToolResult); an unknown tool is a failed result, not an exception."""
    spec = TOOLS.get(step.tool)
    if spec is None:
        from ..world.api import ToolResult

        return ToolResult.fail("unknown_tool", f"unknown tool {step.tool}")
    return spec.execute(world, agent_id, dict(step.args))


def sleep_step(note: str = "") -> Step:
    return Step(tool="sleep", args={"seconds": 1}, note=note)


def walk_steps(task: Task, start: tuple[int, int], goal: tuple[int, int]) -> list[Step]:
    """``move_character`` calls that walk from ``start`` to ``goal`` (one call covers ``move_range`` tiles;
    repeating the call continues the same route). Empty when already there; None-free: an unreachable
    goal gives one call (which the proof will show failing)."""
    if start == goal:
        return []
    from ..world.models import Rules
    from ..world.pathing import route
    from .task import world_index

    gmap = world_index().loaded.map
    path = route(gmap, start, goal) or [goal]
    move_range = Rules(**{k: v for k, v in task.world_rules.items() if k in Rules.model_fields}).move_range
    calls = max(1, math.ceil(len(path) / move_range))
    return [Step(tool="move_character", args={"x": goal[0], "y": goal[1]}, note="walk back to the task's start")
            for _ in range(calls)]


def with_walk_back(task: Task, original: dict[str, tuple[int, int]]) -> Plan | None:
    """The task's plan with a prelude: every agent first walks from its (new) spawn to ``original[agent]``,
    and agents that arrive sooner wait, so the plan's steps keep their order across agents."""
    if not task.reference_solution:
        return None
    walks = {a.agent_id: walk_steps(task, (a.x, a.y), original.get(a.agent_id, (a.x, a.y))) for a in task.agents}
    longest = max((len(w) for w in walks.values()), default=0)
    plan: Plan = {}
    for a in task.agents:
        pad = [sleep_step("wait for the team") for _ in range(longest - len(walks[a.agent_id]))]
        plan[a.agent_id] = walks[a.agent_id] + pad + list(task.reference_solution.get(a.agent_id, []))
    return plan


def without_chat(task: Task) -> Plan | None:
    """The plan with its chat steps replaced by ``sleep`` (so every other step keeps its round; a sleep, like
    a chat, uses no action)."""
    if not task.reference_solution:
        return None
    return {agent: [sleep_step("was a chat message") if s.tool in CHAT_TOOLS else s for s in steps]
            for agent, steps in task.reference_solution.items()}


def rounds_needed(plan: Plan | None) -> int:
    """Rounds the plan's productive steps take: the latest turn index of a step that is not just waiting,
    over every agent (each step is one turn of its agent, one turn per round)."""
    last = 0
    for steps in (plan or {}).values():
        for i, s in enumerate(steps):
            if s.tool not in IDLE_TOOLS:
                last = max(last, i + 1)
    return last


def action_steps(steps: list[Step]) -> int:
    """The steps that use the action budget (chat and sleep do not)."""
    return sum(1 for s in steps if s.tool not in FREE_TOOLS)
