"""The single-agent baseline: one agent with every role's skills and items, at one spawn.

``single_agent_task(task)`` returns the task as one agent plays it, or raises :class:`NotApplicable` with the
reason when one agent cannot play it fairly. The choices:

- **The agent.** agent_1's id, username and spawn; every skill at the team's best level; every agent's
  inventory, and the others' equipped items, in its inventory (agent_1 keeps its own equipment); role names
  joined and role documents joined under a note that it plays alone; ``max_action_steps`` is the team's
  total (the per-agent cap is a per-agent resource: one agent doing n agents' work gets their allowance).
  The round budget is unchanged: the baseline asks what one agent does in the team's time.
- **The checks.** Every check that names an agent (``agent``, ``agents``, ``to``, ``from``) names the one
  agent; ``delivered`` becomes ``item_count`` on it (there is nobody to deliver to; a transfer to oneself
  does not exist). A check that the one agent already meets at the start (a hand-off of items the team
  holds: ``delivered`` of a starting item, ``item_count`` on the agent who was to receive it) is dropped,
  because it asks nothing of one agent; guards (``verify.is_guard``: ``all_alive``, or ``guard: true``) and
  an ``at_location`` that holds at spawn stay. "Already meets" is the verifier's own checks read on the
  agent's starting state, so it counts as the checks do (an equipped stack of arrows by its size).
- **Not applicable** when: the verifier has a custom Python part (no per-agent mapping is known); the
  objective needs agents in two places farther apart than their radii at once; the team's items do not fit
  one inventory; every remaining check already holds at the start (the task is hand-offs only); or the
  team's plan, done by one agent (see below), does not fit the round budget or does not meet the objective.
- **The plan.** The team's reference plan in its execution order (round by round, in agent order) done by
  the one agent: transfers between teammates, waiting and chat are left out; before a step of agent k the
  agent walks to where k stood when k took it (crafting at a station, portals) or near enough for the
  step's own walk (harvest, attack, pick up), and before a fight it wears what k wore. Each step is checked
  against the world as it is built, and the plan is the list of steps that succeeded.
"""

from __future__ import annotations

from typing import Any

from ..world.models import Rules
from ..world.tools import CHAT_TOOLS
from .plans import IDLE_TOOLS, execute, plan_world
from .task import AgentDef, CheckSpec, Step, Task, YamlStack, team_skills, world_index
from .verify import Check, is_guard, lookup, verify

AUTO_WALK = ("harvest_resource", "attack_entity", "pickup_resource")  # the engine walks to the target itself


class NotApplicable(ValueError):
    """A variant that cannot be played fairly on a task; ``reason`` says why (reports show it as n/a)."""

    def __init__(self, task_id: str, variant: str, reason: str):
        self.task_id, self.variant, self.reason = task_id, variant, reason
        super().__init__(f"variant {variant} does not apply to {task_id}: {reason}")


def _rules(task: Task) -> Rules:
    return Rules(**{k: v for k, v in task.world_rules.items() if k in Rules.model_fields})


def _merge(stacks: list[YamlStack]) -> list[YamlStack]:
    totals: dict[str, int] = {}
    for s in stacks:
        totals[s.item] = totals.get(s.item, 0) + s.count
    return [YamlStack(item=k, count=v) for k, v in totals.items()]


def _slots(stacks: list[YamlStack]) -> int:
    items = world_index().items
    return sum(1 if (items[s.item].stackable if s.item in items else True) else s.count for s in stacks)


def solo_agent(task: Task) -> AgentDef:
    first = task.agents[0]
    others_worn = [s for a in task.agents[1:] for s in a.equipment]
    roles = [a.role for a in task.agents if a.role]
    guides = [f"## {a.role or a.username}\n{a.guideline.strip()}" for a in task.agents if a.guideline.strip()]
    note = ("You play this task alone: every role below is yours, and you hold every item the team held. "
            "Hand-offs between these roles are not needed.")
    return AgentDef(
        agent_id=first.agent_id, username=first.username, x=first.x, y=first.y, skills=team_skills(task),
        inventory=_merge([s for a in task.agents for s in a.inventory] + others_worn),
        equipment=list(first.equipment), role=" + ".join(roles),
        guideline="\n\n".join([note, *guides]) if guides else note)


