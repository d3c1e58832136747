"""Exact shortest paths on the tile map: a bit-parallel breadth-first search inside a window of blocks that
lower bounds prove large enough.

Which path: of all shortest paths from ``start`` to a walkable tile within ``reach`` of the target (in the
start's area), the one that at every step takes the first of up, left, right, down that stays on a shortest
path. That is a property of the map alone (not of the search), so it is deterministic and the tests check it
against a plain breadth-first search.

How: the search runs backwards, a breadth-first search from the goal tiles, one distance layer at a time.
A layer is one Python integer whose bits are tiles (row after row of the window, a zero bit between rows),
so a layer step is a handful of shifts, ors and ands over the whole frontier at once; each layer is kept
trimmed to the rows it occupies, so the work per layer is the frontier's extent, not the window's. The path
is then read forwards from the start, one step per layer.

Where: a tile p can lie on a path of length at most U only if ``lb(start, p) + lb(p, goal) <= U``, where lb is
the larger of the Manhattan distance and the landmark bound of ``regions.py``. The search keeps only the
blocks passing that test (for U: first the lower bound of the whole query, the usual answer on open ground)
and searches inside them; a path found there of length at most U is a shortest path of the whole map, as
every shorter one lies inside too. If none is found, U grows (by a slack growing half again each time) and the search repeats;
if one longer than U is found, it repeats once with U set to that length, which is then certain to succeed.

Bounded work: a round stops within 2D layers for a path of length D, a layer touches at most the map's tiles
(one bit each), and there are at most ``round_bound(D)`` (about ``log1.5(D / 32) + 3``) rounds, so one query
costs O(D log D * width * height / 30) word operations (Python's integers hold 30 bits a word):
``work_bound`` states it, ``SearchStats.bits`` counts what a search did. Typical queries touch a window a
few times the path's length on a side, thousands of times less than the bound.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - GameMap.find_path imports this module
    import numpy as np

    from .gamemap import GameMap
    from .regions import Regions

Point = tuple[int, int]

FIRST_SLACK = 24  # tiles of detour the first round allows beyond the lower bound (chosen by measurement)
WHOLE_WINDOW_BITS = 1 << 17  # windows up to this many tiles run untrimmed layers (fewer operations per layer)


@dataclass
class SearchStats:
    """What one search did: rounds run, layers expanded and window rows touched over all rounds."""

    rounds: int = 0
    layers: int = 0
    work: int = 0  # rows of a window touched by layer steps (each row is the window's width in bits)
    bits: int = 0  # the same in bits: the quantity the bound above speaks of


def shortest_path(gm: GameMap, start: Point, target: Point, reach: int = 0, max_len: int | None = None,
                  regions: Regions | None = None, stats: SearchStats | None = None) -> list[Point] | None:
    """The shortest path described in the module docstring: steps after ``start`` up to and including the
    first tile within ``reach`` of ``target``; ``[]`` when already within reach; None when there is no such
    path (or, with ``max_len``, none of at most ``max_len`` steps). ``regions``: the map's landmark bounds
    (Manhattan bounds alone without them: correct, slower around lakes)."""
    sx, sy = start
    tx, ty = target
    if abs(sx - tx) + abs(sy - ty) <= reach:
        return []
    if not gm.walkable(sx, sy):
        return None
    comp = gm.component(sx, sy)
    goals = goals_in_area(gm, comp, target, reach)
    if not goals:
        return None
    lower = min(abs(sx - x) + abs(sy - y) for x, y in goals)
    if max_len is not None and lower > max_len:
        return None
    stats = stats if stats is not None else SearchStats()
    bounds = _Bounds(gm, regions, start, goals, target, reach, comp)
    slack = FIRST_SLACK
    u = max(lower, bounds.lower) + slack
    searched = None  # the window of the round before, when it found a path longer than its bound
    first_round = stats.rounds
    while True:
        if max_len is not None:
            u = min(u, max_len)
        # the landmark mask pays off around a detour: one the bounds know of, or one the first round met
        window = bounds.window(u, lower, masked=stats.rounds > first_round or bounds.lower > lower + slack // 2)
        if searched is not None and searched[2] <= u and window.same(searched[0]):
            return _read_path(window, searched[1], start, searched[2])  # nothing new to search: it is a shortest
        stats.rounds += 1
        # past 2u layers a round stops: it has shown d > u, and a longer path would only bound u loosely
        found = _search(gm, window, start, goals, u if max_len is not None and u >= max_len else 2 * u, stats)
        d, layers = found
        if layers is not None:
            if d <= u:  # every path of length <= u lies in the window, so this one is a shortest
                return _read_path(window, layers, start, d)
            u, searched = d, (window, layers, d)  # a path of length d exists: with u = d the next round is the last
        else:
            if max_len is not None and u >= max_len:
                return None
            if d < 0 and window.everything:  # died out on the whole map: cannot happen for tiles of one area
                return None
            u += slack  # a round that finds nothing ends early: growing u slowly costs little
            slack += slack // 2


def round_bound(d: int) -> int:
    """Rounds one search of a path of length d runs at most: rounds with u < d (u starts at least at
    FIRST_SLACK and grows as the loop above grows it), then at most one that finds a longer path, then the
    last. A round with u >= d cannot fail: the window holds a shortest path and the round may go 2u layers."""
    u, slack, rounds = FIRST_SLACK, FIRST_SLACK, 1
    while u < d:
        u += slack
        slack += slack // 2
        rounds += 1
    return rounds + 2


def work_bound(gm: GameMap, d: int) -> int:
    """Bits one search of a path of length d touches at most (``SearchStats.bits``): every round stops within
    2d layers (its cap 2u with u < d, or at d once it finds the start), and a layer touches at most every
    row of the map at the stride of the map's width."""
    return round_bound(d) * 2 * d * gm.height * (gm.width + 8)


