"""Spatial indexes of the embedded engine: what stands near a tile, without scanning the whole world.

- :class:`Cells` buckets things by (x // CELL, y // CELL); a radius query visits only the buckets it covers.
- :class:`GroundItems` is the engine's ``id -> GroundItem`` dict, bucketed as items are dropped and taken.
- :class:`LazyStates` is an ``id -> live state`` mapping (resource nodes, mobs) whose states are made from
  their placements on first touch, so an episode pays only for what its agents come near.

Players carry their own bucket: ``Player`` tells its :class:`Cells` when ``x`` or ``y`` changes, so every
way of moving a player (a move, a portal, a respawn, a test teleporting it) keeps the index right.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Iterator

CELL = 16  # side of a bucket in tiles


class Cells:
    """key -> thing, bucketed by tile. Things need ``x`` and ``y``; iteration order is insertion order per bucket."""

    __slots__ = ("buckets", "where", "size")

    def __init__(self, size: int = CELL) -> None:
        self.size = size  # side of a bucket in tiles
        self.buckets: dict[tuple[int, int], dict[Any, Any]] = {}
        self.where: dict[Any, tuple[int, int]] = {}

    def put(self, key: Any, thing: Any) -> None:
        cell = (thing.x // self.size, thing.y // self.size)
        old = self.where.get(key)
        if old == cell:
            return
        if old is not None:
            self._drop(key, old)
        self.buckets.setdefault(cell, {})[key] = thing
        self.where[key] = cell

    def discard(self, key: Any) -> None:
        old = self.where.pop(key, None)
        if old is not None:
            self._drop(key, old)

    def _drop(self, key: Any, cell: tuple[int, int]) -> None:
        bucket = self.buckets[cell]
        del bucket[key]
        if not bucket:
            del self.buckets[cell]

    def near(self, x: int, y: int, radius: int) -> Iterator[tuple[int, Any]]:
        """(Manhattan distance, thing) for everything within ``radius`` of (x, y), bucket by bucket."""
        buckets, size = self.buckets, self.size
        for cy in range((y - radius) // size, (y + radius) // size + 1):
            for cx in range((x - radius) // size, (x + radius) // size + 1):
                bucket = buckets.get((cx, cy))
                if bucket:
                    for thing in bucket.values():
                        d = abs(thing.x - x) + abs(thing.y - y)
                        if d <= radius:
                            yield d, thing

    def nearest(self, x: int, y: int, radius: int, limit: int, keep: Callable[[Any], bool],
                key: Callable[[Any], Any]) -> list[tuple[int, Any]]:
        """The ``limit`` kept things within ``radius`` that come first by (distance, ``key``), in that order.

        Buckets are visited ring by ring outwards and the search stops once ``limit`` things are closer than
        every ring not yet visited, so a crowd costs what its nearest part costs, not what all of it does."""
        if limit <= 0:
            return []
        buckets, size = self.buckets, self.size
        present = []
        total = 0
        xs = range((x - radius) // size, (x + radius) // size + 1)
        for cy in range((y - radius) // size, (y + radius) // size + 1):
            for cx in xs:
                bucket = buckets.get((cx, cy))
                if bucket:
                    present.append((cx, cy, bucket))
                    total += len(bucket)
        found: list[tuple[int, Any]] = []
        if total <= limit:  # no more things round here than the list takes: all of those within reach, in order
            for _, _, bucket in present:
                for thing in bucket.values():
                    d = abs(thing.x - x) + abs(thing.y - y)
                    if d <= radius and keep(thing):
                        found.append((d, thing))
            found.sort(key=lambda t: (t[0], key(t[1])))
            return found
        ccx, ccy = x // size, y // size
        rings: dict[int, list[dict]] = {}  # the buckets by Chebyshev distance (in buckets) from (x, y)'s
        for cx, cy, bucket in present:
            k, ky = abs(cx - ccx), abs(cy - ccy)
            rings.setdefault(k if k > ky else ky, []).append(bucket)
        # `cut`: the distance of the limit-th closest thing found so far (radius until `limit` are found):
        # nothing farther can make the list, so it is not even tested with `keep`
        per_distance = [0] * (radius + 1)
        cut, within_cut = radius, 0
        # ring by ring outwards: a tile in ring k >= 1 is at least (k - 1) * size + 1 away, so once `limit`
        # things are that close no outer ring can add one
        for k in sorted(rings):
            if k and within_cut >= limit and cut <= (k - 1) * size:
                break
            for bucket in rings[k]:
                for thing in bucket.values():
                    d = abs(thing.x - x) + abs(thing.y - y)
                    if d <= cut and keep(thing):
                        found.append((d, thing))
                        per_distance[d] += 1
                        within_cut += 1
                        while within_cut - per_distance[cut] >= limit:
                            within_cut -= per_distance[cut]
                            cut -= 1
        found = [t for t in found if t[0] <= cut]
        found.sort(key=lambda t: (t[0], key(t[1])))
        return found[:limit]

    def clear(self) -> None:
        self.buckets.clear()
        self.where.clear()


class GroundItems(dict):
    """The engine's ground items by id, kept in a :class:`Cells` index as they are added and removed."""

    def __init__(self) -> None:
        super().__init__()
        self.cells = Cells()
        self.seq: dict[str, int] = {}  # id -> insertion number: the order a scan of the dict would give
        self._n = 0

    def __setitem__(self, key: str, item: Any) -> None:
        super().__setitem__(key, item)
        self._n += 1
        self.seq.setdefault(key, self._n)
        self.cells.put(key, item)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.seq.pop(key, None)
        self.cells.discard(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            item = self[key]
            del self[key]
            return item
        if default:
            return default[0]
        raise KeyError(key)

    def clear(self) -> None:
        super().clear()
        self.seq.clear()
        self.cells.clear()

    def near(self, x: int, y: int, radius: int) -> list[tuple[int, Any]]:
        """(distance, item) within ``radius``, in the order the items were dropped."""
        seq = self.seq
        return sorted(self.cells.near(x, y, radius), key=lambda t: seq[t[1].id])


class LazyStates(Mapping):
    """id -> live state, made by ``make(placement)`` the first time it is looked up.

    Membership and iteration follow the placements (every id exists); :attr:`live` holds only the states
    made so far, which is all that can differ from a fresh placement."""

    def __init__(self, placements: Mapping[str, Any], make: Callable[[Any], Any]):
        self._placements = placements
        self._make = make
        self.live: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        state = self.live.get(key)
        if state is None:
            state = self.live[key] = self._make(self._placements[key])
        return state

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self._placements

    def __iter__(self) -> Iterator[str]:
        return iter(self._placements)

    def __len__(self) -> int:
        return len(self._placements)
