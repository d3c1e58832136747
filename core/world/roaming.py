"""Mobs that move: roaming within a leash of their spawn, or walking a patrol route in a loop.

A mob type in the data pack may say ``roam`` (a leash radius, Manhattan, around each mob's spawn), ``patrol``
(waypoints as offsets from each mob's spawn) and ``speed`` (tiles a round); a task overrides them per type or per
instance (its ``mobs:`` block; a patrol under an instance id is absolute tiles). What moves in one world
configuration is a :class:`Movers`, read-only and shared by every episode of it (kept on the loaded world).

Where a moving mob stands in round ``r`` is a pure function of the episode seed, the mob's id, ``r`` and what
happened to it: a roaming mob takes ``speed`` random steps a round, each drawn from a hash of (seed, mob id,
round, step) that never touches the episode's ``random.Random`` (so a mob's moves never shift a combat roll, and
a combat roll never shifts a move); a patrolling mob is ``speed`` tiles further along its loop each round. A mob
holds still while it is dead, wounded or was in a fight this round, and a respawned mob starts at its spawn.

Nothing here is computed for every mob each round: a mob's position is worked out only when someone can see it,
reach it or pass through its aggro range (:func:`advance` catches it up from the round it was last worked out
for). Each roamer's undisturbed walk from its spawn is kept per seed and shared by the episodes of a
configuration (:func:`_roamed`): every episode's final state places every mover, most of them never disturbed.
The spatial index (:meth:`Movers.near`) bounds each moving mob by the box it can ever be in (its leash or
its route), so a query reads the movers whose box is in range, not all of them.
"""

from __future__ import annotations

import zlib
from array import array
from typing import Any, Iterator

from .spatial import CELL

_MASK = (1 << 64) - 1
_STEPS = ((0, -1), (-1, 0), (1, 0), (0, 1))  # up, left, right, down
KEEP = 20_000  # (tile, radius) answers kept per configuration (cleared when full)


_START = 0x9E3779B97F4A7C15  # splitmix64's increment: the hash of no parts


def _mix(*parts: int) -> int:
    """A 64-bit hash of the integers (splitmix64 rounds): the same in every process and Python version."""
    h = _START
    for part in parts:
        h = _mixed_in(h, part)
    return h


def _mixed_in(h: int, part: int) -> int:
    """One splitmix64 round of ``_mix``: ``h`` with ``part`` mixed in. ``_mix(a, b, c)`` is
    ``_mixed_in(_mixed_in(_mixed_in(_START, a), b), c)``, so a hash of parts sharing a prefix can start
    from the prefix's."""
    h = (h ^ (part & _MASK)) * 0xBF58476D1CE4E5B9 & _MASK
    h ^= h >> 31
    h = h * 0x94D049BB133111EB & _MASK
    return h ^ (h >> 29)


class Motion:
    """How one mob moves: ``leash`` (roaming) or ``loop`` (the patrol's closed path of tiles, starting at the
    spawn), ``speed`` tiles a round, and ``box`` (x0, y0, x1, y1), every tile it can ever stand on."""

    __slots__ = ("mob_id", "key", "home", "leash", "loop", "speed", "box", "aggro", "waypoints", "walks")

    def __init__(self, mob_id: str, home: tuple[int, int], speed: int, aggro: int, *, leash: int = 0,
                 loop: tuple[tuple[int, int], ...] | None = None, waypoints: tuple[tuple[int, int], ...] = ()):
        self.mob_id = mob_id
        self.key = zlib.crc32(mob_id.encode())  # the mob's own stream (ids are unique in a world)
        self.home = home
        self.leash = leash
        self.loop = loop
        self.speed = speed
        self.aggro = aggro
        self.waypoints = waypoints  # the patrol's waypoints as tiles (what `world render` draws)
        self.walks: dict[int, array] = {}  # seed -> the roam from the spawn nobody disturbs (see advance)
        if loop:
            xs, ys = [t[0] for t in loop], [t[1] for t in loop]
            self.box = (min(xs), min(ys), max(xs), max(ys))
        else:
            self.box = (home[0] - leash, home[1] - leash, home[0] + leash, home[1] + leash)

    @property
    def kind(self) -> str:
        return "patrol" if self.loop else "roam"

    def box_distance(self, x: int, y: int) -> int:
        """Manhattan distance from (x, y) to the nearest tile of the box (a lower bound of the mob's distance)."""
        x0, y0, x1, y1 = self.box
        return max(x0 - x, 0, x - x1) + max(y0 - y, 0, y - y1)