def _mapped(spec: CheckSpec, solo: str) -> CheckSpec | None:
    """The check as the one agent meets it; None for one that asks only for a hand-off of a material the
    receiver uses up (``delivered`` with ``kept: false``): one agent hands nothing over, and what it makes of
    the material is the objective's other checks."""
    data = spec.model_dump(by_alias=True, exclude_none=True)
    if data.get("check") == "delivered" and data.get("kept") is False:
        return None
    if data.get("check") == "delivered":
        data = {"check": "item_count", "name": spec.name, "item": data["item"], "count": data.get("count", 1),
                **({"origin": data["origin"]} if data.get("origin") else {})}
    data.pop("scope", None)
    for key in ("to", "from", "agents", "role"):  # whoever the check named, it is the one agent now
        data.pop(key, None)
    check = lookup(data["check"])
    if isinstance(check, Check) and "agent" in check.params.model_fields:  # all_alive names nobody
        data["agent"] = solo
    if data.get("name") is None:
        data.pop("name", None)
    return CheckSpec.model_validate(data)


def _place(spec: CheckSpec) -> tuple[int, int, int] | None:
    """(x, y, radius) where a check about a place wants an agent to stand (None: not a place check)."""
    check = lookup(spec.check)
    if not isinstance(check, Check) or check.place is None:
        return None
    return check.place(check.params.model_validate(spec.params))


def _presence_conflict(task: Task) -> str | None:
    """Why one agent cannot meet the place checks at once (None: it can)."""
    places = [p for p in (_place(s) for s in (task.verifier.checks if task.verifier else [])) if p]
    for i, (x1, y1, r1) in enumerate(places):
        for x2, y2, r2 in places[i + 1:]:
            if abs(x1 - x2) + abs(y1 - y2) > r1 + r2:
                return f"the objective needs agents at ({x1},{y1}) and ({x2},{y2}) at the same time"
    return None


class _AtStart:
    """A world that only tells each agent's state as an episode starts it, for the verifier to read: the
    engine builds the state from the agent's kit (an equipped stack keeps its size) at the agent's spawn.
    The map is not asked whether the spawn is walkable, so a task made for another world's map (a test
    fixture) is read the same way; the checks about places read the spawn's coordinates."""

    def __init__(self, task: Task, seed: int):
        from ..world.engine import EmbeddedWorld
        from .mobs import world_options as task_world_options

        world = EmbeddedWorld(world_index().loaded, seed=seed, rules=dict(task.world_rules), **task_world_options(task))
        gmap, home = world_index().loaded.map, world_index().landmarks["hearthmoor"]
        self.states = {}
        for a in task.agents:
            spec = a.player_spec()
            if not gmap.walkable(a.x, a.y):
                tile = gmap.nearest_walkable(home.x, home.y)
                assert tile is not None
                spec = spec.model_copy(update={"x": tile[0], "y": tile[1]})
            world.add_player(spec)
            self.states[a.agent_id] = world.player_state(a.agent_id).model_copy(update={"x": a.x, "y": a.y})

    def player_state(self, agent_id: str) -> Any:
        return self.states[agent_id]


def _met_at_start(task: Task, seed: int = 0) -> list[bool]:
    """Which of the one agent's checks already hold before it acts: the verifier's own checks, read on the
    agents' starting states (so each check counts as it does at the end: an equipped stack of arrows by its
    size, an origin by the kit's provenance)."""
    return [cp.achieved for cp in verify(task, _AtStart(task, seed), []).checkpoints]  # type: ignore[arg-type]


def single_agent_task(task: Task, seed: int = 0) -> Task:
    """The task as one agent plays it (with its adapted plan), or NotApplicable with the reason."""
    def na(reason: str) -> NotApplicable:
        return NotApplicable(task.id, "single_agent", reason)

    if task.verifier is None or not task.verifier.checks:
        raise na("the task has no verifier checks to map to one agent")
    if task.verifier.python:
        raise na(f"its custom verifier {task.verifier.python!r} has no known mapping to one agent")
    conflict = _presence_conflict(task)
    if conflict:
        raise na(conflict)
    if task.mechanics and task.mechanics.joint_actions:
        j = task.mechanics.joint_actions[0]
        raise na(f"its {j.kind} ({j.id or j.mob or j.portal or j.item}) takes {j.k} players in the same round")
    solo = solo_agent(task)
    limit = _rules(task).inventory_slots
    if _slots(solo.inventory) > limit:
        raise na(f"the team's items need {_slots(solo.inventory)} inventory slots; one agent has {limit}")
    checks = [m for m in (_mapped(c, solo.agent_id) for c in task.verifier.checks) if m is not None]
    draft = task.model_copy(deep=True, update={
        "agents": [solo], "verifier": task.verifier.model_copy(update={"checks": checks}),
        "max_action_steps": task.max_action_steps * len(task.agents), "reference_solution": None})
    met = _met_at_start(draft, seed)
    kept = [c for c, m in zip(checks, met) if not m or is_guard(c) or c.check == "at_location"]
    if not any(not m and not is_guard(c) for c, m in zip(checks, met)):
        raise na("one agent holding the team's items meets every check at the start: the objective is "
                 "hand-offs between teammates, which one agent has no need of")
    played = draft.model_copy(update={"verifier": draft.verifier.model_copy(update={"checks": kept})})
    if task.reference_solution and _on_default_world(task):
        steps, ok, why = serialize_plan(task, played, seed)
        if not ok:
            raise na(why)
        played = played.model_copy(update={"reference_solution": {solo.agent_id: steps}})
    return played


