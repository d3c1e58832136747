"""Path search for the engine: A* to "within ``reach`` tiles of a target", bounded and deterministic.

``GameMap.find_path`` answers "exact tile to exact tile". The engine mostly needs "stand next to this
tree" (the node tile itself is blocked) or "as far as one move allows toward a distant point", so this
module searches to the set of walkable tiles within ``reach`` (Manhattan) of a target, with an optional
path-length bound (pruned by the admissible heuristic) and an optional heuristic weight for long moves:
a weight above 1 finds a slightly longer path while expanding far fewer tiles around obstacles.
Ties are broken by a fixed order, so the same query always returns the same path.
"""

from __future__ import annotations

import heapq

from .gamemap import GameMap, Point


class SearchBudgetExceeded(Exception):
    """The search expanded more tiles than allowed (the caller retries with a cheaper search)."""


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


def find_path_near(gm: GameMap, start: Point, target: Point, reach: int = 0, max_len: int | None = None,
                   weight: float = 1.0, max_expand: int | None = None) -> list[Point] | None:
    """Path from ``start`` (excluded) to the first tile within ``reach`` of ``target`` (included).

    ``[]`` when already within reach; ``None`` when no such path exists or it is longer than ``max_len``
    (exact only with weight 1). Raises :class:`SearchBudgetExceeded` after ``max_expand`` expansions.
    """
    sx, sy = start
    tx, ty = target
    if abs(sx - tx) + abs(sy - ty) <= reach:
        return []
    if not gm.walkable(sx, sy):
        return None
    if max_len is not None and abs(sx - tx) + abs(sy - ty) - reach > max_len:
        return None
    w, hgt, walk = gm.width, gm.height, gm._walk  # the flat walkability bytes: the hot path
    s = sy * w + sx
    gscore = {s: 0}
    came: dict[int, int] = {}
    h0 = abs(sx - tx) + abs(sy - ty) - reach
    heap = [(h0 * weight, 0, 0, s)]
    counter = 0
    expanded = 0
    found = -1
    while heap:
        _, neg_g, _, cur = heapq.heappop(heap)
        cg = -neg_g
        if cg > gscore[cur]:  # a stale entry: this tile was reached more cheaply since
            continue
        cy, cx = divmod(cur, w)
        if abs(cx - tx) + abs(cy - ty) <= reach:
            found = cur
            break
        expanded += 1
        if max_expand is not None and expanded > max_expand:
            raise SearchBudgetExceeded(expanded)
        ng = cg + 1
        for nx, ny in ((cx, cy - 1), (cx - 1, cy), (cx + 1, cy), (cx, cy + 1)):
            if nx < 0 or ny < 0 or nx >= w or ny >= hgt:
                continue
            n = ny * w + nx
            if not walk[n] or ng >= gscore.get(n, 1 << 30):
                continue
            h = abs(nx - tx) + abs(ny - ty) - reach
            if h < 0:
                h = 0
            if max_len is not None and ng + h > max_len:
                continue
            gscore[n] = ng
            came[n] = cur
            counter += 1
            heapq.heappush(heap, (ng + h * weight, -ng, counter, n))
    if found < 0:
        return None
    path = []
    cur = found
    while cur != s:
        cy, cx = divmod(cur, w)
        path.append((cx, cy))
        cur = came[cur]
    path.reverse()
    return path


def route(gm: GameMap, start: Point, target: Point, reach: int = 0, max_len: int | None = None) -> list[Point] | None:
    """The engine's path query: exact A* first; if that search grows large (long detours around
    obstacles), weighted A* instead, which is near-shortest and far cheaper. Deterministic either way."""
    try:
        return find_path_near(gm, start, target, reach, max_len=max_len, max_expand=EXACT_BUDGET)
    except SearchBudgetExceeded:
        return find_path_near(gm, start, target, reach, max_len=max_len, weight=2.0)


EXACT_BUDGET = 20_000  # tiles an exact search may expand (~20 ms) before switching to weighted A*
