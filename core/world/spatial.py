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
BLOCK = 16  # side of the blocks the nearest-first search counts a neighbourhood's things by

# Tiles are also keyed by one integer, ``y * ROW + x``, so that the tiles at a given distance are reached by
# adding fixed offsets (a dict lookup by a small int is about 2.5x faster than by a fresh (x, y) tuple). The
# key is one-to-one for 0 <= x < ROW, and a tile up to ``SPAN`` away from an x in [0, SPAN) never lands on the
# key of a thing's tile (it lands on an x of at least ROW - SPAN, where no thing is kept). Things outside that
# (a map wider than 4,096 tiles) are kept apart, and the search then reads the blocks, which need no tile keys.
SPAN = 1 << 12
ROW = SPAN << 1
TILES_PER_THING = 3  # the tile search gives up after visiting this many tiles per thing round the observer
TRY_TILES = 4 * TILES_PER_THING  # it is tried where spreading the things evenly would need at most 4x its budget

_ABSENT = object()
_LAYERS: list[list[int]] = [[0]]  # d -> the key offsets of the tiles at Manhattan distance d (filled as needed)


def _layer(d: int) -> list[int]:
    while len(_LAYERS) <= d:
        k = len(_LAYERS)
        offsets = []
        for dx in range(-k, k + 1):
            dy = k - abs(dx)
            offsets.append(dy * ROW + dx)
            if dy:
                offsets.append(-dy * ROW + dx)
        _LAYERS.append(offsets)
    return _LAYERS[d]


