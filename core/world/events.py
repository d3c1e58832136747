"""Scheduled and triggered world events, joint actions and hidden information: a task's own mechanics.

A task file may declare three blocks (``events:``, ``joint_actions:``, ``hidden:``; docs/tasks.md). They are
world data: the specs below are what the file says, :class:`Mechanics` is one episode's running state of
them, held by the embedded engine (``EmbeddedWorld(mechanics=...)``) and consulted by a few small hooks in
the engine (a closed portal refuses, a guarded boss holds, a heavy load needs several hands, spawned raiders
are seen and attack). Everything is deterministic: events fire in file order at fixed points of the round,
the hidden choices are drawn from the episode's seed by their own random stream (the world's own stream is
not touched, so a task without them plays exactly as before).

When things happen:

- an event ``at_round: N`` takes effect from the start of round N: it fires at the tick that ends round N-1
  (``at_round: 1``: when the world is made, before the first turn);
- an event ``when:`` fires at the first tick at whose end its condition holds (a player stands in the area,
  holds the items, the mobs are dead), and takes effect from the next round;
- every event fires at most once; an event fired at a tick is reported in that tick's trajectory line
  (``events``), the ones made at the start in round 1's.

The verifier follows a ``change_objective`` event: :attr:`Mechanics.check_overrides` holds the new parameters
of the checks it changed, and ``core/tasks/verify.py`` evaluates those checks with them from then on.
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .closures import Closure, Closures, area_tiles, tiles_text
from .effects import Effects, ToolResult, engine_failure, engine_result
from .engine_state import GroundItem, MobState
from .engine_state import manhattan as _dist
from .factories import empty_list
from .roaming import advance, motion_for
from .spatial import Cells
from .wording import tiles as _tiles

if TYPE_CHECKING:  # pragma: no cover
    from .engine import EmbeddedWorld
    from .engine_state import Player
    from .datapack import PortalEnd

NEVER = 10**9  # a respawn round that never comes: an exhausted node, a raider that stays dead
SPAWN_BASE = 100_000  # a spawned mob's id number: SPAWN_BASE + 100 * event index + j (placed ids stay far below)

EventKind = Literal["close_portal", "open_portal", "depart", "deplete_node", "refill_node", "spawn_mobs", "announce",
                    "change_objective", "close_area", "open_area"]
EVENT_KINDS: tuple[str, ...] = EventKind.__args__  # type: ignore[attr-defined]
JointKind = Literal["guarded_mob", "held_gate", "heavy_load"]
HiddenKind = Literal["cache", "vein"]

# what each event kind needs besides its trigger (validated when the file is read)
_NEEDS: dict[str, tuple[str, ...]] = {
    "close_portal": ("portal",), "open_portal": ("portal",), "depart": ("portal",),
    "deplete_node": ("nodes",), "refill_node": ("nodes",), "spawn_mobs": ("mob", "at"),
    "announce": ("message", "at"), "change_objective": ("check", "set", "tell", "message"),
    "close_area": (), "open_area": ("area",),  # close_area: at or tiles (checked below)
}


def _tell(p: "Player", note: str) -> None:
    """Give a player an event's note once: two events of one round that say the same (an order that grows
    in two checks, told in one message) would otherwise show the player the same line twice."""
    if note not in p.notes:
        p.notes.append(note)


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Place(_Spec):
    """A tile or an area: ``x``/``y``, a ``landmark`` (its centre) or an ``npc`` (its tile), and a ``radius``
    (Manhattan tiles; what a use of it defaults to when left out: see the field that holds it)."""

    x: int | None = None
    y: int | None = None
    landmark: str | None = None
    npc: str | None = None
    radius: int | None = Field(None, ge=0, le=1000)

    @model_validator(mode="after")
    def _one_anchor(self) -> "Place":
        anchors = (self.x is not None or self.y is not None) + (self.landmark is not None) + (self.npc is not None)
        if anchors != 1 or (self.landmark is None and self.npc is None and (self.x is None or self.y is None)):
            raise ValueError("a place is x and y, or a landmark, or an npc (exactly one of them)")
        return self


class Trigger(_Spec):
    """The condition of a triggered event, checked at the end of every round until it first holds: a player
    stands in an area (``enters``), holds ``count`` of an item (``holds``: an item delivered), ``count`` mobs
    of a type (or one mob instance) are dead (``killed``), or a verifier checkpoint is reached (``checkpoint``:
    the check's index or name, read by the episode after the round's verification). ``by`` limits the first
    three to one agent (id or username)."""

    enters: Place | None = None
    holds: str | None = None
    killed: str | None = None
    checkpoint: int | str | None = None
    count: int = Field(1, ge=1)
    by: str | None = None

    @model_validator(mode="after")
    def _one_condition(self) -> "Trigger":
        given = [f for f in ("enters", "holds", "killed", "checkpoint") if getattr(self, f) is not None]
        if len(given) != 1:
            raise ValueError("a trigger is exactly one of enters, holds, killed or checkpoint")
        return self

    def describe(self) -> str:
        who = self.by or "a player"
        if self.enters is not None:
            return f"{who} entered {_place_text(self.enters)}"
        if self.holds is not None:
            return f"{who} holds {self.count} {self.holds}"
        if self.checkpoint is not None:
            return f"checkpoint {self.checkpoint!r} reached"
        return f"{self.count} {self.killed} killed" if "#" not in str(self.killed) else f"{self.killed} killed"


class EventSpec(_Spec):
    """One event of a task's ``events:`` block: when (``at_round`` or ``when``) and what (``do`` and its fields)."""

    id: str | None = None  # a name for logs, the trajectory and the map (default: event_<index>)
    at_round: int | None = Field(None, ge=1)
    when: Trigger | None = None
    do: EventKind
    portal: str | None = None  # close_portal, open_portal, depart
    nodes: list[str] = Field(default_factory=empty_list)  # deplete_node, refill_node (instance ids)
    mob: str | None = None  # spawn_mobs: a mob type key
    count: int = Field(1, ge=1, le=50)  # spawn_mobs: how many
    stops_walks: bool = True  # spawn_mobs: aggressive raiders stop a walk entering their range (false: tick only)
    at: Place | None = None  # spawn_mobs: where (radius: spread); announce: who hears it (radius, default 40)
    message: str | None = Field(None, max_length=2000)  # announce, change_objective (what the told agents read)
    speaker: str | None = None  # announce, change_objective: who speaks (default: the npc's name, or "Herald")
    check: int | str | None = None  # change_objective: the verifier check (its index or its name)
    set: dict[str, Any] | None = None  # change_objective: the check's parameters that change, with new values
    tell: list[str] = Field(default_factory=empty_list)  # change_objective: the agents who learn it
    tiles: list[tuple[int, int]] = Field(default_factory=empty_list, max_length=5000)  # close_area: the tiles
    only: str | None = None  # close_area with at: only the area's tiles of this biome ("bridge") or "road"
    area: str | None = None  # open_area: the id of the close_area event whose area opens again

    @model_validator(mode="after")
    def _complete(self) -> "EventSpec":
        if (self.at_round is None) == (self.when is None):
            raise ValueError("give exactly one of at_round (a round number) or when (a condition)")
        missing = [f for f in _NEEDS[self.do] if getattr(self, f) in (None, [], {})]
        if missing:
            raise ValueError(f"event '{self.do}' needs {', '.join(missing)}")
        if self.do == "close_area" and (self.at is None) == (not self.tiles):
            raise ValueError("event 'close_area' needs exactly one of at (a place and its radius: the area) or "
                             "tiles (a list of [x, y]: a road or a passage)")
        if self.tiles and self.do != "close_area":
            raise ValueError(f"tiles is a field of close_area, not of '{self.do}'")
        if not self.stops_walks and self.do != "spawn_mobs":
            raise ValueError(f"stops_walks is a field of spawn_mobs, not of '{self.do}'")
        if self.only is not None and (self.do != "close_area" or self.at is None):
            raise ValueError("only (a biome key or 'road') narrows the area of a close_area event given by at")
        return self


