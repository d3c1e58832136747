"""The augmented suite's transformations: deterministic rewrites of a main task that make it harder.

Each transformation takes the task (parsed) and its YAML mapping and yields new YAML mappings, none where it
does not apply. Working on the mapping keeps every field of the task file, including ones this module does not
know about; the result is parsed and validated like any task file. Each one adapts the reference plan with it
(using only the engine's existing events and mechanics, through the YAML), so a variant is proven exactly like
a main task. A *recipe* chains several. Each adds work or a constraint a good team cannot avoid:

- ``order_grows`` (objective, events): a check that asks one agent to end with an amount of an item grows by one
  mid-episode (a ``change_objective`` event after the plan's last use of the old amount), told only to that
  agent; the one spare unit lies in a store 61 to 100 tiles from where a teammate's work ends (a hidden cache,
  named only in the news). The told agent must tell the teammate, who fetches it and hands it over.
- ``road_closes`` (events): a stretch of one of the plan's long walks closes the round before the walk
  (``close_area``, a diamond of radius 6 whose detour costs the walker at least one more move); only one
  teammate hears it announced, the walker sees it when it comes within view.
- ``lean_start`` (starting items): a tool or material without which a step of its agent's plan fails is not in
  its kit: it lies in one of two stores 61 to 100 tiles away (a hidden cache), both named in the agent's brief
  (not which); the agent fetches it first.
- ``far_spawn`` (spawns): every agent spawns 70 to 110 (or 40 to 60) tiles farther from the team's centre, in
  the same connected area, and first walks back to where it used to start (a move covers 60 tiles); its brief
  names both places, and for an agent a guard keeps at a place, says the rule holds once it is there.
- ``extra_leg`` (objective): the agent the objective names must also end at a landmark 30 to 150 tiles from
  where its work ends, and at least one move's walk farther than that from every place where a teammate starts
  or works (so no meeting place on the way makes the leg free).
- ``split_role`` (team size, starting items): a needed item moves to a new porter who must bring it. Not a
  recipe of its own: a porter only adds a hand.

Transformations that delay the plan (``far_spawn`` and ``lean_start`` its start, ``order_grows``' late trip and
``road_closes``' detour its rest) delay the task's scheduled events as much, and every round the task's texts
name with them (:func:`delay_schedule`), so a deadline keeps its place in the work and its brief stays true. Whether a variant is harder is not claimed here: the
generator (``core/runs/augment.py``) measures every candidate's fastest known solution against its main
task's and proves the hardest first.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .plans import execute, plan_world, rounds_needed, walk_steps
from .task import Step, Task, parse_task, world_index
from .verify import is_guard

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
    in the direction ``toward`` (a unit vector), else the nearest (ties: smaller x, then y)."""
    gmap = world_index().loaded.map
    # a tile is walkable and connected to same_as exactly when it has same_as's component label (blocked
    # tiles are labelled 0): one lookup per tile of the rings, which hold thousands of tiles
    area = gmap.component(*same_as) if gmap.walkable(*same_as) else 0
    if not area:
        return None
    cx, cy = center
    best = None
    for d in range(lo, hi + 1):
        for dx in range(-d, d + 1):
            x = cx + dx
            if not 0 <= x < gmap.width:
                continue
            for dy in {d - abs(dx), -(d - abs(dx))}:
                y = cy + dy
                if not (0 <= y < gmap.height and gmap.component(x, y) == area):
                    continue
                score = (dx * toward[0] + dy * toward[1]) / d if toward else 0.0
                key = (-score, d, x, y)
                if best is None or key < best:
                    best = key
        if best is not None and toward is None:
            break
    return (best[2], best[3]) if best is not None else None


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
FAR_RINGS = ((70, 110), (40, 60))  # tiles from the usual spawn (a move covers 60): the farther first


def _far_spawn(task: Task, raw: Raw) -> Iterator[Raw]:
    for lo, hi in FAR_RINGS:
        out = _spawned_out(task, raw, lo, hi)
        if out is not None:
            yield out


def _spawned_out(task: Task, raw: Raw, lo: int, hi: int) -> Raw | None:
    cx = sum(a.x for a in task.agents) / len(task.agents)
    cy = sum(a.y for a in task.agents) / len(task.agents)
    out = copy.deepcopy(raw)
    original = {}
    held = _held_in_place(task)
    for i, a in enumerate(task.agents):
        dx, dy = a.x - cx, a.y - cy
        norm = (dx * dx + dy * dy) ** 0.5
        if norm < 1:  # at the centre: spread by agent order around the compass
            dirs = ((1, 0), (0, 1), (-1, 0), (0, -1))
            dx, dy = dirs[i % 4]
            norm = 1.0
        spot = _walkable_ring((a.x, a.y), lo, hi, (a.x, a.y), toward=(dx / norm, dy / norm))
        if spot is None:
            return None
        out[a.agent_id]["location"] = {"x": spot[0], "y": spot[1]}
        out[a.agent_id]["guideline"] = str(out[a.agent_id].get("guideline") or "") + _far_start_text(
            spot, (a.x, a.y), a.agent_id in held)
        original[a.agent_id] = (a.x, a.y)
    walks = _walks_back(reparse(out), original)
    if walks is None:
        return None
    longest = max(len(w) for w in walks.values())
    plan = out.get("reference_solution") or {}
    for a in task.agents:
        prelude = [{"tool": s.tool, "args": dict(s.args)} for s in walks[a.agent_id]]
        prelude += [_step("sleep", seconds=1)] * (longest - len(prelude))
        plan[a.agent_id] = prelude + list(plan.get(a.agent_id, []))
    out["reference_solution"] = plan
    _delay_events(out, longest)
    _add_actions(out, task, longest)
    _add_to_plan_text(out, f"Everyone starts {lo} to {hi} tiles out and first walks back to their usual post.",
                      first=True)
    return out


