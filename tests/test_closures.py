"""Areas and roads closed by an event (``close_area`` / ``open_area``, core/world/closures.py): walks go round a
closed area, a walk that nothing routes is refused saying the way is closed, a target inside one is walked to
its edge, agents see it when in view, the tick line records it, a bad one is refused at load, and it plays
the same under the same seed."""

import json
import sys
from pathlib import Path

import pytest

from agentworld.core.tasks.task import TaskError  # noqa: E402
from agentworld.core.world.closures import area_tiles  # noqa: E402
from agentworld.core.world.pathing import route  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_events import call, task_with, world_of  # noqa: E402

WEST, EAST = (585, 457), (620, 457)  # either side of the east road's bridge (594..609, 452..461)
BRIDGE_OUT = {"id": "bridge_out", "at_round": 2, "do": "close_area", "at": {"x": 600, "y": 457, "radius": 12},
              "only": "bridge", "message": "The east bridge is out."}
NO_AGGRO = {"aggro": False}  # (the goblins by the bridge would stop the walks: not what these tests are about)


def walk_all(w, agent, x, y, limit=20):
    """Walk until (x, y) is reached: (tiles walked, the results' texts)."""
    tiles, texts = 0, []
    for _ in range(limit):
        r = call(w, agent, "move_character", x=x, y=y)
        assert r.ok, r.text
        tiles += r.effects.move.path_length
        texts.append(r.text)
        if r.effects.move.reached:
            return tiles, texts
    raise AssertionError(f"{agent} did not reach ({x},{y}): {texts[-1]}")


def test_a_closed_bridge_is_walked_round_and_crossed_again_once_it_opens():
    task = task_with(events=[BRIDGE_OUT, {"id": "mended", "at_round": 4, "do": "open_area", "area": "bridge_out"}],
                     world_rules=NO_AGGRO)
    w = world_of(task, at={"agent_1": WEST, "agent_2": WEST, "agent_3": (598, 450)})
    bridge = area_tiles(w.map, 600, 457, 12, "bridge")
    open_road = route(w.map, WEST, EAST)
    assert bridge & set(open_road)  # the open road crosses the bridge
    assert walk_all(w, "agent_1", *EAST)[0] == len(open_road)  # round 1: still open
    report = w.end_round(1)
    [rec] = report.events
    assert (rec["id"], rec["kind"], rec["round"], rec["area"], rec["tiles"]) == \
        ("bridge_out", "close_area", 2, "bridge_out", len(bridge))
    assert any(line.startswith("event bridge_out (close_area") for line in report.lines)
    # the next walk goes round: longer, says so, and never stands on the bridge
    tiles, texts = walk_all(w, "agent_2", *EAST)
    assert tiles > len(open_road) + 100
    assert texts[0].startswith("The short way is closed (the bridge near (600,457)") and "(bridge_out)" in texts[0]
    assert "your path goes round" in texts[0] and " tiles longer" in texts[0] and "(s)" not in texts[0]
    # an agent in view of it reads it; one far away does not
    seen = [n for n in w.observe("agent_3").notes if n.startswith("Closed:")]
    assert seen and "The east bridge is out." in seen[0] and "since round 2" in seen[0]
    assert not [n for n in w.observe("agent_2").notes if n.startswith("Closed:")]
    assert json.loads(json.dumps(w.snapshot()))["mechanics"]["closed_areas"] == {"bridge_out": 2}
    w.end_round(2)
    assert [e["id"] for e in w.end_round(3).events] == ["mended"]
    assert walk_all(w, "agent_2", *WEST)[0] == len(open_road)  # open again: the short way
    assert not [n for n in w.observe("agent_3").notes if n.startswith("Closed:")]


def _ring(w, x, y, r):
    """The walkable tiles at exactly Manhattan distance r of (x, y): a closed ring shuts (x, y) in."""
    return sorted(area_tiles(w.map, x, y, r) - area_tiles(w.map, x, y, r - 1))


def test_a_walk_that_nothing_routes_is_refused_saying_the_way_is_closed():
    probe = world_of(task_with())
    ring = [list(t) for t in _ring(probe, 449, 399, 3)]
    task = task_with(events=[{"id": "palisade", "at_round": 1, "do": "close_area", "tiles": ring,
                              "message": "Stakes ring the square."}])
    w = world_of(task)
    refused = call(w, "agent_1", "move_character", x=470, y=420)
    assert not refused.ok and refused.error == "blocked"
    assert "the way is closed" in refused.text and "palisade" in refused.text and "Stakes ring" in refused.text
    assert (w.players["agent_1"].x, w.players["agent_1"].y) == (449, 399)  # it did not move
    tree = next(e for e in w.observe("agent_1").nearby if e.kind == "resource" and "tree" in e.id and e.distance > 4)
    refused = call(w, "agent_1", "harvest_resource", targetInstance=tree.id)
    assert not refused.ok and refused.error == "blocked" and "the way is closed" in refused.text
    # inside the ring walks are free
    assert call(w, "agent_1", "move_character", x=450, y=400).ok