class JointSpec(_Spec):
    """One joint action (``joint_actions:``): a ``guarded_mob`` (``mob``, an instance id) whose guard breaks only
    in a round in which ``k`` players attack it; a ``held_gate`` (``portal``) that lets players through only in a
    round in which ``k`` players stood within ``radius`` of its entrance at once; a ``heavy_load`` (``item``,
    ``count``, placed ``at`` a tile when the episode starts) that moves only when ``k`` players pick it up in the
    same round."""

    id: str | None = None
    kind: JointKind
    k: int = Field(2, ge=2, le=100)
    mob: str | None = None
    portal: str | None = None
    radius: int = Field(1, ge=0, le=20)
    item: str | None = None
    count: int = Field(1, ge=1)
    at: Place | None = None

    @model_validator(mode="after")
    def _complete(self) -> "JointSpec":
        need = {"guarded_mob": ("mob",), "held_gate": ("portal",), "heavy_load": ("item", "at")}[self.kind]
        missing = [f for f in need if getattr(self, f) is None]
        if missing:
            raise ValueError(f"joint action '{self.kind}' needs {', '.join(missing)}")
        return self


class HiddenSpec(_Spec):
    """One piece of hidden information (``hidden:``), seen only by an agent within view of it: a ``cache`` of
    ``items`` lying at one of the places ``at`` (ground items ``cache#N``), or a ``vein``: of the resource nodes
    ``nodes`` only one yields, the others are exhausted. Which one: ``pick: seed`` (drawn from the episode's seed;
    a reference plan names it ``{hidden.ID}``, ``{hidden.ID.x}``, ``{hidden.ID.y}``) or the index of the one."""

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    kind: HiddenKind
    items: list[dict[str, Any]] = Field(default_factory=empty_list)  # cache: [{item, count}]
    at: list[Place] = Field(default_factory=empty_list)  # cache: the candidate places
    nodes: list[str] = Field(default_factory=empty_list)  # vein: the candidate nodes
    pick: int | Literal["seed"] = 0

    @model_validator(mode="after")
    def _complete(self) -> "HiddenSpec":
        options = self.at if self.kind == "cache" else self.nodes
        if not options:
            need = "at (one or more places)" if self.kind == "cache" else "nodes"
            raise ValueError(f"hidden '{self.kind}' needs {need}")
        if self.kind == "cache" and not self.items:
            raise ValueError("hidden 'cache' needs items: [{item: KEY, count: N}]")
        if isinstance(self.pick, int) and not 0 <= self.pick < len(options):
            raise ValueError(f"pick {self.pick} is not the index of one of the {len(options)} candidates")
        return self

    def chosen(self, seed: int) -> int:
        """The index of the candidate that holds it in an episode of ``seed`` (its own stream, per id)."""
        options = self.at if self.kind == "cache" else self.nodes
        if self.pick != "seed":
            return int(self.pick)
        return random.Random(f"hidden:{self.id}:{seed}").randrange(len(options))