def goals_in_area(gm: GameMap, comp: int, target: Point, reach: int) -> list[Point]:
    """The tiles a path from the connected area ``comp`` may end on: walkable, within ``reach`` of ``target``."""
    return [g for g in goal_tiles(gm, target, reach) if gm.component(*g) == comp]


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


class _Window:
    """A rectangle of tiles (x0 <= x < x1, y0 <= y < y1) packed one bit per tile, rows ``stride`` bits apart
    (a multiple of 8, with at least one zero bit after each row so that shifts never wrap into the next)."""

    __slots__ = ("x0", "y0", "x1", "y1", "stride", "data", "everything")

    def __init__(self, x0: int, y0: int, x1: int, y1: int, data: bytes, everything: bool):
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, y1
        self.stride = _stride(x1 - x0)
        self.data = data
        self.everything = everything

    def same(self, other: "_Window") -> bool:
        return (self.x0, self.y0, self.x1, self.y1, self.data) == (other.x0, other.y0, other.x1, other.y1, other.data)

    def rows(self, a: int, b: int) -> int:
        """Rows a..b-1 (window rows) as one integer."""
        s8 = self.stride // 8
        return int.from_bytes(self.data[a * s8:b * s8], "little")


def _stride(width: int) -> int:
    return (width + 8) // 8 * 8


_ROWS: "weakref.WeakKeyDictionary[GameMap, list[int]]" = weakref.WeakKeyDictionary()
_BITS = bytes.maketrans(b"\x00\x01", b"01")


def _walk_rows(gm: GameMap) -> list[int]:
    """Each map row's walkable tiles as one integer (bit x = tile x), made once per map (not pickled)."""
    rows = _ROWS.get(gm)
    if rows is None:
        w, walk = gm.width, gm._walk
        rows = _ROWS[gm] = [int(walk[y * w:(y + 1) * w][::-1].translate(_BITS), 2) for y in range(gm.height)]
    return rows


