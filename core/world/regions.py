"""A coarse picture of the map for path queries whose exact search would grow large.

The map is cut into square sectors; each sector's walkable tiles split into the parts connected inside it
(regions), and two regions are neighbours when a tile of one touches a tile of the other across a sector
border. A long detour (around a lake, through a mountain pass) is then found on this small graph first, and
the tile search is confined to the corridor of regions it gives, so its work is bounded by the corridor's
area instead of the map's. Built once with the map (and kept in the built-world cache); read-only after.
"""

from __future__ import annotations

import heapq
from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

SECTOR = 24  # tiles per sector side: small enough that a corridor is narrow, large enough that the graph is small


class Regions:
    def __init__(self, walkable: np.ndarray, sector: int | None = None):
        import numpy as np  # only to build the regions: a loaded world's regions are flat arrays

        from .gamemap import label_components

        sector = sector or SECTOR

        h, w = walkable.shape
        labels = np.zeros((h, w), dtype=np.int32)
        n = 0
        for sy in range(0, h, sector):
            for sx in range(0, w, sector):
                sub = walkable[sy:sy + sector, sx:sx + sector]
                if not sub.any():
                    continue
                lab = label_components(sub)
                labels[sy:sy + sector, sx:sx + sector] = np.where(lab > 0, lab + n, 0)
                n += int(lab.max())
        self.sector = sector
        self.width = w
        self.count = n
        # region of tile y * width + x (0: blocked): compact to keep and to pickle, quick to index
        self.labels = array("i", labels.ravel().tobytes())
        pairs = []
        for a, b in ((labels[:, :-1], labels[:, 1:]), (labels[:-1, :], labels[1:, :])):
            touch = (a > 0) & (b > 0) & (a != b)
            pairs.append(np.stack([a[touch], b[touch]], axis=1))
        both = np.concatenate(pairs) if pairs else np.zeros((0, 2), dtype=np.int32)
        both = np.unique(np.sort(both, axis=1), axis=0) if len(both) else both
        ys, xs = np.nonzero(labels)
        lab = labels[ys, xs]
        sizes = np.bincount(lab, minlength=n + 1)
        cx = np.bincount(lab, weights=xs, minlength=n + 1) / np.maximum(sizes, 1)
        cy = np.bincount(lab, weights=ys, minlength=n + 1) / np.maximum(sizes, 1)
        # flat arrays, not lists of objects: the regions travel in the built-world cache and load in a blink
        self.size = array("i", sizes.astype(np.int32).tobytes())  # tiles per region
        self.cx = array("i", np.rint(cx).astype(np.int32).tobytes())  # region centres
        self.cy = array("i", np.rint(cy).astype(np.int32).tobytes())
        pairs_both = np.concatenate([both, both[:, ::-1]]) if len(both) else both
        order = np.lexsort((pairs_both[:, 1], pairs_both[:, 0])) if len(pairs_both) else np.zeros(0, dtype=np.int64)
        pairs_both = pairs_both[order]
        counts = np.bincount(pairs_both[:, 0], minlength=n + 1) if len(pairs_both) else np.zeros(n + 1, np.int64)
        # neighbours of region r: nb[start[r]:start[r + 1]], in ascending order
        self.start = array("i", np.concatenate([[0], np.cumsum(counts)]).astype(np.int32).tobytes())
        self.nb = array("i", pairs_both[:, 1].astype(np.int32).tobytes()) if len(pairs_both) else array("i")

    def neighbours(self, r: int) -> array:
        return self.nb[self.start[r]:self.start[r + 1]]

    def region(self, x: int, y: int) -> int:
        return self.labels[y * self.width + x]

    def corridor(self, start: int, goal: int) -> list[int] | None:
        """Regions from ``start`` to ``goal`` along the cheapest chain of neighbours (A* on region centres,
        ties in a fixed order); None when no chain joins them."""
        if start == goal:
            return [start]
        cx, cy = self.cx, self.cy
        gx, gy = cx[goal], cy[goal]

        def h(r: int) -> int:
            return abs(cx[r] - gx) + abs(cy[r] - gy)

        best = {start: 0}
        came: dict[int, int] = {}
        heap = [(h(start), 0, start)]
        while heap:
            _, g, r = heapq.heappop(heap)
            if g > best[r]:
                continue
            if r == goal:
                chain = [r]
                while r != start:
                    r = came[r]
                    chain.append(r)
                return chain[::-1]
            x, y = cx[r], cy[r]
            for nb in self.neighbours(r):
                ng = g + abs(cx[nb] - x) + abs(cy[nb] - y) + 1
                if ng < best.get(nb, 1 << 30):
                    best[nb] = ng
                    came[nb] = r
                    heapq.heappush(heap, (ng + h(nb), ng, nb))
        return None
