"""The spatial indexes give observations exactly what a scan of the whole world would, however crowded."""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from worldfix import make_world, spec  # noqa: E402

from agentworld.core.world.spatial import SPAN, Cells  # noqa: E402


def brute_force_nearby(w, agent_id):
    """(distance, id, kind) of what the observation should list: every entity within view, by scanning."""
    p = w.players[agent_id]
    vr, cap = w.rules.view_radius, w.rules.max_nearby
    cands = []
    for d, kind, ref in w._static_near(p.x, p.y, vr):
        eid = ref.key if kind == "npc" else (f"{ref.kind}@{ref.x},{ref.y}" if kind == "station" else ref.id)
        cands.append((d, eid, kind))
    for q in w.players.values():  # every player, in join order
        d = abs(q.x - p.x) + abs(q.y - p.y)
        if q is not p and q.active and q.alive and d <= vr:
            cands.append((d, q.username, "player"))
    for g in w.ground.values():
        d = abs(g.x - p.x) + abs(g.y - p.y)
        if d <= vr:
            cands.append((d, g.id, "ground_item"))
    cands.sort(key=lambda c: (c[0], c[1]))
    return cands[:cap]


def crowd(n, seed):
    rng = random.Random(seed)
    tiles = [(x, y) for x in range(16, 30) for y in range(12, 30)]
    rng.shuffle(tiles)
    players = [spec(f"agent_{i}", f"p{rng.randrange(10**6):06d}_{i}", *tiles[i % len(tiles)]) for i in range(n)]
    return make_world(seed=seed, rules={"max_nearby": 10}, players=players), rng


def test_observations_in_a_crowd_match_a_full_scan():
    w, rng = crowd(120, 1)
    for step in range(200):
        agent = f"agent_{rng.randrange(120)}"
        p = w.players[agent]
        if step % 3 == 0:  # teleport by plain assignment, as tests and tools do
            p.x, p.y = rng.randrange(16, 30), rng.randrange(12, 30)
        if step % 7 == 0:
            w._drop("logs", 1, p.x, p.y)
        if step % 11 == 0 and w.ground:
            gid = next(iter(w.ground))
            w.pickup_resource(agent, gid)
        if step % 13 == 0:
            w.remove_player(f"agent_{rng.randrange(120)}", "test")
        obs = w.peek(agent)
        got = [(e.distance, e.id, e.kind) for e in obs.nearby]
        assert got == brute_force_nearby(w, agent)


def test_nearest_stops_early_but_returns_the_true_nearest():
    class Thing:
        def __init__(self, i, x, y):
            self.i, self.x, self.y = i, x, y

    rng = random.Random(3)
    for count in (2000, 60):  # a crowd (the early stop) and a sparse world (fewer round a tile than the limit)
        cells = Cells(size=4)
        things = [Thing(i, rng.randrange(100), rng.randrange(100)) for i in range(count)]
        for t in things:
            cells.put(t.i, t)
        for _ in range(100):
            x, y, r, k = rng.randrange(100), rng.randrange(100), rng.randrange(1, 40), rng.randrange(0, 30)
            want = sorted((abs(t.x - x) + abs(t.y - y), t.i) for t in things
                          if abs(t.x - x) + abs(t.y - y) <= r and t.i % 5)[:k]
            got = [(d, t.i) for d, t in cells.nearest(x, y, r, k, lambda t: t.i % 5 != 0, lambda t: t.i)]
            assert got == want


class Thing:
    def __init__(self, i, x, y, kept=True):
        self.i, self.x, self.y, self.kept = i, x, y, kept


# where a crowd stands: the map's corner, inside it, by the end of the tile keys' span, and off the map
ORIGINS = (0, 300, SPAN - 8, -6)


