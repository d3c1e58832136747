"""A mob a task's event spawns moves as the task's ``mobs:`` block declares for its type (a patrol's offsets from
where it appears, a roam's leash around it), deterministically; with no declaration it stands (issue 28: the
"patrolling" captain of b_captain_ashore stood still)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_events import task_with, world_of

RAID = {"id": "raid", "at_round": 2, "do": "spawn_mobs", "mob": "chicken", "count": 1,
        "at": {"x": 440, "y": 380, "radius": 0}}
ID = "chicken#100000"


def places(task, seed=0, rounds=12):
    w = world_of(task, seed)
    out = []
    for r in range(1, rounds + 1):
        w.end_round(r)
        out.append(w.mob_position(ID))  # where it stands in round r + 1 (it comes in round 2)
    return out, w


def test_a_spawned_mob_walks_the_patrol_its_task_declares_for_its_type():
    task = task_with(events=[RAID], mobs={"chicken": {"patrol": [[6, 0]], "speed": 1}})
    seen, w = places(task)
    assert seen[0] == (440, 380)  # where it came down, the round it came
    assert max(x for x, _ in seen) == 446 and {y for _, y in seen} == {380}  # out to the waypoint and back
    assert seen[6] == (446, 380) and seen[12 - 2] == (442, 380)
    # the spatial index of spawned mobs follows it (what observations and walks read)
    assert w.snapshot()["mechanics"]["spawned_mobs"][ID]["x"] == seen[-1][0]


def test_a_spawned_mob_roams_within_the_declared_leash_and_the_same_seed_gives_the_same_walk():
    task = task_with(events=[RAID], mobs={"chicken": {"roam": 3, "speed": 2}})
    one, _ = places(task, seed=5, rounds=20)
    two, _ = places(task, seed=5, rounds=20)
    other, _ = places(task, seed=6, rounds=20)
    assert one == two  # determinism: same task, seed and actions
    assert len(set(one)) > 3 and one != other
    assert all(abs(x - 440) + abs(y - 380) <= 3 for x, y in one)


def test_a_spawned_mob_without_a_declaration_stands_where_it_came_down():
    seen, _ = places(task_with(events=[RAID]))
    assert set(seen) == {(440, 380)}



def test_the_final_state_lists_every_moving_mob_where_it_truly_stands():
    # final_state.json's world.moving_mobs listed only the movers the engine had caught up lazily (someone came
    # near them); it lists every one, placed or spawned, and writing it changes nothing in the episode
    task = task_with(events=[RAID], mobs={"chicken": {"patrol": [[6, 0]], "speed": 1}})
    w = world_of(task)
    for r in range(1, 9):
        w.end_round(r)
    live_before = set(w.mobs.live)
    moving = w.snapshot()["moving_mobs"]
    assert set(w.mobs.live) == live_before  # nothing made live by writing it
    assert set(w.movers.motions) <= set(moving) and ID in moving and len(moving) > len(live_before)
    untouched = sorted(set(w.movers.motions) - live_before)[:40]
    assert untouched
    for mid in untouched:  # where the engine puts each when it is looked at now
        assert tuple(moving[mid]) == w.mob_position(mid)
    again = world_of(task)
    for r in range(1, 9):
        again.end_round(r)
    assert again.snapshot()["moving_mobs"] == moving  # deterministic


def test_a_patrol_the_engine_cannot_walk_for_a_spawned_mob_is_refused_by_name():
    import pytest
    from agentworld.core.tasks.task import TaskError
    with pytest.raises(TaskError) as bad:
        task_with(events=[RAID], mobs={"chicken": {"patrol": [[6, 0], [5000, 0]], "speed": 1}})
    assert "mobs.chicken.patrol" in str(bad.value) and "event raid spawns at (440,380)" in str(bad.value)
    with pytest.raises(TaskError) as by_id:  # a spawned mob moves by its type's entry, not one under its id
        task_with(events=[RAID], mobs={ID: {"roam": 3}})
    assert f"mobs.{ID}" in str(by_id.value) and "mobs.chicken" in str(by_id.value)
