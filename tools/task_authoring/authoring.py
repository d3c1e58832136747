"""Task-authoring toolkit (a developer tool: the harness never imports it).

Writes reference solutions from the real world: instance ids, station tiles and walking distances come
from ``load_world()``, and the engine's own path search (``pathing.route``) tells how many
``move_character`` calls a walk takes and where a harvest or an attack leaves the player. Used by
``build.py`` (the family templates' plans and helpers); prove the result with ``agentworld tasks prove --all``.

A plan is written per agent as a timeline: ``Plan.do(agent, tool, after=round, **args)`` puts a call on
the agent's first free round not before ``after`` and returns that round; ``walk``/``harvest``/``attack``
also track where the agent stands. Rounds where an agent has nothing to do become ``sleep`` steps.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from agentworld.core.world.datapack import load_world
from agentworld.core.world.pathing import route

W = load_world()
G = W.map
RULES = W.data.rules
MOVE = RULES.move_range
OUT = Path(__file__).resolve().parents[2] / "tasks" / "main"

Point = tuple[int, int]


# ---------------------------------------------------------------------------------------------------
# finding things in the world
# ---------------------------------------------------------------------------------------------------
def walkable_near(x: int, y: int) -> Point:
    p = G.nearest_walkable(x, y, max_radius=25)
    assert p is not None, (x, y)
    return p


def landmark(key: str) -> Point:
    lm = W.landmark(key)
    return walkable_near(lm.x, lm.y)


def station(kind: str, lm: str) -> Point:
    for s in W.stations:
        if s.kind == kind and s.landmark == lm:
            return s.x, s.y
    raise KeyError((kind, lm))


def _by_distance(things: Any, near: Point) -> list[Any]:
    """Nodes or mobs nearest first (Manhattan, then id)."""
    return sorted(things, key=lambda t: (abs(t.x - near[0]) + abs(t.y - near[1]), t.id))


def nodes_by_distance(node_type: str, near: Point) -> list[Any]:
    """Nodes of a type reachable on foot from ``near`` (or from the walkable tile nearest to it), nearest first."""
    comp = G.component(*(near if G.walkable(*near) else walkable_near(*near)))
    return _by_distance((n for n in W.nodes if n.type == node_type
                         and any(G.component(*t) == comp for t in G.adjacent_walkable(n.x, n.y))), near)


def mobs_by_distance(mob_type: str, near: Point) -> list[Any]:
    """Mobs of a type, nearest first (wherever they stand: a mob roams, a node is reached on foot)."""
    return _by_distance((m for m in W.mobs if m.type == mob_type), near)


def tiles_near(center: Point, max_d: int) -> list[Point]:
    """Every walkable tile within max_d (Manhattan) of center, nearest first, in the area of center (of the
    walkable tile nearest to it when center itself is blocked, such as a resource node); no node tiles."""
    comp = G.component(*(center if G.walkable(*center) else walkable_near(*center)))
    out: list[Point] = []
    for d in range(0, max_d + 1):
        for dx in range(-d, d + 1):
            for dy in sorted({d - abs(dx), -(d - abs(dx))}):
                p = (center[0] + dx, center[1] + dy)
                if G.in_bounds(*p) and G.walkable(*p) and G.component(*p) == comp and p not in out \
                        and p not in W.node_at:
                    out.append(p)
    return out


def spots(center: Point, n: int, max_d: int = 3) -> list[Point]:
    """n distinct walkable tiles within max_d of center (see :func:`tiles_near`), nearest first."""
    out = tiles_near(center, max_d)
    assert len(out) >= n, (center, n, len(out))
    return out[:n]


def portal_exit(at: Point) -> Point:
    """Where ``enter_portal`` from ``at`` leads (the portal end within the portal range)."""
    for end in W.portal_ends():
        if dist(at, (end.x, end.y)) <= RULES.portal_range:
            return end.to_x, end.to_y
    raise AssertionError(f"no portal within {RULES.portal_range} of {at}")


def dist(a: Point, b: Point) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


# ---------------------------------------------------------------------------------------------------
# words for guidelines
# ---------------------------------------------------------------------------------------------------
def a(noun: str) -> str:
    """``noun`` with its indefinite article, as written (an item key keeps its underscores): "an anvil"."""
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"


IRREGULAR_PLURALS = {"wolf": "wolves", "frost_wolf": "frost_wolves", "thief": "thieves"}


def plural(noun: str) -> str:
    """The plural of a mob key or name as written ("wolf" -> "wolves", "goblin" -> "goblins")."""
    return IRREGULAR_PLURALS.get(noun, noun + "s")


def recipe_text(key: str) -> str:
    r = next(r for r in W.data.recipes if r.key == key)
    ins = " + ".join(f"{n} {i}" for i, n in r.inputs.items())
    outs = " + ".join(f"{n} {i}" for i, n in r.outputs.items())
    where = []
    if r.station:
        where.append(f"within {RULES.station_range} tiles of {a(r.station)}")
    if r.tool:
        where.append(f"with {a(r.tool)} in your bag")
    extra = f", {', '.join(where)}" if where else ""
    return (f"craft_item(skill='{r.skill.capitalize()}', itemKey='{next(iter(r.outputs))}', count=N): "
            f"{ins} -> {outs} per craft ({r.skill.capitalize()} {r.level}{extra})")


def node_text(n: Any) -> str:
    t = W.node_type(n.type)
    tool = f", needs {a(t.tool)}" if t.tool else ", by hand"
    ys = ", ".join(y.item for y in t.yields)
    # the node's own tile cannot be stood on: the text says where to stand (tasks validate checks it)
    sx, sy = stand_tile(n)
    most = max((y.max for y in t.yields), default=1)  # a gather may give more than one (apples, clay, wheat)
    per_call = (f"up to {t.harvests} per harvest call" if most <= 1 else
                f"up to {t.harvests} gathers per harvest call, 1 to {most} each")
    return (f"{n.id} at ({n.x},{n.y}), stand beside it at ({sx},{sy}) ({t.skill.capitalize()} {t.level}{tool}; "
            f"gives {ys}, {per_call})")


def mob_text(m: Any) -> str:
    t = W.mob_type(m.type)
    aggro = f"attacks anyone within {t.aggro_range} tiles" if t.aggro_range else "passive"
    drops = ", ".join(d.item for d in t.drops if d.chance >= 1.0)
    return (f"{m.id} at ({m.x},{m.y}): {t.name}, level {t.level}, {t.hp} HP, hits up to {t.attack}, defence {t.defense}, "
            f"{aggro}; always drops {drops or 'nothing certain'}")


def _reach(t: Any) -> int:
    """How far from its spawn an aggressive mob of type ``t`` can strike: its range plus its leash or route."""
    return t.aggro_range + t.roam + max((abs(dx) + abs(dy) for dx, dy in t.patrol), default=0)


def _plural(name: str, n: int) -> str:
    name = name.lower()
    return a(name) if n == 1 else " ".join([*name.split()[:-1], plural(name.split()[-1])])


def beasts_reaching(p: Point) -> list[Any]:
    """The aggressive mobs that can strike at ``p`` from somewhere their leash or route takes them."""
    return [m for m in W.mobs if W.mob_type(m.type).aggro_range > 0
            and dist(p, (m.x, m.y)) <= _reach(W.mob_type(m.type))]


def stand_tile(n: Any) -> Point:
    """Where a node's text tells a player to stand (:func:`node_text`)."""
    return W.map.adjacent_walkable(n.x, n.y)[0]


