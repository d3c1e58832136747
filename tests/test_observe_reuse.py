"""An observation reuses what it can (Nearby and inventory rows, kept on the things they show or in the world's
table, a node or mob type's note, the biome and place of the tile the player stood on last time, the inventory
rows of its last observation): whatever happened since,
it must equal the observation built with every such reuse emptied, all through real episodes (moves, harvests
and depletions, fights and deaths, pick-ups, crafts, equips, transfers, chat)."""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world, spec  # noqa: E402

from agentworld.core.play.episode import Episode
from agentworld.core.play.policies import PolicyTeam, RandomPolicy
from agentworld.core.runs.bench_play import scale_task
from agentworld.core.tasks.task import find_task


def from_scratch(w, agent_id: str):
    """The agent's view with nothing reused (the kept values are an implementation detail)."""
    kept = (w._entity_rows, w._inv_rows, w._type_notes, w._mob_notes)
    saved = [dict(k) for k in kept]
    things = [*w.players.values(), *w.nodes.live.values(), *w.mobs.live.values()]
    on_things = [(t, name, getattr(t, name)) for t in things for name in ("seen", "shown") if hasattr(t, name)]
    for k in kept:
        k.clear()
    for t, name, _ in on_things:
        object.__setattr__(t, name, None)
    try:
        return w.peek(agent_id)
    finally:  # put the kept values back, so that the episode goes on reusing them
        for k, old in zip(kept, saved):
            k.clear()
            k.update(old)
        for t, name, value in on_things:
            object.__setattr__(t, name, value)


def play_checking(task, seed: int) -> tuple[int, set[str]]:
    ep = Episode(task, PolicyTeam(RandomPolicy(seed)), seed=seed, framework="random")
    first = ep._turn
    checked, notes = [0], set()

    async def turn(agent_id, rnd):  # before and after each turn: the agent's view, reused and from scratch
        w = ep.world
        for when in ("before", "after"):
            if w.players[agent_id].active:
                got = w.peek(agent_id)
                want = from_scratch(w, agent_id)
                assert got.model_dump() == want.model_dump(), (when, rnd, agent_id)
                checked[0] += 1
                notes.update(e.note for e in got.nearby)
            if when == "before":
                await first(agent_id, rnd)

    ep._turn = turn
    asyncio.run(ep.run())
    return checked[0], notes


def test_reused_observations_equal_ones_built_from_scratch():
    checked, notes = 0, set()
    for task, seed in ((find_task("task_04_goblins").model_copy(update={"rounds": 14}), 5),
                       (find_task("task_08_convoy").model_copy(update={"rounds": 10}), 1),
                       (scale_task(40, 8, seed=3), 3),
                       (scale_task(40, 6, packed=True, seed=2), 2)):
        n, seen = play_checking(task, seed)
        checked += n
        notes |= seen
    assert checked > 1000
    # the rows' changing states were met: a depleted node, a dead mob, a dropped item
    assert any("depleted, back in" in n for n in notes) and any("dead, back in" in n for n in notes)
    assert any(n.startswith("needs ") for n in notes) and any("aggressive" in n for n in notes)


def test_every_kind_of_change_to_a_player_shows_in_its_next_observation():
    """Changes made in place, however they are made (a tool, a test reaching into the player): each shows in the
    next observation as in one built from scratch (levels, equipment counts and order, slots, position)."""
    w = make_world(players=[spec("agent_1", "archer", 6, 6, inventory={"arrow": 5, "logs": 2, "bronze_axe": 1},
                                 equipment=["copper_sword"]), spec("agent_2", "friend", 8, 6)])
    p = w.players["agent_1"]
    changes = [
        lambda: setattr(p, "x", p.x + 1),
        lambda: p.inv.slots[p.inv.first_slot("logs")].__setitem__(1, 7),  # a count changed in place
        lambda: p.inv.add("stick", 1),
        lambda: w.equip_item("agent_1", item_key="arrow"),
        lambda: p.equipment["ammo"].__setitem__(1, 2),  # an ammo stack shot down in place
        lambda: p.levels.__setitem__("health", 9),
        lambda: p.levels.__setitem__("strength", 30),
        lambda: p.equipment.__setitem__("weapon", p.equipment.pop("weapon")),  # the same, now after the ammo
        lambda: p.equipment.pop("weapon"),
        lambda: setattr(w.players["agent_2"], "y", 7),
    ]
    w.observe("agent_1")
    for change in changes:
        change()
        got = w.peek("agent_1")
        assert got.model_dump() == from_scratch(w, "agent_1").model_dump()
        assert list(got.equipment) == list(from_scratch(w, "agent_1").equipment)