class Cells:
    """key -> thing, bucketed by tile. Things need ``x`` and ``y``; iteration order is insertion order per bucket.

    Three views of the same things, each kept up to date by :meth:`put`: buckets of ``size`` x ``size`` tiles
    (radius queries), and for the nearest-first search, blocks of ``BLOCK`` x ``BLOCK`` tiles (how many things
    are round a tile) and the things on each tile."""

    __slots__ = ("buckets", "where", "size", "blocks", "block_of", "tiles", "tile_of", "off_grid")

    def __init__(self, size: int = CELL) -> None:
        self.size = size  # side of a bucket in tiles
        self.buckets: dict[tuple[int, int], dict[Any, Any]] = {}
        self.where: dict[Any, tuple[int, int]] = {}
        self.blocks: dict[tuple[int, int], dict[Any, Any]] = {}
        self.block_of: dict[Any, tuple[int, int]] = {}
        self.tiles: dict[int, tuple] = {}  # y * ROW + x -> the things standing there (a tuple: read most)
        self.tile_of: dict[Any, int | None] = {}  # key -> its tile's key (None: off the tile grid)
        self.off_grid: set[Any] = set()  # keys of things outside 0 <= x < SPAN (not in `tiles`)

    def put(self, key: Any, thing: Any) -> None:
        cell = self.where.get(key)
        if cell is not None and self.buckets[cell][key] is not thing:
            self.discard(key)  # another thing under the same key: the old one goes first
        x, y = thing.x, thing.y
        tile = y * ROW + x if 0 <= x < SPAN else None
        old_tile = self.tile_of.get(key, _ABSENT)
        if old_tile != tile:
            if old_tile is None:
                self.off_grid.discard(key)
            elif old_tile is not _ABSENT:
                self._off_tile(key, old_tile)
            self.tile_of[key] = tile
            if tile is None:
                self.off_grid.add(key)
            else:
                self.tiles[tile] = self.tiles.get(tile, ()) + (thing,)
        elif tile is not None:
            return  # the same tile: the same block and bucket
        _move(self.blocks, self.block_of, key, thing, (x // BLOCK, y // BLOCK))
        _move(self.buckets, self.where, key, thing, (x // self.size, y // self.size))

    def discard(self, key: Any) -> None:
        old_tile = self.tile_of.pop(key, _ABSENT)
        if old_tile is _ABSENT:
            return
        if old_tile is None:
            self.off_grid.discard(key)
        else:
            self._off_tile(key, old_tile)
        _move_out(self.blocks, key, self.block_of.pop(key))
        _move_out(self.buckets, key, self.where.pop(key))

    def _off_tile(self, key: Any, tile: int) -> None:
        thing = self.buckets[self.where[key]][key]  # the buckets still hold it where it was
        rest = tuple(t for t in self.tiles[tile] if t is not thing)
        if rest:
            self.tiles[tile] = rest
        else:
            del self.tiles[tile]

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
                key: Callable[[Any], Any], skip: Any = None, ordered: bool = True) -> list[tuple[int, Any]]:
        """The ``limit`` kept things within ``radius`` that come first by (distance, ``key``), in that order
        (``key`` tells things apart: of two with equal distance and key, either may come first). ``skip``: a
        thing left out without asking ``keep`` (the one looking); ``ordered=False``: the same things, in any
        order when there are no more of them than ``limit`` (for a caller that sorts them with others anyway).

        The blocks in reach say how many things are round (x, y). In a crowd the tiles are visited distance
        by distance outwards (the tile itself, the 4 tiles at 1, the 8 at 2, ...) until ``limit`` kept things
        are found: a crowd costs the tiles round its nearest part, and ``keep`` is asked only of those. Where
        things are few (fewer than ``limit``, or than a tile search would visit tiles) they are all read."""
        if limit <= 0:
            return []
        blocks = self.blocks.get
        bxs = range((x - radius) // BLOCK, (x + radius) // BLOCK + 1)
        inside = [b for by in range((y - radius) // BLOCK, (y + radius) // BLOCK + 1) for bx in bxs
                  if (b := blocks((bx, by)))]
        total = sum(map(len, inside))
        # the tile search, where it can win: the tiles it would visit to find `limit` things if they stood
        # evenly over the blocks (limit * area / total) are within a few times its budget (TILES_PER_THING *
        # total). Spread-out things (a few dozen over a few blocks) would make it give up after ~100 tiles.
        if (total > limit and limit * len(inside) * (BLOCK * BLOCK) <= TRY_TILES * total * total
                and not self.off_grid and 0 <= x < SPAN and radius <= SPAN):
            found = self._by_tile(y * ROW + x, radius, limit, keep, key, TILES_PER_THING * total, skip)
            if found is not None:
                return found
        out = []
        for block in inside:
            for thing in block.values():
                d = abs(thing.x - x) + abs(thing.y - y)
                if d <= radius and thing is not skip and keep(thing):
                    out.append((d, thing))
        if ordered or len(out) > limit:
            out.sort(key=lambda t: (t[0], key(t[1])))
            del out[limit:]
        return out

    def _by_tile(self, at: int, radius: int, limit: int, keep: Callable[[Any], bool], key: Callable[[Any], Any],
                 budget: int, skip: Any = None) -> list[tuple[int, Any]] | None:
        """The nearest-first search tile by tile from the tile keyed ``at``; None once more than ``budget``
        tiles would be visited (the things round are too spread out for it to pay)."""
        get = self.tiles.get
        found: list[tuple[int, Any]] = []
        for d in range(radius + 1):
            layer = _LAYERS[d] if d < len(_LAYERS) else _layer(d)
            budget -= len(layer)
            if budget < 0:
                return None
            ring = [thing for offset in layer if (here := get(at + offset)) for thing in here
                    if thing is not skip and keep(thing)]
            if ring:
                if len(ring) > 1:
                    ring.sort(key=key)
                found += [(d, thing) for thing in ring]
                if len(found) >= limit:
                    return found[:limit]
        return found

    def clear(self) -> None:
        for index in (self.buckets, self.where, self.blocks, self.block_of, self.tiles, self.tile_of, self.off_grid):
            index.clear()


def _move(index: dict, of: dict, key: Any, thing: Any, place: Any) -> None:
    """Move ``key`` to ``place`` in ``index`` (place -> {key: thing}), ``of`` saying where each key is."""
    old = of.get(key)
    if old == place:
        return
    if old is not None:
        _move_out(index, key, old)
    index.setdefault(place, {})[key] = thing
    of[key] = place


def _move_out(index: dict, key: Any, place: Any) -> None:
    here = index[place]
    del here[key]
    if not here:
        del index[place]


class GroundItems(dict):
    """The engine's ground items by id, kept in a :class:`Cells` index as they are added and removed."""

    def __init__(self) -> None:
        super().__init__()
        self.cells = Cells()
        self.seq: dict[str, int] = {}  # id -> insertion number: the order a scan of the dict would give
        self._n = 0
        # bucket -> how many items lie in it and its 8 neighbours: a query of radius up to a bucket's side with
        # none round its bucket is answered by one look-up (most tiles have no item within view)
        self.around: dict[tuple[int, int], int] = {}

    def __setitem__(self, key: str, item: Any) -> None:
        old = dict.get(self, key)
        if old is not None:
            self._count_around(old, -1)
        super().__setitem__(key, item)
        self._n += 1
        self.seq.setdefault(key, self._n)
        self.cells.put(key, item)
        self._count_around(item, 1)

    def __delitem__(self, key: str) -> None:
        item = self[key]
        super().__delitem__(key)
        self.seq.pop(key, None)
        self.cells.discard(key)
        self._count_around(item, -1)

    def _count_around(self, item: Any, n: int) -> None:
        size, around = self.cells.size, self.around
        bx, by = item.x // size, item.y // size
        for b in [(bx + dx, by + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]:
            left = around.get(b, 0) + n
            if left:
                around[b] = left
            else:
                del around[b]

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
        self.around.clear()

    def near(self, x: int, y: int, radius: int) -> list[tuple[int, Any]]:
        """(distance, item) within ``radius``, in the order the items were dropped."""
        if radius <= self.cells.size and (x // self.cells.size, y // self.cells.size) not in self.around:
            return []
        out = list(self.cells.near(x, y, radius))
        if len(out) > 1:
            seq = self.seq
            out.sort(key=lambda t: seq[t[1].id])
        return out


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

    def fresh(self, key: str) -> Any:
        """A state of ``key`` as its placement makes it, not kept (the live one, if any, is left alone)."""
        return self._make(self._placements[key])

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