@st.composite
def crowds(draw):
    """A crowd put into a Cells, then partly moved and partly discarded, and queries round it."""
    origin = draw(st.sampled_from(ORIGINS))
    spread = draw(st.sampled_from((3, 10, 40)))  # packed on a few tiles, a village, sparse
    coord = st.integers(origin, origin + spread)
    count = draw(st.integers(0, 150))
    things = draw(st.lists(st.tuples(coord, coord, st.booleans()), min_size=count, max_size=count))
    # a move: the thing itself moves, or (replace) another object takes its key at the new place
    moves = draw(st.lists(st.tuples(st.integers(0, 149), coord, coord, st.booleans()), max_size=40))
    gone = draw(st.lists(st.integers(0, 149), max_size=20))
    queries = draw(st.lists(st.tuples(coord, coord, st.integers(0, 20), st.integers(0, 30)), min_size=1, max_size=8))
    return draw(st.sampled_from((1, 4, 16))), things, moves, gone, queries


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowds())
def test_nearest_equals_a_plain_sort(case):
    """Whatever the crowd and its path to here (moves, replaced things, things leaving), `nearest` gives what sorting every
    kept thing within reach by (distance, key) gives: the tile search, the blocks' read, the budget's
    fallback and things off the tile grid alike."""
    size, things, moves, gone, queries = case
    cells = Cells(size=size)
    live = {}
    for i, (x, y, kept) in enumerate(things):
        live[i] = Thing(i, x, y, kept)
        cells.put(i, live[i])
    for i, x, y, replace in moves:
        if i in live:
            if replace:
                live[i] = Thing(i, x, y, not live[i].kept)
            else:
                live[i].x, live[i].y = x, y
            cells.put(i, live[i])
    for i in gone:
        if live.pop(i, None) is not None:
            cells.discard(i)
    for x, y, radius, limit in queries:
        want = sorted((abs(t.x - x) + abs(t.y - y), t.i) for t in live.values()
                      if abs(t.x - x) + abs(t.y - y) <= radius and t.kept)[:limit]
        got = [(d, t.i) for d, t in cells.nearest(x, y, radius, limit, lambda t: t.kept, lambda t: t.i)]
        assert got == want
        # the one looking left out (`skip`), and the same things in any order for a caller that sorts them
        me = live[min(live, key=lambda i: abs(live[i].x - x) + abs(live[i].y - y))] if live else None
        others = [(d, i) for d, i in sorted((abs(t.x - x) + abs(t.y - y), t.i) for t in live.values()
                                            if abs(t.x - x) + abs(t.y - y) <= radius and t.kept and t is not me)][:limit]
        got = [(d, t.i) for d, t in cells.nearest(x, y, radius, limit, lambda t: t.kept, lambda t: t.i, skip=me)]
        assert got == others
        assert sorted((d, t.i) for d, t in cells.nearest(x, y, radius, limit, lambda t: t.kept, lambda t: t.i,
                                                         skip=me, ordered=False)) == others
        assert sorted((d, t.i) for d, t in cells.near(x, y, radius)) == sorted(
            (abs(t.x - x) + abs(t.y - y), t.i) for t in live.values() if abs(t.x - x) + abs(t.y - y) <= radius)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 70), st.integers(0, 70), st.sampled_from("apd")),
                max_size=60),
       st.lists(st.tuples(st.integers(-5, 75), st.integers(-5, 75), st.integers(0, 24)), min_size=1, max_size=10))
def test_ground_items_near_equals_a_scan(ops, queries):
    """Items dropped, replaced under the same id and picked up, in any order: `near` (with its count of the items
    round each bucket, which answers a query with none round by one look-up) gives what scanning every item
    gives, in drop order, for radii up to a bucket's side and beyond."""
    from agentworld.core.world.engine_state import GroundItem
    from agentworld.core.world.spatial import GroundItems

    ground = GroundItems()
    for i, x, y, op in ops:
        gid = f"ground#{i}"
        if op == "d":
            ground.pop(gid, None)
        else:  # a drop ("a") or another item taking the id ("p")
            ground[gid] = GroundItem(gid, "logs", 1, x, y)
        for x0, y0, radius in queries:
            want = [(abs(g.x - x0) + abs(g.y - y0), g.id) for g in ground.values()
                    if abs(g.x - x0) + abs(g.y - y0) <= radius]
            assert [(d, g.id) for d, g in ground.near(x0, y0, radius)] == want
    assert all(n > 0 for n in ground.around.values())


def test_ground_items_two_buckets_away_are_found_beyond_a_buckets_side():
    from agentworld.core.world.engine_state import GroundItem
    from agentworld.core.world.spatial import GroundItems

    ground = GroundItems()
    ground["ground#1"] = GroundItem("ground#1", "logs", 1, 32, 0)  # two buckets right of the query's bucket
    assert ground.near(15, 0, 16) == [] and [g.id for _, g in ground.near(15, 0, 17)] == ["ground#1"]