class TaskMechanics(_Spec):
    """A task's events, joint actions and hidden information (empty: the world as it always was)."""

    events: list[EventSpec] = Field(default_factory=empty_list)
    joint_actions: list[JointSpec] = Field(default_factory=empty_list)
    hidden: list[HiddenSpec] = Field(default_factory=empty_list)

    def __bool__(self) -> bool:
        return bool(self.events or self.joint_actions or self.hidden)

    def event_id(self, i: int) -> str:
        return self.events[i].id or f"event_{i + 1}"


def spawned_id(mob_type: str, event: int, j: int) -> str:
    """The id of the ``j``-th mob the ``event``-th event spawns: known before the episode (a plan can name it)."""
    return f"{mob_type}#{SPAWN_BASE + 100 * event + j}"


def spawned_ids(m: "TaskMechanics | None") -> set[str]:
    """Every mob id a task's events can spawn."""
    if not m:
        return set()
    return {spawned_id(str(e.mob), i, j) for i, e in enumerate(m.events) if e.do == "spawn_mobs"
            for j in range(e.count)}


_PLACEHOLDER = re.compile(r"\{(hidden\.[A-Za-z][A-Za-z0-9_]*(?:\.[xy])?)\}")


def hidden_values(m: "TaskMechanics | None", seed: int, loaded: Any) -> dict[str, Any]:
    """What a reference plan's placeholders stand for in an episode of ``seed``: ``hidden.ID`` (a vein: the
    chosen node's id; a cache: its place as "(x,y)") and ``hidden.ID.x`` / ``hidden.ID.y`` (its tile)."""
    out: dict[str, Any] = {}
    for h in (m.hidden if m else []):
        i = h.chosen(seed)
        try:  # (a candidate that names nothing real is the task check's to report: no value for it)
            if h.kind == "vein":
                node = loaded.node_by_id[h.nodes[i]]
                x, y, name = node.x, node.y, node.id
            else:
                x, y, _ = resolve_place(loaded, h.at[i], 0)
                name = f"({x},{y})"
        except KeyError:
            continue
        out.update({f"hidden.{h.id}": name, f"hidden.{h.id}.x": x, f"hidden.{h.id}.y": y})
    return out


def placeholders(value: Any) -> list[str]:
    """The ``{hidden...}`` placeholders a step argument names."""
    return _PLACEHOLDER.findall(value) if isinstance(value, str) else []


def resolve_args(args: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """A step's arguments with its placeholders replaced: a whole-string placeholder by the value itself (an x
    stays a number), one inside a text (a chat message) by its text. Unknown ones are left as written."""
    out = {}
    for k, v in args.items():
        if isinstance(v, str) and "{hidden." in v:
            whole = _PLACEHOLDER.fullmatch(v)
            if whole is not None and whole.group(1) in values:
                v = values[whole.group(1)]
            else:
                v = _PLACEHOLDER.sub(lambda mo: str(values.get(mo.group(1), mo.group(0))), v)
        out[k] = v
    return out


def event_radius(kind: str) -> int:
    """The radius of a place an event gives without one: an announcement is heard within 40, an area closes
    only the tile given, the rest (a raid's spread, a trigger's area) 2."""
    return 40 if kind == "announce" else 0 if kind == "close_area" else 2


def _place_text(pl: Place) -> str:
    if pl.landmark:
        return pl.landmark + (f" (within {pl.radius})" if pl.radius is not None else "")
    if pl.npc:
        return f"npc {pl.npc}"
    return f"({pl.x},{pl.y})" + (f" within {pl.radius}" if pl.radius else "")


def resolve_place(loaded: Any, pl: Place, default_radius: int) -> tuple[int, int, int]:
    """(x, y, radius) of a place on a loaded world (a landmark's default radius is its own)."""
    if pl.landmark is not None:
        lm = loaded.landmark(pl.landmark)
        return lm.x, lm.y, pl.radius if pl.radius is not None else lm.radius
    if pl.npc is not None:
        npc = loaded.npc(pl.npc)
        return npc.x, npc.y, pl.radius if pl.radius is not None else default_radius
    return int(pl.x), int(pl.y), pl.radius if pl.radius is not None else default_radius  # type: ignore[arg-type]


def spawn_tiles(gmap: Any, x: int, y: int, radius: int, n: int) -> list[tuple[int, int]]:
    """``n`` walkable tiles round (x, y) in the area that holds it, nearest first (then by y, x); repeats the
    tiles found when there are fewer than ``n`` within ``radius``."""
    centre = (x, y) if gmap.walkable(x, y) else gmap.nearest_walkable(x, y, 30)
    if centre is None:
        return []
    comp = gmap.component(*centre)
    tiles = sorted(((abs(dx) + abs(dy), centre[1] + dy, centre[0] + dx)
                    for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1)
                    if abs(dx) + abs(dy) <= radius), key=lambda t: t)
    found = [(tx, ty) for _, ty, tx in tiles if gmap.walkable(tx, ty) and gmap.component(tx, ty) == comp]
    found = found or [centre]
    return [found[i % len(found)] for i in range(n)]


