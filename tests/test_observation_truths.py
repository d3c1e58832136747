"""What an observation says is true (issue 28, pilot reports). It names the place a player stands in: the landmark
whose radius covers it, and just outside it, how far the landmark is (a guide accepting 10 tiles from Oakridge's
centre, whose radius is 8, showed "Forest" at 9 tiles, and a pilot walked back for nothing). And a mob's row says
"aggressive" only where mobs attack unprovoked (task_219/220's Depths, `aggro: false`, said it of every mob).
Anywhere in an area named by one landmark (an island, a cave), the place is that landmark: the area a verifier's
``at_location`` check with ``area:`` means."""

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
    assert obs.place == "9 tiles from Oakridge's centre (220,450)"
    assert "(229,450)" in obs.render() and "9 tiles from Oakridge's centre (220,450)" in obs.render()


def test_far_from_every_landmark_no_place_is_named():
    assert place_at(OAKRIDGE[0] + 25, OAKRIDGE[1]).place is None


LANDING = (892, 206)  # where the ferry lands on Palm Isle: 67 tiles from the island's centre, radius 7


def test_anywhere_on_an_island_the_place_names_the_island():
    # task_403's islander, told to end on Palm Isle, read "Jungle" at the landing and walked back to the village
    obs = place_at(*LANDING)
    assert obs.place == "Palm Isle (67 tiles from its centre)"
    assert "at (892,206) Jungle, Palm Isle (67 tiles from its centre)" in obs.render()
    assert place_at(925, 172).place == "Palm Isle"  # inside the landmark's radius: its name alone


def test_the_island_the_observation_names_is_the_area_the_verifier_checks():
    from agentworld.plugins.verifiers.checks import _area_component

    w = world_of(task_with())
    assert w.map.component(*LANDING) == _area_component("palm_isle")
    # the mainland holds many landmarks: it names no area, and a tile far from them all stays unnamed
    assert w.map.component(*OAKRIDGE) != _area_component("palm_isle")
    assert place_at(OAKRIDGE[0] + 25, OAKRIDGE[1]).place is None


def test_a_ferry_arrival_names_the_island():
    from test_events import FERRY, call

    w = world_of(task_with(), at={"agent_1": FERRY})
    assert call(w, "agent_1", "enter_portal").text == ("You used Ferry to Palm Isle and arrived at (892,206), "
                                                       "Palm Isle (67 tiles from its centre).")


def goblin_row(rules=None):
    from agentworld.core.world.datapack import load_world
    goblin = next(m for m in load_world().mobs if m.type == "goblin")
    w = world_of(task_with(**({"world_rules": rules} if rules else {})))
    w.players["agent_1"].place(*w.map.nearest_walkable(goblin.x + 6, goblin.y))  # in view, out of its reach
    return next(e for e in w.observe("agent_1").nearby if e.id == goblin.id)


def test_a_mob_is_called_aggressive_only_where_mobs_attack_unprovoked():
    assert "aggressive (range 3)" in goblin_row().note
    assert "aggressive" not in goblin_row({"aggro": False}).note


def test_the_skills_line_says_the_skills_it_does_not_list_are_level_1():
    # two pilots (a forester, a woodcutter) read a skill missing from the line as one they did not have
    line = next(x for x in place_at(*OAKRIDGE).render().split("\n") if x.startswith("Skills:"))
    assert line.startswith("Skills: health 10") and line.endswith("; every other skill level 1")
    assert "crafting" not in line