def advance(mob: Any, motion: Motion, seed: int, to_round: int, gm: Any) -> None:
    """Move ``mob`` (its ``x``, ``y``, ``at``, ``leg``) on to where it stands in ``to_round``. ``mob.at`` is the
    round its position is for; a hold sets it ahead (the rounds up to it are spent standing still)."""
    at = mob.at
    if at >= to_round:
        return
    if mob.respawn_at is not None:  # dead: the body stays where it fell until the respawn puts it home
        mob.at = to_round
        return
    if motion.loop:
        mob.leg = (mob.leg + motion.speed * (to_round - at)) % len(motion.loop)
        mob.x, mob.y = motion.loop[mob.leg]
    else:
        mob.x, mob.y = _roamed(motion, seed, mob.x, mob.y, at, to_round, gm)
    mob.at = to_round


KEEP_WALKS = 16  # seeds whose undisturbed walks a roaming mob keeps (cleared when full)


def _roamed(motion: Motion, seed: int, x: int, y: int, at: int, to_round: int, gm: Any) -> tuple[int, int]:
    """Where a roaming mob standing at (x, y) in round ``at`` stands in ``to_round``.

    A roam is a chain: the tile in round t + 1 depends only on the tile in round t and on (seed, mob, t + 1). So
    a mob that stands where its undisturbed walk from the spawn (``motion.walks``) stands in round ``at`` stands
    where that walk does in every later round. That walk is worked out once per seed and shared by every episode
    of the world configuration (the final state of each one places every mover in the world, most of them
    untouched). A mob off that walk (it fought, or respawned later) takes its steps one by one."""
    walk = motion.walks.get(seed)
    if walk is None:
        if len(motion.walks) >= KEEP_WALKS:
            motion.walks.clear()
        walk = array("i", motion.home)  # round 1: at the spawn
    if at < 1 or len(walk) < 2 * at or (walk[2 * at - 2], walk[2 * at - 1]) != (x, y):
        for x, y in _steps(motion, seed, x, y, at, to_round, gm):
            pass  # on to its tile in to_round
        return x, y
    known = len(walk) // 2  # the last round the walk is worked out for
    if known < to_round:
        longer = array("i", walk)  # a new array: an episode on another thread may be reading the old one
        for tile in _steps(motion, seed, walk[-2], walk[-1], known, to_round, gm):
            longer.extend(tile)
        motion.walks[seed] = walk = longer
    return walk[2 * to_round - 2], walk[2 * to_round - 1]


def _steps(motion: Motion, seed: int, x: int, y: int, at: int, to_round: int, gm: Any) -> Iterator[tuple[int, int]]:
    """The tiles a roaming mob at (x, y) in round ``at`` stands on in rounds ``at + 1`` .. ``to_round``: ``speed``
    random steps a round, a step that would leave the leash or the walkable tiles not taken."""
    hx, hy = motion.home
    leash, walkable = motion.leash, gm.walkable
    # each step is _mix(seed, key, t, k): the mob's part of the hash is mixed once and each round's once
    mob_prefix = _mix(seed, motion.key)
    for t in range(at + 1, to_round + 1):
        round_prefix = _mixed_in(mob_prefix, t)
        for k in range(motion.speed):
            dx, dy = _STEPS[_mixed_in(round_prefix, k) & 3]
            nx, ny = x + dx, y + dy
            if abs(nx - hx) + abs(ny - hy) <= leash and walkable(nx, ny):
                x, y = nx, ny
        yield x, y


def hold(mob: Any, motion: Motion | None, seed: int, this_round: int, gm: Any) -> None:
    """Keep ``mob`` where it stands in ``this_round`` through the next tick (it was in a fight, or is wounded)."""
    if motion is None:
        return
    advance(mob, motion, seed, this_round, gm)
    if mob.at < this_round + 1:
        mob.at = this_round + 1


