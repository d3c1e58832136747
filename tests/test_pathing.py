"""The engine's path queries: exact shortest paths (the same one as a plain breadth-first search picks), a
bounded search, and answers cached per map within a bound."""

import random
import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world  # noqa: E402

from agentworld.core.world import pathing  # noqa: E402
from agentworld.core.world.datapack import load_world  # noqa: E402
from agentworld.core.world.gamemap import GameMap  # noqa: E402
from agentworld.core.world.pathsearch import SearchStats, round_bound, shortest_path, work_bound  # noqa: E402
from agentworld.core.world.regions import Regions, bfs_distances  # noqa: E402

ORDER = ((0, -1), (-1, 0), (1, 0), (0, 1))  # up, left, right, down


def reference_path(gm, start, target, reach=0, max_len=None):
    """A plain breadth-first search from the goal tiles over the whole map, then forwards from the start the
    first of up, left, right, down one step nearer: what the engine's search must return."""
    if abs(start[0] - target[0]) + abs(start[1] - target[1]) <= reach:
        return []
    goals = [(target[0] + dx, target[1] + dy) for dy in range(-reach, reach + 1)
             for dx in range(-(reach - abs(dy)), reach - abs(dy) + 1) if gm.walkable(target[0] + dx, target[1] + dy)]
    if not gm.walkable(*start) or not goals:
        return None
    dist = bfs_distances(gm.walkable_grid, goals)
    d = int(dist[start[1], start[0]])
    if d < 0 or (max_len is not None and d > max_len):
        return None
    x, y = start
    path = []
    for k in range(d - 1, -1, -1):
        x, y = next((x + dx, y + dy) for dx, dy in ORDER
                    if gm.in_bounds(x + dx, y + dy) and dist[y + dy, x + dx] == k)
        path.append((x, y))
    return path


def valid(gm, start, path, goal, reach=0):
    steps = [start, *path]
    assert all(gm.walkable(x, y) for x, y in path)
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(steps, steps[1:]))
    assert abs(steps[-1][0] - goal[0]) + abs(steps[-1][1] - goal[1]) <= reach
    return True