def test_a_player_standing_in_an_area_when_it_closes_can_walk_out():
    task = task_with(events=[{"id": "flood", "at_round": 2, "do": "close_area", "at": {"x": 449, "y": 399, "radius": 2}}])
    w = world_of(task)
    w.end_round(1)
    assert (w.players["agent_1"].x, w.players["agent_1"].y) == (449, 399)
    out = call(w, "agent_1", "move_character", x=449, y=410)
    assert out.ok and out.effects.move.reached
    back = call(w, "agent_1", "move_character", x=449, y=399)  # now outside: it may not walk back in
    assert back.ok and "closed area" in back.text
    p = w.players["agent_1"]
    assert (p.x, p.y) not in area_tiles(w.map, 449, 399, 2) and abs(p.x - 449) + abs(p.y - 399) == 3


def test_a_walk_into_a_closed_area_stops_at_its_edge_and_says_why():
    task = task_with(events=[{"id": "rockfall", "at_round": 1, "do": "close_area", "at": {"x": 460, "y": 410,
                                                                                          "radius": 2},
                              "message": "Rocks fell on the lane."}])
    w = world_of(task)
    r = call(w, "agent_1", "move_character", x=460, y=410)
    assert r.ok and r.effects.move.reached
    assert "(460,410) is in a closed area" in r.text and "rockfall" in r.text and "Rocks fell" in r.text
    p = w.players["agent_1"]
    assert abs(p.x - 460) + abs(p.y - 410) == 3  # the nearest open tile, beside the closed area


def test_closures_play_the_same_under_the_same_seed():
    probe = world_of(task_with())
    ring = [list(t) for t in _ring(probe, 449, 399, 6)]
    events = [{"id": "wall", "at_round": 3, "do": "close_area", "tiles": ring},
              {"id": "gate", "at_round": 6, "do": "open_area", "area": "wall"},
              {"id": "pond", "at_round": 2, "do": "close_area", "at": {"x": 452, "y": 404, "radius": 1}}]
    task = task_with(events=events)
    first, again = _trajectory(task, seed=1), _trajectory(task, seed=1)
    assert first == again
    fired = [e["id"] for line in first if line["type"] == "tick" for e in line.get("events", [])]
    assert fired == ["pond", "wall", "gate"]
    met = [line["result"] for line in first if "the way is closed" in line.get("result", "")]
    assert met and "(wall)" in met[0] and "(pond)" not in met[0]  # the plan's walks met the wall, not the pond


VOLATILE = {"timestamp", "harness_s", "model_latency_s", "wall_s"}  # what a run's timing changes


def _trajectory(task, seed):
    import asyncio
    import tempfile

    from agentworld.core.play.episode import Episode
    from agentworld.core.play.policies import PolicyTeam, make_policy

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in VOLATILE}
        return [strip(v) for v in o] if isinstance(o, list) else o

    out = Path(tempfile.mkdtemp())
    asyncio.run(Episode(task, PolicyTeam(make_policy("oracle", seed, task)), seed=seed, out_dir=out).run())
    return [strip(json.loads(x)) for x in (out / "trajectory.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("event, field, words", [
    ({"at_round": 3, "do": "open_area", "area": "brige_out"}, "events[1].area", "bridge_out"),
    ({"at_round": 2, "do": "open_area", "area": "bridge_out"}, "events[1].at_round", "opens nothing"),
    ({"at_round": 2, "do": "close_area", "tiles": [[2000, 5]]}, "events[1].tiles[0]", "off the map"),
    ({"at_round": 2, "do": "close_area", "at": {"x": 600, "y": 457, "radius": 3}, "only": "brige"},
     "events[1].only", "bridge"),
    ({"at_round": 2, "do": "close_area", "at": {"x": 450, "y": 400, "radius": 3}, "only": "lava"},
     "events[1].at", "closes nothing"),
    ({"at_round": 2, "do": "close_area", "at": {"landmark": "hearthmor"}}, "events[1].at.landmark", "hearthmoor"),
])
def test_a_closure_that_points_at_nothing_real_is_refused_naming_the_field(event, field, words):
    with pytest.raises(TaskError) as err:
        task_with(events=[BRIDGE_OUT, event])
    problems = [p for p in err.value.problems if p.field == field]
    assert problems, err.value
    assert words in str(problems[0])


@pytest.mark.parametrize("event, words", [
    ({"at_round": 2, "do": "close_area"}, "exactly one of at"),
    ({"at_round": 2, "do": "close_area", "at": {"x": 1, "y": 2}, "tiles": [[1, 2]]}, "exactly one of at"),
    ({"at_round": 2, "do": "open_area"}, "needs area"),
    ({"at_round": 2, "do": "close_portal", "portal": "isle_ferry", "tiles": [[1, 2]]}, "tiles is a field of close_area"),
    ({"at_round": 2, "do": "close_area", "tiles": [[1, 2]], "only": "bridge"}, "narrows the area"),
])
def test_a_malformed_closure_is_a_task_error(event, words):
    with pytest.raises(TaskError) as err:
        task_with(events=[event])
    assert words in str(err.value)


def test_a_closure_is_listed_and_placed_for_the_map():
    from agentworld.core.tasks.mechanics import mechanic_places, mechanics_of
    from agentworld.core.world.datapack import load_world

    road = [[452, 404], [453, 404], [454, 404]]
    task = task_with(events=[BRIDGE_OUT, {"id": "lane", "at_round": 3, "do": "close_area", "tiles": road}])
    assert "events:close_area" in mechanics_of(task)
    places = {p[0]: p for p in mechanic_places(task, load_world())}
    assert places["bridge_out: close_area r2"][1:4] == (600, 457, 12)  # its area, a diamond of its radius
    assert places["lane: close_area r3"][4] == [(452, 404), (453, 404), (454, 404)]  # a road: its line