def send_home(mob: Any, motion: Motion | None, this_round: int) -> None:
    """A respawned mob starts at its spawn (and at its route's start) in ``this_round``."""
    if motion is None:
        return
    mob.x, mob.y = motion.home
    mob.leg = 0
    mob.at = this_round


def patrol_loop(gm: Any, home: tuple[int, int], waypoints: list[tuple[int, int]],
                route: Any) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """(the closed path home -> each waypoint -> home, the waypoints used). A waypoint that is not walkable or not
    in the spawn's area is moved to the nearest walkable tile of that area within 6 tiles, else left out."""
    comp = gm.component(*home)
    used: list[tuple[int, int]] = []
    for wx, wy in waypoints:
        tile = (wx, wy) if gm.in_bounds(wx, wy) and gm.walkable(wx, wy) else None
        if tile is None and gm.in_bounds(wx, wy):
            tile = _nearest_in_area(gm, wx, wy, comp)
        if tile is not None and gm.component(*tile) == comp and tile not in used and tile != home:
            used.append(tile)
    if not used:
        return (), ()
    loop: list[tuple[int, int]] = [home]
    for a, b in zip([home, *used], [*used, home]):
        path = route(gm, a, b)
        if not path:
            return (), ()
        loop.extend(path)
    loop.pop()  # the last step is home again: the loop's first tile
    return tuple(loop), tuple(used)


def _nearest_in_area(gm: Any, x: int, y: int, comp: int) -> tuple[int, int] | None:
    for r in range(1, 7):
        for dy in range(-r, r + 1):
            span = r - abs(dy)
            for dx in sorted({-span, span}):
                tx, ty = x + dx, y + dy
                if gm.in_bounds(tx, ty) and gm.walkable(tx, ty) and gm.component(tx, ty) == comp:
                    return (tx, ty)
    return None


def motion_for(gm: Any, mob_id: str, mt: Any, home: tuple[int, int], overrides: dict[str, dict],
               task_only: bool = False) -> Motion | None:
    """How the mob ``mob_id`` of type ``mt`` standing at ``home`` moves: the data pack's ``roam`` / ``patrol`` /
    ``speed`` for its type, with the task's ``mobs:`` overrides for its type, then for its id, on top (a patrol
    under an id is tiles, under a type offsets from ``home``); None when it stands still. ``task_only``: None
    unless the task's block names its type or id (a mob an event spawns moves only as its task declares)."""
    from .pathing import route

    spec = {"roam": mt.roam, "patrol": [tuple(w) for w in mt.patrol], "speed": mt.speed, "absolute": False}
    declared = False
    for key in (mt.key, mob_id):  # the task's type override, then its instance override, win
        o = overrides.get(key)
        if not o:
            continue
        declared = True
        if o.get("patrol") is not None:  # under an instance id: tiles; under a type: offsets
            spec.update(patrol=[tuple(w) for w in o["patrol"]], absolute=key == mob_id, roam=0)
        elif o.get("roam") is not None:
            spec.update(roam=o["roam"], patrol=[])
        if o.get("speed") is not None:
            spec["speed"] = o["speed"]
    if task_only and not declared:
        return None
    if spec["patrol"]:
        points = spec["patrol"] if spec["absolute"] else [(home[0] + dx, home[1] + dy) for dx, dy in spec["patrol"]]
        loop, used = patrol_loop(gm, home, points, route)
        if loop:
            return Motion(mob_id, home, spec["speed"], mt.aggro_range, loop=loop, waypoints=used)
    if spec["roam"] > 0:
        return Motion(mob_id, home, spec["speed"], mt.aggro_range, leash=spec["roam"])
    return None


