"""The augmented suite's transformations: deterministic rewrites of a main task that make it harder.

Each transformation takes the task (parsed) and its YAML mapping and returns a new YAML mapping, or None
where it does not apply. Working on the mapping keeps every field of the task file, including ones this
module does not know about; the result is parsed and validated like any task file. Each one adapts the
reference plan with it, so the variant can be proven exactly like a main task. A *recipe* chains several.

- ``split_role`` (team size, starting items): one agent's needed item (a tool or an input its plan uses)
  moves to a new teammate, a porter who spawns 15 to 30 tiles away and must bring it. The new agent acts
  first in each round; every original agent's plan waits one round for the delivery.
- ``far_spawn`` (spawns): every agent spawns 20 to 35 tiles farther from the team's centre, in the same
  connected area, and the plan first walks each agent back to where it used to start. The round budget
  stays, so the team has less slack, starts farther apart (local chat may not reach) and sees other things.
- ``extra_leg`` (objective): the agent the objective names (the holder of the result) must also end at a
  landmark 30 to 150 tiles from where its work ends; the plan walks it there.
- ``lean_start`` (starting items): food and potions the plan does not use are taken away: no margin for a
  bad fight or a wasted trip.

Which item to move in ``split_role`` is found by trying: the generator (``core/runs/augment.py``) proves
every candidate and keeps the first that passes every proof, so a moved item that the plan did not need
(which would leave the porter redundant) is never shipped.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .plans import execute, plan_world, walk_steps
from .task import Task, parse_task, world_index

Raw = dict[str, Any]


@dataclass(frozen=True)
class Transformation:
    key: str
    changes: tuple[str, ...]  # which of: objective, spawns, starting items, team size
    candidates: Callable[[Task, Raw], Iterator[Raw]]  # every way to apply it, in a fixed order (may be none)


# -- helpers ------------------------------------------------------------------------------------------
def _agent_keys(raw: Raw) -> list[str]:
    return [k for k in raw if isinstance(k, str) and k.startswith("agent_")]


def reparse(raw: Raw, name: str = "augmented") -> Task:
    return parse_task(raw, name, default_id=str(raw.get("id") or name))


def _step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def _steps(raw: Raw, agent: str) -> list[dict[str, Any]]:
    plan = raw.setdefault("reference_solution", {}) or {}
    raw["reference_solution"] = plan
    return plan.setdefault(agent, [])


def _walkable_ring(center: tuple[int, int], lo: int, hi: int, same_as: tuple[int, int],
                   toward: tuple[float, float] | None = None) -> tuple[int, int] | None:
    """A walkable tile lo..hi tiles (Manhattan) from ``center`` in ``same_as``'s connected area; the one most
    in the direction ``toward`` (a unit vector), else the first in a fixed scan order."""
    gmap = world_index().loaded.map
    cx, cy = center
    best, best_score = None, None
    for d in range(lo, hi + 1):
        for dx in range(-d, d + 1):
            for dy in {d - abs(dx), -(d - abs(dx))}:
                x, y = cx + dx, cy + dy
                if not (gmap.in_bounds(x, y) and gmap.walkable(x, y) and gmap.connected((x, y), same_as)):
                    continue
                score = (dx * toward[0] + dy * toward[1]) / d if toward else 0.0
                key = (-score, d, x, y)
                if best_score is None or key < best_score:
                    best, best_score = (x, y), key
        if best is not None and toward is None:
            return best
    return best


def final_positions(task: Task, seed: int = 0) -> dict[str, tuple[int, int]]:
    """Where each agent stands once the reference plan has run (round-robin, as an episode plays it)."""
    world = plan_world(task, seed)
    plan = task.reference_solution or {}
    for i in range(max((len(s) for s in plan.values()), default=0)):
        for a in task.agent_ids:
            if i < len(plan.get(a, [])):
                execute(world, a, plan[a][i])
        world.end_round(i + 1)
    return {a: (world.player_state(a).x, world.player_state(a).y) for a in task.agent_ids}


def _everyone_somewhere(task: Task) -> bool:
    """Whether a check wants every agent at a place (an added agent would have to be there too)."""
    return any(spec.check == "at_location" and not spec.params.get("agent") and not spec.params.get("agents")
               for spec in (task.verifier.checks if task.verifier else []))


def _placed_agents(task: Task) -> set[str]:
    """Agents a place check pins (``everyone`` pins all)."""
    out: set[str] = set()
    for spec in task.verifier.checks if task.verifier else []:
        if spec.check == "at_location":
            refs = spec.params.get("agents") or ([spec.params["agent"]] if spec.params.get("agent") else task.agent_ids)
            out |= {task.resolve_agent(r) or r for r in refs}
    return out


def _named_agent(task: Task) -> str:
    """The agent the objective names first (who must hold, wear, craft or receive), else the first agent."""
    for spec in task.verifier.checks if task.verifier else []:
        if spec.check == "at_location":
            continue
        p = spec.params
        ref = p.get("agent") or p.get("to") or (p.get("agents") or [None])[0]
        if ref and task.resolve_agent(ref):
            return task.resolve_agent(ref)  # type: ignore[return-value]
    return task.agents[0].agent_id


def _add_to_plan_text(raw: Raw, sentence: str, first: bool = False) -> None:
    """Keep the task's shared plan (shown by the shared-plan variants) true to the changed task."""
    plan = str(raw.get("shared_plan") or "").strip()
    if plan:
        raw["shared_plan"] = f"{sentence} {plan}" if first else f"{plan} {sentence}"


