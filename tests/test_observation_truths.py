"""What an observation says is true (issue 28, pilot reports). It names the place a player stands in: the landmark
whose radius covers it, and just outside it, how far the landmark is (a guide accepting 10 tiles from Oakridge's
centre, whose radius is 8, showed "Forest" at 9 tiles, and a pilot walked back for nothing). And a mob's row says
"aggressive" only where mobs attack unprovoked (task_219/220's Depths, `aggro: false`, said it of every mob)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_events import task_with, world_of

OAKRIDGE = (220, 450)  # radius 8; the tiles east of it are walkable


def place_at(x, y):
    w = world_of(task_with())
    w.players["agent_1"].place(x, y)
    return w.observe("agent_1")


def test_inside_a_landmarks_radius_the_place_is_its_name():
    obs = place_at(OAKRIDGE[0] + 8, OAKRIDGE[1])
    assert obs.place == "Oakridge"


def test_just_outside_it_the_observation_says_how_far_the_landmark_is():
    obs = place_at(OAKRIDGE[0] + 9, OAKRIDGE[1])
    assert obs.place == "9 tiles from Oakridge"
    assert "(229,450)" in obs.render() and "9 tiles from Oakridge" in obs.render()


def test_far_from_every_landmark_no_place_is_named():
    assert place_at(OAKRIDGE[0] + 25, OAKRIDGE[1]).place is None


def goblin_row(rules=None):
    from agentworld.core.world.datapack import load_world
    goblin = next(m for m in load_world().mobs if m.type == "goblin")
    w = world_of(task_with(**({"world_rules": rules} if rules else {})))
    w.players["agent_1"].place(*w.map.nearest_walkable(goblin.x + 6, goblin.y))  # in view, out of its reach
    return next(e for e in w.observe("agent_1").nearby if e.id == goblin.id)


def test_a_mob_is_called_aggressive_only_where_mobs_attack_unprovoked():
    assert "aggressive (range 3)" in goblin_row().note
    assert "aggressive" not in goblin_row({"aggro": False}).note