def _beasts_near(ways: list[list[Point]], skip: tuple[str, ...] = (), least_level: int = 0) -> dict[str, Any]:
    """The aggressive mobs (id -> mob) of at least ``least_level``, ``skip`` aside, that can reach the engine's
    shortest walk along each way (a list of points, walked in turn)."""
    found: dict[str, Any] = {}
    for way in ways:
        for start, goal in zip(way, way[1:]):
            path = route(G, tuple(start), tuple(goal)) or []
            for m in W.mobs:
                t = W.mob_type(m.type)
                if t.aggro_range > 0 and t.level >= least_level and m.id not in skip and m.id not in found \
                        and any(dist(q, (m.x, m.y)) <= _reach(t) for q in path):
                    found[m.id] = m
    return found


def _and(words: list[str]) -> str:
    if not words:
        return "no beast"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def beasts_on(ways: list[list[Point]], skip: tuple[str, ...] = ()) -> str:
    """The aggressive mobs that can reach the engine's shortest walk along each way (a list of points, walked
    in turn), as words, weakest first: "goblins (level 5, hits up to 3) and a fire imp (level 34, hits up to
    12)"; "no beast" if none. ``skip``: mob ids the brief names apart (their task gives them other motion).
    A brief that names some beasts of the way must name them all: a partial list reads as the whole."""
    seen: dict[str, set[str]] = {}
    for m in _beasts_near(ways, skip).values():
        seen.setdefault(m.type, set()).add(m.id)
    kinds = sorted(seen, key=lambda k: (W.mob_type(k).level, k))
    return _and([f"{_plural(W.mob_type(k).name, len(seen[k]))} (level {W.mob_type(k).level}, hits up to "
                 f"{W.mob_type(k).attack})" for k in kinds])


