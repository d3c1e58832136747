"""The embedded engine hands out a player's last state again while nothing it shows changed: every change,
however it is made (a tool, the tick, a test reaching into the player), gives a fresh state equal to one
built from scratch."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world, spec  # noqa: E402

from agentworld.core.world.api import PlayerState  # noqa: E402


def fresh(w, agent_id: str) -> PlayerState:
    w._states.clear()  # the cache is an implementation detail: a state built from scratch to compare with
    return w.player_state(agent_id)


def test_an_unchanged_player_gives_the_same_state_object():
    w = make_world()
    a = w.player_state("agent_1")
    assert w.player_state("agent_1") is a
    w.sleep("agent_1", 1)
    assert w.player_state("agent_1") is a


def test_what_several_readers_share_cannot_be_edited_by_one():
    """A state is handed to every reader while nothing changes, and one chat message to every recipient: an
    edit by one (a team, a plugin's check) would reach the others, so both are frozen."""
    from dataclasses import FrozenInstanceError

    import pytest

    w = make_world()
    st = w.player_state("agent_1")
    with pytest.raises(FrozenInstanceError, match="hp"):
        st.hp = 0
    w.chat("agent_1", "meet at the forge")
    msg = w.observe("agent_2").chat[0]
    with pytest.raises(FrozenInstanceError, match="text"):
        msg.text = "meet at the river"
    assert w.player_state("agent_1").hp == st.hp > 0 and msg.text == "meet at the forge"


def test_every_kind_of_change_shows_in_the_next_state():
    w = make_world(players=[spec("agent_1", "archer", 6, 6, inventory={"arrow": 5, "logs": 2, "bronze_axe": 1},
                                 equipment=["copper_sword"])])
    p = w.players["agent_1"]
    changes = [
        lambda: setattr(p, "x", p.x + 1),
        lambda: setattr(p, "hp", p.hp - 1),
        lambda: p.inv.slots[p.inv.first_slot("logs")].__setitem__(1, 7),  # a count changed in place
        lambda: p.inv.add("stick", 1),
        lambda: w.equip_item("agent_1", item_key="arrow"),
        lambda: p.equipment["ammo"].__setitem__(1, 2),  # an ammo stack shot down in place
        lambda: p.levels.__setitem__("mining", 9),
        lambda: p.xp.__setitem__("mining", 12345),
        lambda: p.kills.__setitem__("wolf", 1),
        lambda: p.crafted.__setitem__("stick", 3),
        lambda: p.equipment.__setitem__("weapon", p.equipment.pop("weapon")),  # the same, now after the ammo
        lambda: p.equipment.pop("weapon"),
        lambda: setattr(p, "alive", False),
        lambda: setattr(p, "active", False),
    ]
    before = w.player_state("agent_1")
    for change in changes:
        change()
        now = w.player_state("agent_1")
        assert now is not before
        want = fresh(w, "agent_1")
        assert now.model_dump() == want.model_dump()
        assert list(now.equipment) == list(want.equipment)
        before = w.player_state("agent_1")


def test_a_flood_of_chat_shows_the_last_messages_and_counts_every_dropped_one():
    w = make_world()
    for n in (29, 30, 31, 59, 60, 61, 130):  # each side of the observation's limit and of the mailbox's cut-back
        for i in range(n):
            w.chat("agent_1", f"m{i}")
        peek, obs = w.peek("agent_2"), w.observe("agent_2")
        assert peek.chat == obs.chat and peek.notes == obs.notes
        assert [m.text for m in obs.chat] == [f"m{i}" for i in range(max(0, n - 30), n)]
        dropped = [note for note in obs.notes if "dropped" in note]
        assert dropped == ([f"{n - 30} older chat message(s) were dropped (only the last 30 are kept)."] if n > 30 else [])
        assert w.observe("agent_2").chat == []


def test_broadcast_chat_reaches_exactly_whom_it_says_as_mailboxes_would():
    """Team and global chat go to a log each mailbox takes in when next read or written: every observation
    must show what eager delivery to the reported recipients gives (order, the last 30, the dropped count),
    with players leaving, joining late, not observing for a while, and the log cut back."""
    import random

    w = make_world(players=[spec(f"a{i}", f"u{i}", 18 + i % 8, 22 + i // 8) for i in range(12)])
    mail = {a: [] for a in w.players}  # the model: eager delivery to each reported recipient
    rng = random.Random(5)
    for step in range(1500):
        ids = [a for a, q in w.players.items() if q.active and q.alive]
        roll = rng.random()
        sender = rng.choice(ids)
        if roll < 0.6:
            r = w.chat(sender, f"t{step}") if roll < 0.4 else w.send_chat_message(sender, f"g{step}", global_=rng.random() < 0.7)
            if r.effects.chat.scope != "local":  # every other player in play now, in join order (kept lists)
                others = [a for a in ids if a != sender]
                assert r.effects.chat.recipients == others, step
                assert r.text == "Message delivered to " + (", ".join(w.players[a].username for a in others) or "nobody") + "."
            for a in r.effects.chat.recipients:
                mail[a].append(r.effects.chat.message)
        elif roll < 0.9:
            a = rng.choice(list(w.players))
            peek = rng.random() < 0.3
            obs = w.peek(a) if peek else w.observe(a)
            want = mail[a]
            assert [m.text for m in obs.chat] == want[-30:], (step, a)
            dropped = [n for n in obs.notes if "dropped" in n]
            assert dropped == ([f"{len(want) - 30} older chat message(s) were dropped (only the last 30 are kept)."]
                               if len(want) > 30 else [])
            if not peek:
                mail[a] = []
        elif roll < 0.93 and len(ids) > 3:
            w.remove_player(rng.choice(ids), "left")
        elif roll < 0.95:
            new = f"late{step}"
            w.add_player(spec(new, new, 20, 25))
            mail[new] = []
        elif roll < 0.97:  # a death or a revival, however it is made (a respawn rule, a test): chat follows it
            q = w.players[rng.choice(list(w.players))]
            q.alive = not q.alive
        assert all(len(q.mailbox) < 60 for q in w.players.values()), step  # mailboxes are cut back as they fill
    assert w._broadcast_base > 0  # the log was cut back along the way
    assert all(k >= w.players[a].chat_read for a, ks in w._missed_at.items() for k in ks)  # nothing kept that was taken


def test_the_player_index_follows_every_way_a_player_moves():
    """Walks (Player.place), a test setting x or y directly, and a death's respawn: the index finds each player
    on its tile and nowhere else, so observations and local chat see where players really are."""
    import random

    w = make_world(players=[spec(f"a{i}", f"u{i}", 18 + i % 4, 22 + i // 4) for i in range(8)], rules={"death": "respawn"})
    rng = random.Random(3)
    for step in range(300):
        a = rng.choice(list(w.players))
        p = w.players[a]
        roll = rng.random()
        if roll < 0.6:
            w.move_character(a, p.x + rng.randint(-6, 6), p.y + rng.randint(-6, 6))
        elif roll < 0.8:
            p.x += rng.choice([-1, 1]) if w.map.walkable(p.x + 1, p.y) and w.map.walkable(p.x - 1, p.y) else 0
        else:
            p.place(*p.spawn)
        for q in w.players.values():
            here = [t for _, t in w._player_cells.near(q.x, q.y, 0)]
            assert q in here, (step, q.agent_id)
            assert sum(t is q for _, t in w._player_cells.near(q.x, q.y, 40)) == 1, (step, q.agent_id)