def _far_start_text(start: tuple[int, int], post: tuple[int, int], held: bool) -> str:
    """The line a far spawn adds to a brief written for ``post``: "you start away from your usual post" read as a
    contradiction beside "you start at the stores" and "never more than 8 tiles from them" (aug_410's pilots, four
    of six players); whether to walk to ``post`` is the agent's to decide."""
    rule = " A rule that keeps you near a place holds from when you first reach it." if held else ""
    # no "walk there first": aug_431's porter read "there" as its start tile, aug_202's forester needed no walk
    return (f"\n(This task: you do not start at ({post[0]},{post[1]}), where the rest of this brief places you, "
            f"but at ({start[0]},{start[1]}).{rule})")


WALK_BACK_ROUNDS = 8  # at most: a walk back of 110 tiles takes 2 moves, and an aggressive mob may stop a few


def _walks_back(task: Task, goals: dict[str, tuple[int, int]]) -> dict[str, list[Step]] | None:
    """Each agent's ``move_character`` calls back to its usual post, played together round by round in a plan
    world: a walk an aggressive mob stops is taken up again the next round, as a player would (a plan of the
    bare route would leave the agent short of its post, out of sight of what it was to see there). None if
    some agent is not back within WALK_BACK_ROUNDS rounds."""
    world = plan_world(task, 0)
    walks: dict[str, list[Step]] = {a: [] for a in task.agent_ids}
    for r in range(1, WALK_BACK_ROUNDS + 1):
        away = [a for a in task.agent_ids if (world.player_state(a).x, world.player_state(a).y) != goals[a]]
        if not away:
            return walks
        for a in away:
            step = walk_steps(task, (world.player_state(a).x, world.player_state(a).y), goals[a])[0]
            execute(world, a, step)
            walks[a].append(step)
        world.end_round(r)
    return None


# -- extra_leg ----------------------------------------------------------------------------------------------
def _extra_leg(task: Task, raw: Raw) -> Iterator[Raw]:
    w = world_index()
    gmap = w.loaded.map
    holder = _named_agent(task)
    if holder in _placed_agents(task):
        return  # it must stay where a place check wants it
    tr = trace(task)
    me = task.agent(holder)
    end = tr.end(holder, (me.x, me.y))
    others = _teammates_places(task, tr, holder)
    options = []
    for lm in w.landmarks.values():
        d = abs(lm.x - end[0]) + abs(lm.y - end[1])
        at_spawn = abs(lm.x - me.x) + abs(lm.y - me.y) <= lm.radius
        goal = gmap.nearest_walkable(lm.x, lm.y, max(2, lm.radius))
        if (30 <= d <= 150 and not at_spawn and goal and gmap.connected(goal, end)
                and _beyond_the_meeting(goal, end, others, _move_range(task))):
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


NOT_WORK = frozenset({"move_character", "sleep", "chat", "send_chat_message"})


def _teammates_places(task: Task, tr: "Trace", holder: str) -> set[tuple[int, int]]:
    """Where the holder's teammates start and where they work (stand for any step but a walk, a wait or a chat)
    in the reference plan: the places from which a hand-over to the holder can set out."""
    places: set[tuple[int, int]] = set()
    for a in task.agents:
        if a.agent_id == holder:
            continue
        places.add((a.x, a.y))
        steps = (task.reference_solution or {}).get(a.agent_id, [])
        places.update(spot for st, spot in zip(steps, tr.spots[a.agent_id]) if st.tool not in NOT_WORK)
    return places


def _path_length(a: tuple[int, int], b: tuple[int, int]) -> float:
    from ..world.pathing import route

    path = route(world_index().loaded.map, a, b)
    return math.inf if path is None else len(path)


def _beyond_the_meeting(goal: tuple[int, int], end: tuple[int, int], places: set[tuple[int, int]],
                        move_range: int) -> bool:
    """Whether the landmark at ``goal`` lies beyond the holder's meeting place ``end`` as seen from every
    teammate's place: at least one move's walk (``move_range`` tiles of path) farther from each than ``end`` is.

    Why: the reference plan keeps the hand-over at ``end`` and then walks the holder on, but a team may meet
    anywhere. A teammate setting out from P to hand over at X leaves the holder to walk X to the goal, and the
    two walks together are at least |P goal| (triangle inequality), whatever X. If |P goal| >= |P end| + one
    move for every P, no meeting place beats the main task's hand-over at ``end`` by the extra leg: the leg
    costs at least one move. A landmark nearer a teammate (aug_205's Hearthmoor, where the southsmith's forge
    is) would instead let the team hand over there and skip the walk to the holder's post (pilot of
    2026-12-03: won in 13 rounds, the main task's fastest is 16)."""
    for p in places:
        if _path_length(p, goal) < _path_length(p, end) + move_range:
            return False
    return True


