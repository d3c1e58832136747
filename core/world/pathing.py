"""The engine's path policy on top of ``GameMap.find_path``.

The engine mostly needs "stand next to this tree" (the node tile itself is blocked) or "as far as one move
allows toward a distant point": searches to within ``reach`` tiles of a target. Exact A* first; a search
that grows large (long detours around obstacles) switches to weighted A*, near-shortest and far cheaper.
Deterministic either way.
"""

from __future__ import annotations

from .gamemap import GameMap, Point, SearchBudgetExceeded


def goal_tiles(gm: GameMap, target: Point, reach: int) -> list[Point]:
    """Walkable tiles within ``reach`` (Manhattan) of ``target``, in a fixed order."""
    tx, ty = target
    out = []
    for dy in range(-reach, reach + 1):
        span = reach - abs(dy)
        for dx in range(-span, span + 1):
            if gm.walkable(tx + dx, ty + dy):
                out.append((tx + dx, ty + dy))
    return out


def reachable(gm: GameMap, start: Point, target: Point, reach: int) -> bool:
    """Whether some tile within ``reach`` of ``target`` is in ``start``'s connected area (O(reach^2))."""
    if not gm.walkable(*start):
        return False
    comp = gm.component(*start)
    return any(gm.component(x, y) == comp for x, y in goal_tiles(gm, target, reach))


def route(gm: GameMap, start: Point, target: Point, reach: int = 0, max_len: int | None = None) -> list[Point] | None:
    """The engine's path query: exact A* first; if that search grows large (long detours around
    obstacles), weighted A* instead, which is near-shortest and far cheaper. Deterministic either way."""
    try:
        return gm.find_path(start, target, max_len, reach=reach, max_expand=EXACT_BUDGET)
    except SearchBudgetExceeded:
        return gm.find_path(start, target, max_len, reach=reach, weight=2.0)


EXACT_BUDGET = 20_000  # tiles an exact search may expand (~20 ms) before switching to weighted A*