# -- split_role -----------------------------------------------------------------------------------------
def _split_role(task: Task, raw: Raw) -> Iterator[Raw]:
    if _everyone_somewhere(task):
        return  # the porter would have to be there too
    items = world_index().items
    keys = _agent_keys(raw)
    taken = {raw[k]["username"] for k in keys}
    new_key = next(f"agent_{i}" for i in [0, *range(len(keys) + 1, len(keys) + 50)] if f"agent_{i}" not in raw)
    for a in task.agents:
        block = raw[a.agent_id]
        for field in ("inventory_items", "equipped_items"):
            for i, stack in enumerate(block.get(field) or []):
                item = items.get(stack["item"])
                if item is None or item.heal > 0 or item.kind in ("food", "potion"):
                    continue
                spawn = _walkable_ring((a.x, a.y), 15, 30, (a.x, a.y))
                if spawn is None:
                    continue
                out = copy.deepcopy(raw)
                moved = out[a.agent_id][field].pop(i)
                name = next(n for n in (f"{a.username}_porter", f"{a.username}_aide", f"porter_{a.agent_id}")
                            if n not in taken)
                what = f"{moved.get('count', 1)} {moved['item']}"
                goal = _walkable_ring((a.x, a.y), 2, 4, (a.x, a.y)) or (a.x, a.y)
                porter = {
                    "username": name, "new_character": True, "role": "porter",
                    "location": {"x": spawn[0], "y": spawn[1]}, "skill_levels": {"health": 10},
                    "inventory_items": [dict(moved)], "equipped_items": [],
                    "guideline": (f"You are the team's porter. You carry {what}, which {a.username}"
                                  f"{f' (the {a.role})' if a.role else ''} needs for their work; they start at "
                                  f"({a.x},{a.y}), and ({goal[0]},{goal[1]}) beside it is within reach for a "
                                  f"hand-off. Bring it to them: transfer_items needs you within 6 tiles.")}
                note = (f"\n(This task: your {moved['item']} is with {name}, the porter, who starts about "
                        f"{abs(spawn[0] - a.x) + abs(spawn[1] - a.y)} tiles away and brings it.)")
                out[a.agent_id]["guideline"] = (out[a.agent_id].get("guideline") or "") + note
                _add_to_plan_text(out, f"First {name}, the porter, brings the {moved['item']} to {a.username}.",
                                  first=True)
                rebuilt = {k: v for k, v in out.items() if k not in _agent_keys(out)}
                order = [new_key, *_agent_keys(out)]  # the porter acts first in every round
                blocks = {new_key: porter, **{k: out[k] for k in _agent_keys(out)}}
                for k in order:
                    rebuilt[k] = blocks[k]
                plan = rebuilt.get("reference_solution") or {}
                wait = 2 if field == "equipped_items" else 1  # a worn item is put on again after the delivery
                for k in _agent_keys(out):
                    prefix = [_step("sleep", seconds=1) for _ in range(wait)]
                    if wait == 2 and k == a.agent_id:
                        prefix[1] = _step("equip_item", itemKey=moved["item"])
                    plan[k] = prefix + list(plan.get(k, []))
                plan[new_key] = [_step("move_character", x=goal[0], y=goal[1]),
                                 _step("transfer_items", targetPlayer=a.username, itemKey=moved["item"],
                                       count=moved.get("count", 1))]
                rebuilt["reference_solution"] = plan
                rebuilt["max_action_steps"] = int(raw.get("max_action_steps", task.max_action_steps)) + wait
                yield rebuilt


# -- far_spawn --------------------------------------------------------------------------------------------
def _far_spawn(task: Task, raw: Raw) -> Iterator[Raw]:
    cx = sum(a.x for a in task.agents) / len(task.agents)
    cy = sum(a.y for a in task.agents) / len(task.agents)
    out = copy.deepcopy(raw)
    original = {}
    for i, a in enumerate(task.agents):
        dx, dy = a.x - cx, a.y - cy
        norm = (dx * dx + dy * dy) ** 0.5
        if norm < 1:  # at the centre: spread by agent order around the compass
            dirs = ((1, 0), (0, 1), (-1, 0), (0, -1))
            dx, dy = dirs[i % 4]
            norm = 1.0
        spot = _walkable_ring((a.x, a.y), 20, 35, (a.x, a.y), toward=(dx / norm, dy / norm))
        if spot is None:
            return
        out[a.agent_id]["location"] = {"x": spot[0], "y": spot[1]}
        out[a.agent_id]["guideline"] = (str(out[a.agent_id].get("guideline") or "")
                                        + f"\n(This task: you start away from your usual post at ({a.x},{a.y}).)")
        original[a.agent_id] = (a.x, a.y)
    moved = reparse(out)
    walks = {a.agent_id: walk_steps(moved, (a.x, a.y), original[a.agent_id]) for a in moved.agents}
    longest = max(len(w) for w in walks.values())
    plan = out.get("reference_solution") or {}
    for a in moved.agents:
        prelude = [{"tool": s.tool, "args": dict(s.args)} for s in walks[a.agent_id]]
        prelude += [_step("sleep", seconds=1)] * (longest - len(prelude))
        plan[a.agent_id] = prelude + list(plan.get(a.agent_id, []))
    out["reference_solution"] = plan
    out["max_action_steps"] = int(raw.get("max_action_steps", task.max_action_steps)) + longest
    _add_to_plan_text(out, "Everyone starts 20 to 35 tiles out and first walks back to their usual post.", first=True)
    yield out