def beasts_at(ways: list[list[Point]], least_level: int = 0) -> str:
    """The aggressive mobs of at least ``least_level`` that can reach the engine's shortest walk along each way,
    each with its place and range, as words: "a rock golem (level 32, hits up to 12, strikes within 3 tiles)
    at (460,214)"; "no beast" if none. For a brief whose reader must walk wide of one: the shortest walk
    goes straight into its range, and two strikes in one round can kill a weak walker."""
    found = _beasts_near(ways, least_level=least_level)
    return _and([f"{a(W.mob_type(m.type).name.lower())} (level {W.mob_type(m.type).level}, hits up to "
                 f"{W.mob_type(m.type).attack}, strikes within {W.mob_type(m.type).aggro_range} tiles) at ({m.x},{m.y})"
                 for m in sorted(found.values(), key=lambda m: (W.mob_type(m.type).level, m.id))])


MOVE_TIP = f"move_character covers at most {MOVE} tiles of path per call; call it again to continue."
GIVE_TIP = f"transfer_items(targetPlayer=USERNAME, itemKey=..., count=N) needs the two of you within {RULES.transfer_range} tiles."
# roads named as the better way pass no camp, but a roaming mob knows no roads: say so wherever a brief names them
ROAM_TIP = ("A road that passes no camp is not free of beasts: goblins and others roam a few tiles around where "
            "they stand and may come beside it, and one whose range a walk enters stops the walk there.")


