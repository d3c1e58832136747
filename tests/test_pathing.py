"""The engine's path queries: answers cached per map within a bound, and a bounded search for long detours."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world  # noqa: E402

from agentworld.core.world import pathing  # noqa: E402
from agentworld.core.world.datapack import load_world  # noqa: E402
from agentworld.core.world.gamemap import SearchBudgetExceeded  # noqa: E402
from agentworld.core.world.regions import Regions  # noqa: E402


def valid(gm, start, path, goal, reach=0):
    steps = [start, *path]
    assert all(gm.walkable(x, y) for x, y in path)
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(steps, steps[1:]))
    assert abs(steps[-1][0] - goal[0]) + abs(steps[-1][1] - goal[1]) <= reach
    return True


def test_route_answers_from_the_cache_and_hands_out_fresh_lists():
    gm = make_world().map
    cache = pathing.PathCache()
    p1 = pathing.route(gm, (2, 25), (25, 25))
    pathing.PATHS, saved = cache, pathing.PATHS
    try:
        a = pathing.route(gm, (2, 25), (25, 25))
        a.append((0, 0))  # a caller changing its copy
        b = pathing.route(gm, (2, 25), (25, 25))
    finally:
        pathing.PATHS = saved
    assert b == p1 and (0, 0) not in b
    assert cache.hits == 1 and cache.misses == 1


def test_the_cache_is_bounded_in_steps_and_entries():
    gm = make_world().map
    cache = pathing.PathCache(max_steps=50, max_entries=3)
    for i in range(10):
        cache.put(gm, ("q", i), [(x, 0) for x in range(20)])
        st = cache.stats(gm)
        assert st["steps"] <= 50 and st["entries"] <= 3
    assert cache.get(gm, ("q", 9))[0] and not cache.get(gm, ("q", 0))[0]  # least recently used went first
    cache.put(gm, ("none",), None)  # "no path" is an answer too
    assert cache.get(gm, ("none",)) == (True, None)


def test_a_search_past_the_exact_budget_is_answered_in_a_bounded_corridor(monkeypatch):
    """On the fixture map (a mountain wall to walk round), with both search budgets cut to nothing."""
    gm = make_world().map
    monkeypatch.setattr(pathing, "PATHS", pathing.PathCache())
    monkeypatch.setattr(pathing, "EXACT_BUDGET", 5)
    monkeypatch.setattr(pathing, "WEIGHTED_BUDGET", 5)
    gm._regions = Regions(gm.walkable_grid, sector=8)
    start, goal = (4, 4), (20, 4)  # either side of the wall at x 15
    exact = gm.find_path(start, goal)
    path = pathing.route(gm, start, goal)
    assert valid(gm, start, path, goal)
    assert len(exact) <= len(path) <= 1.3 * len(exact)
    near = pathing.route(gm, start, (20, 7), reach=1)
    assert valid(gm, start, near, (20, 7), reach=1)
    assert pathing.route(gm, start, (36, 5)) is None  # the island: another area


def test_long_detours_on_the_real_map_stay_within_the_corridor_bound():
    gm = load_world().map
    regions = pathing.regions_of(gm)
    for start, goal in (((755, 383), (549, 357)), ((268, 484), (82, 440))):
        with pytest.raises(SearchBudgetExceeded):
            gm.find_path(start, goal, max_expand=pathing.EXACT_BUDGET)
        chain = regions.corridor(regions.region(*start), regions.region(*goal))
        bound = sum(regions.size[r] for r in chain)
        assert bound < pathing.EXACT_BUDGET  # the fallback's worst case is far below the map's area
        path = pathing.corridor_path(gm, start, goal)  # raises SearchBudgetExceeded past the bound
        assert valid(gm, start, path, goal)
        assert len(path) <= 1.2 * len(gm.find_path(start, goal))