# -- extra_leg ----------------------------------------------------------------------------------------------
def _extra_leg(task: Task, raw: Raw) -> Iterator[Raw]:
    w = world_index()
    gmap = w.loaded.map
    holder = _named_agent(task)
    if holder in _placed_agents(task):
        return  # it must stay where a place check wants it
    end = final_positions(task)[holder]
    me = task.agent(holder)
    options = []
    for lm in w.landmarks.values():
        d = abs(lm.x - end[0]) + abs(lm.y - end[1])
        at_spawn = abs(lm.x - me.x) + abs(lm.y - me.y) <= lm.radius
        goal = gmap.nearest_walkable(lm.x, lm.y, max(2, lm.radius))
        if 30 <= d <= 150 and not at_spawn and goal and gmap.connected(goal, end):
            options.append((d, lm.key, lm, goal))
    for _, _, lm, goal in sorted(options)[:2]:
        out = copy.deepcopy(raw)
        check = {"check": "at_location", "name": f"{me.username} at {lm.name}", "landmark": lm.key, "agent": holder}
        out.setdefault("verifier", {}).setdefault("checks", []).append(check)
        obj = out["objectives"]
        obj["primary"] = (obj["primary"].rstrip() + f" Then {me.username} brings it to {lm.name}: "
                          f"({goal[0]},{goal[1]}), within {lm.radius} tiles of ({lm.x},{lm.y}).")
        out["success_criteria"] = list(out.get("success_criteria") or []) + [f"{me.username} ends at {lm.name}"]
        _add_to_plan_text(out, f"Finally {me.username} walks to {lm.name} ({goal[0]},{goal[1]}).")
        walk = walk_steps(task, end, goal)
        _steps(out, holder).extend({"tool": s.tool, "args": dict(s.args)} for s in walk)
        out["max_action_steps"] = int(raw.get("max_action_steps", task.max_action_steps)) + len(walk)
        yield out


# -- lean_start -----------------------------------------------------------------------------------------------
def _lean_start(task: Task, raw: Raw) -> Iterator[Raw]:
    items = world_index().items
    used = {str(s.args.get("itemKey")) for steps in (task.reference_solution or {}).values() for s in steps}
    needed = {i for spec in task.verifier.checks for i in [spec.params.get("item")] if i} if task.verifier else set()
    out = copy.deepcopy(raw)
    removed = 0
    for key in _agent_keys(out):
        kept = []
        for stack in out[key].get("inventory_items") or []:
            item = items.get(stack["item"])
            spare = item is not None and (item.heal > 0 or item.kind in ("food", "potion"))
            if spare and stack["item"] not in used and stack["item"] not in needed:
                removed += 1
            else:
                kept.append(stack)
        out[key]["inventory_items"] = kept
    if removed:
        yield out


TRANSFORMATIONS: dict[str, Transformation] = {t.key: t for t in [
    Transformation("split_role", ("team size", "starting items"), _split_role),
    Transformation("far_spawn", ("spawns",), _far_spawn),
    Transformation("extra_leg", ("objective",), _extra_leg),
    Transformation("lean_start", ("starting items",), _lean_start),
]}

# Recipes in the order the generator tries them for every task: each is harder than its parts.
RECIPES: tuple[tuple[str, ...], ...] = (
    ("split_role",),
    ("far_spawn", "extra_leg"),
    ("lean_start", "split_role", "far_spawn"),
    ("lean_start", "extra_leg"),
    ("far_spawn",),
)


def recipe_candidates(task: Task, recipe: tuple[str, ...]) -> Iterator[tuple[Task, Raw]]:
    """Every way to apply the recipe's transformations in turn (fixed order): (parsed task, YAML mapping)."""
    def chain(t: Task, raw: Raw, rest: tuple[str, ...]) -> Iterator[tuple[Task, Raw]]:
        if not rest:
            yield t, raw
            return
        for out in TRANSFORMATIONS[rest[0]].candidates(t, copy.deepcopy(raw)):
            try:
                parsed = reparse(out, t.id)
            except ValueError:
                continue
            yield from chain(parsed, out, rest[1:])

    yield from chain(task, copy.deepcopy(task.raw), recipe)


def recipe_changes(recipe: tuple[str, ...]) -> list[str]:
    return sorted({c for key in recipe for c in TRANSFORMATIONS[key].changes})
