"""Protocol variants (the paper's baselines and ablations). Each changes exactly one thing.

A variant is named on the command line as ``NAME`` or ``NAME:PARAM`` (``short_horizon:15``). Some variants
rewrite the task before the episode starts (who plays, with which skills, items, spawns, documents, round
budget); the others change what the episode shows or allows at run time (chat tools, chat delivery, the
shared plan, teammates' HP).

Choices where the paper is not explicit:

- ``single_agent``: agent_1 alone, at agent_1's spawn, with every skill at the team's best level and every
  agent's items (others' equipped items go to its inventory); role documents are joined. Verifier checks
  that name an agent are re-aimed at agent_1, and ``delivered`` becomes ``item_count`` (there is nobody to
  deliver to). The reference solution is dropped (it was written for the team).
- ``no_roles``: asymmetry removed. Every agent gets the team's best level of every skill; all items
  (equipped ones included) are pooled and dealt out evenly, stack by stack, in agent order (a remainder
  goes to the next agents in turn, so single tools spread over the team); role names and role guideline
  documents are removed (the shared relevant_game_context stays). The reference solution is dropped.
- ``oracle_communication``: agent_1 (the first agent) is the coordinator and receives every chat message,
  whatever its scope and the chat radius. The others' chat is unchanged.
- ``random_spawn``: each agent spawns on a seeded random walkable tile within 25 tiles (each axis) of the
  team's original spawn centroid, in the same connected area as its own original spawn.
- ``short_horizon``: the round budget is set to PARAM (default 10).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

from .task import AgentDef, CheckSpec, Task, YamlStack, did_you_mean, team_skills, world_index

RANDOM_SPAWN_RADIUS = 25


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    remove_chat: bool = False  # chat tools are not offered; calling them is an unknown tool
    oracle_communication: bool = False  # the coordinator (agent_1) receives every chat message
    show_shared_plan: bool = False  # task.shared_plan goes into every agent's system prompt
    party_status: bool = False  # observations list teammates' HP
    transform: Callable[[Task, int, str | None], Task] | None = None
    param: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}:{self.param}" if self.param else self.name


# -- task transforms ----------------------------------------------------------------------------------
def _copy(task: Task, **update: Any) -> Task:
    return task.model_copy(deep=True, update=update)


def _merge_stacks(stacks: list[YamlStack]) -> list[YamlStack]:
    totals: dict[str, int] = {}
    for s in stacks:
        totals[s.item] = totals.get(s.item, 0) + s.count
    return [YamlStack(item=k, count=v) for k, v in totals.items()]


def _retarget_checks(task: Task, agent_id: str) -> list[CheckSpec]:
    assert task.verifier is not None
    out = []
    for spec in task.verifier.checks:
        data = spec.model_dump()
        if data.get("check") == "delivered":
            data = {"check": "item_count", "name": data.get("name"), "item": data["item"],
                    "count": data.get("count", 1), "agent": agent_id}
        for key in ("agent", "to", "from"):
            if data.get(key):
                data[key] = agent_id
        if data.get("agents"):
            data["agents"] = [agent_id]
        out.append(CheckSpec.model_validate(data))
    return out


def _single_agent(task: Task, seed: int, param: str | None) -> Task:
    first = task.agents[0]
    others_equipped = [s for a in task.agents[1:] for s in a.equipment]
    roles = [a.role for a in task.agents if a.role]
    guides = [f"## {a.role or a.username}\n{a.guideline.strip()}" for a in task.agents if a.guideline.strip()]
    solo = AgentDef(
        agent_id=first.agent_id, username=first.username, x=first.x, y=first.y, skills=team_skills(task),
        inventory=_merge_stacks([s for a in task.agents for s in a.inventory] + others_equipped),
        equipment=list(first.equipment), role=" + ".join(roles), guideline="\n\n".join(guides))
    verifier = task.verifier.model_copy(update={"checks": _retarget_checks(task, first.agent_id)}) if task.verifier else None
    return _copy(task, agents=[solo], verifier=verifier, reference_solution=None)


def _no_roles(task: Task, seed: int, param: str | None) -> Task:
    skills = team_skills(task)
    n = len(task.agents)
    pooled = _merge_stacks([s for a in task.agents for s in a.inventory + a.equipment])
    shares: list[list[YamlStack]] = [[] for _ in range(n)]
    offset = 0
    for stack in pooled:
        q, r = divmod(stack.count, n)
        for i in range(n):
            k = (i - offset) % n
            c = q + (1 if k < r else 0)
            if c:
                shares[i].append(YamlStack(item=stack.item, count=c))
        offset = (offset + r) % n
    agents = [a.model_copy(update={"skills": dict(skills), "inventory": shares[i], "equipment": [], "role": "",
                                   "guideline": ""}) for i, a in enumerate(task.agents)]
    return _copy(task, agents=agents, reference_solution=None)


def _short_horizon(task: Task, seed: int, param: str | None) -> Task:
    try:
        rounds = int(param) if param else 10
    except ValueError:
        raise ValueError(f"short_horizon takes a round count, e.g. short_horizon:10 (got {param!r})") from None
    if rounds < 1:
        raise ValueError(f"short_horizon needs at least 1 round (got {rounds})")
    return _copy(task, rounds=rounds)


def _no_documentation(task: Task, seed: int, param: str | None) -> Task:
    agents = [a.model_copy(update={"guideline": ""}) for a in task.agents]
    return _copy(task, agents=agents, relevant_game_context="")


def _random_spawn(task: Task, seed: int, param: str | None) -> Task:
    gmap = world_index().loaded.map
    rng = random.Random(f"random_spawn:{task.id}:{seed}")
    cx = round(sum(a.x for a in task.agents) / len(task.agents))
    cy = round(sum(a.y for a in task.agents) / len(task.agents))
    r = RANDOM_SPAWN_RADIUS
    agents = []
    for a in task.agents:
        candidates = [(x, y) for y in range(max(0, cy - r), min(gmap.height, cy + r + 1))
                      for x in range(max(0, cx - r), min(gmap.width, cx + r + 1))
                      if gmap.walkable(x, y) and gmap.connected((x, y), (a.x, a.y))]
        x, y = rng.choice(candidates) if candidates else (a.x, a.y)
        agents.append(a.model_copy(update={"x": x, "y": y}))
    return _copy(task, agents=agents)


def _needs_shared_plan(task: Task, seed: int, param: str | None) -> Task:
    if not (task.shared_plan or "").strip():
        raise ValueError(f"task {task.id} has no shared_plan; the shared-plan variants need one in the task file")
    return task


VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("vanilla", "the task as written"),
    Variant("no_communication", "chat tools removed", remove_chat=True),
    Variant("oracle_communication", "agent_1 (coordinator) receives every chat message", oracle_communication=True),
    Variant("single_agent", "one agent holds every role's skills and items", transform=_single_agent),
    Variant("shared_plan", "the task's shared plan is shown to every agent", show_shared_plan=True,
            transform=_needs_shared_plan),
    Variant("shared_plan_no_communication", "shared plan shown, chat tools removed", remove_chat=True,
            show_shared_plan=True, transform=_needs_shared_plan),
    Variant("no_roles", "skills and items pooled and split evenly; role documents removed", transform=_no_roles),
    Variant("short_horizon", "round budget overridden (default 10)", transform=_short_horizon),
    Variant("random_spawn", "seeded random walkable spawns near the original region", transform=_random_spawn),
    Variant("no_documentation", "guideline documents and relevant_game_context removed", transform=_no_documentation),
    Variant("party_status", "teammates' HP shown in observations", party_status=True),
]}


def get_variant(spec: str | Variant) -> Variant:
    """``"name"`` or ``"name:param"`` -> Variant."""
    if isinstance(spec, Variant):
        return spec
    name, _, param = spec.partition(":")
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; {did_you_mean(name, VARIANTS, 'variant')}")
    base = VARIANTS[name]
    if param and name != "short_horizon":
        raise ValueError(f"variant {name!r} takes no parameter (got {spec!r})")
    return Variant(**{**base.__dict__, "param": param or None})


def apply_variant(task: Task, variant: str | Variant, seed: int = 0) -> Task:
    v = get_variant(variant)
    return v.transform(task, seed, v.param) if v.transform else task
