"""An observation reuses what it can (Nearby and inventory rows, kept on the things they show or in the world's
table, a node or mob type's note, the biome and place of the tile the player stood on last time, the inventory
rows of its last observation): whatever happened since,
it must equal the observation built with every such reuse emptied, all through real episodes (moves, harvests
and depletions, fights and deaths, pick-ups, crafts, equips, transfers, chat)."""

import asyncio

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