# -- shared by the transformations that add a trip ----------------------------------------------------------
@dataclass(frozen=True)
class Trace:
    """The reference plan played round-robin in a plan world: per agent, where it stands after each of its steps
    and whether each step succeeded."""

    spots: dict[str, list[tuple[int, int]]]
    ok: dict[str, list[bool]]

    def end(self, agent: str, start: tuple[int, int]) -> tuple[int, int]:
        return self.spots[agent][-1] if self.spots[agent] else start

    def last_move(self, agent: str) -> int:
        """The index of the agent's last step that changed where it stands (-1: it never moves)."""
        spots = self.spots[agent]
        return max((i for i in range(len(spots)) if spots[i] != (spots[i - 1] if i else None)), default=-1)


def trace(task: Task, seed: int = 0) -> Trace:
    world = plan_world(task, seed)
    plan = task.reference_solution or {}
    spots: dict[str, list[tuple[int, int]]] = {a: [] for a in task.agent_ids}
    ok: dict[str, list[bool]] = {a: [] for a in task.agent_ids}
    for i in range(max((len(s) for s in plan.values()), default=0)):
        for a in task.agent_ids:
            if i < len(plan.get(a, [])):
                ok[a].append(bool(execute(world, a, plan[a][i]).ok))
                p = world.player_state(a)
                spots[a].append((p.x, p.y))
        world.end_round(i + 1)
    return Trace(spots, ok)


STORE_RING = (61, 100)  # tiles from the agent to a store: more than one move's walk (move_range 60) each way
COMPASS = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))


def _stores(raw: Raw, near: tuple[int, int], also: tuple[tuple[int, int], ...] = (), n: int = 2
            ) -> list[tuple[int, int]]:
    """Up to ``n`` walkable tiles STORE_RING tiles from ``near`` (east, south, west, north of it, in that order)
    that ``near`` and every place of ``also`` can walk to, and no hidden cache of the task already uses."""
    gmap = world_index().loaded.map
    taken = {(p.get("x"), p.get("y")) for h in raw.get("hidden") or [] for p in h.get("at") or []}
    out: list[tuple[int, int]] = []
    for toward in COMPASS:
        spot = _walkable_ring(near, *STORE_RING, near, toward=toward)
        if spot is not None and spot not in out and spot not in taken and all(gmap.connected(spot, o) for o in also):
            out.append(spot)
        if len(out) == n:
            break
    return out


def _cache_ids(raw: Raw) -> int:
    """How many ground items ``cache#N`` the task's own hidden caches already put down (numbered in file order)."""
    return sum(len(h.get("items") or []) for h in raw.get("hidden") or [] if h.get("kind") == "cache")


def _walk(task: Task, start: tuple[int, int], goal: tuple[int, int]) -> list[dict[str, Any]]:
    return [{"tool": s.tool, "args": dict(s.args)} for s in walk_steps(task, start, goal)]


def _is_sleep(step: dict[str, Any]) -> bool:
    return step.get("tool") == "sleep"


def _pad(steps: list[dict[str, Any]], length: int) -> None:
    steps.extend(_step("sleep", seconds=1) for _ in range(length - len(steps)))


def _delay_events(raw: Raw, rounds: int) -> None:
    """A plan that starts ``rounds`` later meets the task's scheduled events ``rounds`` later too: the scenario's
    deadlines keep their place in the work (a triggered event follows its condition by itself)."""
    # a round-1 announcement at a place is news for whoever stands there: it waits for them too
    delay_schedule(raw, 2, rounds, also=lambda e: e.get("do") == "announce" and e.get("at") is not None)


# "round 17", "rounds 16 to 18", "the end of round 23", "after round\n26": a round a text names. "end of" and
# "after" name the boundary before the next round, the round from which what they announce holds. Only a plural
# "rounds" goes on to a list ("round 17 and 2 porters" names one round).
ROUND_NAMED = re.compile(r"(?P<end>(?:\bend\s+of|\bafter)\s+)?\b(?P<word>rounds?\s+)(?P<n>\d+)"
                         r"(?P<more>(?:\s*(?:,|to|and|or|-)\s*\d+)*)", re.IGNORECASE)


def shift_named_rounds(text: str, first: int, rounds: int) -> str:
    """``text`` with every round it names from ``first`` on (a boundary "end of round N" counts as N + 1) named
    ``rounds`` later."""
    def later(n: str, end: bool) -> str:
        return str(int(n) + rounds) if int(n) + end >= first else n

    def shift(m: re.Match[str]) -> str:
        end = bool(m.group("end"))
        more = m.group("more")
        if m.group("word").lower().startswith("rounds"):
            more = re.sub(r"\d+", lambda k: later(k.group(0), end), more)
        return f"{m.group('end') or ''}{m.group('word')}{later(m.group('n'), end)}{more}"

    return ROUND_NAMED.sub(shift, text)