# ---------------------------------------------------------------------------------------------------
# plans
# ---------------------------------------------------------------------------------------------------
class Plan:
    def __init__(self, spawns: dict[str, Point]):
        self.steps: dict[str, dict[int, dict[str, Any]]] = {a: {} for a in spawns}
        self.pos: dict[str, Point] = dict(spawns)
        self.free: dict[str, int] = {a: 1 for a in spawns}

    def do(self, agent: str, tool: str, after: int = 1, **args: Any) -> int:
        rnd = max(after, self.free[agent])
        assert rnd not in self.steps[agent], (agent, rnd, tool)
        self.steps[agent][rnd] = {"tool": tool, "args": args}
        self.free[agent] = rnd + 1
        return rnd

    def walk(self, agent: str, goal: Point, after: int = 1) -> int:
        """move_character calls until the agent stands on ``goal``; returns the round of the last one."""
        start = self.pos[agent]
        if start == goal:
            return max(after, self.free[agent]) - 1
        path = route(G, start, goal)
        assert path, (agent, start, goal)
        n = max(1, math.ceil(len(path) / MOVE))
        last = 0
        for _ in range(n):
            last = self.do(agent, "move_character", after, x=goal[0], y=goal[1])
        self.pos[agent] = goal
        return last

    def _reach(self, agent: str, target: Point, after: int) -> int:
        """Walk until ``target`` is within an interaction's auto-walk; the tool then walks the rest."""
        start = self.pos[agent]
        path = route(G, start, target, 1, max_len=RULES.interact_range - 2)
        if path is None:
            goal = walkable_near(*target)
            goal = next(iter(G.adjacent_walkable(*target)), goal) if not G.walkable(*target) else goal
            self.walk(agent, goal, after)
            path = route(G, self.pos[agent], target, 1, max_len=RULES.interact_range)
            assert path is not None or dist(self.pos[agent], target) <= 1, (agent, target)
        if path:
            self.pos[agent] = path[-1]
        return max(after, self.free[agent])

    def harvest(self, agent: str, node: Any, after: int = 1) -> int:
        after = self._reach(agent, (node.x, node.y), after)
        return self.do(agent, "harvest_resource", after, targetInstance=node.id)

    def attack(self, agent: str, mob: Any, after: int = 1) -> int:
        after = self._reach(agent, (mob.x, mob.y), after)
        return self.do(agent, "attack_entity", after, targetInstance=mob.id)

    def pickup(self, agent: str, item_id: str, at: Point, after: int = 1) -> int:
        """pickup_resource of a ground item at ``at``: the tool walks onto its tile (within its auto-walk)."""
        after = self._reach(agent, at, after)
        self.pos[agent] = at
        return self.do(agent, "pickup_resource", after, targetInstance=item_id)

    def give(self, agent: str, to_user: str, item: str, count: int, after: int = 1) -> int:
        return self.do(agent, "transfer_items", after, targetPlayer=to_user, itemKey=item, count=count)

    def last_round(self) -> int:
        return max(max(s) for s in self.steps.values() if s)

    def solution(self) -> dict[str, list[dict[str, Any]]]:
        end = self.last_round()
        return {agent: [steps.get(r, {"tool": "sleep", "args": {"seconds": 1}}) for r in range(1, end + 1)]
                for agent, steps in self.steps.items()}


class Literal(str):
    """A string dumped as a YAML block literal (|)."""


def _literal(dumper: yaml.SafeDumper, data: Literal):
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")


yaml.SafeDumper.add_representer(Literal, _literal)


# ---------------------------------------------------------------------------------------------------
# hazards: where an aggressive mob can stop a walk (walk_aggro), for plans that must route around them
# ---------------------------------------------------------------------------------------------------
_HAZARD: dict[Point, str] = {}


def hazard_at() -> dict[Point, str]:
    """Every tile an aggressive mob can engage from (within its aggro range, plus one, of any tile its roam or
    patrol can take it to, world defaults), mapped to the mob's id. Computed once."""
    if not _HAZARD:
        for m in W.mobs:
            t = W.mob_type(m.type)
            if t.aggro_range <= 0:
                continue
            xs = [0] + [dx for dx, _ in t.patrol]
            ys = [0] + [dy for _, dy in t.patrol]
            box = (m.x + min(xs) - t.roam, m.y + min(ys) - t.roam, m.x + max(xs) + t.roam, m.y + max(ys) + t.roam)
            r = t.aggro_range + 1
            for x in range(box[0] - r, box[2] + r + 1):
                for y in range(box[1] - r, box[3] + r + 1):
                    dx = max(box[0] - x, 0, x - box[2])
                    dy = max(box[1] - y, 0, y - box[3])
                    if dx + dy <= r:
                        _HAZARD.setdefault((x, y), m.id)
    return _HAZARD


def hazards_on(start: Point, goal: Point, reach: int = 0) -> list[str]:
    """The aggressive mobs whose zone the engine's walk from ``start`` toward ``goal`` enters (empty: safe)."""
    path = route(G, start, goal, reach) or []
    hz = hazard_at()
    return sorted({hz[p] for p in path if p in hz})
