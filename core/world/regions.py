"""A coarse picture of the map for path queries whose exact search would grow large.

The map is cut into square sectors; each sector's walkable tiles split into the parts connected inside it
(regions), and two regions are neighbours when a tile of one touches a tile of the other across a sector
border. A long detour (around a lake, through a mountain pass) is then found on this small graph first, and
the tile search is confined to the corridor of regions it gives, so its work is bounded by the corridor's
area instead of the map's. Built once with the map (and kept in the built-world cache); read-only after.
"""

from __future__ import annotations

import heapq

import numpy as np

SECTOR = 24  # tiles per sector side: small enough that a corridor is narrow, large enough that the graph is small


class Regions:
    def __init__(self, walkable: np.ndarray, sector: int | None = None):
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
        self.labels = labels.ravel().tolist()  # region of tile y * width + x (0: blocked); a list reads fastest
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
        self.size: list[int] = sizes.tolist()  # tiles per region
        self.centre = [(int(round(x)), int(round(y))) for x, y in zip(cx.tolist(), cy.tolist())]
        self.neighbours: list[list[int]] = [[] for _ in range(n + 1)]
        for a, b in both.tolist():
            self.neighbours[a].append(b)
            self.neighbours[b].append(a)
        for nb in self.neighbours:
            nb.sort()

    def region(self, x: int, y: int) -> int:
        return self.labels[y * self.width + x]

    def corridor(self, start: int, goal: int) -> list[int] | None:
        """Regions from ``start`` to ``goal`` along the cheapest chain of neighbours (A* on region centres,
        ties in a fixed order); None when no chain joins them."""
        if start == goal:
            return [start]
        centre = self.centre
        gx, gy = centre[goal]

        def h(r: int) -> int:
            x, y = centre[r]
            return abs(x - gx) + abs(y - gy)

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
            x, y = centre[r]
            for nb in self.neighbours[r]:
                nx, ny = centre[nb]
                ng = g + abs(nx - x) + abs(ny - y) + 1
                if ng < best.get(nb, 1 << 30):
                    best[nb] = ng
                    came[nb] = r
                    heapq.heappush(heap, (ng + h(nb), ng, nb))
        return None
