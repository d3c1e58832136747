"""Issue 26, items 1, 4 and 5 in episodes of the fixture world: mobs that roam and patrol (deterministic under the
seed, on a stream of their own), finite nodes, the carrying limit, and aggressive mobs that engage a walk."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import fixture_world, spec  # noqa: E402

from agentworld.core.tasks.mobs import world_options  # noqa: E402
from agentworld.core.tasks.task import parse_task, validate_task  # noqa: E402
from agentworld.core.world.engine import EmbeddedWorld  # noqa: E402

WOLF_HOME = (22, 22)  # wolf#1: aggressive, range 3 (worldfix.MOBS)


def world(seed=0, rules=None, mobs=None, nodes=None, players=()):
    w = EmbeddedWorld(fixture_world(), seed=seed, rules=rules, mobs=mobs, nodes=nodes)
    for p in players:
        w.add_player(p)
    return w


def track(w, mob_id, rounds, look_every_round=True):
    """Where ``mob_id`` stands in rounds 1..rounds (looked at each round, or only at the end)."""
    out = []
    for r in range(1, rounds + 1):
        if look_every_round or r == rounds:
            m = w._mob_at(w.mobs[mob_id])
            out.append((m.x, m.y))
        w.end_round(r)
    return out


# -- mobs that move ----------------------------------------------------------------------------------------
def test_a_roaming_mob_moves_the_same_way_under_the_same_seed_and_differently_under_another():
    far = [spec("a", "a", 2, 25)]  # nobody near the wolf: it wanders undisturbed
    one = track(world(seed=1, mobs={"wolf": {"roam": 4}}, players=far), "wolf#1", 12)
    again = track(world(seed=1, mobs={"wolf": {"roam": 4}}, players=far), "wolf#1", 12)
    other = track(world(seed=2, mobs={"wolf": {"roam": 4}}, players=far), "wolf#1", 12)
    assert one == again
    assert one != other
    assert one[0] == WOLF_HOME and len(set(one)) > 2  # where it is in round 12 is not where it was in round 1
    gm = fixture_world().map
    for x, y in one + other:
        assert abs(x - WOLF_HOME[0]) + abs(y - WOLF_HOME[1]) <= 4 and gm.walkable(x, y)  # on its leash


def test_a_position_is_a_pure_function_of_seed_mob_and_round_not_of_who_looked_when():
    eager = track(world(seed=5, mobs={"wolf": {"roam": 5, "speed": 2}}), "wolf#1", 15)
    lazy = track(world(seed=5, mobs={"wolf": {"roam": 5, "speed": 2}}), "wolf#1", 15, look_every_round=False)
    assert eager[-1] == lazy[-1]


def test_a_walk_kept_from_other_episodes_puts_a_mover_where_its_steps_one_by_one_do():
    """Episodes of one configuration share each roamer's undisturbed walk (roaming._roamed): whichever rounds
    were asked first, in whichever episode, a mob stands where the documented steps from its spawn put it."""
    from agentworld.core.world import roaming

    mobs = {"wolf": {"roam": 5, "speed": 2}}
    motion = world(seed=5, mobs=mobs).movers.motions["wolf#1"]
    motion.walks.clear()
    gm, (hx, hy) = fixture_world().map, motion.home
    x, y, expected = hx, hy, {1: (hx, hy)}
    for r in range(2, 41):
        for k in range(2):  # speed 2: two steps a round, each from the hash of (seed, mob, round, step)
            dx, dy = roaming._STEPS[roaming._mix(5, motion.key, r, k) & 3]
            if abs(x + dx - hx) + abs(y + dy - hy) <= 5 and gm.walkable(x + dx, y + dy):
                x, y = x + dx, y + dy
        expected[r] = (x, y)
    for r in (17, 3, 40, 17, 29, 40):  # each in a new episode: first worked out, then read from the kept walk
        m = world(seed=5, mobs=mobs)
        mob = m._mob_at(m.mobs["wolf#1"], r)
        assert (mob.x, mob.y) == expected[r], r
    assert len(motion.walks[5]) == 2 * 40  # one tile per round, up to the latest asked


def test_a_patrol_walks_its_loop_through_every_waypoint_and_back():
    w = world(mobs={"wolf#1": {"patrol": [[26, 22], [26, 26]], "speed": 2}})
    motion = w.movers.motions["wolf#1"]
    assert motion.loop[0] == WOLF_HOME and {(26, 22), (26, 26)} <= set(motion.loop)
    seen = track(w, "wolf#1", len(motion.loop))
    assert seen == [motion.loop[(2 * i) % len(motion.loop)] for i in range(len(motion.loop))]
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) <= 2 for a, b in zip(seen, seen[1:]))  # it walks, no jumps


def test_a_type_patrol_is_offsets_from_each_spawn_and_an_instance_override_wins():
    w = world(mobs={"wolf": {"patrol": [[4, 0]]}, "goblin#1": {"roam": 2}})
    assert (26, 22) in w.movers.motions["wolf#1"].loop
    assert w.movers.motions["goblin#1"].kind == "roam" and w.movers.motions["goblin#1"].leash == 2
    assert "chicken#1" not in w.movers.motions  # the fixture's types do not move of themselves


def test_movement_draws_nothing_from_the_episode_stream():
    """Combat rolls must not shift because a mob moved: a fight goes the same with the wolf roaming or not."""
    def fight(mobs):
        w = world(seed=3, mobs=mobs, players=[spec("a", "a", 4, 4, skills={"strength": 3})])
        out = []
        for r in range(1, 6):
            w._mob_at(w.mobs["wolf#1"])  # the wolf is looked at (and moved) every round
            out.append(w.attack_entity("a", "chicken#1").text)
            w.end_round(r)
        return out
    assert fight({"wolf": {"roam": 4}}) == fight(None)


def test_a_wounded_mob_holds_still_and_a_respawned_one_starts_at_its_spawn():
    w = world(seed=4, rules={"death": "respawn", "mob_regen_per_round": 0},
              mobs={"goblin": {"roam": 3, "speed": 2}},
              players=[spec("a", "a", 12, 5, skills={"strength": 1, "accuracy": 1}, equipment=[])])
    w.rules = w.rules.model_copy(update={"max_fight_exchanges": 1})
    g = w.mobs["goblin#1"]
    for r in range(1, 10):
        w.attack_entity("a", "goblin#1")
        if g.hp < g.type.hp:
            break
        w.end_round(r)
    assert g.hp < g.type.hp and g.respawn_at is None
    where = (g.x, g.y)
    for r in range(r, r + 4):
        w.end_round(r)
        assert (w._mob_at(g).x, g.y) == where  # wounded: it stays where the fight left it
    w.rules = w.rules.model_copy(update={"max_fight_exchanges": 60})
    w.players["a"].levels.update(strength=40, accuracy=40)
    res = w.attack_entity("a", "goblin#1")
    assert res.effects.kills, res.text
    for rnd in range(w.round, w.round + g.type.respawn_rounds + 1):
        w.end_round(rnd)
        if g.respawn_at is None:
            break
    assert g.respawn_at is None and (g.x, g.y) == (12, 3)


def test_the_observation_shows_a_moving_mob_where_it_stands_and_only_within_view():
    w = world(seed=1, mobs={"wolf#1": {"patrol": [[22, 14]]}}, rules={"view_radius": 5, "aggro": False},
              players=[spec("a", "a", 22, 12)])
    shown = []
    for r in range(1, 14):
        m = w._mob_at(w.mobs["wolf#1"])
        rows = [e for e in w.observe("a").nearby if e.id == "wolf#1"]
        d = abs(m.x - 22) + abs(m.y - 12)
        assert bool(rows) == (d <= 5)
        if rows:
            assert (rows[0].x, rows[0].y, rows[0].distance) == (m.x, m.y, d) and "patrols" in rows[0].note
            shown.append((m.x, m.y))
        w.end_round(r)
    assert len(set(shown)) > 1


def test_attack_entity_finds_a_mob_that_moved_and_walks_to_it():
    w = world(seed=1, mobs={"wolf#1": {"patrol": [[22, 14]]}}, rules={"aggro": False},
              players=[spec("a", "a", 20, 25, skills={"strength": 30, "accuracy": 30, "health": 30})])
    track(w, "wolf#1", 5)
    m = w.mobs["wolf#1"]
    assert (m.x, m.y) != WOLF_HOME
    res = w.attack_entity("a", "wolf#1")
    assert res.ok and res.effects.move is not None
    end = res.effects.move.end
    assert abs(end[0] - m.x) + abs(end[1] - m.y) == 1


# -- hazards that act --------------------------------------------------------------------------------------
def test_an_aggressive_mob_engages_a_player_whose_walk_enters_its_range():
    w = world(seed=2, players=[spec("a", "a", 16, 22, skills={"health": 20})])
    res = w.move_character("a", 29, 22)  # straight past the wolf at (22,22), range 3
    mv = res.effects.move
    assert res.ok and mv.engaged_by == "wolf#1" and not mv.reached
    assert mv.end == (19, 22) and (w.players["a"].x, w.players["a"].y) == (19, 22)  # the first tile in range
    assert "engaged you" in res.text and "wolf#1" in res.text
    assert all(h.cause == "aggro:wolf#1" for h in res.effects.hp)
    again = w.move_character("a", 29, 22)  # the flight (or the way on): a mob already in range does not stop it
    assert again.effects.move.reached and again.effects.move.engaged_by is None
    calm = world(seed=2, rules={"aggro": False}, players=[spec("a", "a", 16, 22)])
    assert calm.move_character("a", 29, 22).effects.move.reached


def test_a_walk_to_a_target_is_stopped_too_but_not_by_the_target_itself():
    w = world(seed=2, players=[spec("a", "a", 16, 22, skills={"health": 20})])
    stopped = w.pickup_resource("a", "nothing")  # (unknown target: no walk)
    assert stopped.error == "unknown_target"
    w._drop("logs", 2, 27, 22)
    gid = next(iter(w.ground))
    res = w.pickup_resource("a", gid)
    assert not res.ok and res.error == "blocked" and res.effects.move.engaged_by == "wolf#1"
    assert not res.effects.gained
    # refused, yet it walked and was struck: the text says that only the walk was done, and how to go on
    assert res.text.endswith(f"Only the walk was done: logs ({gid}) was not reached, so nothing else happened; call "
                             "again to go on (a walk that starts within its range is not stopped by it)."), res.text
    again = w.pickup_resource("a", gid)
    assert again.ok and again.effects.gained and again.effects.move.engaged_by is None
    fighter = world(seed=2, players=[spec("a", "a", 16, 22, skills={"strength": 30, "accuracy": 30, "health": 30})])
    res = fighter.attack_entity("a", "wolf#1")
    assert res.ok and res.effects.move.engaged_by is None and res.effects.kills


def test_a_roaming_mob_that_moves_into_range_engages_at_the_tick():
    hits = []
    for seed in range(12):
        w = world(seed=seed, rules={"hp_regen_per_round": 0}, mobs={"wolf": {"roam": 4, "speed": 2}},
                  players=[spec("a", "a", 27, 22, skills={"health": 30})])  # 5 tiles from home: out of range there
        for r in range(1, 13):
            tick = w.end_round(r)
            if tick.effects.hp:
                wolf = w.mobs["wolf#1"]
                assert abs(wolf.x - 27) + abs(wolf.y - 22) <= 3 and tick.effects.hp[0].cause == "aggro:wolf#1"
                hits.append(seed)
                break
    assert hits  # the player never moved: the wolf came to it


def test_deaths_on_a_walk_cost_what_the_rules_say():
    for death in ("out", "respawn"):
        for seed in range(40):
            w = world(seed=seed, rules={"death": death}, players=[spec("a", "a", 16, 22, inventory={"logs": 2})])
            w.players["a"].hp = 1
            res = w.move_character("a", 29, 22)
            if res.effects.deaths:
                break
        assert res.effects.deaths == ["a"]
        p = w.players["a"]
        if death == "out":
            assert not p.alive and not p.active
        else:
            assert p.alive and (p.x, p.y) == (16, 22) and any(g.item == "logs" for g in w.ground.values())


# -- scarcity -----------------------------------------------------------------------------------------------
def test_a_finite_node_refuses_the_harvest_after_its_total():
    w = world(nodes={"oak_tree#1": {"total": 4}}, players=[spec("a", "a", 6, 6, inventory={"bronze_axe": 1})])
    got = 0
    for r in range(1, 10):
        res = w.harvest_resource("a", "oak_tree#1")
        if not res.ok:
            break
        got += sum(d.count for d in res.effects.gained)
        row = next(e for e in w.observe("a").nearby if e.id == "oak_tree#1")
        assert f"{4 - got} item(s) left" in row.note or "exhausted" in row.note
        w.end_round(r)
    assert got == 4
    assert res.error == "depleted" and "exhausted" in res.text and "never regrows" in res.text
    for r in range(10, 30):  # and it never comes back
        w.end_round(r)
    assert w.harvest_resource("a", "oak_tree#1").error == "depleted"
    assert w.snapshot()["finite_nodes"] == {"oak_tree#1": 0}
    other = w.harvest_resource("a", "oak_tree#2")  # a node of the same type not named stays as it was
    assert other.ok and other.effects.gained and "never regrows" not in other.text


def test_a_finite_type_makes_every_node_of_it_finite():
    w = world(nodes={"oak_tree": {"total": 1}}, players=[spec("a", "a", 6, 6, inventory={"bronze_axe": 1})])
    assert sum(d.count for d in w.harvest_resource("a", "oak_tree#2").effects.gained) == 1
    assert w.harvest_resource("a", "oak_tree#2").error == "depleted"


def test_the_carrying_limit_refuses_an_over_limit_pickup_or_transfer():
    w = world(rules={"carry_limit": 5}, players=[spec("a", "a", 6, 6, inventory={"logs": 4}),
                                                 spec("b", "b", 6, 7, inventory={"stick": 3})])
    res = w.transfer_items("b", "a", "stick", 3)
    assert not res.ok and res.error == "inventory_full" and "carry limit of 5" in res.text and "at most 1" in res.text
    assert w.transfer_items("b", "a", "stick", 1).ok
    w._drop("feather", 3, 6, 6)
    gid = next(iter(w.ground))
    res = w.pickup_resource("a", gid)
    assert not res.ok and res.error == "inventory_full" and "carry limit 5" in res.text
    assert w.pickup_resource("b", gid).ok and w.player_state("b").count("feather") == 3  # b carries 2 + 3
    text = w.observe("a").render_text()
    assert "carrying 5/5 items" in text
    assert "carrying" not in world(players=[spec("a", "a", 6, 6)]).observe("a").render_text()  # off by default


def test_the_carrying_limit_stops_a_harvest():
    w = world(rules={"carry_limit": 2}, players=[spec("a", "a", 6, 6, inventory={"bronze_axe": 1})])
    res = w.harvest_resource("a", "oak_tree#1")
    assert res.ok and w.players["a"].inv.held() == 2 and "carry limit" in res.text.lower()
    # it stopped at the limit and nothing went to the ground, so the text does not say it did (a pilot looked)
    assert "ground" not in res.text and not list(w.ground.values())
    assert w.harvest_resource("a", "oak_tree#2").error == "inventory_full"
    p = w.players["a"]
    said = w._full_after(p, 2, {"tin_ore": 1})  # a gather of two where one fitted: the rest is on the ground
    assert said.endswith(f"1 tin_ore did not fit and lie on the ground at ({p.x},{p.y}).")


# -- the task file --------------------------------------------------------------------------------------------
TASK = {
    "id": "moving", "task": {"name": "Moving"}, "objectives": {"primary": "x"},
    "agent_1": {"username": "a", "location": {"x": 6, "y": 6}},
    "world_rules": {"carry_limit": 10},
    "mobs": {"wolf#1": {"patrol": [[26, 22], [26, 26]]}, "goblin": {"roam": 2, "speed": 2}},
    "nodes": {"oak_tree#1": {"total": 3}, "copper_rock": {"total": 5}},
}


def test_a_task_file_carries_its_mobs_and_nodes_to_the_world():
    task = parse_task(TASK, "moving.yaml", "moving")
    assert validate_task(task, fixture_world()) == []
    w = EmbeddedWorld(fixture_world(), seed=1, rules=dict(task.world_rules), **world_options(task))
    assert w.movers.motions["wolf#1"].kind == "patrol" and w.movers.motions["goblin#1"].speed == 2
    assert w.nodes["oak_tree#1"].total == 3 and w.nodes["copper_rock#1"].total == 5
    assert w.nodes["oak_tree#2"].total is None


@pytest.mark.parametrize("change, field", [
    ({"mobs": {"wolf#9": {"roam": 2}}}, "mobs.wolf#9"),
    ({"nodes": {"pine_tree": {"total": 2}}}, "nodes.pine_tree"),
    ({"mobs": {"wolf#1": {"patrol": [[15, 5]]}}}, "mobs.wolf#1.patrol[0]"),  # the mountain wall
    ({"mobs": {"wolf#1": {"patrol": [[36, 5]]}}}, "mobs.wolf#1.patrol[0]"),  # the island: another area
    ({"world_rules": {"carry_limit": 1}, "agent_1": {"username": "a", "location": {"x": 6, "y": 6},
                                                     "inventory_items": [{"item": "logs", "count": 3}]}},
     "agent_1.inventory_items"),
])
def test_validation_names_what_points_at_nothing_real(change, field):
    task = parse_task({**TASK, **change}, "moving.yaml", "moving")
    problems = validate_task(task, fixture_world())
    assert [p.field for p in problems] == [field], problems


def test_roam_and_patrol_together_are_refused_with_the_fix():
    from agentworld.core.tasks.task import TaskError
    with pytest.raises(TaskError) as e:
        parse_task({**TASK, "mobs": {"wolf": {"roam": 2, "patrol": [[1, 1]]}}}, "moving.yaml", "moving")
    assert "either roam" in str(e.value)


def test_the_walk_check_finds_what_a_tile_by_tile_scan_finds_on_the_real_world():
    """The walk reads only the aggressive mobs of the buckets it crosses: the same engagement as asking every tile
    of the path for the aggressors in range (minus those in range of the start), nearest then lowest id."""
    import random

    from agentworld.core.world.datapack import load_world
    from agentworld.core.world.pathing import route

    loaded = load_world()
    rng = random.Random(7)
    mobs = [m for m in loaded.mobs if loaded.mob_type(m.type).aggro_range > 0]
    checked = engaged = 0
    for seed in range(3):
        w = EmbeddedWorld(loaded, seed=seed)
        w.round = rng.randint(1, 30)
        for m in rng.sample(mobs, 60):
            start = loaded.map.nearest_walkable(m.x + rng.randint(-15, 15), m.y + rng.randint(-15, 15), 10)
            goal = loaded.map.nearest_walkable(m.x + rng.randint(-15, 15), m.y + rng.randint(-15, 15), 10)
            if start is None or goal is None or start == goal or not loaded.map.connected(start, goal):
                continue
            steps = route(loaded.map, start, goal)[:60]
            already = {a.id for a in w._aggressors_at(*start)}
            expect = None
            for i, (x, y) in enumerate(steps):
                here = [a for a in w._aggressors_at(x, y) if a.id not in already]
                if here:
                    expect = (i, min(here, key=lambda a: (abs(a.x - x) + abs(a.y - y), a.id)).id)
                    break
            got = w._walk_hazard(start, steps)
            assert ((got[0], got[1].id) if got else None) == expect
            checked += 1
            engaged += expect is not None
    assert checked > 100 and engaged > 20
