"""Engine actions on the small fixture world: success and failure paths of every non-combat action."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import fixture_world, make_world, spec  # noqa: E402

from agentworld.core.world.api import PlayerSpec, StackSpec  # noqa: E402
from agentworld.core.world.engine import EmbeddedWorld  # noqa: E402


# -- setup and rules ---------------------------------------------------------------------------------
def test_rules_override_and_unknown_rule_names_the_allowed_ones():
    w = make_world(rules={"move_range": 5})
    assert w.rules.move_range == 5
    with pytest.raises(ValueError, match="allowed rules: .*move_range"):
        EmbeddedWorld(fixture_world(), rules={"move_rnage": 3})
    with pytest.raises(ValueError, match="death"):
        EmbeddedWorld(fixture_world(), rules={"death": "forever"})


def test_add_player_rejects_unknown_skills_items_and_bad_spawn():
    w = make_world(players=[])
    with pytest.raises(ValueError, match="unknown skills \\['woodcutting'\\]"):
        w.add_player(spec("a", "a", 6, 6, skills={"woodcutting": 3}))
    with pytest.raises(ValueError, match="unknown items \\['log'\\].*did you mean logs"):
        w.add_player(spec("a", "a", 6, 6, inventory={"log": 1}))
    with pytest.raises(ValueError, match="not walkable; nearest walkable tile"):
        w.add_player(spec("a", "a", 15, 5))
    with pytest.raises(ValueError, match="cannot be equipped"):
        w.add_player(PlayerSpec(agent_id="a", username="a", x=6, y=6, equipment=[StackSpec(item="logs")]))
    w.add_player(spec("a", "alice", 6, 6))
    with pytest.raises(ValueError, match="already"):
        w.add_player(spec("a", "bob", 6, 6))


def test_starting_state_levels_xp_and_equipment():
    w = make_world(players=[spec("a", "alice", 6, 6, skills={"health": 10, "mining": 4},
                                 inventory={"logs": 3}, equipment=["copper_sword"])])
    st = w.player_state("a")
    assert st.skills["mining"] == 4 and st.skills["cooking"] == 1
    assert st.max_hp == st.hp == 60
    assert st.equipment == {"weapon": "copper_sword"}
    assert st.count("logs") == 3 and st.inventory[0].index == 0


# -- move ------------------------------------------------------------------------------------------
def test_move_reaches_target_and_follows_a_path_round_the_wall():
    w = make_world()
    r = w.move_character("agent_1", 20, 5)  # the mountain wall at x=15 forces a detour through y >= 21
    assert r.ok and r.effects.move.reached and r.effects.move.end == (20, 5)
    assert r.effects.move.path_length > abs(20 - 6) + abs(5 - 6) + 20
    assert (w.player_state("agent_1").x, w.player_state("agent_1").y) == (20, 5)
    # players plan by |dx|+|dy|: the result says the way went round, and by how much
    assert f"The path bent round obstacles: {r.effects.move.path_length} tiles walked, 15 as |dx|+|dy|." in r.text


def test_move_is_truncated_to_move_range():
    w = make_world(rules={"move_range": 10})
    r = w.move_character("agent_1", 6, 28)
    assert r.ok and not r.effects.move.reached and r.effects.move.path_length == 10
    assert r.effects.move.end == (6, 16)
    assert "again to continue" in r.text and "bent round" not in r.text  # a straight walk says nothing more
    assert not w.move_character("agent_1", 6, 28).effects.move.reached
    r3 = w.move_character("agent_1", 6, 28)
    assert r3.effects.move.reached and r3.effects.move.end == (6, 28) and r3.effects.move.path_length == 2


def test_repeated_long_moves_follow_one_path():
    full = make_world(rules={"move_range": 200})
    path_end = full.move_character("agent_1", 20, 5).effects.move
    w = make_world(rules={"move_range": 7})
    ends = []
    while True:
        m = w.move_character("agent_1", 20, 5).effects.move
        ends.append(m.end)
        if m.reached:
            break
    assert ends[-1] == (20, 5) and len(ends) == -(-path_end.path_length // 7)
    w.move_character("agent_1", 6, 28)  # a different goal, then back: searches afresh, still arrives
    assert w.move_character("agent_1", 20, 5).ok


@pytest.mark.parametrize("x,y,phrase", [(-3, 400, "off the map"), (35, 5, "separate area")])
def test_move_refuses_off_map_and_unreachable_tiles(x, y, phrase):
    w = make_world()
    r = w.move_character("agent_1", x, y)
    assert not r.ok and r.error == "blocked" and phrase in r.text
    assert w.player_state("agent_1").x == 6  # nothing moved


@pytest.mark.parametrize("x,y,said,end", [(15, 5, "(15,5) is mountain (not walkable); you stand beside it at (14,5).", (14, 5)),
                                          (5, 5, "(5,5) is oak_tree#1's tile; you stand beside it at", None)])
def test_move_to_a_blocked_tile_ends_beside_it(x, y, said, end):
    w = make_world()
    r = w.move_character("agent_1", x, y)
    assert r.ok and r.text.startswith(said), r.text
    st = w.player_state("agent_1")
    assert abs(st.x - x) + abs(st.y - y) == 1 and w.map.walkable(st.x, st.y)
    assert end is None or (st.x, st.y) == end


def test_a_walk_cut_short_beside_its_target_says_so():
    # a porter 60 tiles into a 61-tile walk to a crate read "1 tiles of path left, call again" (task_421's pilot)
    w = make_world(rules={"move_range": 5})
    r = w.move_character("agent_1", 6, 12)
    assert r.ok and not r.effects.move.reached and r.effects.move.end == (6, 11)
    assert r.text.endswith("now at (6,11), beside (6,12): 1 tile of path left, only to stand on it; call "
                           "move_character(x=6, y=12) again for that."), r.text
    last = w.move_character("agent_1", 6, 12)
    assert last.effects.move.reached and last.text == "Walked 1 tile to (6,12)."


def test_a_walk_to_a_blocked_tile_says_it_stands_beside_it_only_once_there():
    # "you stand beside it at" came before the walk, true or not: cut short, it names the tile it walks to
    w = make_world(players=[spec("agent_1", "alice", 5, 11)], rules={"move_range": 4})
    r = w.move_character("agent_1", 5, 5)  # oak_tree#1's tile; the tile beside it, from the south, is (5,6)
    assert r.ok and not r.effects.move.reached and r.effects.move.end == (5, 7)
    assert r.text == ("(5,5) is oak_tree#1's tile; the tile beside it is (5,6). Walked 4 tiles toward (5,6) (one "
                      "move covers 4); now at (5,7), 1 tile of path left. Call move_character(x=5, y=6) again to "
                      "continue."), r.text
    last = w.move_character("agent_1", 5, 5)
    assert last.text == "(5,5) is oak_tree#1's tile; you stand beside it at (5,6). Walked 1 tile to (5,6)."


def test_move_to_own_tile_is_ok():
    r = make_world().move_character("agent_1", 6, 6)
    assert r.ok and r.effects.move.path_length == 0


# -- harvest ---------------------------------------------------------------------------------------
def test_harvest_walks_next_to_the_node_and_gathers_until_depleted():
    w = make_world()
    w.move_character("agent_1", 10, 3)
    r = w.harvest_resource("agent_1", "oak_tree#1")
    assert r.ok, r.text
    assert r.effects.move is not None and abs(r.effects.move.end[0] - 5) + abs(r.effects.move.end[1] - 5) == 1
    assert r.effects.gained[0].item == "logs" and r.effects.gained[0].count == 3
    assert r.effects.gained[0].source == "harvest:oak_tree#1"
    assert r.effects.harvests[0].instance == "oak_tree#1" and r.effects.xp == {"lumberjacking": 75}
    assert r.effects.level_ups == {"lumberjacking": 2}
    again = w.harvest_resource("agent_1", "oak_tree#1")
    assert again.error == "depleted" and "back in 5 round" in again.text


def test_harvest_respawns_after_its_respawn_rounds():
    w = make_world(rules={"respawn_scale": 0.4})  # 5 rounds * 0.4 = 2 rounds
    w.harvest_resource("agent_1", "oak_tree#1")
    w.end_round(1)
    assert w.harvest_resource("agent_1", "oak_tree#1").error == "depleted"
    w.end_round(2)
    assert w.harvest_resource("agent_1", "oak_tree#1").ok


def test_harvest_failures_name_the_fix():
    w = make_world()
    r = w.harvest_resource("agent_1", "oak_tree#99")
    assert r.error == "unknown_target" and "Nearby now: oak_tree#1" in r.text
    r = w.harvest_resource("agent_1", "willow_tree#1")
    assert r.error == "level_too_low" and "lumberjacking 10" in r.text and "you have 1" in r.text
    r = w.harvest_resource("agent_1", "copper_rock#1")
    assert r.error == "missing_tool" and "pickaxe" in r.text and "bronze_pickaxe" in r.text
    r = w.harvest_resource("agent_1", "chicken#1")
    assert r.error == "invalid" and "attack_entity" in r.text


def test_harvest_out_of_range_by_walking_distance_round_obstacles():
    w = make_world(rules={"interact_range": 40})
    r = w.harvest_resource("agent_1", "oak_tree#3")  # 20 tiles as the crow flies, ~50 round the mountain wall
    assert r.error == "out_of_range" and "obstacles" in r.text and "move_character" in r.text
    assert w.player_state("agent_1").x == 6


def test_harvest_out_of_range_by_manhattan_distance():
    w = make_world(rules={"interact_range": 5})
    r = w.harvest_resource("agent_1", "oak_tree#3")
    assert r.error == "out_of_range" and "20 tiles away" in r.text


def test_counts_of_one_tile_read_1_tile():
    # "Walked 1 tiles" and "No portal within 1 tile(s)" (the default portal range) read as careless texts
    w = make_world(players=[spec("a", "alice", 6, 6, inventory={"logs": 2}), spec("b", "bob", 6, 7)],
                   rules={"transfer_range": 0})
    far = w.transfer_items("a", "bob", "logs", 1)
    assert far.error == "out_of_range" and "bob is at (6,7), 1 tile away; transfers need 0 or less" in far.text
    assert "tile(s)" not in w.enter_portal("a").text and "No portal within 1 tile of (6,6)" in w.enter_portal("a").text
    assert w.move_character("a", 7, 6).text == "Walked 1 tile to (7,6)."


def test_harvest_tool_requirements_and_equipped_tools_count():
    w = make_world(players=[spec("a", "a", 9, 9, skills={"lumberjacking": 10}, equipment=["steel_axe"]),
                            spec("b", "b", 9, 7, inventory={"steel_axe": 1})])
    assert w.harvest_resource("a", "willow_tree#1").ok  # equipped axe works
    r = w.harvest_resource("b", "oak_tree#2")
    assert r.error == "level_too_low" and "Steel Axe needs lumberjacking 10" in r.text


def test_harvest_bare_handed_plant_with_chance_yields():
    w = make_world(players=[spec("a", "a", 3, 21)])
    r = w.harvest_resource("a", "berry_bush#1")
    assert r.ok and r.effects.move is None
    assert 2 <= w.player_state("a").count("berries") <= 6


def test_harvest_stops_when_the_inventory_is_full():
    w = make_world(rules={"inventory_slots": 2}, players=[spec("a", "a", 6, 6, inventory={"bronze_axe": 1, "knife": 1})])
    r = w.harvest_resource("a", "oak_tree#1")
    assert r.error == "inventory_full"
    w2 = make_world(rules={"inventory_slots": 3}, players=[spec("a", "a", 3, 21, inventory={"bronze_axe": 1, "knife": 1})])
    r = w2.harvest_resource("a", "berry_bush#1")  # berries take the last slot; feathers have no room
    assert r.ok
    st = w2.player_state("a")
    assert st.count("berries") > 0 and len(st.inventory) == 3


def test_fishing_spot_on_water_is_harvested_from_the_shore():
    w = make_world(players=[spec("a", "a", 27, 15, inventory={"fishing_rod": 1})])
    r = w.harvest_resource("a", "trout_spot#1")
    assert r.ok and r.effects.move.end == (29, 15) and w.player_state("a").count("raw_trout") == 3


# -- pickup ----------------------------------------------------------------------------------------
def test_pickup_ground_items_after_death_drop():
    w = make_world(rules={"death": "respawn"}, players=[spec("a", "a", 20, 20, inventory={"logs": 4}),
                                                       spec("b", "b", 19, 20)])
    w.players["a"].hp = 1
    # die to the wolf at the tick (it hits at most 4; hp 1 dies on any hit); retry ticks until it hits
    for rnd in range(1, 30):
        w.players["a"].x, w.players["a"].y = 21, 22
        if w.players["a"].hp > 1:
            w.players["a"].hp = 1
        tick = w.end_round(rnd)
        if tick.effects.deaths:
            break
    assert tick.effects.deaths == ["a"]
    assert any(d.source == "death" and d.item == "logs" for d in tick.effects.lost)
    ground = [g for g in w.ground.values() if g.item == "logs"]
    assert ground and ground[0].count == 4
    gid = ground[0].id
    w.rules = w.rules.model_copy(update={"aggro": False})  # the walk to the items passes the wolf (tested apart)
    r = w.pickup_resource("b", gid)
    assert r.ok and r.effects.gained[0].source == f"pickup:{gid}" and w.player_state("b").count("logs") == 4
    again = w.pickup_resource("b", gid)
    # says where it went, not that no such item ever lay there
    assert again.error == "unknown_target" and again.text.startswith(f"{gid} is no longer on the ground: b picked "
                                                                      "up the last of the logs in round")


def test_pickup_failures():
    w = make_world()
    r = w.pickup_resource("agent_1", "ground#5")
    assert r.error == "unknown_target" and "pickup_resource takes an id" in r.text
    assert w.pickup_resource("agent_1", "oak_tree#1").error == "invalid"


# -- equip and eat ---------------------------------------------------------------------------------
def test_equip_by_index_and_key_swaps_back_to_inventory():
    w = make_world(players=[spec("a", "a", 6, 6, inventory={"bronze_axe": 1, "copper_sword": 1})])
    r = w.equip_item("a", index=0)
    assert r.ok and r.effects.equipped.item == "bronze_axe" and r.effects.equipped.slot == "weapon"
    r = w.equip_item("a", item_key="copper_sword")
    assert r.ok and r.effects.equipped.unequipped == "bronze_axe"
    st = w.player_state("a")
    assert st.equipment == {"weapon": "copper_sword"} and st.count("bronze_axe") == 1


def test_equip_failures():
    w = make_world(players=[spec("a", "a", 6, 6, inventory={"logs": 2, "iron_sword": 1})])
    assert w.equip_item("a", index=7).error == "missing_items"
    assert w.equip_item("a", index=10_000).error == "missing_items"
    assert w.equip_item("a", index=0).error == "invalid"  # logs
    r = w.equip_item("a", index=1)
    assert r.error == "level_too_low" and "strength 20" in r.text
    assert w.equip_item("a", item_key="copper_sword").error == "missing_items"
    r = w.equip_item("a", item_key="iron_swrd")
    assert r.error == "unknown_target" and "iron_sword" in r.text


def test_eating_food_heals_and_is_a_lost_item():
    w = make_world(players=[spec("a", "a", 6, 6, inventory={"cooked_trout": 2})])
    w.players["a"].hp = 3
    r = w.equip_item("a", item_key="cooked_trout")
    assert r.ok and w.player_state("a").hp == 11
    assert r.effects.lost[0].source == "eat" and r.effects.hp[0].cause == "eat:cooked_trout"
    assert w.player_state("a").count("cooked_trout") == 1
    w2 = make_world(players=[spec("a", "a", 6, 6, inventory={"raw_trout": 1})])
    r = w2.equip_item("a", index=0)
    assert r.error == "invalid" and "craft_item(skill='Cooking', itemKey='cooked_trout') near a fire" in r.text


# -- craft -----------------------------------------------------------------------------------------
def test_craft_smelting_at_the_furnace_makes_as_many_as_possible():
    w = make_world()
    r = w.craft_item("agent_3", "smelting", "copper_bar", 5)
    assert r.ok and "Made 2 of the 5 crafts asked for (materials ran out; one craft makes" in r.text
    assert r.effects.crafted[0].count == 2 and r.effects.crafted[0].recipe == "copper_bar"
    assert {(d.item, d.count, d.source) for d in r.effects.lost} == {("copper_ore", 4, "craft:copper_bar")}
    assert {(d.item, d.count, d.source) for d in r.effects.gained} == {("copper_bar", 2, "craft:copper_bar")}
    assert w.player_state("agent_3").crafted == {"copper_bar": 2}
    r = w.craft_item("agent_3", "smithing", "copper_sword", 1)
    assert r.ok and w.player_state("agent_3").count("copper_sword") == 1


def test_craft_failures_name_what_is_missing():
    w = make_world()
    r = w.craft_item("agent_3", "smithing", "copper_sword", 1)
    assert r.error == "missing_items" and "2 copper_bar (you have 0)" in r.text
    r = w.craft_item("agent_1", "smelting", "copper_bar", 1)
    assert r.error == "no_station" and "(8,18)" in r.text and "Millbrook" in r.text
    r = w.craft_item("agent_2", "fletching", "stick", 1)
    assert r.error == "missing_tool" and "knife" in r.text
    r = w.craft_item("agent_1", "crafting", "oak_staff", 1)
    assert r.error == "level_too_low" and "crafting 5" in r.text
    r = w.craft_item("agent_1", "crafting", "copper_bar", 1)
    assert r.error == "unknown_target" and "Smelting" in r.text
    r = w.craft_item("agent_1", "fletching", "stik", 1)
    assert r.error == "unknown_target" and "stick" in r.text
    r = w.craft_item("agent_1", "fletching", "zzz", 1)
    assert r.error == "unknown_target" and "Fletching recipes at your level 1: stick" in r.text
    assert w.craft_item("agent_1", "alchemy", "stick", 1).error == "bad_args"


def test_craft_without_station_with_tool_and_chain():
    w = make_world(players=[spec("a", "a", 10, 17, skills={"crafting": 5}, inventory={"logs": 1, "knife": 1, "feather": 1})])
    r = w.craft_item("a", "fletching", "stick", 1)
    assert r.ok and w.player_state("a").count("stick") == 2 and r.effects.xp == {"fletching": 5}
    r = w.craft_item("a", "crafting", "oak_staff", 1)
    assert r.ok and w.player_state("a").count("oak_staff") == 1


def test_craft_uses_the_first_recipe_for_the_item_that_works_now():
    w = make_world(players=[spec("a", "a", 6, 6, inventory={"willow_logs": 2, "knife": 1})])
    r = w.craft_item("a", "fletching", "stick", 5)
    assert r.ok and r.effects.crafted[0].recipe == "willow_sticks" and w.player_state("a").count("stick") == 6
    r = w.craft_item("a", "fletching", "stick", 1)
    assert r.error == "missing_items" and "1 logs (you have 0)" in r.text  # reported on the main recipe


def test_craft_stops_when_outputs_do_not_fit():
    w = make_world(rules={"inventory_slots": 2}, players=[spec("a", "a", 10, 17, inventory={"copper_bar": 2, "hammer": 1})])
    w.players["a"].levels["smithing"] = 2
    r = w.craft_item("a", "smithing", "copper_sword", 1)  # bars leave their slot free: the sword fits
    assert r.ok


# -- transfer --------------------------------------------------------------------------------------
def test_transfer_moves_items_with_effects():
    w = make_world(players=[spec("a", "alice", 6, 6, inventory={"logs": 5}), spec("b", "bob", 7, 7)])
    r = w.transfer_items("a", "bob", "logs", 3)
    assert r.ok
    assert r.effects.transfers[0].model_dump() == {"from_agent": "a", "to_agent": "b", "item": "logs", "count": 3}
    assert r.effects.lost[0].source == r.effects.gained[0].source == "transfer:a"
    assert w.player_state("a").count("logs") == 2 and w.player_state("b").count("logs") == 3
    assert "alice gave you 3 logs" in " ".join(w.observe("b").notes)
    assert w.transfer_items("a", "b", "logs", 1).ok  # agent id works too


def test_transfer_failures():
    w = make_world(players=[spec("a", "alice", 6, 6, inventory={"logs": 5}), spec("b", "bob", 20, 25)])
    r = w.transfer_items("a", "bob", "logs", 3)  # bob is out of view: his position is not given away
    assert r.error == "out_of_range" and "not within 6 tiles" in r.text and "20" not in r.text and "25" not in r.text
    w.players["b"].x, w.players["b"].y = 14, 6  # in view (8 tiles): the observation shows him, so may the text
    r = w.transfer_items("a", "bob", "logs", 3)
    assert r.error == "out_of_range" and "move_character(x=14, y=6)" in r.text
    w.players["b"].x, w.players["b"].y = 7, 6
    r = w.transfer_items("a", "bob", "logs", 9)
    assert r.error == "missing_items" and "You have 5 logs, not 9" in r.text
    assert w.transfer_items("a", "carol", "logs", 1).error == "unknown_target"
    assert w.transfer_items("a", "alice", "logs", 1).error == "invalid"
    assert w.transfer_items("a", "bob", "lgos", 1).error == "unknown_target"
    assert w.transfer_items("a", "bob", "stick", 1).error == "missing_items"
    w.complete("b", "done")
    assert w.transfer_items("a", "bob", "logs", 1).error == "invalid"


# -- chat ------------------------------------------------------------------------------------------
def test_chat_reaches_the_team_and_is_cleared_when_observed():
    w = make_world()
    r = w.chat("agent_1", "meet at the forge")
    assert r.ok and r.effects.chat.scope == "team" and r.effects.chat.recipients == ["agent_2", "agent_3"]
    assert len(w.peek("agent_2").chat) == 1 and len(w.peek("agent_2").chat) == 1  # peeking keeps the mail
    obs = w.observe("agent_2")
    assert [(m.sender, m.text, m.scope) for m in obs.chat] == [("woodcutter", "meet at the forge", "team")]
    assert w.observe("agent_2").chat == []
    assert w.observe("agent_1").chat == []  # the sender does not hear itself


def test_local_chat_respects_the_radius_and_global_does_not():
    w = make_world(rules={"chat_radius": 8})
    r = w.send_chat_message("agent_1", "hello")
    assert r.effects.chat.scope == "local" and r.effects.chat.recipients == ["agent_2"]  # smith is 15 tiles away
    r = w.send_chat_message("agent_1", "hello all", True)
    assert r.effects.chat.scope == "global" and r.effects.chat.recipients == ["agent_2", "agent_3"]
    assert [m.scope for m in w.observe("agent_2").chat] == ["local", "global"]
    w2 = make_world(rules={"chat_radius": 1})
    r = w2.send_chat_message("agent_1", "anyone?")
    assert r.ok and r.effects.chat.recipients == [] and "use global=true" in r.text
    # it reached nobody: it said "Message delivered to nobody (...)", which read as a delivery
    assert r.text.startswith("No teammate received your message: none is within 1 tile of you;") and \
        "delivered" not in r.text, r.text


def test_chat_is_scoped_to_one_world_instance():
    a, b = make_world(), make_world()
    a.chat("agent_1", "secret")
    assert b.observe("agent_2").chat == []


def test_chat_mailbox_keeps_the_last_messages():
    w = make_world()
    for i in range(40):
        w.chat("agent_1", f"m{i}")
    obs = w.observe("agent_2")
    assert len(obs.chat) == 30 and obs.chat[-1].text == "m39" and any("dropped" in n for n in obs.notes)


# -- portals ---------------------------------------------------------------------------------------
def test_portal_teleports_and_two_way_portal_returns():
    w = make_world(players=[spec("a", "a", 27, 5)])
    r = w.enter_portal("a")
    assert r.ok and r.effects.portal == "isle_boat" and (w.players["a"].x, w.players["a"].y) == (34, 6)
    assert "Dragon Isle" in r.text
    r = w.enter_portal("a")
    assert r.ok and r.effects.target == "isle_boat:back" and (w.players["a"].x, w.players["a"].y) == (28, 5)


def test_portal_failures_and_requirements():
    w = make_world(players=[spec("a", "a", 6, 6), spec("b", "b", 2, 27), spec("c", "c", 2, 27, inventory={"cave_key": 1}),
                            spec("d", "d", 2, 27, skills={"mining": 5}, inventory={"cave_key": 1})])
    r = w.enter_portal("a")
    assert r.error == "out_of_range" and "Boat to Dragon Isle" in r.text
    assert w.enter_portal("b").error == "missing_items"
    r = w.enter_portal("c")
    assert r.error == "level_too_low" and "mining 5" in r.text
    assert w.enter_portal("d").ok and (w.players["d"].x, w.players["d"].y) == (20, 28)
    assert w.enter_portal("d").error == "out_of_range"  # one-way: no return portal


# -- pass, complete, inactive ----------------------------------------------------------------------
def test_sleep_stop_complete_and_not_active():
    w = make_world()
    assert w.sleep("agent_1", 5).ok and w.stop_action("agent_1").ok
    r = w.complete("agent_1", "done")
    assert r.ok and r.effects.completed and not w.player_state("agent_1").active
    for res in (w.sleep("agent_1", 1), w.move_character("agent_1", 7, 7), w.chat("agent_1", "hi")):
        assert res.error == "not_active"
    w.remove_player("agent_2", "retired")
    assert w.sleep("agent_2", 1).error == "not_active"
    assert "agent_2" not in w.chat("agent_3", "x").effects.chat.recipients


def test_unknown_agent_is_an_error_not_an_exception():
    w = make_world()
    assert w.sleep("nobody", 1).error == "invalid"
    with pytest.raises(KeyError):
        w.observe("nobody")


# -- observation -----------------------------------------------------------------------------------
def test_observation_lists_entities_with_requirements_sorted_and_capped():
    w = make_world(players=[spec("a", "alice", 6, 6, inventory={"logs": 2, "bronze_axe": 1}), spec("b", "bob", 7, 7,
                                                                                                   inventory={"logs": 9})])
    obs = w.observe("a")
    assert (obs.x, obs.y, obs.biome, obs.hp, obs.max_hp) == (6, 6, "Forest", 15, 15)
    assert [(i.index, i.key, i.count) for i in obs.inventory] == [(0, "logs", 2), (1, "bronze_axe", 1)]
    keyed = {e.id: e for e in obs.nearby}
    assert keyed["oak_tree#1"].note == "needs axe + lumberjacking 1; gives logs"
    assert keyed["willow_tree#1"].note.startswith("needs axe + lumberjacking 10")
    assert keyed["bob"].kind == "player" and keyed["bob"].note == "" and keyed["bob"].distance == 2
    assert [(e.distance, e.id) for e in obs.nearby] == sorted((e.distance, e.id) for e in obs.nearby)
    w.harvest_resource("a", "oak_tree#1")
    assert "depleted, back in 5 rounds" in {e.id: e for e in w.observe("a").nearby}["oak_tree#1"].note
    small = make_world(rules={"max_nearby": 3, "view_radius": 30})
    cut = small.observe("agent_1")
    whole = make_world(rules={"max_nearby": 1000, "view_radius": 30}).observe("agent_1")
    assert len(cut.nearby) == 3 and len(whole.nearby) > 3
    assert cut.nearby == whole.nearby[:3]  # the nearest, and the list says it is cut (an agent took it for all)
    more = len(whole.nearby) - 3
    assert f"Nearby lists the 3 nearest things in view; {more} farther ones are not listed." in cut.notes
    assert not any(n.startswith("Nearby lists") for n in whole.notes)
    blind = make_world(rules={"view_radius": 1})
    assert blind.observe("agent_1").nearby == [] and "nothing within view" in blind.observe("agent_1").render_text()


def test_observation_shows_portals_stations_npc_lines_and_place():
    w = make_world(players=[spec("a", "a", 8, 20), spec("b", "b", 27, 6), spec("c", "c", 21, 21)])
    obs = w.observe("a")
    assert obs.place == "Millbrook"
    assert {e.name for e in obs.nearby if e.kind == "station"} == {"furnace", "anvil", "fire", "workbench"}
    assert any(n.startswith("Elder Rowan (npc at 6,22) says: The furnace") for n in obs.notes)
    portal = next(e for e in w.observe("b").nearby if e.kind == "portal")
    assert portal.id == "isle_boat" and portal.note == "portal to Dragon Isle"
    wolf = next(e for e in w.observe("c").nearby if e.id == "wolf#1")
    assert wolf.note == "aggressive (range 3)" and (wolf.level, wolf.hp, wolf.max_hp) == (5, 20, 20)
    assert w.observe("c").round == 0  # round fields are the episode's to fill


def test_better_tools_gather_more():
    totals = {}
    for axe, skills in (("bronze_axe", {}), ("steel_axe", {"lumberjacking": 10})):
        got = 0
        for seed in range(12):
            w = make_world(seed=seed, players=[spec("a", "a", 6, 6, skills=skills, inventory={axe: 1})])
            got += w.harvest_resource("a", "oak_tree#1").effects.harvests[0].items["logs"]
        totals[axe] = got
    assert totals["bronze_axe"] == 36 and totals["steel_axe"] > 36