class Movers:
    """What moves in one world configuration (the data pack's mob types with a task's ``mobs:`` overrides):
    each moving mob's :class:`Motion`, the buckets each one's box overlaps, and the buckets any aggressive mob
    (moving or not) can reach with its aggro range (``danger``: a walk checks its tiles only there)."""

    def __init__(self, loaded: Any, overrides: dict[str, dict] | None = None, enabled: bool = True):
        types = {t.key: t for t in loaded.data.mob_types}
        overrides = overrides or {}
        self.motions: dict[str, Motion] = {}
        gm = loaded.map
        for m in loaded.mobs if enabled else ():
            motion = motion_for(gm, m.id, types[m.type], (m.x, m.y), overrides)
            if motion is not None:
                self.motions[m.id] = motion
        cells: dict[tuple[int, int], list[str]] = {}
        for mid in sorted(self.motions):
            x0, y0, x1, y1 = self.motions[mid].box
            for cy in range(y0 // CELL, y1 // CELL + 1):
                for cx in range(x0 // CELL, x1 // CELL + 1):
                    cells.setdefault((cx, cy), []).append(mid)
        self.cells = cells
        self.max_aggro = max((mt.aggro_range for mt in types.values()), default=0)
        # bucket -> the aggressive mobs whose aggro range can reach a tile of it (from anywhere they can stand):
        # a walk reads the buckets it crosses; the tick asks only where a moving one can reach (mover_zones)
        zones: dict[tuple[int, int], list[str]] = {}
        mover_zones: set[tuple[int, int]] = set()
        for m in sorted(loaded.mobs, key=lambda m: m.id):
            reach = types[m.type].aggro_range
            if reach <= 0:
                continue
            motion = self.motions.get(m.id)
            x0, y0, x1, y1 = motion.box if motion else (m.x, m.y, m.x, m.y)
            for cy in range((y0 - reach) // CELL, (y1 + reach) // CELL + 1):
                for cx in range((x0 - reach) // CELL, (x1 + reach) // CELL + 1):
                    zones.setdefault((cx, cy), []).append(m.id)
                    if motion is not None:
                        mover_zones.add((cx, cy))
        self.zones = {b: tuple(ids) for b, ids in zones.items()}
        self.danger = frozenset(zones)
        self.mover_zones = frozenset(mover_zones)
        self._near: dict[tuple[int, int, int], tuple[str, ...]] = {}
        self._aggro: dict[tuple[int, int], tuple[str, ...]] = {}

    def near(self, x: int, y: int, radius: int) -> tuple[str, ...]:
        """Ids of the moving mobs that can be within Manhattan ``radius`` of (x, y) (their box is), sorted."""
        key = (x, y, radius)
        found = self._near.get(key)
        if found is None:
            cells, motions = self.cells, self.motions
            ids: set[str] = set()
            for cy in range((y - radius) // CELL, (y + radius) // CELL + 1):
                for cx in range((x - radius) // CELL, (x + radius) // CELL + 1):
                    ids.update(cells.get((cx, cy), ()))
            found = tuple(sorted(i for i in ids if motions[i].box_distance(x, y) <= radius))
            if len(self._near) >= KEEP:
                self._near.clear()
            self._near[key] = found
        return found

    def aggro_near(self, x: int, y: int) -> tuple[str, ...]:
        """Ids of the aggressive moving mobs whose aggro range can reach (x, y) from somewhere in their box."""
        if (x // CELL, y // CELL) not in self.mover_zones:
            return ()
        found = self._aggro.get((x, y))
        if found is None:
            motions = self.motions
            found = tuple(i for i in self.near(x, y, self.max_aggro)
                          if 0 < motions[i].aggro >= motions[i].box_distance(x, y))
            if len(self._aggro) >= KEEP:
                self._aggro.clear()
            self._aggro[(x, y)] = found
        return found


def movers_for(loaded: Any, overrides: dict[str, dict] | None, enabled: bool = True) -> Movers:
    """The :class:`Movers` of ``loaded`` with a task's ``mobs:`` overrides, built once per configuration and
    kept on the loaded world (a suite's episodes share them)."""
    key = (enabled, _frozen(overrides or {}))
    kept = loaded.__dict__.setdefault("_movers", {})
    movers = kept.get(key)
    if movers is None:
        if len(kept) >= 64:
            kept.clear()
        movers = kept[key] = Movers(loaded, overrides, enabled)
    return movers


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value
