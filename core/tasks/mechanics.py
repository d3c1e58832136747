"""A task's world mechanics as the tasks layer sees them: checked against the world, listed, and placed.

The specs themselves (``events:``, ``joint_actions:``, ``hidden:``) are world data (``core/world/events.py``):
this module checks that each names something real in the world and the task (a portal, a node, a mob type,
an agent, a verifier check), lists the mechanics a task uses (``mechanics_of``: the ``mechanics`` field of
``agentworld tasks list --json``) and says where they happen (``mechanic_places``: for the map).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..world.events import EventSpec, Place, TaskMechanics, spawned_ids
from .problems import Problem, did_you_mean
from .verify import check_index

if TYPE_CHECKING:  # pragma: no cover
    from .task import Task, WorldIndex


def _place_problems(field: str, pl: Place | None, w: "WorldIndex", walk: bool) -> list[Problem]:
    if pl is None:
        return []
    loaded = w.loaded
    if pl.landmark is not None and pl.landmark not in w.landmarks:
        return [Problem(f"{field}.landmark", f"no landmark '{pl.landmark}'",
                        did_you_mean(pl.landmark, w.landmarks, "landmark"))]
    npcs = {n.key: n for n in loaded.data.npcs}
    if pl.npc is not None and pl.npc not in npcs:
        return [Problem(f"{field}.npc", f"no npc '{pl.npc}'", did_you_mean(pl.npc, npcs, "npc key"))]
    if pl.x is not None and pl.y is not None:
        if not loaded.map.in_bounds(pl.x, pl.y):
            return [Problem(field, f"({pl.x},{pl.y}) is off the map",
                            f"use 0 <= x < {loaded.map.width}, 0 <= y < {loaded.map.height}")]
        if walk and not loaded.map.walkable(pl.x, pl.y):
            near = loaded.map.nearest_walkable(pl.x, pl.y, 30)
            return [Problem(field, f"({pl.x},{pl.y}) is not walkable", f"the nearest walkable tile is {near}")]
    return []


def _agent_problem(field: str, ref: str | None, task: "Task") -> list[Problem]:
    if ref is None or task.resolve_agent(ref):
        return []
    names = task.agent_ids + [a.username for a in task.agents]
    return [Problem(field, f"no agent '{ref}' in this task", did_you_mean(ref, names, "agent id or username"))]


def _event_problems(task: "Task", i: int, e: EventSpec, w: "WorldIndex") -> list[Problem]:
    f = f"events[{i}]"
    loaded = w.loaded
    portals = {p.key for p in loaded.data.portals}
    out: list[Problem] = []
    if e.portal is not None and e.portal not in portals:
        out.append(Problem(f"{f}.portal", f"no portal '{e.portal}'", did_you_mean(e.portal, portals, "portal key")))
    for j, nid in enumerate(e.nodes):
        if nid not in w.node_ids:
            out.append(Problem(f"{f}.nodes[{j}]", f"no resource node '{nid}' in the world",
                               "use an instance id from `agentworld world near PLACE`"))
    if e.mob is not None and e.mob not in w.mob_types:
        out.append(Problem(f"{f}.mob", f"unknown mob type '{e.mob}'", did_you_mean(e.mob, w.mob_types, "mob type")))
    out += _place_problems(f"{f}.at", e.at, w, walk=e.do == "spawn_mobs")
    if e.at_round is not None and e.at_round > task.rounds:
        out.append(Problem(f"{f}.at_round", f"round {e.at_round} is after the task's {task.rounds} rounds: it "
                           "never fires",
                           f"use a round from 1 to {task.rounds}"))
    if e.when is not None:
        t = e.when
        out += _place_problems(f"{f}.when.enters", t.enters, w, walk=False)
        out += _agent_problem(f"{f}.when.by", t.by, task)
        if t.holds is not None and t.holds not in w.items:
            out.append(Problem(f"{f}.when.holds", f"unknown item '{t.holds}'",
                               did_you_mean(t.holds, w.items, "item key")))
        if t.killed is not None and t.killed not in w.mob_types and t.killed not in w.mob_ids \
                and t.killed not in spawned_ids(task.mechanics):
            out.append(Problem(f"{f}.when.killed", f"no mob type or mob instance '{t.killed}'",
                               did_you_mean(t.killed, w.mob_types, "mob type (or an instance id)")))
    if e.when is not None and e.when.checkpoint is not None and check_index(task, e.when.checkpoint) is None:
        n = len(task.verifier.checks) if task.verifier else 0
        out.append(Problem(f"{f}.when.checkpoint", f"no verifier check {e.when.checkpoint!r}",
                           f"give a check's index (0 to {n - 1}) or the name: of one of verifier.checks" if n
                           else "the task has no verifier checks"))
    for j, ref in enumerate(e.tell):
        out += _agent_problem(f"{f}.tell[{j}]", ref, task)
    if e.do == "change_objective":
        out += _objective_change_problems(task, f, e)
    if e.do in ("close_area", "open_area"):
        out += _closure_problems(task, f, i, e, w)
    return out


def _closure_problems(task: "Task", f: str, i: int, e: EventSpec, w: "WorldIndex") -> list[Problem]:
    """A closed area must close some walkable tile on the map; an open_area must name a close_area event of the
    file (by its id) that can have closed before it opens."""
    from ..world.closures import area_tiles
    from ..world.events import resolve_place

    gm = w.loaded.map
    m = task.mechanics
    if e.do == "open_area":
        closes = {m.event_id(k): ev for k, ev in enumerate(m.events) if ev.do == "close_area"}
        shut = closes.get(str(e.area))
        if shut is None:
            return [Problem(f"{f}.area", f"no close_area event with the id {e.area!r}",
                            did_you_mean(str(e.area), closes, "close_area event id") if closes
                            else "add a close_area event with that id, or remove this one")]
        if shut.at_round is not None and e.at_round is not None and e.at_round <= shut.at_round:
            return [Problem(f"{f}.at_round", f"the area {e.area!r} closes in round {shut.at_round}: opening it in "
                            f"round {e.at_round} opens nothing", f"use a round after {shut.at_round}")]
        return []
    out = []
    for j, (x, y) in enumerate(e.tiles):
        if not gm.in_bounds(x, y):
            out.append(Problem(f"{f}.tiles[{j}]", f"({x},{y}) is off the map",
                               f"use 0 <= x < {gm.width}, 0 <= y < {gm.height}"))
    if out:
        return out
    if e.at is not None:
        if _place_problems(f"{f}.at", e.at, w, walk=False):
            return []  # reported with the place
        if e.only is not None and e.only != "road" and e.only not in gm.biome_keys:
            return [Problem(f"{f}.only", f"no biome {e.only!r}",
                            did_you_mean(e.only, [*gm.biome_keys, "road"], "biome key (or 'road')"))]
        x, y, r = resolve_place(w.loaded, e.at, 0)
        tiles = area_tiles(gm, x, y, r, e.only)
    else:
        tiles = frozenset(t for t in e.tiles if gm.walkable(*t))
    if not tiles:
        return [Problem(f"{f}.at" if e.at is not None else f"{f}.tiles", "the closed area holds no walkable tile: "
                        "it closes nothing", "give walkable tiles (a road, a bridge, a pass), or a radius that reaches "
                        "some")]
    return []


def _objective_change_problems(task: "Task", f: str, e: EventSpec) -> list[Problem]:
    from .verify import Check, lookup

    k = check_index(task, e.check)
    if k is None:
        n = len(task.verifier.checks) if task.verifier else 0
        return [Problem(f"{f}.check", f"no verifier check {e.check!r}",
                        f"give a check's index (0 to {n - 1}) or the name: of one of verifier.checks" if n
                        else "the task has no verifier checks to change")]
    spec = task.verifier.checks[k]  # type: ignore[union-attr]
    check = lookup(spec.check)
    if not isinstance(check, Check):
        return []  # reported with the verifier
    try:
        check.params.model_validate({**spec.params, **(e.set or {})})
    except ValidationError as exc:
        return [Problem(f"{f}.set", f"the changed '{spec.check}' check is not valid: "
                        + "; ".join(f"{'.'.join(map(str, er['loc']))}: {er['msg']}" for er in exc.errors()),
                        f"set only parameters of '{spec.check}' ({', '.join(check.params.model_fields)})")]
    return _preempted_by_kills(task, f, e, spec)


def _preempted_by_kills(task: "Task", f: str, e: EventSpec, spec: Any) -> list[Problem]:
    """A change of a ``kills`` check that kills of the same mob trigger comes too late when the old count can be
    reached in the round of the trigger's last kill: the verifier passes at that round's end, and the change
    takes effect only from the next round. Each player kills at most one mob a round. (task_303: the second
    wave rose when three of three skeletons were down, so the third kill won, once a kill had dropped the
    bones asked for.)"""
    trigger = e.when
    p = spec.params
    if (trigger is None or trigger.killed is None or "#" in trigger.killed or spec.check != "kills"
            or p.get("mob") != trigger.killed):
        return []
    if p.get("agent"):
        killers = 1
    elif p.get("agents"):
        killers = len(p["agents"])
    elif p.get("role"):
        killers = sum(1 for a in task.agents if a.role == p["role"])
    else:
        killers = len(task.agents)
    old = _kills_in_force(task, e, spec, killers)
    if old - trigger.count + 1 > killers:
        return []
    safe = old - killers
    return [Problem(f"{f}.when.count", (
        f"the change comes too late: the old {old} {trigger.killed} kills can all be made in the round of the "
        f"kill that fires it (kill number {trigger.count}; {killers} players kill, one mob each a round), and the "
        "verifier passes at that round's end, before the change takes effect"),
        f"trigger it by kill number {safe} at the latest" if safe >= 1
        else "trigger it on something that comes before the kills (a place, a checkpoint), or ask for more kills")]


def _kills_in_force(task: "Task", e: EventSpec, spec: Any, killers: int) -> int:
    """The count the check asks for when ``e``'s trigger fires: its own, or what an earlier change triggered by
    fewer kills of the same mob set, if that change is surely in force by then (made ``killers`` kills or more
    before, so in an earlier round). task_307: the dead rise again at the fourth kill, after the first made
    the order 6."""
    count = int(spec.params.get("count", 1))
    earlier = [o for o in task.mechanics.events if o is not e and o.do == "change_objective" and o.when is not None
               and o.when.killed == e.when.killed and o.when.count + killers <= e.when.count
               and check_index(task, o.check) == check_index(task, e.check) and "count" in (o.set or {})]
    for o in sorted(earlier, key=lambda o: o.when.count):
        count = int(o.set["count"])
    return count


def mechanics_problems(task: "Task", w: "WorldIndex") -> list[Problem]:
    """Every event, joint action and hidden piece that points at nothing real, or cannot be done."""
    m = task.mechanics
    if not m:
        return []
    out: list[Problem] = []
    for i, e in enumerate(m.events):
        out += _event_problems(task, i, e, w)
    portals = {p.key for p in w.loaded.data.portals}
    n_agents = len(task.agents)
    for i, j in enumerate(m.joint_actions):
        f = f"joint_actions[{i}]"
        if j.k > n_agents:
            out.append(Problem(f"{f}.k", f"the {j.kind} needs {j.k} players at once but the task has {n_agents} agents",
                               f"use k from 2 to {n_agents}, or add agents"))
        if j.mob is not None and j.mob not in w.mob_ids and j.mob not in spawned_ids(m):
            out.append(Problem(f"{f}.mob", f"no mob '{j.mob}' in the world (a mob instance id)",
                               "use an id from `agentworld world near PLACE`"))
        if j.portal is not None and j.portal not in portals:
            out.append(Problem(f"{f}.portal", f"no portal '{j.portal}'", did_you_mean(j.portal, portals, "portal key")))
        if j.item is not None and j.item not in w.items:
            out.append(Problem(f"{f}.item", f"unknown item '{j.item}'", did_you_mean(j.item, w.items, "item key")))
        out += _place_problems(f"{f}.at", j.at, w, walk=True)
    for i, h in enumerate(m.hidden):
        f = f"hidden[{i}]"
        for j, nid in enumerate(h.nodes):
            if nid not in w.node_ids:
                out.append(Problem(f"{f}.nodes[{j}]", f"no resource node '{nid}' in the world",
                                   "use an instance id from `agentworld world near PLACE`"))
        for j, stack in enumerate(h.items):
            item = stack.get("item")
            if item not in w.items:
                out.append(Problem(f"{f}.items[{j}].item", f"unknown item {item!r}",
                                   did_you_mean(str(item), w.items, "item key")))
            if not isinstance(stack.get("count", 1), int) or stack.get("count", 1) < 1:
                out.append(Problem(f"{f}.items[{j}].count", "count must be a whole number of at least 1", "fix it"))
        for j, pl in enumerate(h.at):
            out += _place_problems(f"{f}.at[{j}]", pl, w, walk=True)
    out += _hidden_leaks(task, w)
    ids = [h.id for h in m.hidden]
    for dup in sorted({x for x in ids if ids.count(x) > 1}):
        out.append(Problem("hidden", f"two hidden entries have the id '{dup}'", "give each its own id"))
    return out


def _hidden_leaks(task: "Task", w: "WorldIndex") -> list[Problem]:
    """A hidden thing a brief gives away: the text names the chosen candidate (its node id or its place), and
    it is the only candidate or the text does not name all the others too (a brief may say "one of these three
    rocks", not which)."""
    from ..world.events import resolve_place

    texts = [("relevant_game_context", task.relevant_game_context), ("task.description", task.description),
             ("objectives.primary", task.objectives.primary)]
    texts += [(f"{a.agent_id}.guideline", a.guideline) for a in task.agents]
    out: list[Problem] = []
    for i, h in enumerate(task.mechanics.hidden if task.mechanics else []):
        if h.pick == "seed":
            continue  # drawn per episode: no text can name it
        if h.kind == "vein":
            marks = [{n} for n in h.nodes]
        else:
            try:
                marks = [{f"({x},{y})", f"{x},{y}"} for x, y, _ in (resolve_place(w.loaded, pl, 0) for pl in h.at)]
            except KeyError:
                continue  # an unknown landmark: reported with the place
        for field, text in texts:
            flat = text.replace(" ", "")
            named = [any(m.replace(" ", "") in flat for m in mark) for mark in marks]
            if named[int(h.pick)] and (len(named) == 1 or not all(named)):
                out.append(Problem(f"hidden[{i}]", f"{field} names where the hidden {h.kind} '{h.id}' is",
                                   "leave it out of the briefs (an agent learns it by going there), or name every "
                                   "candidate alike"))
    return out


NEAR_PLAN = 12  # tiles (the view radius): a moving or aggressive mob this close to where the plan goes is met


def plan_places(task: "Task", loaded: Any) -> list[tuple[int, int]]:
    """Where the team stands or acts: its spawns, the tiles its reference plan walks to, the nodes and mobs it
    targets (from the file; the walks between them are not followed)."""
    places = [(a.x, a.y) for a in task.agents]
    for steps in (task.reference_solution or {}).values():
        for s in steps:
            x, y = s.args.get("x"), s.args.get("y")
            if isinstance(x, int) and isinstance(y, int):
                places.append((x, y))
            target = s.args.get("targetInstance")
            thing = loaded.node_by_id.get(target) or loaded.mob_by_id.get(target) if isinstance(target, str) else None
            if thing is not None:
                places.append((thing.x, thing.y))
    return sorted(set(places))


def _box_near(box: tuple[int, int, int, int], places: list[tuple[int, int]], reach: int,
              span: tuple[int, int, int, int]) -> bool:
    """Whether a place lies within ``reach`` (Manhattan) of the box (x0, y0, x1, y1); ``span``: the places'
    own bounding box (most mobs are far from all of them, and are told apart by it alone)."""
    x0, y0, x1, y1 = box
    if x0 - reach > span[2] or x1 + reach < span[0] or y0 - reach > span[3] or y1 + reach < span[1]:
        return False
    return any(max(x0 - x, 0, x - x1) + max(y0 - y, 0, y - y1) <= reach for x, y in places)


def met_mobs(task: "Task", loaded: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(moving mobs, hazard zones) the team meets where its plan goes: a moving mob whose range comes within
    view of such a place, an aggressive mob whose zone (its range's box widened by its aggro) does."""
    from .mobs import hazard_zones, moving_mobs

    places = plan_places(task, loaded)
    xs, ys = [x for x, _ in places], [y for _, y in places]
    span = (min(xs), min(ys), max(xs), max(ys))
    moving = [mo for mo in moving_mobs(task, loaded) if _box_near(mo["box"], places, NEAR_PLAN, span)]
    zones = [z for z in hazard_zones(task, loaded) if _box_near(z["box"], places, z["aggro"] + 2, span)]
    return moving, zones


def mechanics_of(task: "Task", loaded: Any = None) -> list[str]:
    """The mechanics a task uses: those its file declares (``events:<kind>`` per event kind, ``events:triggered``,
    ``joint_action`` and ``joint:<kind>``, ``hidden_info``; the mobs block's ``roaming_mobs``,
    ``patrolling_mobs``, ``finite_nodes``, ``carry_limit``), and those of the world where its plan goes:
    ``roaming_mobs`` / ``patrolling_mobs`` when a moving mob comes within view of a place the team stands at or
    targets, ``hazard`` when an aggressive mob's zone reaches one."""
    from .mobs import mob_mechanics

    if loaded is None:
        from ..world.datapack import load_world

        loaded = load_world()
    moving, zones = met_mobs(task, loaded)
    met = {f"{'patrolling' if mo['kind'] == 'patrol' else 'roaming'}_mobs" for mo in moving}
    out: list[str] = sorted(set(mob_mechanics(task)) | met) + (["hazard"] if zones else [])
    m = task.mechanics
    if m:
        out += sorted({f"events:{e.do}" for e in m.events})
        if any(e.when is not None for e in m.events):
            out.append("events:triggered")
        if m.joint_actions:
            out.append("joint_action")
            out += sorted({f"joint:{j.kind}" for j in m.joint_actions})
        if m.hidden:
            out.append("hidden_info")
    return out


Place = tuple[str, int, int, int, "list[tuple[int, int]] | None"]


def mechanic_places(task: "Task", loaded: Any) -> list[Place]:
    """(label, x, y, radius, route) of every place a task's mechanics act on, for the map: where events happen
    or are triggered, the portals they close and open, joint actions and hidden things (each candidate of a
    hidden choice); ``route`` is a patrol's tiles, else None."""
    from ..world.events import event_radius, resolve_place

    out: list[Any] = []
    if getattr(task, "agents", None) is not None and hasattr(task, "reference_solution"):
        moving, zones = met_mobs(task, loaded)  # the moving and aggressive mobs the team meets
        for mo in moving:
            if mo.get("route"):
                out.append((f"{mo['id']} patrols", mo["home"][0], mo["home"][1], 0, list(mo["route"])))
            else:
                out.append((f"{mo['id']} roams (leash {mo['leash']})", mo["home"][0], mo["home"][1], mo["leash"], None))
        from .mobs import finite_nodes

        for n in finite_nodes(task, loaded):
            out.append((f"{n['id']} finite ({n['total']} in all)", n["x"], n["y"], 0, None))
        for z in zones:
            x0, y0, x1, y1 = z["box"]
            out.append((f"{z['mob']} hazard (aggro {z['aggro']})", (x0 + x1) // 2, (y0 + y1) // 2,
                        z["aggro"] + max(x1 - x0, y1 - y0) // 2, None))
    m = getattr(task, "mechanics", None)  # (a task-like object from a caller that has none)
    if not m:
        return out
    portals = {p.key: p for p in loaded.data.portals}
    nodes = {n.id: n for n in loaded.nodes}
    for i, e in enumerate(m.events):
        label = f"{m.event_id(i)}: {e.do}" + (f" r{e.at_round}" if e.at_round else " (triggered)")
        if e.at is not None:
            x, y, r = resolve_place(loaded, e.at, event_radius(e.do))
            out.append((label, x, y, r if e.do in ("announce", "close_area") else 0, None))
        if e.tiles:  # a closed road: its tiles, drawn as a line
            out.append((label, e.tiles[0][0], e.tiles[0][1], 0, [tuple(t) for t in e.tiles] if len(e.tiles) > 1 else None))
        if e.when is not None and e.when.enters is not None:
            x, y, r = resolve_place(loaded, e.when.enters, 2)
            out.append((f"{m.event_id(i)}: trigger", x, y, r, None))
        if e.portal in portals:
            pt = portals[e.portal]
            out.append((label, pt.x, pt.y, 0, None))
        for nid in e.nodes:
            if nid in nodes:
                out.append((label, nodes[nid].x, nodes[nid].y, 0, None))
    mobs = {mb.id: mb for mb in loaded.mobs}
    for j in m.joint_actions:
        label = f"{j.id or j.kind} (k={j.k})"
        if j.mob in mobs:
            out.append((label, mobs[j.mob].x, mobs[j.mob].y, 0, None))
        if j.portal in portals:
            out.append((label, portals[j.portal].x, portals[j.portal].y, j.radius, None))
        if j.at is not None:
            x, y, _ = resolve_place(loaded, j.at, 0)
            out.append((label, x, y, 0, None))
    for h in m.hidden:
        for c, pl in enumerate(h.at):
            x, y, _ = resolve_place(loaded, pl, 0)
            out.append((f"{h.id}? ({h.kind} {c})", x, y, 0, None))
        for c, nid in enumerate(h.nodes):
            if nid in nodes:
                out.append((f"{h.id}? ({h.kind} {c})", nodes[nid].x, nodes[nid].y, 0, None))
    return out