class Mechanics:
    """One episode's running state of a task's mechanics, held by the embedded engine (``world.mech``)."""

    def __init__(self, world: "EmbeddedWorld", spec: TaskMechanics):
        self.w = world
        self.spec = spec
        loaded = world.loaded
        self.closed: dict[str, tuple[int, str]] = {}  # portal key -> (round it closed from, event kind)
        self.departs: dict[str, int] = {}  # portal key -> the round it leaves (a scheduled departure not yet gone)
        self.check_overrides: dict[int | str, dict[str, Any]] = {}  # verifier check ref -> its new parameters
        # agent id -> (note, standing line) of each objective change it was told: the note is read once, the
        # line stays in every later observation (task_303's pilots lost track of which change held)
        self.objective_news: dict[str, list[tuple[str, str]]] = {}
        self.fired: set[int] = set()
        self.records: list[dict[str, Any]] = []  # what happened since the last tick report
        # (record, agents told, place heard within, note) of the start events: for players who join after them
        self.start_notes: list[tuple[dict[str, Any], tuple[str, ...], tuple[int, int, int] | None, str]] = []
        self.spawned: dict[str, MobState] = {}
        self.moving: dict[str, MobState] = {}  # spawned mobs the task's mobs: block makes roam or patrol
        self.gone: set[str] = set()  # spawned mobs killed (and removed)
        # spawned mobs some player has had in view (at a tick, or when one was targeted): the ids of spawned
        # mobs follow a pattern (goblin#100000, #100001, ...), and one nobody has seen cannot be targeted from
        # out of view by guessing it (a pilot found a hidden crewman that way)
        self.sighted: set[str] = set()
        self.tick_only: set[str] = set()  # spawned mobs that strike at the tick but stop no walk (stops_walks: false)
        self.mob_cells = Cells()
        self.guards: dict[str, int] = {}  # mob id -> k
        self.gates: dict[str, tuple[int, int]] = {}  # portal key -> (k, radius)
        self.loads: dict[str, int] = {}  # ground item id -> k
        self._together: dict[str, tuple[int, list[str]]] = {}  # target -> (round, agent ids that took part)
        self.gate_open: dict[str, int] = {}  # portal key -> the round it is held open
        self.places: list[tuple[str, str, int, int, int]] = []  # (label, kind, x, y, radius) for the map
        self.hidden_choice: dict[str, int] = {}
        self._resolved: list[tuple[int, int, int] | None] = []
        for e in spec.events:
            pl = e.at if e.at is not None else (e.when.enters if e.when is not None else None)
            self._resolved.append(resolve_place(loaded, pl, event_radius(e.do)) if pl else None)
        self.closures = Closures(world.map)  # the areas closed now (close_area / open_area)
        for e in spec.events:
            if e.do == "depart" and e.at_round is not None:
                self.departs[e.portal] = e.at_round  # type: ignore[index]
        self.joint_ids: dict[str, str] = {}  # mob id, portal key or load id -> the joint action's id (records)
        ground = 0
        for n, j in enumerate(spec.joint_actions):
            if j.kind == "guarded_mob":
                self.guards[j.mob] = j.k  # type: ignore[index]
                target = j.mob
            elif j.kind == "held_gate":
                self.gates[j.portal] = (j.k, j.radius)  # type: ignore[index]
                target = j.portal
            else:
                x, y, _ = resolve_place(loaded, j.at, 0)  # type: ignore[arg-type]
                ground += 1
                target = f"load#{ground}"
                world.ground[target] = GroundItem(target, j.item, j.count, x, y)  # type: ignore[arg-type]
                self.loads[target] = j.k
            self.joint_ids[target] = j.id or f"joint_{n + 1}"  # type: ignore[index]
        caches = 0
        for h in spec.hidden:
            i = self.hidden_choice[h.id] = h.chosen(world.seed)
            if h.kind == "cache":
                x, y, _ = resolve_place(loaded, h.at[i], 0)
                for stack in h.items:
                    caches += 1
                    gid = f"cache#{caches}"
                    world.ground[gid] = GroundItem(gid, str(stack["item"]), int(stack.get("count", 1)), x, y)
            else:
                for j, nid in enumerate(h.nodes):
                    if j != i:
                        self._exhaust(nid)
        for i, e in enumerate(spec.events):
            if e.at_round is not None and e.at_round <= 1:
                self._fire(i, "at the start", 1)

    # -- the tick ----------------------------------------------------------------------------------------
    def tick(self, ended: int) -> list[dict[str, Any]]:
        """At the tick that ends round ``ended``: remove raiders killed, fire the events due (file order), and
        hand over the records of everything that happened since the last tick (events, joint actions)."""
        for mid in [m for m, s in self.spawned.items() if s.respawn_at is not None]:
            self._remove_spawned(mid)
        if self.spawned:
            vr = self.w.rules.view_radius
            for p in self.w.players.values():
                if p.active and p.alive:
                    self.sighted.update(m.id for _, m in self.mob_cells.near(p.x, p.y, vr))
        nxt = ended + 1
        for i, e in enumerate(self.spec.events):
            if i in self.fired:
                continue
            if e.at_round is not None:
                if e.at_round == nxt:
                    self._fire(i, f"round {nxt}", nxt)
            elif e.when.checkpoint is None:  # type: ignore[union-attr]  (checkpoints: after_verify)
                who = self._condition(e.when)  # type: ignore[arg-type]
                if who is not None:
                    said = e.when.describe()  # type: ignore[union-attr]
                    self._fire(i, said if not who or e.when.by else f"{who} ({said})", nxt)  # type: ignore[union-attr]
        out, self.records = self.records, []
        return out

    def _condition(self, t: Trigger) -> str | None:
        """Who met the condition ("" when nobody in particular), or None when it does not hold."""
        w = self.w
        by = w.by_username.get(t.by, t.by) if t.by else None
        players = [p for p in w.players.values() if p.active and p.alive and (by is None or p.agent_id == by)]
        if t.enters is not None:
            x, y, r = resolve_place(w.loaded, t.enters, 2)
            inside = [p for p in players if _dist(p.x, p.y, x, y) <= r]
            return inside[0].username if inside else None
        if t.holds is not None:
            for p in players:
                worn = sum(e[1] for e in p.equipment.values() if e[0] == t.holds)
                if p.inv.count(t.holds) + worn >= t.count:
                    return p.username
            return None
        target = str(t.killed)
        if "#" in target:
            m = w.mobs.live.get(target)
            dead = target in self.gone or (m is not None and m.respawn_at is not None)
            return "" if dead else None
        scope = players if by is not None else list(w.players.values())
        return "" if sum(p.kills.get(target, 0) for p in scope) >= t.count else None

    # -- firing ------------------------------------------------------------------------------------------
    def after_verify(self, reached: set[int | str]) -> list[dict[str, Any]]:
        """After the tick's verification (the episode calls it with the checkpoints achieved, by index and by
        name): fire the events waiting for one of them; they hold from the next round, like every triggered
        event. Returns their records (for the same tick line)."""
        for i, e in enumerate(self.spec.events):
            if i not in self.fired and e.when is not None and e.when.checkpoint is not None \
                    and e.when.checkpoint in reached:
                self._fire(i, e.when.describe(), self.w.round)  # (the tick already moved the round on)
        out, self.records = self.records, []
        return out

    def _fire(self, i: int, cause: str, rnd: int) -> None:
        e = self.spec.events[i]
        self.fired.add(i)
        w = self.w
        rec: dict[str, Any] = {"id": self.spec.event_id(i), "kind": e.do, "round": rnd, "cause": cause}
        place = self._resolved[i]
        if e.do in ("close_portal", "depart"):
            self.closed[e.portal] = (rnd, e.do)  # type: ignore[index]
            self.departs.pop(e.portal, None)  # type: ignore[arg-type]
            rec["portal"] = e.portal
        elif e.do == "open_portal":
            self.closed.pop(e.portal, None)  # type: ignore[arg-type]
            rec["portal"] = e.portal
        elif e.do == "deplete_node":
            for nid in e.nodes:
                self._exhaust(nid)
            rec["nodes"] = list(e.nodes)
        elif e.do == "refill_node":
            for nid in e.nodes:
                n = w.nodes[nid]
                n.respawn_at = None
                n.left = n.type.harvests
                w.depleted.pop(nid, None)
            rec["nodes"] = list(e.nodes)
        elif e.do == "spawn_mobs":
            rec["mobs"] = self._spawn(i, e.mob, e.count, place, rnd)  # type: ignore[arg-type]
            if not e.stops_walks:
                self.tick_only.update(rec["mobs"])
            rec["at"] = list(place[:2])  # type: ignore[index]
        elif e.do == "announce":
            x, y, r = place  # type: ignore[misc]
            speaker = e.speaker or (w.loaded.npc(e.at.npc).name if e.at and e.at.npc else "Herald")
            note = f"{speaker} announces at ({x},{y}) (round {rnd}): {e.message}"
            heard = [p for p in w.players.values() if p.active and p.alive and _dist(p.x, p.y, x, y) <= r]
            for p in heard:
                _tell(p, note)
            if cause == "at the start":
                self.start_notes.append((rec, (), place, note))
            rec["heard_by"] = [p.agent_id for p in heard]
            rec["at"] = [x, y, r]
        elif e.do == "close_area":
            c = self._closure(i, e, place, rnd)
            self.closures.close(c)
            rec.update(area=c.id, tiles=len(c.tiles), where=c.where)
        elif e.do == "open_area":
            self.closures.reopen(str(e.area))
            rec["area"] = e.area
        elif e.do == "change_objective":
            ref = e.check
            merged = {**self.check_overrides.get(ref, {}), **(e.set or {})}  # type: ignore[arg-type]
            self.check_overrides[ref] = merged  # type: ignore[index]
            # marked as what it is: pilots read a plain line among the hit and hand-over notes as easy to miss
            note = f"Your objective changed. {e.speaker or 'News'} (round {rnd}): {e.message}"
            told = []
            for a in e.tell:
                aid = w.by_username.get(a, a)
                p = w.players.get(aid)
                if p is not None and p.alive:
                    _tell(p, note)
                    self._told_change(aid, note)
                    told.append(aid)
            rec.update(check=ref, set=dict(e.set or {}), told=told)
            if cause == "at the start":
                self.start_notes.append((rec, tuple(e.tell), None, note))
        self.records.append(rec)

    def _closure(self, i: int, e: EventSpec, place: tuple[int, int, int] | None, rnd: int) -> Closure:
        gm = self.w.map
        if place is not None:
            x, y, r = place
            tiles = area_tiles(gm, x, y, r, e.only)
            where = f"the area within {_tiles(r)} of ({x},{y})" if r else f"the tile ({x},{y})"
            if e.at is not None and e.at.landmark:
                where = f"{self.w.loaded.landmark(e.at.landmark).name} ({x},{y}) within {r}"
            if e.only is not None:
                kind = "road" if e.only == "road" else self.w.biome_names.get(e.only, e.only).lower()
                where = f"the {kind} near ({x},{y}) ({_tiles(len(tiles))})"
        else:
            tiles = frozenset((x, y) for x, y in e.tiles if gm.walkable(x, y))
            where = f"the way through {tiles_text(tiles)}"
        return Closure(self.spec.event_id(i), tiles, rnd, where, e.message)

    def closure_note(self, x: int, y: int, radius: int) -> list[str]:
        """What an observation at (x, y) says of the closed areas within ``radius`` (the view) of it."""
        return [f"Closed: {c.text()}. Walks go round it; a walk that cannot is refused."
                for c in self.closures.seen_from(x, y, radius)]

    def joined(self, p: "Player") -> None:
        """A player entered the world after the start events fired: the notes meant for it (an announcement
        at its spawn, a change told to it), and the start records name it."""
        for rec, refs, place, note in self.start_notes:
            if (p.agent_id in refs or p.username in refs) if place is None else \
                    _dist(p.x, p.y, place[0], place[1]) <= place[2]:
                _tell(p, note)
                if rec["kind"] == "change_objective":
                    self._told_change(p.agent_id, note)
                rec["heard_by" if place is not None else "told"].append(p.agent_id)

    def _told_change(self, agent_id: str, note: str) -> None:
        standing = note.replace("Your objective changed. ", "Objective change still in force: ", 1)
        told = self.objective_news.setdefault(agent_id, [])
        if (note, standing) not in told:  # two changes told in one message (as _tell): one line
            told.append((note, standing))

    def standing_changes(self, agent_id: str, notes: list[str]) -> list[str]:
        """The objective changes told to the agent, as lines for an observation whose ``notes`` no longer hold
        the change's own note (read in an earlier turn)."""
        return [standing for note, standing in self.objective_news.get(agent_id, ()) if note not in notes]

    def _exhaust(self, nid: str) -> None:
        n = self.w.nodes[nid]
        n.left = 0
        n.respawn_at = NEVER
        self.w.depleted[nid] = n

    def _spawn(self, i: int, mob_type: str, count: int, place: tuple[int, int, int], rnd: int) -> list[str]:
        w = self.w
        mt = w._mob_types[mob_type].model_copy(update={"respawn_rounds": NEVER})
        ids = []
        for j, (x, y) in enumerate(spawn_tiles(w.map, place[0], place[1], place[2], count)):
            mid = spawned_id(mob_type, i, j)
            # it moves as the task's mobs: block declares for its type (a patrol's offsets from where it appears)
            motion = motion_for(w.map, mid, mt, (x, y), w.mob_overrides, task_only=True) if w.rules.roaming else None
            m = MobState(mid, mt, x, y, hp=mt.hp, motion=motion, at=rnd)
            self.spawned[mid] = m
            if motion is not None:
                self.moving[mid] = m
            w.mobs.live[mid] = m
            self.mob_cells.put(mid, m)
            ids.append(mid)
        return ids

    def step_spawned(self, nxt: int) -> None:
        """Move the spawned mobs that move on to where they stand in round ``nxt`` (by id; each from its own
        stream, as placed movers: roaming.advance), unless a fight or a wound holds them this tick."""
        w = self.w
        for mid in sorted(self.moving):
            m = self.moving[mid]
            if m.respawn_at is None and m.at < nxt:
                advance(m, m.motion, w.seed, nxt, w.map)
                self.mob_cells.put(mid, m)

    def _remove_spawned(self, mid: str) -> None:
        self.gone.add(mid)
        self.moving.pop(mid, None)
        self.spawned.pop(mid, None)
        self.mob_cells.discard(mid)
        self.w.mobs.live.pop(mid, None)
        self.w.dead_mobs.pop(mid, None)
        self.w.wounded.pop(mid, None)

    # -- hooks the engine calls --------------------------------------------------------------------------
    def seen_near(self, x: int, y: int, radius: int) -> list[tuple[int, str, str, Any]]:
        """Observation candidates (distance, id, "mob", state) of the spawned mobs within ``radius``."""
        return [(d, m.id, "mob", m) for d, m in self.mob_cells.near(x, y, radius)]

    def may_target(self, p: "Player", mob: MobState) -> bool:
        """Whether ``p`` may name ``mob`` as a target: any mob but a spawned one nobody has had in view (not the
        attacker, not a teammate now, not anyone at a tick since it came): that id could only be a guess."""
        if mob.id not in self.spawned or mob.id in self.sighted:
            return True
        vr = self.w.rules.view_radius
        if any(q.active and q.alive and _dist(q.x, q.y, mob.x, mob.y) <= vr for q in self.w.players.values()):
            self.sighted.add(mob.id)
            return True
        return False

    def aggressors(self, p: "Player") -> list[MobState]:
        """Spawned mobs alive whose aggro range reaches ``p`` (by id), for the tick's aggro exchange."""
        out = [m for d, m in self.mob_cells.near(p.x, p.y, 30)
               if m.respawn_at is None and 0 < m.type.aggro_range >= d]
        return sorted(out, key=lambda m: m.id)

    def walk_threats(self, start: tuple[int, int], steps: list[tuple[int, int]]) -> list[MobState]:
        """Spawned mobs alive and aggressive whose aggro range can reach some tile of a walk (by its box), by id:
        for the walk's check (combat.py ``_walk_hazard``), which stops a walk entering their range."""
        xs, ys = [start[0], *(x for x, _ in steps)], [start[1], *(y for _, y in steps)]
        x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
        out = [m for m in self.spawned.values()
               if m.respawn_at is None and m.type.aggro_range > 0 and m.id not in self.tick_only
               and max(x0 - m.x, 0, m.x - x1) + max(y0 - m.y, 0, m.y - y1) <= m.type.aggro_range]
        return sorted(out, key=lambda m: m.id)

    def mob_note(self, mob_id: str) -> str:
        """What a guarded mob's Nearby row adds."""
        k = self.guards.get(mob_id)
        return f"; guarded: hurt only in a round in which {k} players attack it" if k else ""

    def load_note(self, ground_id: str) -> str:
        """What a heavy load's Nearby row adds: how many hands it takes, and who holds it this round (a porter who
        arrived after its partner's hold could not tell and lifted alone, a round lost: pilot of task_319)."""
        k = self.loads.get(ground_id)
        if not k:
            return ""
        note = f"; heavy: {k} players must pick it up in the same round"
        got = self._together.get(ground_id)
        if got is not None and got[0] == self.w.round and got[1]:
            names = ", ".join(self.w.players[a].username for a in got[1])
            note += f"; held this round by {names} ({len(got[1])} of {k})"
        return note

    def portal_note(self, key: str, returning: bool = False) -> str:
        """What a portal end's Nearby row adds: closed, when a scheduled departure leaves, a gate to hold."""
        closed = self.closed.get(key)
        if closed is not None:
            return "; gone (it left)" if closed[1] == "depart" else "; closed"
        leaves = self.departs.get(key)
        notes = f"; last departure at the end of round {leaves - 1}" if leaves is not None else ""
        gate = self.gates.get(key) if not returning else None
        if gate is not None:
            notes += (f"; opens when someone enters while {gate[0]} players stand within {gate[1]} of it, and then "
                      "lets through, for the rest of that round, anyone who has not yet taken a turn in it")
        return notes

    def portal_refusal(self, p: "Player", end: "PortalEnd") -> ToolResult | None:
        """Why ``p`` cannot use ``end`` now (closed, gone, or a gate not held open), or None."""
        key = end.key
        closed = self.closed.get(key)
        if closed is not None:
            if closed[1] == "depart":
                return engine_failure("invalid", f"{end.name} left at the end of round {closed[0] - 1} and does "
                                                 f"not come back; find another way.")
            return engine_failure("invalid", f"{end.name} is closed (since round {closed[0]}).")
        gate = self.gates.get(key)
        if gate is None or end.returning:
            return None
        k, radius = gate
        rnd = self.w.round
        if self.gate_open.get(key) == rnd:
            return None
        here = sorted((q for _, q in self.w._player_cells.near(end.x, end.y, radius) if q.active and q.alive),
                      key=lambda q: q.order)
        if len(here) >= k:
            self.gate_open[key] = rnd
            self.records.append({"id": self.joint_ids[key], "kind": "joint:held_gate", "portal": key,
                                 "round": rnd, "agents": [q.agent_id for q in here], "k": k})
            return None
        names = ", ".join(q.username for q in here)
        return engine_failure("invalid", f"{end.portal.name} opens only while {k} players stand within "
                                         f"{_tiles(radius)} of it in the same round; now {len(here)} ({names}). Gather {k} "
                                         f"there, then enter: once held open it lets through, for the rest of that round, "
                                         f"everyone who has not yet taken a turn in it.")

    def _join(self, target: str, p: "Player", still: Any) -> list[str]:
        """Add ``p`` to those taking part on ``target`` this round (``still(agent)``: who still counts)."""
        rnd = self.w.round
        got = self._together.get(target)
        who = [a for a in got[1] if still(a)] if got is not None and got[0] == rnd else []
        if p.agent_id not in who:
            who.append(p.agent_id)
        self._together[target] = (rnd, who)
        return who

    def guard(self, p: "Player", mob: MobState, eff: Effects) -> ToolResult | str:
        """The answer when ``p``'s attack on ``mob`` only holds its guard; else what the fight's result begins
        with: "" (not guarded), or who broke its guard with ``p`` this round."""
        k = self.guards.get(mob.id)
        if k is None:
            return ""
        players = self.w.players
        who = self._join(mob.id, p, lambda a: True)
        name = f"{mob.type.name} {mob.id}"
        if len(who) >= k:
            others = ", ".join(players[a].username for a in who if a != p.agent_id)
            if len(who) == k:
                self.records.append({"id": self.joint_ids[mob.id], "kind": "joint:guarded_mob", "mob": mob.id,
                                     "round": self.w.round, "agents": list(who), "k": k})
                for a in who[:-1]:  # their results said "no blow struck yet": tell them the guard came down
                    _tell(players[a], f"The guard of {name} broke in round {self.w.round}: {p.username} attacked "
                                      f"it after you and fought it.")
            down = "your attack broke its guard" if len(who) == k else "its guard was already broken"
            return (f"Joint attack with {others}: {down} ({len(who)} players attacked it this round, {k} needed), "
                    "so you fight it as usual. ")
        # an attack registered, not a failed call: "keeps its guard up" read as one, as "too heavy" did for a lift;
        # the text says what was recorded, what hurts it (the rule every brief of a guarded mob states) and when
        names = ", ".join(players[a].username for a in who)
        more = k - len(who)
        return engine_result(f"Attack registered: {name} keeps its guard up, so no blow was struck either way (you "
                             f"dealt 0, took 0); {len(who)} of the {k} attackers it takes in one round so far "
                             f"({names}). Its guard breaks when {more} more "
                             f"{'player attacks' if more == 1 else 'players attack'} it later in this round (only "
                             "players after you in the turn order still act in it): from that attack on, attacks "
                             "this round fight it as usual, and you get a note saying so. If nobody does, your "
                             "attack counts only for this round: attack it together again next round.", effects=eff)

    def lift(self, p: "Player", g: GroundItem, eff: Effects) -> ToolResult | str:
        """The answer when ``p``'s pickup of ``g`` only holds a heavy load; else what the pickup's result begins
        with: "" (not a heavy load), or who lifted it with ``p`` (enough hands this round)."""
        k = self.loads.get(g.id)
        if k is None:
            return ""
        players = self.w.players

        def still(a: str) -> bool:
            q = players[a]
            return q.active and q.alive and _dist(q.x, q.y, g.x, g.y) <= 1

        who = self._join(g.id, p, still)
        if len(who) >= k:
            self.records.append({"id": self.joint_ids[g.id], "kind": "joint:heavy_load", "load": g.id, "item": g.item,
                                 "round": self.w.round, "agents": list(who), "k": k, "carrier": p.agent_id})
            # their own results said "lift registered ... carry nothing yet": tell them it came off, and who carries it
            for a in who:
                if a != p.agent_id:
                    _tell(players[a], f"The {g.item} ({g.id}) was lifted in round {self.w.round}: {p.username} "
                                      f"picked it up with you and carries it.")
            # the carrier read a plain "Picked up 4 bronze_bar." and could not tell that the others' holds counted
            others = ", ".join(players[a].username for a in who if a != p.agent_id)
            return (f"Joint lift completed with {others} ({len(who)} players held the {g.item} ({g.id}) this round, "
                    f"{k} needed): you carry it. ")
        # a registered hold, not a failure: the first of two lifters read "too heavy" as one (pilots of task_319,
        # task_421), so the text says what was recorded, what completes the lift and who then carries the load
        names = ", ".join(players[a].username for a in who)
        more = k - len(who)
        return engine_result(f"Lift registered: you hold the {g.item} ({g.id}), {len(who)} of the {k} players it "
                             f"takes in one round ({names}); you carry nothing yet. It is lifted when {more} more "
                             f"{'player standing by it picks' if more == 1 else 'players standing by it pick'} it up "
                             "later in this round (only players after you in the turn order still act in it): the "
                             "last of them carries it, and you get a note saying so. If nobody does, your hold "
                             "ends with the round: pick it up together again next round.", effects=eff)

    def snapshot(self) -> dict[str, Any]:
        return {"closed_portals": {k: v[0] for k, v in sorted(self.closed.items())},
                **({"closed_areas": {c.id: c.since for c in self.closures.active.values()}}
                   if self.closures.ever else {}),
                "fired_events": sorted(self.spec.event_id(i) for i in self.fired),
                "check_overrides": {str(k): v for k, v in self.check_overrides.items()},
                "spawned_mobs": {m: {"hp": s.hp, "x": s.x, "y": s.y} for m, s in sorted(self.spawned.items())},
                "hidden": dict(sorted(self.hidden_choice.items()))}


def event_line(rec: dict[str, Any]) -> str:
    """A record as the tick's one-line log."""
    kind = rec["kind"]
    if kind.startswith("joint:"):
        what = rec.get("mob") or rec.get("portal") or rec.get("load")
        return f"{kind} {what} in round {rec['round']} by {', '.join(rec['agents'])} (k={rec['k']})"
    detail = {k: v for k, v in rec.items() if k not in ("id", "kind", "round", "cause")}
    shown = "; ".join(f"{k}={v}" for k, v in detail.items())
    return f"event {rec['id']} ({kind}, {rec['cause']}) from round {rec['round']}: {shown}"
