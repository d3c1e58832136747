"""Combat, death (both death rules) and the end-of-round tick on the fixture world."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world, spec  # noqa: E402

FIGHTER = {"accuracy": 20, "strength": 20, "defense": 20, "health": 20}


def test_kill_gives_loot_kill_effect_xp_and_respawns_later():
    w = make_world(players=[spec("a", "a", 4, 4, skills=FIGHTER, equipment=["copper_sword"])])
    r = w.attack_entity("a", "chicken#1")
    assert r.ok and r.effects.kills[0].model_dump() == {"mob": "chicken", "instance": "chicken#1", "level": 1, "by": "a", "name": ""}
    loot = {d.item: d for d in r.effects.gained}
    assert set(loot) == {"feather", "bones"} and all(d.source == "loot:chicken#1" for d in loot.values())
    assert r.effects.xp["strength"] > 0 and r.effects.xp["accuracy"] > 0
    assert w.player_state("a").kills == {"chicken": 1}
    r = w.attack_entity("a", "chicken#1")
    assert r.error == "invalid" and "respawns in 3 round" in r.text
    obs = w.observe("a")
    assert any(e.id == "chicken#1" and "dead, back in 3 rounds" in e.note for e in obs.nearby)
    for rnd in (1, 2):
        w.end_round(rnd)
    assert not w.attack_entity("a", "chicken#1").ok
    w.end_round(3)
    assert w.attack_entity("a", "chicken#1").ok


def test_teammates_who_see_a_kill_are_told_who_made_it_and_others_are_not():
    # pilots read a mob gone from Nearby as maybe walked off, and attacked ones a teammate had already killed
    w = make_world(players=[spec("a", "a", 4, 4, skills=FIGHTER, equipment=["copper_sword"]),
                            spec("b", "b", 6, 6), spec("c", "c", 25, 26)])
    assert w.attack_entity("a", "chicken#1").ok
    x, y = w.mobs["chicken#1"].x, w.mobs["chicken#1"].y
    assert w.observe("b").notes == [f"a killed Chicken chicken#1 at ({x},{y}) in round {w.round}."]
    assert not any("killed" in n for n in w.observe("c").notes)  # out of view: sees nothing of it
    assert not any("killed" in n for n in w.observe("a").notes)  # the killer has its own result


def test_attack_walks_to_the_mob_and_fails_cleanly():
    w = make_world(players=[spec("a", "a", 10, 10, skills=FIGHTER)])
    r = w.attack_entity("a", "goblin#1")
    assert r.ok and r.effects.move is not None
    assert abs(r.effects.move.end[0] - 12) + abs(r.effects.move.end[1] - 3) == 1
    assert w.attack_entity("a", "goblin#9").error == "unknown_target"
    assert w.attack_entity("a", "oak_tree#1").error == "invalid"
    r = w.attack_entity("a", "dragon#1")
    assert r.error == "blocked" and "portal" in r.text
    w2 = make_world(rules={"interact_range": 3}, players=[spec("a", "a", 10, 10)])
    assert w2.attack_entity("a", "goblin#1").error == "out_of_range"


def test_players_cannot_be_attacked():
    w = make_world()
    assert w.attack_entity("agent_1", "miner").error == "invalid"


def test_boss_hp_persists_between_fights_and_regenerates_at_the_tick():
    strong = {**FIGHTER, "accuracy": 70}
    w = make_world(rules={"max_fight_exchanges": 10, "mob_regen_per_round": 3},
                   players=[spec("a", "a", 35, 6, skills=strong, equipment=["copper_sword", "dragon_plate"]),
                            spec("b", "b", 36, 7, skills=strong, equipment=["copper_sword", "dragon_plate"])])
    r = w.attack_entity("a", "dragon#1")
    assert r.ok and not r.effects.kills and "keeps its wounds" in r.text
    hp1 = w.mobs["dragon#1"].hp
    assert hp1 < 300
    w.attack_entity("b", "dragon#1")
    hp2 = w.mobs["dragon#1"].hp
    assert hp2 < hp1  # a second agent wears it down further
    assert w.snapshot()["mobs"]["dragon#1"]["hp"] == hp2
    w.end_round(1)
    assert w.mobs["dragon#1"].hp == min(300, hp2 + 3)


def test_ranged_needs_ammo_and_consumes_it():
    w = make_world(players=[spec("a", "a", 3, 5, inventory={"shortbow": 1})])
    w.equip_item("a", item_key="shortbow")
    r = w.attack_entity("a", "chicken#1")
    assert r.error == "missing_items" and "ammunition" in r.text
    w2 = make_world(players=[spec("a", "a", 3, 5, skills={"archery": 30, "accuracy": 30},
                                  inventory={"shortbow": 1, "arrow": 50})])
    w2.equip_item("a", item_key="shortbow")
    w2.equip_item("a", item_key="arrow")
    assert w2.player_state("a").equipment == {"weapon": "shortbow", "ammo": "arrow"}
    r = w2.attack_entity("a", "chicken#1")
    used = sum(d.count for d in r.effects.lost if d.item == "arrow")
    assert r.effects.kills and used >= 1
    assert w2.snapshot()["players"]["a"]["equipment_counts"]["ammo"] == 50 - used


def test_magic_uses_the_magic_skill():
    w = make_world(players=[spec("a", "a", 3, 5, skills={"magic": 30}, equipment=["oak_staff"])])
    r = w.attack_entity("a", "chicken#1")
    assert "magic" in r.effects.xp and "strength" not in r.effects.xp


def test_auto_eat_below_threshold_during_a_fight():
    w = make_world(rules={"auto_eat_below": 0.9},
                   players=[spec("a", "a", 21, 21, skills={"health": 5}, inventory={"cooked_trout": 5})])
    r = w.attack_entity("a", "wolf#1")
    eaten = [d for d in r.effects.lost if d.source == "eat"]
    assert eaten and all(d.item == "cooked_trout" for d in eaten)
    assert any(h.cause == "eat:cooked_trout" for h in r.effects.hp)


def test_death_out_removes_the_agent_for_good():
    w = make_world(players=[spec("a", "a", 35, 6, inventory={"logs": 2}), spec("b", "b", 6, 6)])
    r = w.attack_entity("a", "dragon#1")
    assert r.ok and r.effects.deaths == ["a"] and "out of the episode" in r.text
    st = w.player_state("a")
    assert not st.alive and not st.active and st.hp == 0 and st.count("logs") == 2
    assert w.move_character("a", 34, 6).error == "dead"
    assert w.chat("b", "hi").effects.chat.recipients == []
    assert w.observe("a").alive is False
    assert not w.end_round(1).effects.hp or all(h.agent != "a" for h in w.end_round(2).effects.hp)


def test_death_respawn_drops_inventory_and_restores_hp_at_spawn():
    w = make_world(rules={"death": "respawn"}, players=[spec("a", "a", 35, 6, inventory={"logs": 2, "knife": 1})])
    r = w.attack_entity("a", "dragon#1")
    assert r.effects.deaths == ["a"]
    st = w.player_state("a")
    assert st.alive and st.active and st.hp == st.max_hp and (st.x, st.y) == (35, 6) and st.inventory == []
    assert {(d.item, d.count) for d in r.effects.lost if d.source == "death"} == {("logs", 2), ("knife", 1)}
    assert sorted(g.item for g in w.ground.values()) == ["knife", "logs"]
    assert any("You died" in n for n in w.observe("a").notes)
    g = next(iter(w.ground.values()))  # where it died, written as positions are: "(34,6)", not "(34, 6)"
    assert f"your inventory was dropped at ({g.x},{g.y})." in r.text, r.text


def test_tick_aggro_attacks_agents_in_range_only_and_can_be_disabled():
    players = [spec("near", "near", 22, 20), spec("far", "far", 22, 10)]
    w = make_world(players=players)
    causes = set()
    for rnd in range(1, 6):
        causes |= {(h.agent, h.cause) for h in w.end_round(rnd).effects.hp if h.cause.startswith("aggro")}
    assert ("near", "aggro:wolf#1") in causes and not any(a == "far" for a, _ in causes)
    # the note gives HP as the hit left it and says why the status line (after regeneration) shows more
    hit = next(n for n in w.observe("near").notes if "attacked you for" in n)
    assert "after the hit, before the round's regeneration of 1)" in hit, hit
    quiet = make_world(rules={"aggro": False}, players=[spec("near", "near", 22, 20)])
    assert not any(h.cause.startswith("aggro") for rnd in range(1, 6) for h in quiet.end_round(rnd).effects.hp)


def test_tick_aggro_can_kill():
    w = make_world(players=[spec("a", "a", 36, 5)])  # next to the dragon
    deaths = []
    for rnd in range(1, 10):
        deaths += w.end_round(rnd).effects.deaths
    assert deaths == ["a"] and not w.player_state("a").alive


def test_tick_regenerates_hp_and_advances_the_round():
    w = make_world(rules={"hp_regen_per_round": 2})
    w.players["agent_1"].hp = 5
    t = w.end_round(1)
    assert t.round == 1 and w.round == 2
    assert w.player_state("agent_1").hp == 7
    assert any(h.agent == "agent_1" and h.cause == "regen" for h in t.effects.hp)


def test_health_level_up_raises_max_hp():
    w = make_world(players=[spec("a", "a", 4, 4, skills={"strength": 40, "accuracy": 40})])
    before = w.player_state("a").max_hp
    for rnd in range(1, 40):
        w.attack_entity("a", "chicken#1")
        w.end_round(rnd)
    st = w.player_state("a")
    assert st.skills["health"] > 1 and st.max_hp > before


def test_retreat_below_ends_the_fight_early():
    w = make_world(rules={"retreat_below": 0.9}, players=[spec("a", "a", 21, 21, skills={"health": 10})])
    r = w.attack_entity("a", "wolf#1")
    st = w.player_state("a")
    assert st.alive and "retreated" in r.text and not r.effects.kills


def test_the_tick_finds_the_same_aggressors_as_a_scan_of_everything_near_the_tile():
    """The ids of the mobs whose aggro range reaches a tile are kept per tile (placements and types never
    change); whether each is alive is read every time. Over every tile near the real world's mobs, before and
    after some of them die and come back, that is what scanning every fixed thing near the tile finds."""
    import random
    from types import SimpleNamespace

    from agentworld.core.world.datapack import load_world
    from agentworld.core.world.engine import EmbeddedWorld

    w = EmbeddedWorld(load_world(), seed=0)
    rng = random.Random(1)
    ids = sorted(w._fixed.mobs)
    tiles = [(m.x + rng.randint(-10, 10), m.y + rng.randint(-10, 10)) for m in w._fixed.mobs.values() for _ in range(4)]

    def scanned(x, y):
        found = [ref for d, kind, ref in w._static_near(x, y, w.max_aggro)
                 if kind == "mob" and ref.respawn_at is None and 0 < ref.type.aggro_range >= d]
        return sorted(found, key=lambda m: m.id)

    attacked = 0
    for dead in ([], rng.sample(ids, len(ids) // 3), []):
        for mid in ids:
            w.mobs[mid].respawn_at = 9 if mid in dead else None
        for x, y in tiles:
            got = w._aggressors(SimpleNamespace(x=x, y=y))  # a player standing there
            assert [id(m) for m in got] == [id(m) for m in scanned(x, y)], (x, y)
            attacked += bool(got)
    assert attacked > 100 and len(w._aggro_kept) > 100