class _Bounds:
    """Lower bounds of one query: the landmark bound of the whole query, and per block which blocks a path
    of length at most U may cross."""

    def __init__(self, gm: GameMap, regions: Regions | None, start: Point, goals: list[Point], target: Point,
                 reach: int, comp: int):
        self.gm, self.regions, self.start, self.target, self.reach = gm, regions, start, target, reach
        self.block = regions.block if regions is not None else 8
        gxs, gys = [g[0] for g in goals], [g[1] for g in goals]
        self.box = (min(start[0], *gxs), min(start[1], *gys), max(start[0], *gxs), max(start[1], *gys))
        self.lower = 0
        self.marks: list[int] = []
        if regions is not None:
            b = regions.block
            sbx, sby = start[0] // b, start[1] // b
            gb = sorted({(x // b, y // b) for x, y in goals})
            self.marks = regions.using(comp)
            self.s_iv, self.g_iv = [], []
            for m in self.marks:
                s_lo, s_hi = regions.interval(m, sbx, sby)
                g = [regions.interval(m, bx, by) for bx, by in gb]
                g_lo, g_hi = min(lo for lo, _ in g), max(hi for _, hi in g)
                self.s_iv.append((s_lo, s_hi))
                self.g_iv.append((g_lo, g_hi))
                self.lower = max(self.lower, g_lo - s_hi, s_lo - g_hi)

    def window(self, u: int, lower: int, masked: bool) -> _Window:
        """The tiles a path of length at most u may cross: with ``masked``, only blocks that pass the
        landmark bounds, in the smallest window holding them (numpy, imported here: only searches around a
        known detour need it); else the box no such path leaves by Manhattan distance (pure Python)."""
        gm = self.gm
        m = max(0, (u - lower) // 2)  # no such path leaves the start-goal box by more than this
        x0, y0, x1, y1 = self.box
        x0, y0, x1, y1 = max(0, x0 - m), max(0, y0 - m), min(gm.width, x1 + m + 1), min(gm.height, y1 + m + 1)
        if masked and self.marks:
            return self._masked(x0, y0, x1, y1, u)
        ww, rows = x1 - x0, _walk_rows(gm)
        nbytes, keep = _stride(ww) // 8, (1 << ww) - 1
        data = b"".join(((rows[y] >> x0) & keep).to_bytes(nbytes, "little") for y in range(y0, y1))
        return _Window(x0, y0, x1, y1, data, (x0, y0, x1, y1) == (0, 0, gm.width, gm.height))

    def _masked(self, x0: int, y0: int, x1: int, y1: int, u: int) -> _Window:
        import numpy as np

        gm, b = self.gm, self.block
        bx0, by0, bx1, by1 = x0 // b, y0 // b, (x1 - 1) // b + 1, (y1 - 1) // b + 1
        xs = np.arange(bx0, bx1) * b
        ys = np.arange(by0, by1) * b

        def manhattan(px: int, py: int) -> np.ndarray:  # from a tile to the nearest tile of each block
            dx = np.maximum(np.maximum(xs - px, px - (xs + b - 1)), 0)
            dy = np.maximum(np.maximum(ys - py, py - (ys + b - 1)), 0)
            return dy[:, None] + dx[None, :]

        lo, hi = self.regions.tables(self.marks)
        lo = lo[:, by0:by1, bx0:bx1].astype(np.int32)
        hi = hi[:, by0:by1, bx0:bx1].astype(np.int32)
        s_lo, s_hi = (np.array(v, dtype=np.int32)[:, None, None] for v in zip(*self.s_iv))
        g_lo, g_hi = (np.array(v, dtype=np.int32)[:, None, None] for v in zip(*self.g_iv))
        to_start = np.maximum(manhattan(*self.start), np.maximum(np.maximum(lo - s_hi, s_lo - hi), 0).max(axis=0))
        to_goal = np.maximum(np.maximum(manhattan(*self.target) - self.reach, 0),
                             np.maximum(np.maximum(lo - g_hi, g_lo - hi), 0).max(axis=0))
        keep = to_start + to_goal <= u
        rows, cols = np.nonzero(keep)
        if len(rows) == 0:  # never in practice (the start's block passes); an empty window finds nothing
            rows, cols = np.array([0]), np.array([0])
        r0, r1, c0, c1 = int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1
        keep = keep[r0:r1, c0:c1]
        tx0, ty0 = (bx0 + c0) * b, (by0 + r0) * b
        tx1, ty1 = min((bx0 + c1) * b, gm.width), min((by0 + r1) * b, gm.height)
        tiles = gm.walkable_grid[ty0:ty1, tx0:tx1] & np.repeat(np.repeat(keep, b, axis=0), b, axis=1)[:ty1 - ty0, :tx1 - tx0]
        packed = np.zeros((ty1 - ty0, _stride(tx1 - tx0)), dtype=bool)
        packed[:, :tx1 - tx0] = tiles
        data = np.packbits(packed, axis=None, bitorder="little").tobytes()
        everything = (tx0, ty0, tx1, ty1) == (0, 0, gm.width, gm.height) and bool(keep.all())
        return _Window(tx0, ty0, tx1, ty1, data, everything)


def _search(gm: GameMap, win: _Window, start: Point, goals: list[Point], cap: int,
            stats: SearchStats) -> tuple[int, list[tuple[int, int]] | None]:
    """Breadth-first layers from the goals inside the window until the start is reached: (its distance, the
    layers as (bits, first row)); (-1, None) when the frontier dies out first, (cap, None) past ``cap`` layers."""
    s = win.stride
    nrows = win.y1 - win.y0
    srow, scol = start[1] - win.y0, start[0] - win.x0
    inside = [(y - win.y0, x - win.x0) for x, y in goals if win.x0 <= x < win.x1 and win.y0 <= y < win.y1]
    inside = [(r, c) for r, c in inside if (win.rows(r, r + 1) >> c) & 1]
    if not inside or not (0 <= srow < nrows and 0 <= scol < win.x1 - win.x0):
        return -1, None
    if nrows * s <= WHOLE_WINDOW_BITS:
        return _layers_whole(win, inside, srow * s + scol, cap, stats)
    return _layers_trimmed(win, inside, srow, scol, cap, stats)


def _layers_whole(win: _Window, inside: list[tuple[int, int]], sbit: int, cap: int,
                  stats: SearchStats) -> tuple[int, list[tuple[int, int]] | None]:
    """Small windows: every layer spans the whole window (fewest operations per layer)."""
    s = win.stride
    front = 0
    for r, c in inside:
        front |= 1 << (r * s + c)
    rest = win.rows(0, win.y1 - win.y0) & ~front  # tiles not reached yet
    layers = [(front, 0)]
    k = 0
    while k < cap:
        front = ((front << 1) | (front >> 1) | (front << s) | (front >> s)) & rest
        if not front:
            break
        rest ^= front
        k += 1
        layers.append((front, 0))
        if (front >> sbit) & 1:
            stats.layers += k
            stats.work += k * (win.y1 - win.y0)
            stats.bits += k * (win.y1 - win.y0) * s
            return k, layers
    stats.layers += k
    stats.work += k * (win.y1 - win.y0)
    stats.bits += k * (win.y1 - win.y0) * s
    return (-1 if k < cap else cap), None


def _layers_trimmed(win: _Window, inside: list[tuple[int, int]], srow: int, scol: int, cap: int,
                    stats: SearchStats) -> tuple[int, list[tuple[int, int]] | None]:
    """Large windows: each layer is kept to the rows it occupies, so a step costs the frontier's extent. A
    tile next to layer k is at distance k - 1, k or k + 1, so layers k and k - 1 are all a step must avoid."""
    s = win.stride
    s8 = s // 8
    data = win.data
    nrows = win.y1 - win.y0
    base = min(r for r, _ in inside)
    front = 0
    for r, c in inside:
        front |= 1 << ((r - base) * s + c)
    layers = [(front, base)]
    prev, pbase = 0, base
    k = work = 0
    found = False
    while k < cap:
        c0 = base - 1 if base else 0  # one row below the frontier, where it can grow
        c1 = min(base + (front.bit_length() + s - 1) // s + 1, nrows)
        g = front << s if base else front  # the frontier in the frame starting at row c0
        grown = (g | (g << 1) | (g >> 1) | (g << s) | (g >> s)) & int.from_bytes(data[c0 * s8:c1 * s8], "little") & ~g
        if prev:
            grown &= ~(prev << ((pbase - c0) * s) if pbase >= c0 else prev >> ((c0 - pbase) * s))
        work += c1 - c0
        if not grown:
            break
        low = ((grown & -grown).bit_length() - 1) // s  # drop empty rows below the new frontier
        if low:
            grown >>= low * s
        prev, pbase = front, base
        front, base = grown, c0 + low
        k += 1
        layers.append((front, base))
        if srow >= base and (front >> ((srow - base) * s + scol)) & 1:
            found = True
            break
    stats.layers += k
    stats.work += work
    stats.bits += work * s
    return (k, layers) if found else ((-1 if k < cap else cap), None)


def _read_path(win: _Window, layers: list[tuple[int, int]], start: Point, d: int) -> list[Point]:
    """Forwards from the start: each step to the first of up, left, right, down one layer nearer the goal.
    Each step cuts the three rows round the current tile out of the next layer (a shift and a mask: Python
    integers have no cheaper bit test), then reads the four neighbours from that small integer."""
    s = win.stride
    three_rows = (1 << (2 * s + 3)) - 1
    # the neighbours' bit offsets from (current tile - one row - one column); padding columns are zero
    around = ((0, -1, 1), (-1, 0, s), (1, 0, s + 2), (0, 1, 2 * s + 1))
    x, y = start
    path = []
    for k in range(d - 1, -1, -1):
        bits, base = layers[k]
        lo = (y - win.y0 - base) * s + (x - win.x0) - s - 1
        near = ((bits >> lo) if lo >= 0 else (bits << -lo)) & three_rows
        for dx, dy, off in around:
            if (near >> off) & 1:
                x, y = x + dx, y + dy
                break
        else:  # the layers are a breadth-first search: some neighbour is always one layer nearer
            raise AssertionError(f"path search lost its way at ({x},{y}), layer {k}")
        path.append((x, y))
    return path
