"""A coarse picture of the map that gives path searches lower bounds on walking distance (landmarks).

A few landmark tiles are picked in each large connected area (farthest-point order: each next landmark is
the tile farthest from those already picked), and the walking distance from each landmark to every tile is
computed once. By the triangle inequality, ``|d_L(p) - d_L(q)|`` is a lower bound on the walking distance
between p and q (it is exact when q lies on a shortest path from the landmark to p, so it sees lakes,
rivers and bays that Manhattan distance does not). Only a summary is kept: the map is cut into
``BLOCK`` x ``BLOCK`` blocks, and per landmark and block the least and greatest distance over the block's
tiles of the landmark's area. Two blocks' intervals then bound the distance between any of their tiles,
which is what the search needs to leave out blocks no short path can cross (``pathing.py``).

Built once with the map (and kept in the built-world cache: this module is part of its key); read-only after.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

BLOCK = 8  # tiles per block side: small enough that a bound is tight, large enough that the tables are small
MAIN_LANDMARKS = 8  # landmarks in the largest area
OTHER_LANDMARKS = 2  # and in each other area of at least MIN_AREA tiles (smaller ones: Manhattan bounds only)
MIN_AREA = 10_000
EMPTY = 65535  # "lo" of a block with no tile of the landmark's area ("hi" is 0 there): the uint16 maximum


class Regions:
    """Per landmark: its tile, its area's component label, and per block the interval of its distances,
    kept as flat ``array('H')`` tables (landmark, block row, block column): a loaded world needs no numpy."""

    def __init__(self, walkable: np.ndarray, components: np.ndarray, *, block: int = BLOCK,
                 min_area: int = MIN_AREA):
        import numpy as np  # only to build: a loaded world's tables are flat arrays

        h, w = walkable.shape
        self.width, self.height, self.block = w, h, block
        self.hb, self.wb = -(-h // block), -(-w // block)
        sizes = np.bincount(components.ravel())
        sizes[0] = 0  # blocked tiles
        order = [int(c) for c in np.argsort(-sizes, kind="stable") if sizes[c] >= min_area]
        tiles, comps, lo, hi = [], [], [], []
        for rank, comp in enumerate(order):
            area = components == comp
            for x, y, dist in _farthest_landmarks(walkable, area, MAIN_LANDMARKS if rank == 0 else OTHER_LANDMARKS):
                tiles.append((x, y))
                comps.append(comp)
                a, b = _block_intervals(dist, block)
                lo.append(a)
                hi.append(b)
        self.tiles = tiles
        self.components = comps
        # (landmarks, hb, wb) uint16, flat: about 23 KB per landmark and table for a 1000 x 750 map
        self.lo = array("H", b"".join(a.tobytes() for a in lo))
        self.hi = array("H", b"".join(b.tobytes() for b in hi))

    def using(self, component: int) -> list[int]:
        """Indices of the landmarks in the given area."""
        return [i for i, c in enumerate(self.components) if c == component]

    def interval(self, mark: int, bx: int, by: int) -> tuple[int, int]:
        """(least, greatest) distance from landmark ``mark`` over block (bx, by)'s tiles of its area."""
        i = (mark * self.hb + by) * self.wb + bx
        return self.lo[i], self.hi[i]

    def tables(self, marks: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """numpy views (len(marks), hb, wb) of the lo and hi tables of some landmarks."""
        import numpy as np

        shape = (len(self.components), self.hb, self.wb)
        lo = np.frombuffer(self.lo, dtype=np.uint16).reshape(shape)
        hi = np.frombuffer(self.hi, dtype=np.uint16).reshape(shape)
        return lo[marks], hi[marks]


def bfs_distances(walkable: np.ndarray, sources: list[tuple[int, int]]) -> np.ndarray:
    """Walking distance (4-connected) from the nearest source to every tile (int32, -1 where unreachable).
    Vectorised breadth-first search: one numpy pass per distance layer over that layer's tiles only."""
    import numpy as np

    h, w = walkable.shape
    stride = w + 2  # a blocked border, so that neighbours never wrap or leave the array
    free = np.zeros((h + 2, stride), dtype=bool)
    free[1:-1, 1:-1] = walkable
    free = free.ravel()
    dist = np.full(free.size, -1, dtype=np.int32)
    front = np.array(sorted({(y + 1) * stride + x + 1 for x, y in sources}), dtype=np.int64)
    front = front[free[front]]
    free[front] = False
    dist[front] = 0
    steps = np.array([-stride, -1, 1, stride], dtype=np.int64)
    seen = np.zeros(free.size, dtype=np.int64)  # scratch for de-duplicating a layer without sorting it
    k = 0
    while front.size:
        k += 1
        cand = (front[:, None] + steps).ravel()
        cand = cand[free[cand]]
        seen[cand] = np.arange(cand.size)
        cand = cand[seen[cand] == np.arange(cand.size)]  # keep one copy of each tile
        free[cand] = False
        dist[cand] = k
        front = cand
    return dist.reshape(h + 2, stride)[1:-1, 1:-1]


def _farthest_landmarks(walkable: np.ndarray, area: np.ndarray, n: int):
    """n landmarks of one area, farthest-point order from the area's first tile in scan order."""
    import numpy as np

    ys, xs = np.nonzero(area)
    dist = bfs_distances(walkable, [(int(xs[0]), int(ys[0]))])
    nearest = np.where(area, dist, -1).astype(np.int64)
    for _ in range(n):
        y, x = np.unravel_index(int(np.argmax(nearest)), area.shape)  # ties: first in scan order
        dist = bfs_distances(walkable, [(int(x), int(y))])
        yield int(x), int(y), np.where(area, dist, -1)
        nearest = np.minimum(nearest, np.where(area, dist, -1))


def _block_intervals(dist: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    h, w = dist.shape
    hb, wb = -(-h // block), -(-w // block)
    pad = np.full((hb * block, wb * block), -1, dtype=np.int32)
    pad[:h, :w] = dist
    cells = pad.reshape(hb, block, wb, block).transpose(0, 2, 1, 3).reshape(hb, wb, block * block)
    if dist.max() >= EMPTY:
        raise ValueError(f"walking distances up to {dist.max()} do not fit the landmark tables (uint16)")
    lo = np.where(cells >= 0, cells, EMPTY).min(axis=2).astype(np.uint16)
    hi = np.maximum(cells.max(axis=2), 0).astype(np.uint16)
    return lo, hi