def _shift_texts(node: Any, first: int, rounds: int) -> None:
    """In place: the transformations hold on to the task's lists (a plan they go on extending) across a delay."""
    keys = node.keys() if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else ()
    for k in keys:
        if isinstance(node[k], str):
            node[k] = shift_named_rounds(node[k], first, rounds)
        else:
            _shift_texts(node[k], first, rounds)


def delay_schedule(raw: Raw, first: int, rounds: int, also: Callable[[Raw], bool] = lambda e: False) -> None:
    """Everything the task schedules from round ``first`` on happens ``rounds`` later: the events' ``at_round``
    (and those ``also`` picks) and every round a text of the task names, in place.

    Why the texts: a brief, an event's message, a guideline or the reference plan's chat that names the round a
    deadline falls ("From round 17 no one will cross it") must name the delayed round, or the variant misleads
    (aug_319, pilot of 2026-12-03: the bridge burnt at round 20, the rider said 17). Every string of the task is
    rewritten, not a list of fields, so a text a transformation adds later or a field this module does not know
    keeps true too; no verifier check holds a round (the events are the task's only schedule)."""
    if rounds <= 0:
        return
    for e in raw.get("events") or []:
        if isinstance(e.get("at_round"), int) and (e["at_round"] >= first or also(e)):
            e["at_round"] += rounds
    _shift_texts(raw, first, rounds)


def _add_actions(raw: Raw, task: Task, added: int) -> None:
    raw["max_action_steps"] = int(raw.get("max_action_steps", task.max_action_steps)) + added


def _tell_objective(raw: Raw, sentence: str, criterion: str) -> None:
    obj = raw["objectives"]
    obj["primary"] = obj["primary"].rstrip() + " " + sentence
    raw["success_criteria"] = list(raw.get("success_criteria") or []) + [criterion]


# -- order_grows -------------------------------------------------------------------------------------------
def _counted_checks(task: Task) -> Iterator[tuple[int, Any, str, str | None]]:
    """(index, spec, receiver, giver) of every check that asks one named agent to end with an amount of an item
    from any source, and that no event of the task already changes."""
    changed = {e.get("check") for e in task.raw.get("events") or [] if e.get("do") == "change_objective"}
    for i, spec in enumerate(task.verifier.checks if task.verifier else []):
        p = spec.params
        if i in changed or spec.name in changed or spec.guard or p.get("origin") or p.get("from_origin"):
            continue
        if p.get("kept") is False:  # counts what was handed over, not what the receiver ends with
            continue
        if spec.check == "delivered" and p.get("to"):
            receiver, giver = task.resolve_agent(p["to"]), (task.resolve_agent(p["from"]) if p.get("from") else None)
        elif spec.check == "item_count" and p.get("agent") and not p.get("agents") and not p.get("role"):
            receiver, giver = task.resolve_agent(p["agent"]), None
        else:
            continue
        if receiver is not None and (giver is not None or not p.get("from")) and giver != receiver:
            yield i, spec, receiver, giver


def _last_use(task: Task, number: int) -> int:
    """The last round (1-based) in which a reference step hands over ``number`` units (0: none does). That is
    the one amount the knowledge check asks an agent to know, and one unit it always knows."""
    last = 0
    for steps in (task.reference_solution or {}).values():
        for i, st in enumerate(steps):
            if st.tool == "transfer_items" and st.args.get("count") == number != 1:
                last = max(last, i + 1)
    return last


