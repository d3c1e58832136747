"""A task file's ``mobs:`` and ``nodes:`` blocks: moving mobs and finite nodes for one task (issue 26).

```yaml
mobs:                          # movement overrides, by mob type key or instance id (the instance wins)
  wolf: {roam: 8, speed: 2}    # every wolf wanders within 8 tiles of its spawn, 2 steps a round
  goblin#2650:                 # one goblin walks a loop: its spawn, then each waypoint (absolute tiles)
    patrol: [[452, 396], [452, 410]]
  bandit: {roam: 0}            # bandits stay where they are
nodes:                         # finite nodes: give `total` items in all, never regrow
  oak_tree#1234: {total: 6}
  copper_rock: {total: 4}      # every copper rock
```

Under a type key, ``patrol`` is offsets from each mob's spawn (as in the data pack). The engine takes these as
plain dicts (``world_options``); :func:`check_blocks` names every key and waypoint that points at nothing real.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from .task_parts import _Yaml


class TaskMob(_Yaml):
    """How one mob type or instance moves in this task (unset fields keep the data pack's)."""

    roam: int | None = Field(None, ge=0, le=50)  # leash radius around the spawn (Manhattan); 0: stays put
    patrol: list[tuple[int, int]] | None = Field(None, min_length=1, max_length=16)  # waypoints walked in a loop
    speed: int | None = Field(None, ge=1, le=20)  # tiles a round

    @model_validator(mode="after")
    def _one_way_of_moving(self) -> "TaskMob":
        if self.roam is not None and self.patrol is not None:
            raise ValueError("give either roam (a leash radius) or patrol (waypoints), not both")
        return self


class TaskNode(_Yaml):
    """A finite node: ``total`` items in all over the episode, never regrown."""

    total: int = Field(ge=0, le=100_000)


def _spawned_patrol_problems(task: Any, loaded: Any) -> list[tuple[str, str, str]]:
    """A patrol declared for a type that an event spawns, walked as the engine would from every tile the event
    puts one on (roaming.patrol_loop): a waypoint it would leave out (off the map, or no walkable tile of the
    mob's area within 6 of it) is motion the engine cannot give."""
    from ..world.events import event_radius, resolve_place, spawn_tiles
    from ..world.pathing import route
    from ..world.roaming import patrol_loop

    mech = getattr(task, "mechanics", None)
    mobs = getattr(task, "mobs", None) or {}
    gm = loaded.map
    out: list[tuple[str, str, str]] = []
    for e in (mech.events if mech else []):
        spec = mobs.get(str(e.mob)) if e.do == "spawn_mobs" else None
        if spec is None or not spec.patrol or e.at is None:
            continue
        x, y, r = resolve_place(loaded, e.at, event_radius(e.do))
        for hx, hy in sorted(set(spawn_tiles(gm, x, y, r, e.count))):
            points = [(hx + dx, hy + dy) for dx, dy in spec.patrol]
            loop, used = patrol_loop(gm, (hx, hy), points, route)
            if loop and len(used) == len(points):
                continue
            out.append((f"mobs.{e.mob}.patrol",
                        f"a {e.mob} that event {e.id or e.do} spawns at ({hx},{hy}) cannot walk the patrol "
                        f"{[list(p) for p in points]} (a waypoint off the map, or with no walkable tile of its area "
                        f"within 6): it would {'skip it' if loop else 'stand still'}",
                        "use offsets that lead to walkable tiles of the area where it comes down"))
    return out


def world_options(task: Any) -> dict[str, Any]:
    """The embedded world's keyword arguments for the task's ``mobs:`` and ``nodes:`` blocks (empty: none)."""
    out: dict[str, Any] = {}
    if getattr(task, "mobs", None):
        out["mobs"] = {k: v.model_dump(exclude_none=True) for k, v in task.mobs.items()}
    if getattr(task, "nodes", None):
        out["nodes"] = {k: v.model_dump() for k, v in task.nodes.items()}
    return out


def check_blocks(task: Any, loaded: Any) -> list[tuple[str, str, str]]:
    """(field, problem, fix) for every key of ``mobs:`` / ``nodes:`` that names no type or instance, and every
    patrol waypoint that is off the map, not walkable, or not reachable on foot from the mob's spawn."""
    problems: list[tuple[str, str, str]] = []
    gm = loaded.map
    mob_types = {t.key for t in loaded.data.mob_types}
    node_types = {t.key for t in loaded.data.node_types}
    mob_ids = {m.id: m for m in loaded.mobs}
    node_ids = {n.id for n in loaded.nodes}
    from ..world.events import spawned_ids

    spawned = spawned_ids(getattr(task, "mechanics", None))
    for key, spec in (getattr(task, "mobs", None) or {}).items():
        if key in spawned:
            problems.append((f"mobs.{key}", f"{key} is a mob an event spawns: it moves as the entry for its type "
                                            f"declares, and an entry under its id is not read",
                             f"put the entry under its type, mobs.{key.split('#')[0]} (a patrol's waypoints as "
                             f"offsets from where it comes down)"))
            continue
        if key not in mob_types and key not in mob_ids:
            problems.append((f"mobs.{key}", f"no mob type or instance {key!r}",
                             "use a mob type key (docs/world.md) or an id from `agentworld world near PLACE`"))
            continue
        if spec.patrol is None or key not in mob_ids:
            continue
        home = mob_ids[key]
        for i, (x, y) in enumerate(spec.patrol):
            where = f"mobs.{key}.patrol[{i}]"
            if not gm.in_bounds(x, y):
                problems.append((where, f"waypoint ({x},{y}) is off the map",
                                 f"use 0 <= x < {gm.width}, 0 <= y < {gm.height}"))
            elif not gm.walkable(x, y):
                near = gm.nearest_walkable(x, y)
                problems.append((where, f"waypoint ({x},{y}) is not walkable",
                                 f"use a walkable tile, e.g. {list(near)}" if near else "use a walkable tile"))
            elif gm.component(x, y) != gm.component(home.x, home.y):
                problems.append((where, f"waypoint ({x},{y}) cannot be reached on foot from {key}'s spawn "
                                        f"({home.x},{home.y}) (another area)", "pick a tile in the mob's own area"))
    problems += _spawned_patrol_problems(task, loaded)
    limit = (getattr(task, "world_rules", None) or {}).get("carry_limit")
    if isinstance(limit, int) and limit > 0:
        for a in task.agents:
            held = sum(s.count for s in a.inventory)
            if held > limit:
                problems.append((f"{a.agent_id}.inventory_items", f"{a.agent_id} starts with {held} items, over the "
                                 f"carry limit of {limit} (world_rules.carry_limit)",
                                 "give it fewer items or raise the limit"))
    for key in (getattr(task, "nodes", None) or {}):
        if key not in node_types and key not in node_ids:
            problems.append((f"nodes.{key}", f"no node type or instance {key!r}",
                             "use a node type key (docs/world.md) or an id from `agentworld world near PLACE`"))
    return problems


# -- what a task's mechanics are and where (for `tasks show`'s mechanics list and `world render` overlays) ------
def mob_mechanics(task: Any) -> list[str]:
    """The names of this module's mechanics a task file uses: ``roaming_mobs`` and ``patrolling_mobs`` (its
    ``mobs:`` block makes something roam or patrol), ``finite_nodes``, ``carry_limit``."""
    names = []
    mobs = getattr(task, "mobs", None) or {}
    if any(m.roam for m in mobs.values()):
        names.append("roaming_mobs")
    if any(m.patrol for m in mobs.values()):
        names.append("patrolling_mobs")
    if getattr(task, "nodes", None):
        names.append("finite_nodes")
    if (getattr(task, "world_rules", None) or {}).get("carry_limit"):
        names.append("carry_limit")
    return names


def _movers(task: Any, loaded: Any) -> Any:
    from ..world.models import Rules
    from ..world.roaming import movers_for

    rules = {k: v for k, v in (getattr(task, "world_rules", None) or {}).items() if k in Rules.model_fields}
    return movers_for(loaded, world_options(task).get("mobs"), bool(rules.get("roaming", True)))


def _near(x: int, y: int, around: tuple[int, int, int] | None) -> bool:
    return around is None or abs(x - around[0]) + abs(y - around[1]) <= around[2]


def moving_mobs(task: Any, loaded: Any = None, around: tuple[int, int, int] | None = None,
                task_only: bool = False) -> list[dict[str, Any]]:
    """Every mob that moves in the task's world (the data pack's roamers and patrols with the task's ``mobs:``
    overrides), by id: ``id``, ``type``, ``kind`` (roam / patrol), ``home`` (spawn), ``leash``, ``speed``,
    ``box`` (every tile it can stand on lies in it), and for a patrol ``waypoints`` and ``route`` (the loop's
    tiles). ``around=(x, y, r)``: only those whose spawn is within ``r``; ``task_only``: only those the task's
    block names (by id or type)."""
    loaded = loaded or _default_loaded()
    names = set(getattr(task, "mobs", None) or {})
    types = {m.id: m.type for m in loaded.mobs}
    out = []
    for mid, mo in sorted(_movers(task, loaded).motions.items()):
        if (task_only and mid not in names and types[mid] not in names) or not _near(*mo.home, around):
            continue
        row = {"id": mid, "type": types[mid], "kind": mo.kind, "home": mo.home, "leash": mo.leash,
               "speed": mo.speed, "box": mo.box}
        if mo.loop:
            row.update(waypoints=list(mo.waypoints), route=list(mo.loop))
        out.append(row)
    return out


def finite_nodes(task: Any, loaded: Any = None) -> list[dict[str, Any]]:
    """The task's finite nodes: ``id``, ``type``, ``x``, ``y``, ``total`` (a type key makes every node of it finite)."""
    loaded = loaded or _default_loaded()
    block = getattr(task, "nodes", None) or {}
    out = []
    for n in loaded.nodes:
        spec = block.get(n.id) or block.get(n.type)
        if spec is not None:
            out.append({"id": n.id, "type": n.type, "x": n.x, "y": n.y, "total": spec.total})
    return out


def hazard_zones(task: Any, loaded: Any = None, around: tuple[int, int, int] | None = None) -> list[dict[str, Any]]:
    """Where aggressive mobs engage (a walk entering the zone stops; the tick strikes inside it): per aggressive
    mob, ``mob``, ``type``, ``aggro`` (range), ``box`` (the tiles it can stand on; a zone is every tile within
    ``aggro`` of the box, Manhattan), ``moving``. ``around``: only mobs whose spawn is within ``r`` of (x, y)."""
    loaded = loaded or _default_loaded()
    motions = _movers(task, loaded).motions
    aggro = {t.key: t.aggro_range for t in loaded.data.mob_types}
    out = []
    for m in loaded.mobs:
        if aggro[m.type] > 0 and _near(m.x, m.y, around):
            mo = motions.get(m.id)
            out.append({"mob": m.id, "type": m.type, "aggro": aggro[m.type], "moving": mo is not None,
                        "box": mo.box if mo is not None else (m.x, m.y, m.x, m.y)})
    return sorted(out, key=lambda z: z["mob"])


def _default_loaded() -> Any:
    from ..world.datapack import load_world

    return load_world()
