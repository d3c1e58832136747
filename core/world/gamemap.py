"""The tile map: biomes, walkability, connectivity and shortest paths.

Tiles are addressed ``(x, y)`` with ``0 <= x < width`` and ``0 <= y < height``. Movement is 4-connected
(one step changes x or y by one), so a path's length is its number of steps and Manhattan distance is a
lower bound. Walkability is fixed once the map is built (resource nodes are baked in as blocked tiles);
players and mobs never block. Connected components are labelled once so that an unreachable goal is
refused in O(1) instead of flooding the map.

The grids are kept as flat bytes (and the component labels as an ``array('i')``), indexed
``y * width + x``: that is what the queries read, and what the built-world cache pickles, so loading a
cached world needs no numpy. numpy views of the grids (``biome``, ``walkable_grid``, ``road``) are made on
first use, for the code that computes with whole grids (regions, rendering, statistics).
"""

from __future__ import annotations

import hashlib
from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Point = tuple[int, int]


class GameMap:
    def __init__(self, biome: np.ndarray, biome_keys: list[str], walkable: np.ndarray, version: str,
                 road: np.ndarray | None = None, components: np.ndarray | None = None):
        """``biome``: uint8 (height, width) indices into ``biome_keys``; ``walkable``: bool (height, width).

        ``components``: 4-connected component labels of ``walkable`` (int, 0 = blocked) when the caller
        already has them (the generator computes them fast); otherwise they are labelled on first use."""
        import numpy as np

        if biome.shape != walkable.shape:
            raise ValueError(f"biome grid {biome.shape} and walkable grid {walkable.shape} differ in shape")
        self.height, self.width = biome.shape
        self.version = version
        self.biome_keys = list(biome_keys)
        # flat bytes, row-major: grid[y * width + x] (walkability and roads 0/1)
        self._biome = np.ascontiguousarray(biome, dtype=np.uint8).tobytes()
        self._walk = np.ascontiguousarray(walkable, dtype=bool).tobytes()
        self._road = np.ascontiguousarray(road, dtype=bool).tobytes() if road is not None else bytes(len(self._walk))
        if components is not None and components.shape != walkable.shape:
            raise ValueError(f"component labels {components.shape} and walkable grid {walkable.shape} differ in shape")
        self._components: array | None = _labels_array(components) if components is not None else None
        self._regions = None  # regions.Regions (landmark bounds), built by pathing.regions_of with the world
        self._views: dict[str, np.ndarray] = {}

    # -- storage: what the built-world cache pickles is the flat grids, never numpy arrays ---------
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_views", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views = {}

    def _view(self, name: str, dtype: str) -> np.ndarray:
        """A read-only (height, width) numpy view of one flat grid, made once."""
        view = self._views.get(name)
        if view is None:
            import numpy as np

            view = np.frombuffer(getattr(self, name), dtype=dtype).reshape(self.height, self.width)
            self._views[name] = view
        return view

    @property
    def biome(self) -> np.ndarray:
        """uint8 (height, width) indices into ``biome_keys`` (read-only)."""
        return self._view("_biome", "uint8")

    @property
    def walkable_grid(self) -> np.ndarray:
        """bool (height, width) (read-only)."""
        return self._view("_walk", "bool")

    @property
    def road(self) -> np.ndarray:
        """bool (height, width): road tiles (read-only)."""
        return self._view("_road", "bool")

    @property
    def component_labels(self) -> np.ndarray:
        """int32 (height, width) connected-component labels, 0 = blocked (read-only)."""
        import numpy as np

        self.component(0, 0)  # labels on first use
        return np.frombuffer(self._components, dtype=np.int32).reshape(self.height, self.width)

    # -- queries ----------------------------------------------------------------------------------
    def in_bounds(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def walkable(self, x: int, y: int) -> bool:
        return self.in_bounds(x, y) and self._walk[y * self.width + x] == 1

    def biome_at(self, x: int, y: int) -> str:
        return self.biome_keys[self._biome[y * self.width + x]]

    def is_road(self, x: int, y: int) -> bool:
        return self._road[y * self.width + x] == 1

    def component(self, x: int, y: int) -> int:
        """Connected-component label of a walkable tile (0 for blocked tiles)."""
        if self._components is None:
            self._components = _labels_array(label_components(self.walkable_grid))
        return self._components[y * self.width + x]

    def connected(self, a: Point, b: Point) -> bool:
        return self.walkable(*a) and self.walkable(*b) and self.component(*a) == self.component(*b)

    def nearest_walkable(self, x: int, y: int, max_radius: int = 12) -> Point | None:
        """The closest walkable tile to (x, y) by Manhattan distance (ties: smaller y, then x)."""
        if self.walkable(x, y):
            return (x, y)
        for r in range(1, max_radius + 1):
            ring = []
            for dx in range(-r, r + 1):
                dy = r - abs(dx)
                for yy in {y - dy, y + dy}:
                    if self.walkable(x + dx, yy):
                        ring.append((yy, x + dx))
            if ring:
                yy, xx = min(ring)
                return (xx, yy)
        return None

    def adjacent_walkable(self, x: int, y: int) -> list[Point]:
        """Walkable tiles next to (x, y), e.g. where to stand to harvest a node on (x, y)."""
        return [(x + dx, y + dy) for dx, dy in ((0, -1), (-1, 0), (1, 0), (0, 1)) if self.walkable(x + dx, y + dy)]

    def find_path(self, start: Point, goal: Point, max_len: int | None = None, *,
                  reach: int = 0) -> list[Point] | None:
        """Shortest 4-connected path from ``start`` to within ``reach`` tiles (Manhattan) of ``goal``.

        The path excludes start and includes its last tile; ``[]`` when already within reach. ``None``
        when no such path exists or (with ``max_len``) it is longer than ``max_len`` steps. With
        ``reach=0`` the goal itself must be walkable ("stand on it"); with ``reach >= 1`` it may be blocked
        ("stand next to this tree"). Of the shortest paths, the one that at each step takes the first of
        up, left, right, down that stays on a shortest path (``pathsearch.py``: exact, bounded work; the
        engine asks through ``pathing.route``, which caches answers).
        """
        from .pathsearch import shortest_path

        return shortest_path(self, start, goal, reach, max_len, regions=self._regions)

    # -- identity ---------------------------------------------------------------------------------
    def tiles_sha256(self) -> str:
        """Hash of the tile content (biomes, walkability, roads): pins a world version to exact tiles."""
        h = hashlib.sha256()
        h.update(f"{self.width}x{self.height}:{','.join(self.biome_keys)}".encode())
        h.update(self._biome)
        h.update(self._walk)
        h.update(self._road)
        return h.hexdigest()


def _labels_array(labels: np.ndarray) -> array:
    """Component labels as a flat ``array('i')``, row-major."""
    import numpy as np

    return array("i", np.ascontiguousarray(labels, dtype=np.int32).tobytes())


# -- connected components (run-length union-find: ~30 ms instead of a 1 s Python flood fill) ----------
def label_components(walk: np.ndarray) -> np.ndarray:
    """4-connected component labels of ``walk`` (int32, 0 = blocked, labels 1..n in scan order)."""
    import numpy as np

    h, w = walk.shape
    padded = np.zeros((h, w + 2), dtype=np.int8)
    padded[:, 1:-1] = walk
    diff = np.diff(padded, axis=1)
    sy, sx = np.nonzero(diff == 1)  # run starts (row-major order)
    ey, ex = np.nonzero(diff == -1)  # run ends (exclusive)
    n = len(sy)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    row_first = np.searchsorted(sy, np.arange(h + 1))
    for y in range(h - 1):
        a0, a1 = row_first[y], row_first[y + 1]
        b0, b1 = row_first[y + 1], row_first[y + 2]
        if a0 == a1 or b0 == b1:
            continue
        # runs a (row y) and b (row y+1) touch when a.start < b.end and b.start < a.end
        bs, be = sx[b0:b1], ex[b0:b1]
        lo = np.searchsorted(be, sx[a0:a1], side="right")  # first b ending after a starts
        hi = np.searchsorted(bs, ex[a0:a1], side="left")  # b runs starting before a ends
        for i, (l, r) in enumerate(zip(lo.tolist(), hi.tolist())):
            ra = find(a0 + i)
            for j in range(l, r):
                rb = find(b0 + j)
                if ra != rb:
                    if ra < rb:
                        parent[rb] = ra
                    else:
                        parent[ra] = rb
                        ra = rb
    roots = np.array([find(i) for i in range(n)], dtype=np.int64)
    _, compact = np.unique(roots, return_inverse=True)
    labels = np.zeros(h * w, dtype=np.int32)
    starts = sy * w + sx
    lengths = ex - sx
    idx = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths) + np.arange(lengths.sum())
    labels[idx] = np.repeat(compact.astype(np.int32) + 1, lengths)
    return labels.reshape(h, w)
