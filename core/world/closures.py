"""Areas and roads closed by a task's events (``close_area`` / ``open_area``): walks route round them.

A closed area is a set of tiles no player may walk onto while it is closed (a rockslide on a pass, a flooded
ford, a bridge that is out). Players' walks then take the shortest way round it; when nothing routes round it
(it cuts the only road), a walk is refused and says which closure is in the way. Mobs are not bound by it.

How: for the closures active now, the engine walks on a *closed map*, a :class:`GameMap` whose closed tiles
are not walkable, with its connected areas labelled again (so that "cannot be reached" is still answered
without a search) and the world's landmark distance bounds reused (a closure only lengthens walks, so the
bounds of the open map are still lower bounds: the path search stays exact). Every query the engine asks
of a map (the path, the nearest reachable tile, whether two tiles are connected) is then right as it is.
Closed maps are made when a closure changes and kept per set of closures (a few per episode).

A player who stands inside an area when it closes is not shut in: its walks ignore the closures that hold
its own tile, so it can walk out (or on through).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Iterable

from .gamemap import GameMap, _labels_array, label_components

Point = tuple[int, int]
MAX_TILES_LISTED = 6  # a closure of at most this many tiles names each of them; a bigger one its extent


class Closure:
    """One closed area: the event that closed it (``id``), its walkable tiles, since when, and what the
    agents read of it (``where``: the area as the file gave it; ``message``: why, from the file)."""

    __slots__ = ("id", "tiles", "since", "where", "message", "box")

    def __init__(self, cid: str, tiles: frozenset[Point], since: int, where: str, message: str | None):
        self.id, self.tiles, self.since, self.where, self.message = cid, tiles, since, where, message
        xs, ys = [x for x, _ in tiles], [y for _, y in tiles]
        self.box = (min(xs), min(ys), max(xs), max(ys)) if tiles else (0, 0, -1, -1)

    def distance(self, x: int, y: int) -> int | None:
        """Manhattan distance from (x, y) to the nearest closed tile (None: it closes no tile)."""
        if not self.tiles:
            return None
        return min(abs(tx - x) + abs(ty - y) for tx, ty in self.tiles)

    def near(self, x: int, y: int, radius: int) -> bool:
        x0, y0, x1, y1 = self.box
        if max(x0 - x, 0, x - x1) + max(y0 - y, 0, y - y1) > radius:
            return False  # (the box's distance is a lower bound of every tile's)
        d = self.distance(x, y)
        return d is not None and d <= radius

    def text(self) -> str:
        """What an agent reads: "the area within 2 tiles of (412,380) is closed to walkers since round 5
        (rockslide): A rockslide blocks the pass"."""
        said = f": {self.message.rstrip('.')}" if self.message else ""
        return f"{self.where} is closed to walkers since round {self.since} ({self.id}){said}"


def area_tiles(gm: GameMap, x: int, y: int, radius: int, only: str | None = None) -> frozenset[Point]:
    """The walkable tiles within Manhattan ``radius`` of (x, y); ``only``: of them, those of that biome key
    (``"bridge"``) or, for ``"road"``, the road tiles."""
    out = set()
    for dy in range(-radius, radius + 1):
        span = radius - abs(dy)
        for dx in range(-span, span + 1):
            tx, ty = x + dx, y + dy
            if gm.walkable(tx, ty) and (only is None or (gm.is_road(tx, ty) if only == "road"
                                                         else gm.biome_at(tx, ty) == only)):
                out.add((tx, ty))
    return frozenset(out)


def tiles_text(tiles: Iterable[Point]) -> str:
    """A list of tiles as an agent reads it: each one when there are few, else their count and extent."""
    tiles = sorted(tiles, key=lambda t: (t[1], t[0]))
    if len(tiles) <= MAX_TILES_LISTED:
        return ", ".join(f"({x},{y})" for x, y in tiles)
    xs, ys = [x for x, _ in tiles], [y for _, y in tiles]
    return f"{len(tiles)} tiles between ({min(xs)},{min(ys)}) and ({max(xs)},{max(ys)})"


class _Regions:
    """The open map's landmark bounds, read with the closed map's area labels: an area of the closed map lies
    inside one area of the open map, whose landmarks bound it (pathsearch.py reads only these four)."""

    def __init__(self, base, open_of: dict[int, int]):
        self.base, self.open_of = base, open_of
        self.block = base.block

    def using(self, component: int) -> list[int]:
        return self.base.using(self.open_of.get(component, -1))

    def interval(self, mark: int, bx: int, by: int) -> tuple[int, int]:
        return self.base.interval(mark, bx, by)

    def tables(self, marks: list[int]):
        return self.base.tables(marks)


