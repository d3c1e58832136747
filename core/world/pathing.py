"""The engine's path queries: exact shortest paths with bounded work, and a process-wide cache.

The engine mostly needs "stand next to this tree" (the node tile itself is blocked) or "as far as one move
allows toward a distant point": searches to within ``reach`` tiles of a target. Every query is answered by
``pathsearch.shortest_path``: a shortest path, the same one for the same query whatever else happened before
(of the shortest paths, the one that at each step takes the first of up, left, right, down), with work
bounded by its length and the map's size (see that module). The map's landmark bounds (``regions.py``) are
built with the world and kept in the built-world cache.

Tiles never change walkability, so a query's answer never changes either: answers are kept in a bounded
least-recently-used cache per map, shared by every episode in the process (an oracle suite asks the same
queries seed after seed; agents walk to the same trees and stations).
"""

from __future__ import annotations

import threading
import weakref
from array import array
from collections import OrderedDict

from .gamemap import GameMap, Point
from .pathsearch import goal_tiles, goals_in_area, shortest_path
from .regions import Regions

CACHE_STEPS = 1_000_000  # path steps the cache keeps per map (4 bytes each: about 4 MB at most)
CACHE_ENTRIES = 100_000  # and answers at most (short and empty paths cost little but are many)


def reachable(gm: GameMap, start: Point, target: Point, reach: int) -> bool:
    """Whether some tile within ``reach`` of ``target`` is in ``start``'s connected area (O(reach^2))."""
    if not gm.walkable(*start):
        return False
    comp = gm.component(*start)
    return any(gm.component(x, y) == comp for x, y in goal_tiles(gm, target, reach))


class PathCache:
    """query -> answer, least recently used dropped first, per map (weakly keyed, so a map's answers go with
    it), bounded in steps and entries. A path is kept as a flat ``array('H')`` of x, y pairs. Thread-safe."""

    def __init__(self, max_steps: int = CACHE_STEPS, max_entries: int = CACHE_ENTRIES):
        self.max_steps, self.max_entries = max_steps, max_entries
        self._maps: "weakref.WeakKeyDictionary[GameMap, _Entries]" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, gm: GameMap, key: tuple) -> tuple[bool, list[Point] | None]:
        """(found, a fresh list of steps or None)."""
        with self._lock:
            entries = self._maps.get(gm)
            if entries is None or key not in entries.paths:
                self.misses += 1
                return False, None
            entries.paths.move_to_end(key)
            self.hits += 1
            flat = entries.paths[key]
        return True, (None if flat is None else list(zip(flat[0::2], flat[1::2])))

    def put(self, gm: GameMap, key: tuple, path: list[Point] | None) -> None:
        flat = None if path is None else array("H", [c for step in path for c in step])
        with self._lock:
            entries = self._maps.get(gm)
            if entries is None:
                entries = self._maps[gm] = _Entries()
            old = entries.paths.pop(key, None)
            entries.steps -= len(old) // 2 if old is not None else 0
            entries.paths[key] = flat
            entries.steps += len(flat) // 2 if flat is not None else 0
            while entries.steps > self.max_steps or len(entries.paths) > self.max_entries:
                _, dropped = entries.paths.popitem(last=False)
                entries.steps -= len(dropped) // 2 if dropped is not None else 0

    def stats(self, gm: GameMap) -> dict[str, int]:
        with self._lock:
            entries = self._maps.get(gm)
            return {"entries": len(entries.paths) if entries else 0, "steps": entries.steps if entries else 0,
                    "hits": self.hits, "misses": self.misses}

    def clear(self) -> None:
        with self._lock:
            self._maps.clear()
            self.hits = self.misses = 0


class _Entries:
    __slots__ = ("paths", "steps")

    def __init__(self) -> None:
        self.paths: OrderedDict[tuple, array | None] = OrderedDict()
        self.steps = 0


PATHS = PathCache()


def route(gm: GameMap, start: Point, target: Point, reach: int = 0, max_len: int | None = None) -> list[Point] | None:
    """The engine's path query (see the module docstring): a fresh list of steps, or None when there is none."""
    path = _direct(gm, start, target, reach, max_len)
    if path is not None:
        return path
    key = (start, target, reach, max_len)
    found, path = PATHS.get(gm, key)
    if not found:
        path = _search(gm, start, target, reach, max_len)
        PATHS.put(gm, key, path)
    return path


STEPS = ((0, -1), (-1, 0), (1, 0), (0, 1))  # up, left, right, down: the order the search's path prefers


def _direct(gm: GameMap, start: Point, target: Point, reach: int, max_len: int | None) -> list[Point] | None:
    """The search's answer without a search, when a walk that takes at every step the first of up, left, right,
    down that is walkable and one tile nearer (Manhattan) to the nearest goal tile reaches a goal tile; None
    when it does not (then the caller searches). Open ground between an agent and a nearby target, most of a
    crowd's walks.

    Why it is the search's path: a walk of Manhattan length shows that each tile on it is exactly its
    Manhattan distance from the goals by the shortest path (no path is shorter than that), so each step it
    takes stays on a shortest path; a neighbour it passes over is blocked or not nearer in Manhattan
    distance, hence not nearer by any path either; so each step is the first of up, left, right, down that
    stays on a shortest path, which is the path the search returns (pathsearch.py, tests/test_pathing.py)."""
    (sx, sy), (tx, ty) = start, target
    if abs(sx - tx) + abs(sy - ty) <= reach or not gm.walkable(sx, sy):
        return None  # within reach already, or a start the search refuses: the search answers
    comp = gm.component(sx, sy)
    goals = goals_in_area(gm, comp, target, reach)
    if not goals:
        return None
    if len(goals) == 1:
        (gx, gy), = goals
        dist = lambda x, y: abs(x - gx) + abs(y - gy)  # noqa: E731
    else:
        dist = lambda x, y: min(abs(x - gx) + abs(y - gy) for gx, gy in goals)  # noqa: E731
    d = dist(sx, sy)
    if max_len is not None and d > max_len:
        return None
    walkable = gm.walkable
    x, y = sx, sy
    path = []
    while d:
        for dx, dy in STEPS:
            nx, ny = x + dx, y + dy
            if walkable(nx, ny) and dist(nx, ny) == d - 1:
                break
        else:
            return None  # every nearer neighbour is blocked: a detour, for the search
        x, y, d = nx, ny, d - 1
        path.append((x, y))
    return path


def _search(gm: GameMap, start: Point, target: Point, reach: int, max_len: int | None) -> list[Point] | None:
    return shortest_path(gm, start, target, reach, max_len, regions=regions_of(gm))


def regions_of(gm: GameMap) -> Regions:
    """The map's landmark bounds, built on first use and kept on the map (it never changes)."""
    if gm._regions is None:
        gm._regions = Regions(gm.walkable_grid, gm.component_labels)
    return gm._regions
