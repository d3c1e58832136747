"""The spatial indexes give observations exactly what a scan of the whole world would, however crowded."""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world, spec  # noqa: E402

from agentworld.core.world.spatial import Cells  # noqa: E402


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