def _order_grows(task: Task, raw: Raw) -> Iterator[Raw]:
    """The order grows by one mid-episode, told only to its receiver; the one spare unit lies at a store 61 to 100
    tiles from where a teammate's work ends, and that teammate must fetch it and hand it over."""
    if not task.reference_solution or len(task.agents) < 2:
        return
    plan_rounds = rounds_needed(task.reference_solution)
    tr = trace(task)
    ends = {a.agent_id: tr.end(a.agent_id, (a.x, a.y)) for a in task.agents}
    placed = _placed_agents(task)
    shown = 0
    for index, spec, receiver, giver in _counted_checks(task):
        if shown >= 1:
            return
        shown += 1
        item, count = str(spec.params["item"]), int(spec.params.get("count", 1))
        ref = task.reference_solution
        fetcher = giver or min((a for a in task.agent_ids if a != receiver), key=lambda a: len(ref.get(a, [])))
        f_end, r_end = ends[fetcher], ends[receiver]
        # from the event's round the old amount is stale (docs/tasks.md, the knowledge check): it comes after the
        # plan's last step that uses that number, and before the plan is done
        used = _last_use(task, count)
        rounds = [r for r in (max(2, plan_rounds * 2 // 5, used + 1),) if r < plan_rounds]
        if not rounds:  # the old amount is handed over in the plan's last round: the order grows before that
            yield from _grown_before_handover(task, raw, index, item, count, receiver, tr, placed)
            continue
        for spot in _stores(raw, f_end, also=(r_end,)):
            for at_round in rounds:
                yield _grown(task, raw, index, item, count, receiver, fetcher, spot, at_round, tr, ends, placed)


def _light_spare(raw: Raw, item: str) -> str:
    """What the news says of a spare whose item is also a heavy load's: a store's spare is light (one lifts it),
    and a brief that calls the item too heavy for one would send two to fetch it (three aug_503 pilots did)."""
    heavy = any(j.get("kind") == "heavy_load" and j.get("item") == item for j in raw.get("joint_actions") or [])
    return ", packed light: one can carry it" if heavy else ""


def _made_by_plan(raw: Raw, item: str) -> bool:
    """Whether the team's plan crafts ``item``: the news then says its spare is ready-made (an objective that says
    the bread is "baked by the baker" left three aug_215 pilots unsure whether the store's bread counted)."""
    return any(st.get("tool") == "craft_item" and (st.get("args") or {}).get("itemKey") == item
               for steps in (raw.get("reference_solution") or {}).values() for st in steps)


def _spare_terms(raw: Raw, item: str) -> str:
    """What the objective says of the spare, where its text would otherwise claim the opposite. It names the item
    (aug_424's own order also grows, by a sickle that must be made, and "its one spare" sent a team looking for a
    ready-made sickle). Where the team pays in coins, nobody is paid for it: aug_412's objective pays each smith
    "for every bar that smith handed over", and a smith brought the spare (the purse holds no coin for it)."""
    made = _made_by_plan(raw, item)
    paid = any(c.get("check") == "delivered" and c.get("item") == "coins"
               for c in (raw.get("verifier") or {}).get("checks") or [])
    if made and paid:
        return f" (a spare {item} it asks for is found ready-made, not made, and nobody is paid for it)"
    if made:
        return f" (a spare {item} it asks for is found ready-made, not made)"
    return f" (nobody is paid for a spare {item} it asks for)" if paid else ""


def _bringer(raw: Raw, index: int) -> str:
    """Who the news says must bring the spare: the check's giver when it names one (only its hand-over counts, and
    an aug_426 pilot's steward asked whether anyone else could bring it), else any teammate."""
    giver = (raw.get("verifier") or {}).get("checks", [])[index].get("from")
    if not giver:
        return "a teammate"
    agent = raw.get(str(giver))  # an agent id (agent_2) or already a username
    return str(agent["username"]) if isinstance(agent, dict) and agent.get("username") else str(giver)


def _grow_the_order(out: Raw, index: int, item: str, count: int, receiver: str, receiver_name: str,
                    spot: tuple[int, int], at_round: int, tr: Trace, message: str) -> int:
    """The variant's change: a spare ``item`` in a store at ``spot``, and from ``at_round`` check ``index`` asks
    one more, told to the receiver alone; the objective says an order may grow. The receiver's plan passes
    ``message`` on once it has heard (from round at_round) and stands where its work ends: returns that step."""
    out.setdefault("hidden", []).append({"id": f"spare_{item}", "kind": "cache", "items": [{"item": item, "count": 1}],
                                         "at": [{"x": spot[0], "y": spot[1]}], "pick": 0})
    out.setdefault("events", []).append({
        "id": "order_grows", "at_round": at_round, "do": "change_objective", "check": index,
        "set": {"count": count + 1}, "tell": [receiver_name], "speaker": "Messenger",
        "message": (f"The order grows: {count + 1} {item} now, not {count}. One spare {item}"
                    f"{', ready-made,' if _made_by_plan(out, item) else ''} was left in a store at ({spot[0]},{spot[1]}){_light_spare(out, item)}; "
                    f"{_bringer(out, index)} must bring it to {receiver_name}.")})
    _tell_objective(out, f"The order may grow during the episode{_spare_terms(out, item)}: whoever hears of it must "
                         "tell the team.",
                    f"{receiver_name} ends with the grown order of {item}")
    mine = out["reference_solution"].setdefault(receiver, [])
    first = max(at_round - 1, tr.last_move(receiver) + 1)
    _pad(mine, first)
    told = next(i for i in range(first, len(mine) + 1) if i == len(mine) or _is_sleep(mine[i]))
    if told == len(mine):
        mine.append(_step("chat", message=message))
    else:
        mine[told] = _step("chat", message=message)
    return told


def _grown(task: Task, raw: Raw, index: int, item: str, count: int, receiver: str, fetcher: str,
           spot: tuple[int, int], at_round: int, tr: Trace, ends: dict[str, tuple[int, int]],
           placed: set[str]) -> Raw:
    out = copy.deepcopy(raw)
    recv, fetch = task.agent(receiver), task.agent(fetcher)
    cache = f"cache#{_cache_ids(out) + 1}"
    plan = out["reference_solution"]
    r_end = ends[receiver]
    message = (f"{fetch.username}: the order grows to {count + 1} {item}. A spare {item} lies in a store at "
               f"({spot[0]},{spot[1]}); please bring it to me at ({r_end[0]},{r_end[1]}).")
    told = _grow_the_order(out, index, item, count, receiver, recv.username, spot, at_round, tr, message)
    theirs = plan.setdefault(fetcher, [])
    _pad(theirs, told + 1)
    f_end = ends[fetcher]
    trip = _walk(task, f_end, spot) + [_step("pickup_resource", targetInstance=f"cache#{_cache_ids(raw) + 1}")]
    trip += _walk(task, spot, r_end) + [_step("transfer_items", targetPlayer=recv.username, itemKey=item, count=1)]
    if fetcher in placed:
        trip += _walk(task, r_end, f_end)
    theirs.extend(trip)
    _pad(plan[receiver], len(theirs))  # the receiver stays in the game until the spare is in its hands
    _add_actions(out, task, len(trip))
    _add_to_plan_text(out, f"When the order grows, {recv.username} tells {fetch.username}, who fetches the spare "
                           f"{item} from its store.")
    return out


def _final_handover(task: Task, item: str, count: int, receiver: str) -> tuple[str, int] | None:
    """(giver, step index) of the plan's last transfer of exactly ``count`` ``item`` to ``receiver``."""
    best: tuple[str, int] | None = None
    for agent, steps in (task.reference_solution or {}).items():
        for i, st in enumerate(steps):
            if (st.tool == "transfer_items" and st.args.get("itemKey") == item and st.args.get("count") == count
                    and task.resolve_agent(str(st.args.get("targetPlayer"))) == receiver
                    and (best is None or i > best[1])):
                best = (agent, i)
    return best


def _grown_before_handover(task: Task, raw: Raw, index: int, item: str, count: int, receiver: str, tr: Trace,
                           placed: set[str]) -> Iterator[Raw]:
    """``order_grows`` when the old amount is handed over in the plan's last round (no round is left after it):
    the order grows before that hand-over, told only to the receiver, who tells the giver; the giver fetches the
    spare from a store 61 to 100 tiles from where it stands to hand over, and hands over the grown amount.
    The event comes after every other transfer of the old amount (from then on that number is stale)."""
    final = _final_handover(task, item, count, receiver)
    if final is None:
        return
    giver, k = final
    others = [i + 1 for a, steps in (task.reference_solution or {}).items() for i, st in enumerate(steps)
              if st.tool == "transfer_items" and st.args.get("count") == count and (a, i) != final]
    at_round = max(2, rounds_needed(task.reference_solution) * 2 // 5, max(others, default=0) + 1)
    if at_round > k:  # the receiver could not hear it before the hand-over
        return
    here = tr.spots[giver][k - 1] if k >= 1 else (task.agent(giver).x, task.agent(giver).y)
    r_end = tr.end(receiver, (task.agent(receiver).x, task.agent(receiver).y))
    for spot in _stores(raw, here, also=(r_end,))[:1]:
        yield _grown_early(task, raw, index, item, count, receiver, giver, k, here, spot, at_round, tr)


def _grown_early(task: Task, raw: Raw, index: int, item: str, count: int, receiver: str, giver: str, k: int,
                 here: tuple[int, int], spot: tuple[int, int], at_round: int, tr: Trace) -> Raw:
    out = copy.deepcopy(raw)
    recv, give = task.agent(receiver), task.agent(giver)
    plan = out["reference_solution"]
    message = (f"{give.username}: the order grows to {count + 1} {item}. A spare {item} lies in a store at "
               f"({spot[0]},{spot[1]}); bring it with the rest: {count + 1} {item} in all.")
    told = _grow_the_order(out, index, item, count, receiver, recv.username, spot, at_round, tr, message)
    # the giver leaves for the store once it has heard (the round after the chat) and before its hand-over
    theirs = plan[giver]
    start = max(k, told + 1)
    trip = _walk(task, here, spot) + [_step("pickup_resource", targetInstance=f"cache#{_cache_ids(raw) + 1}")]
    trip += _walk(task, spot, here)
    handover = copy.deepcopy(theirs[k])
    handover["args"]["count"] = count + 1
    waits = [_step("sleep", seconds=1) for _ in range(start - k)]
    plan[giver] = theirs[:k] + waits + trip + [handover] + theirs[k + 1:]
    added = len(waits) + len(trip)
    for a in task.agent_ids:  # everyone else waits as long, so the plan's hand-offs keep their order
        steps = plan.setdefault(a, [])
        if a not in (giver, receiver) and len(steps) > k:
            steps[k:k] = [_step("sleep", seconds=1) for _ in range(added)]
    delay_schedule(out, k + 2, added)  # from the round after the hand-over the plan runs ``added`` rounds late
    _pad(plan[receiver], len(plan[giver]))  # the receiver stays in the game until the grown amount is in its hands
    _add_actions(out, task, added)
    _add_to_plan_text(out, f"When the order grows, {recv.username} tells {give.username}, who fetches the spare "
                           f"{item} from its store and hands over the grown amount.")
    return out


# -- lean_start ---------------------------------------------------------------------------------------------
def _held_in_place(task: Task) -> set[str]:
    """Agents a guard keeps at a place (an ``at_location`` guard names them): their briefs forbid the walk to a
    store (an aug_426 pilot's steward was told both to stay within 8 tiles of its hall and to fetch its purse
    from 61 tiles away)."""
    held = set()
    for spec in task.verifier.checks if task.verifier else []:
        if spec.check == "at_location" and is_guard(spec) and spec.params.get("agent"):
            held.add(task.resolve_agent(spec.params["agent"]))
    return held


def _needed_items(task: Task, tr: Trace) -> Iterator[tuple[str, str, int]]:
    """(agent, field, stack index) of each starting tool or material (not food) without which a step of the
    agent's plan fails that succeeded with it; none of an agent held at its place."""
    items = world_index().items
    held = _held_in_place(task)
    for a in task.agents:
        if a.agent_id in held:
            continue
        for field in ("inventory_items", "equipped_items"):
            for i, stack in enumerate(task.raw[a.agent_id].get(field) or []):
                item = items.get(stack["item"])
                if item is None or item.heal > 0 or item.kind in ("food", "potion"):
                    continue
                raw = copy.deepcopy(task.raw)
                raw[a.agent_id][field].pop(i)
                try:
                    without = trace(reparse(raw, task.id))
                except ValueError:
                    continue
                if any(was and not now for was, now in zip(tr.ok[a.agent_id], without.ok[a.agent_id])):
                    yield a.agent_id, field, i


def _lean_start(task: Task, raw: Raw) -> Iterator[Raw]:
    """A needed tool or material is not in its agent's kit: it lies in one of two stores 61 to 100 tiles away,
    which the agent's brief names (not which one); the agent fetches it before its work."""
    if not task.reference_solution:
        return
    tr = trace(task)
    for n, (agent, field, i) in enumerate(_needed_items(task, tr)):
        if n >= 2:
            return
        a = task.agent(agent)
        stores = _stores(raw, (a.x, a.y))
        if len(stores) < 2:
            continue
        spot = stores[0]
        out = copy.deepcopy(raw)
        moved = out[agent][field].pop(i)
        places = sorted(stores)
        chosen = places.index(spot)
        out.setdefault("hidden", []).append({
            "id": f"stored_{moved['item']}", "kind": "cache", "pick": chosen,
            "items": [{"item": moved["item"], "count": moved.get("count", 1)}],
            "at": [{"x": p[0], "y": p[1]} for p in places]})
        where = " or ".join(f"({p[0]},{p[1]})" for p in places)
        n = int(moved.get("count", 1))
        what = f"your {moved['item']} is" if n == 1 else f"your {n} {moved['item']} are"
        out[agent]["guideline"] = (str(out[agent].get("guideline") or "") +
                                   f"\n(This task: {what} not in your kit: left at one of two stores, {where}. "
                                   + ("Fetch it before you need it.)" if n == 1 else "Fetch them before you need them.)"))
        fetch = _walk(task, (a.x, a.y), spot) + [_step("pickup_resource",
                                                       targetInstance=f"cache#{_cache_ids(raw) + 1}")]
        if field == "equipped_items":
            fetch.append(_step("equip_item", itemKey=moved["item"]))
        fetch += _walk(task, spot, (a.x, a.y))
        plan = out["reference_solution"]
        for k in task.agent_ids:  # the team's plan waits for the fetch, so every hand-off keeps its order
            plan[k] = (fetch if k == agent else [_step("sleep", seconds=1) for _ in fetch]) + list(plan.get(k, []))
        _delay_events(out, len(fetch))
        _add_actions(out, task, len(fetch))
        _add_to_plan_text(out, f"First {a.username} fetches the {moved['item']} from a store.", first=True)
        yield out


# -- road_closes --------------------------------------------------------------------------------------------
CLOSURE_RADIUS = 6  # tiles: a closed stretch of the way (a diamond) that walks must go round


def _move_range(task: Task) -> int:
    from ..world.models import Rules

    return Rules(**{k: v for k, v in task.world_rules.items() if k in Rules.model_fields}).move_range


def _long_walks(task: Task, tr: Trace) -> list[tuple[int, str, int, tuple[int, int], tuple[int, int], list[Any]]]:
    """(-length, agent, step index, from, to, path) of the plan's walks (move_character from round 2 on, that
    reach their goal), longest first."""
    from ..world.pathing import route

    gmap = world_index().loaded.map
    out = []
    for a in task.agents:
        steps = (task.reference_solution or {}).get(a.agent_id, [])
        for i in range(1, len(tr.spots[a.agent_id])):
            st, before, after = steps[i], tr.spots[a.agent_id][i - 1], tr.spots[a.agent_id][i]
            if st.tool != "move_character" or before == after or (st.args.get("x"), st.args.get("y")) != after:
                continue
            path = route(gmap, before, after) or []
            if len(path) >= 20:
                out.append((-len(path), a.agent_id, i, before, after, path))
    return sorted(out, key=lambda w: w[:3])


def _road_closes(task: Task, raw: Raw) -> Iterator[Raw]:
    """A stretch of a long walk of the plan closes the round before the walk, and walks must go round it; only
    one teammate of the walker hears it announced (the walker sees it when it comes within view)."""
    from ..world.closures import area_tiles, closed_map
    from ..world.pathing import route

    if not task.reference_solution or len(task.agents) < 2:
        return
    gmap = world_index().loaded.map
    reach = _move_range(task)
    tr = trace(task)
    for _, walker, i, start, goal, path in _long_walks(task, tr)[:2]:
        best = None
        for k in (len(path) // 3, len(path) // 2, 2 * len(path) // 3):
            c = path[k]
            tiles = area_tiles(gmap, c[0], c[1], CLOSURE_RADIUS)
            if start in tiles or goal in tiles:
                continue
            detour = route(closed_map(gmap, tiles), start, goal)
            if detour is None:  # it cuts the only way: nothing to go round
                continue
            added = math.ceil(len(detour) / reach) - math.ceil(len(path) / reach)
            if added > 0 and (best is None or (added, len(detour)) > best[:2]):
                best = (added, len(detour), c)
        if best is not None:
            out = _closed(task, raw, tr, walker, i, best[2], best[0])
            if out is not None:
                yield out


def _closed(task: Task, raw: Raw, tr: Trace, walker: str, i: int, c: tuple[int, int], added: int) -> Raw | None:
    at_round = i  # the walk is the plan's step i, played in round i + 1: closed from the round before
    here = {a: (tr.spots[a][at_round - 2] if at_round >= 2 and len(tr.spots[a]) >= at_round - 1 else
                (task.agent(a).x, task.agent(a).y)) for a in task.agent_ids}
    w = here[walker]
    hearers = [a for a in task.agent_ids if a != walker
               and abs(here[a][0] - w[0]) + abs(here[a][1] - w[1]) > 12
               and all(abs(here[a][0] - here[b][0]) + abs(here[a][1] - here[b][1]) > 3 for b in task.agent_ids if b != a)]
    if not hearers:
        return None
    hearer = hearers[0]
    out = copy.deepcopy(raw)
    walker_name, hearer_name = task.agent(walker).username, task.agent(hearer).username
    out.setdefault("events", []).extend([
        {"id": "road_closed", "at_round": at_round, "do": "close_area",
         "at": {"x": c[0], "y": c[1], "radius": CLOSURE_RADIUS},
         "message": "A rockslide has closed the way here: walkers must go round."},
        {"id": "road_closed_news", "at_round": at_round, "do": "announce", "speaker": "Road warden",
         "at": {"x": here[hearer][0], "y": here[hearer][1], "radius": 2},
         "message": (f"A rockslide closed the way within {CLOSURE_RADIUS} tiles of ({c[0]},{c[1]}) from round "
                     f"{at_round}: walks there must go round it.")}])
    plan = out["reference_solution"]
    theirs = plan[hearer]
    _pad(theirs, at_round - 1)
    told = next(j for j in range(at_round - 1, len(theirs) + 1) if j == len(theirs) or _is_sleep(theirs[j]))
    chat = _step("chat", message=f"{walker_name}: the way within {CLOSURE_RADIUS} tiles of ({c[0]},{c[1]}) is "
                                 "closed by a rockslide; go round it.")
    if told == len(theirs):
        theirs.append(chat)
    else:
        theirs[told] = chat
    # the walk takes ``added`` more moves; everyone else waits as long, so the plan's hand-offs keep their order
    for a in task.agent_ids:
        steps = plan.setdefault(a, [])
        if a == walker:
            steps[i + 1:i + 1] = [copy.deepcopy(steps[i]) for _ in range(added)]
        elif len(steps) > i + 1:
            steps[i + 1:i + 1] = [_step("sleep", seconds=1) for _ in range(added)]
    delay_schedule(out, i + 2, added)  # from the round after the walk the plan runs ``added`` rounds late
    _add_actions(out, task, added)
    _tell_objective(out, "Roads may close during the episode.", "the team goes round what closes")
    _add_to_plan_text(out, f"When the way near ({c[0]},{c[1]}) closes, {hearer_name} tells {walker_name}, who "
                           "goes round it.")
    return out


TRANSFORMATIONS: dict[str, Transformation] = {t.key: t for t in [
    Transformation("order_grows", ("objective", "events"), _order_grows),
    Transformation("lean_start", ("starting items",), _lean_start),
    Transformation("road_closes", ("events",), _road_closes),
    Transformation("far_spawn", ("spawns",), _far_spawn),
    Transformation("extra_leg", ("objective",), _extra_leg),
    Transformation("split_role", ("team size", "starting items"), _split_role),
]}

# The recipes the generator tries for every main task; it keeps the hardest that proves. split_role is not
# among them alone: a porter who only adds a hand does not make the task harder (issue 28).
RECIPES: tuple[tuple[str, ...], ...] = (
    ("order_grows",),
    ("road_closes",),
    ("lean_start",),
    ("far_spawn", "order_grows"),
    ("far_spawn", "extra_leg"),
    ("lean_start", "order_grows"),
    ("far_spawn",),
    ("extra_leg",),
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