_KEPT: "weakref.WeakKeyDictionary[GameMap, OrderedDict[frozenset[Point], GameMap]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
KEEP_MAPS = 8  # closed maps kept per world map (the episodes of a proof close the same areas over and over)


def closed_map(base: GameMap, tiles: Iterable[Point]) -> GameMap:
    """``base`` with ``tiles`` not walkable (kept: the same closure in the next episode is the same map, whose
    path answers are cached with it)."""
    key = frozenset(tiles)
    with _LOCK:
        kept = _KEPT.get(base)
        if kept is None:
            kept = _KEPT[base] = OrderedDict()
        gm = kept.get(key)
        if gm is not None:
            kept.move_to_end(key)
            return gm
    gm = _closed_map(base, key)  # (two threads may both make it: the same map either way)
    with _LOCK:
        kept[key] = gm
        if len(kept) > KEEP_MAPS:
            kept.popitem(last=False)
    return gm


def _closed_map(base: GameMap, tiles: Iterable[Point]) -> GameMap:
    """``base`` with ``tiles`` not walkable: its own walkability and area labels, the rest shared."""
    import numpy as np

    from .pathing import regions_of

    walk = bytearray(base._walk)
    w = base.width
    for x, y in tiles:
        walk[y * w + x] = 0
    gm = object.__new__(GameMap)
    gm.__dict__.update(base.__dict__)
    gm._walk = bytes(walk)
    gm._views = {}
    labels = label_components(np.frombuffer(gm._walk, dtype=bool).reshape(base.height, base.width))
    gm._components = _labels_array(labels)
    open_labels = base.component_labels
    open_of = {}
    firsts = np.unique(labels.ravel(), return_index=True)
    for label, i in zip(*firsts):
        if label:
            open_of[int(label)] = int(open_labels.ravel()[i])
    gm._regions = _Regions(regions_of(base), open_of)
    return gm


class Closures:
    """The areas closed now, and the maps the players walk on because of them."""

    def __init__(self, base: GameMap):
        self.base = base
        self.active: dict[str, Closure] = {}  # event id -> its closure, in the order they closed
        self.ever = False  # some area has closed in this episode (a walk's kept path may then be stale)
        self._maps: dict[frozenset[str], GameMap] = {}

    def close(self, closure: Closure) -> None:
        self.active[closure.id] = closure
        self.ever = True
        self._maps.clear()

    def reopen(self, cid: str) -> Closure | None:
        c = self.active.pop(cid, None)
        if c is not None:
            self._maps.clear()
        return c

    def holding(self, x: int, y: int) -> list[Closure]:
        """The active closures that hold tile (x, y)."""
        return [c for c in self.active.values() if (x, y) in c.tiles]

    def map_for(self, x: int, y: int) -> GameMap:
        """The map a walk from (x, y) is on: the closed tiles blocked, except those of closures holding (x, y)."""
        ids = frozenset(cid for cid, c in self.active.items() if (x, y) not in c.tiles and c.tiles)
        if not ids:
            return self.base
        gm = self._maps.get(ids)
        if gm is None:
            gm = self._maps[ids] = closed_map(self.base, {t for cid in ids for t in self.active[cid].tiles})
        return gm

    def in_the_way(self, gm: GameMap) -> list[Closure]:
        """The closures a walk on ``gm`` is kept out of (for the text of a refused walk)."""
        if gm is self.base:
            return []
        return [c for c in self.active.values() if c.tiles and not any(gm.walkable(*t) for t in c.tiles)]

    def seen_from(self, x: int, y: int, radius: int) -> list[Closure]:
        return [c for c in self.active.values() if c.near(x, y, radius)]

    def text(self, closures: list[Closure]) -> str:
        return "; ".join(c.text() for c in closures)

    def cutting(self, start: Point, target: Point, reach: int) -> list[Closure]:
        """The closures that keep a walk from ``start`` from reaching within ``reach`` of ``target``: those
        whose opening alone would let it through, or all of those in the way when it takes several."""
        from .pathing import reachable

        gm = self.map_for(*start)
        in_way = self.in_the_way(gm)
        if len(in_way) <= 1:
            return in_way
        alone = []
        for c in in_way:
            rest = {t for d in in_way if d is not c for t in d.tiles}
            if reachable(closed_map(self.base, rest), start, target, reach):
                alone.append(c)
        return alone or in_way