def _on_default_world(task: Task) -> bool:
    """Plans are adapted on the shipped world; a task made for another world (test fixtures) keeps no plan."""
    gmap = world_index().loaded.map
    return all(gmap.in_bounds(a.x, a.y) and gmap.walkable(a.x, a.y) for a in task.agents)


# -- the team's plan, done by one agent ------------------------------------------------------------------
def _same_area(a: Any, b: Any) -> bool:
    gmap = world_index().loaded.map
    return gmap.component(a.x, a.y) == gmap.component(b.x, b.y)


def serialize_plan(team: Task, solo_task: Task, seed: int = 0) -> tuple[list[Step], bool, str]:
    """(steps, passes, why not): the team's plan in execution order, done by the one agent of ``solo_task``."""
    assert team.reference_solution is not None
    tw, sw = plan_world(team, seed), plan_world(solo_task, seed)
    me = solo_task.agents[0].agent_id
    usernames = {a.username for a in team.agents}
    interact = _rules(team).interact_range
    plans = {a: list(team.reference_solution.get(a, [])) for a in team.agent_ids}
    out: list[Step] = []
    history: list[Any] = []
    passed_at: list[int] = []  # the turn after which the objective first holds

    def run(step: Step) -> bool:
        res = execute(sw, me, step)
        if res.ok:
            out.append(step)
            history.append((me, res.effects))
            tick = sw.end_round(len(out))
            history.append(("", tick.effects))
            if not passed_at and verify(solo_task, sw, history).success:
                passed_at.append(len(out))
        return res.ok

    def walk_to(x: int, y: int) -> None:
        for _ in range(8):  # a move covers move_range tiles; a few calls cross any area
            st = sw.player_state(me)
            if (st.x, st.y) == (x, y) or not run(Step(tool="move_character", args={"x": x, "y": y})):
                return

    def wear(equipment: dict[str, str]) -> None:
        st = sw.player_state(me)
        for slot, item in sorted(equipment.items()):
            if st.equipment.get(slot) != item and st.count(item):
                run(Step(tool="equip_item", args={"itemKey": item}))

    for i in range(max((len(p) for p in plans.values()), default=0)):
        for agent in team.agent_ids:
            if i >= len(plans[agent]):
                continue
            step = plans[agent][i]
            before = tw.player_state(agent)
            res = execute(tw, agent, step)
            skip = (step.tool in IDLE_TOOLS or step.tool in CHAT_TOOLS or step.tool == "move_character"
                    or (step.tool == "transfer_items" and step.args.get("targetPlayer") in usernames))
            if skip or not res.ok:
                continue
            if step.tool == "enter_portal" and _same_area(sw.player_state(me), tw.player_state(agent)):
                continue  # the one agent already went through (another agent's trip to the same place)
            here = sw.player_state(me)
            far = abs(here.x - before.x) + abs(here.y - before.y)
            if step.tool not in AUTO_WALK or far > interact // 2:
                walk_to(before.x, before.y)
            if step.tool == "attack_entity":
                wear(before.equipment)
            if not run(step) and step.tool in AUTO_WALK:
                walk_to(before.x, before.y)
                run(step)
        tw.end_round(i + 1)
    for spec in solo_task.verifier.checks if solo_task.verifier else []:
        place = _place(spec)  # one place at most (conflicts are n/a): end there
        if place is not None:
            goal = world_index().loaded.map.nearest_walkable(place[0], place[1], 6) or place[:2]
            walk_to(*goal)
    if not passed_at:
        result = verify(solo_task, sw, history)
        return out, False, f"the team's plan done by one agent does not meet the objective ({result.message})"
    if passed_at[0] > solo_task.rounds:
        return out, False, (f"the team's plan done by one agent takes {passed_at[0]} turns; the round budget is "
                            f"{solo_task.rounds}")
    return out[:passed_at[0]], True, ""