@st.composite
def maps_and_queries(draw):
    w, h = draw(st.integers(3, 40)), draw(st.integers(3, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    walk = rng.random((h, w)) > draw(st.sampled_from([0.05, 0.2, 0.35]))
    if draw(st.booleans()):  # a wall across the map with one gap: the long detours
        x = draw(st.integers(0, w - 1))
        walk[:, x] = False
        walk[draw(st.integers(0, h - 1)), x] = True
    point = st.tuples(st.integers(0, w - 1), st.integers(0, h - 1))
    queries = draw(st.lists(st.tuples(point, point, st.sampled_from([0, 0, 1, 2]),
                                      st.one_of(st.none(), st.integers(0, 40))), min_size=1, max_size=12))
    return walk, draw(st.sampled_from([None, 2, 4, 8])), queries


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(maps_and_queries())
def test_the_search_returns_the_breadth_first_searchs_path_on_random_maps(case):
    walk, block, queries = case
    gm = GameMap(np.zeros(walk.shape, np.uint8), ["grass"], walk, "test")
    regions = Regions(walk, gm.component_labels, block=block, min_area=4) if block else None
    for start, target, reach, max_len in queries:
        want = reference_path(gm, start, target, reach, max_len)
        if reach == 0 and want and not gm.connected(start, target):
            want = None
        assert shortest_path(gm, start, target, reach, max_len, regions=regions) == want
        direct = pathing._direct(gm, start, target, reach, max_len)  # route's answer without a search
        assert direct is None or direct == want


def test_a_direct_walk_is_answered_without_a_search_and_equals_the_search(monkeypatch):
    """Nearby targets on the real map (a crowd's walks and interactions): where the walk that always steps
    nearer gets there, it is the search's path, and route asks no search for it."""
    gm = load_world().map
    monkeypatch.setattr(pathing, "PATHS", pathing.PathCache())
    rng = random.Random(7)
    direct = searched = 0
    while direct < 150 or searched < 20:
        a = (rng.randrange(gm.width), rng.randrange(gm.height))
        b = (a[0] + rng.randint(-15, 15), a[1] + rng.randint(-15, 15))
        if rng.random() < 0.3:
            b = (a[0], b[1])  # one column
        reach, max_len = rng.choice([0, 0, 1, 2]), rng.choice([None, None, 8, 60])
        if not (gm.walkable(*a) and gm.in_bounds(*b)):
            continue
        want = shortest_path(gm, a, b, reach, max_len, regions=pathing.regions_of(gm))
        got = pathing._direct(gm, a, b, reach, max_len)
        if got is not None:
            direct += 1
            assert got == want, (a, b, reach, max_len)
            if direct % 25 == 0:  # the search itself is checked against a plain BFS above: a sample here
                assert got == reference_path(gm, a, b, reach, max_len)
        elif want:
            searched += 1
    before = pathing.PATHS.stats(gm)["misses"]
    assert pathing.route(gm, (449, 404), (452, 409), 1, 20) == shortest_path(gm, (449, 404), (452, 409), 1, 20)
    assert pathing.PATHS.stats(gm)["misses"] == before  # answered directly: no search, nothing cached


def real_queries(gm, n, seed, lo=100, hi=250):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        a = (rng.randrange(gm.width), rng.randrange(gm.height))
        b = (a[0] + rng.randint(-hi, hi), a[1] + rng.randint(-hi, hi))
        if gm.walkable(*a) and lo <= abs(a[0] - b[0]) + abs(a[1] - b[1]) <= hi and gm.connected(a, b):
            out.append((a, b))
    return out


def test_on_the_real_map_paths_are_the_breadth_first_searchs_including_long_detours():
    gm = load_world().map
    regions = pathing.regions_of(gm)
    detours = [((755, 383), (549, 357)), ((268, 484), (82, 440)), ((457, 540), (660, 539))]
    for start, goal in detours + real_queries(gm, 5, seed=3):
        want = reference_path(gm, start, goal)
        assert shortest_path(gm, start, goal, regions=regions) == want
        assert shortest_path(gm, start, goal) == want  # Manhattan bounds alone: slower, same path
    start, tree = (449, 404), (452, 409)
    near = shortest_path(gm, start, tree, reach=1, max_len=20, regions=regions)
    assert near == reference_path(gm, start, tree, 1, 20) and valid(gm, start, near, tree, reach=1)


def test_the_search_is_deterministic_and_its_work_stays_within_the_bound():
    gm = load_world().map
    regions = pathing.regions_of(gm)
    for start, goal in real_queries(gm, 12, seed=5, lo=20, hi=300):
        stats = SearchStats()
        path = shortest_path(gm, start, goal, regions=regions, stats=stats)
        assert path == shortest_path(gm, start, goal, regions=regions)  # same query, same path
        assert stats.rounds <= round_bound(len(path)) and stats.bits <= work_bound(gm, len(path))
        assert stats.bits < work_bound(gm, len(path)) / 100  # the bound is a worst case, far from the usual
    assert round_bound(16) == 3 and round_bound(500) <= 10  # a handful of rounds even across the map


def test_route_answers_from_the_cache_and_hands_out_fresh_lists():
    gm = make_world().map
    cache = pathing.PathCache()
    p1 = pathing.route(gm, (2, 25), (25, 20))  # not one row or column: searched, then cached
    pathing.PATHS, saved = cache, pathing.PATHS
    try:
        a = pathing.route(gm, (2, 25), (25, 20))
        a.append((0, 0))  # a caller changing its copy
        b = pathing.route(gm, (2, 25), (25, 20))
    finally:
        pathing.PATHS = saved
    assert b == p1 and (0, 0) not in b
    assert cache.hits == 1 and cache.misses == 1


def test_the_cache_is_bounded_in_steps_and_entries():
    gm = make_world().map
    cache = pathing.PathCache(max_steps=50, max_entries=3)
    for i in range(10):
        cache.put(gm, ("q", i), [(x, 0) for x in range(20)])
        st_ = cache.stats(gm)
        assert st_["steps"] <= 50 and st_["entries"] <= 3
    assert cache.get(gm, ("q", 9))[0] and not cache.get(gm, ("q", 0))[0]  # least recently used went first
    cache.put(gm, ("none",), None)  # "no path" is an answer too
    assert cache.get(gm, ("none",)) == (True, None)


def test_route_on_the_fixture_map_walks_round_the_wall_and_refuses_other_areas(monkeypatch):
    gm = make_world().map
    monkeypatch.setattr(pathing, "PATHS", pathing.PathCache())
    start, goal = (4, 4), (20, 4)  # either side of the mountain wall at x 15
    path = pathing.route(gm, start, goal)
    assert valid(gm, start, path, goal) and path == reference_path(gm, start, goal)
    near = pathing.route(gm, start, (20, 7), reach=1)
    assert valid(gm, start, near, (20, 7), reach=1) and near == reference_path(gm, start, (20, 7), 1)
    assert pathing.route(gm, start, (36, 5)) is None  # the island: another area
    assert pathing.route(gm, start, goal, max_len=len(path) - 1) is None
