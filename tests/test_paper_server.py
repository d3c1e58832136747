"""Contract tests of the ``paper-server`` world against a fake paper server on 127.0.0.1.

Every tool's success and refusal paths, the setup endpoints, chat scoped to one episode, 401 and 500
handling and a server that goes away. The fake (tests/paper_server_fake.py) is real-time like the paper's
server; the backend resolves every action within the call by polling.
"""

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from paper_server_fake import FakeGame, FakePaperServer  # noqa: E402

from agentworld.core.world.api import PlayerSpec, StackSpec, WorldUnavailable  # noqa: E402
from agentworld.plugins.worlds.paper_server import make_paper_world  # noqa: E402

FAST = dict(poll_s=0.01, move_timeout_s=3, harvest_timeout_s=3, combat_timeout_s=3, pickup_timeout_s=2,
            stall_s=0.5, sleep_cap_s=0.01, retries=2, backoff_s=0.01, request_timeout_s=2)


@pytest.fixture
def fake():
    with FakePaperServer(FakeGame(), lifetime_s=60) as srv:
        yield srv


def world_on(fake, **over):
    return make_paper_world({}, server_url=fake.url, **{**FAST, **over})


@pytest.fixture
def world(fake):
    w = world_on(fake)
    yield w
    w.close()


def lumberjack(**over):
    base = dict(agent_id="agent_1", username="lumberjack_agent", x=50, y=40, skills={"lumberjacking": 25},
                inventory=[StackSpec(item="apple", count=3)], equipment=[StackSpec(item="axe")])
    return PlayerSpec(**{**base, **over})


def helper(**over):
    base = dict(agent_id="agent_2", username="woodworker_agent", x=50, y=42, skills={"fletching": 25},
                inventory=[StackSpec(item="knife")])
    return PlayerSpec(**{**base, **over})


def server_player(fake, world, agent_id):
    return fake.game.players[world.chars[agent_id].name]


# ------------------------------------------------------------------------------------------------- setup
def test_setup_realises_the_agent_block_on_a_prefixed_character(fake, world):
    world.add_player(lumberjack())
    p = server_player(fake, world, "agent_1")
    assert p.username.startswith(world.prefix) and p.username.endswith("lumberjack_agent")
    assert (p.x, p.y) == (50, 40) and p.levels["Lumberjacking"] == 25
    assert p.equipped["weapon"][0] == "axe" and p.count("apple") == 3 and p.hp == p.max_hp
    st = world.player_state("agent_1")
    assert st.username == "lumberjack_agent" and st.skills["lumberjacking"] == 25
    assert st.equipment == {"weapon": "axe"} and [s.item for s in st.inventory] == ["apple"]
    other = world_on(fake)  # a second episode with the same task usernames gets its own characters
    other.add_player(lumberjack())
    assert other.chars["agent_1"].name != world.chars["agent_1"].name
    other.close()


def test_setup_refusals_name_the_agent_and_what_the_server_refused(fake, world):
    with pytest.raises(ValueError) as err:
        world.add_player(lumberjack(inventory=[StackSpec(item="flaxx")], skills={"lumberjacking": 5, "sailing": 3},
                                    x=5000, y=3, equipment=[StackSpec(item="axe", enchant=2)]))
    text = str(err.value)
    assert "agent_1" in text and "flaxx" in text and "sailing" in text and "(5000,3)" in text
    assert "enchant 2" in text


# ---------------------------------------------------------------------------------------------- movement
def test_move_waits_for_arrival_and_splits_long_moves(fake, world):
    world.add_player(lumberjack())
    r = world.move_character("agent_1", 60, 45)
    assert r.ok and r.effects.move.reached and r.effects.move.end == (60, 45)
    assert world.player_state("agent_1").x == 60
    far = world.move_character("agent_1", 150, 110)  # 155 tiles: more than one move (120)
    assert far.ok and not far.effects.move.reached and "again" in far.text
    assert 0 < abs(150 - far.effects.move.end[0]) + abs(110 - far.effects.move.end[1]) < 155
    again = world.move_character("agent_1", 150, 110)
    assert again.ok and again.effects.move.reached
    step = world.move_character("agent_1", 151, 110)  # it said "Walked 1 tiles"
    assert step.ok and step.text == "Walked 1 tile to (151,110).", step.text


def test_move_onto_a_collision_tile_is_refused(fake, world):
    world.add_player(lumberjack())
    r = world.move_character("agent_1", 40, 60)
    assert not r.ok and r.error == "blocked" and "not walkable" in r.text


def test_portal_success_refusal_and_level_requirement(fake, world):
    world.add_player(lumberjack())
    miss = world.enter_portal("agent_1")
    assert not miss.ok and miss.error == "out_of_range" and "move_character(x=70, y=45)" in miss.text
    world.move_character("agent_1", 72, 45)
    high = world.enter_portal("agent_1")
    assert not high.ok and high.error == "level_too_low"
    world.move_character("agent_1", 70, 45)
    ok = world.enter_portal("agent_1")
    assert ok.ok and ok.effects.move.end == (140, 20) and ok.effects.portal == "Cave"


def test_stop_and_sleep(fake, world):
    world.add_player(lumberjack())
    assert world.stop_action("agent_1").ok
    r = world.sleep("agent_1", 5)
    assert r.ok and "HP" in r.text


# --------------------------------------------------------------------------------------------- gathering
def test_harvest_walks_next_to_the_node_and_waits_until_it_is_depleted(fake, world):
    world.add_player(lumberjack(x=45, y=40))
    r = world.harvest_resource("agent_1", "61889701")
    assert r.ok, r.text
    assert [(d.item, d.count, d.source) for d in r.effects.gained] == [("logs", 3, "harvest:61889701")]
    assert r.effects.move is not None and r.effects.harvests[0].skill == "lumberjacking"
    assert "depleted" in r.text and r.effects.xp.get("lumberjacking", 0) > 0
    again = world.harvest_resource("agent_1", "61889701")  # gone from view while it respawns
    assert not again.ok and again.error == "unknown_target" and "61889702" in again.text


def test_harvest_refusals(fake, world):
    world.add_player(lumberjack(equipment=[], inventory=[], x=45, y=40))
    world.add_player(helper(agent_id="agent_2", username="strong_one", equipment=[StackSpec(item="axe")], x=57, y=44))
    no_tool = world.harvest_resource("agent_1", "61889701")
    assert not no_tool.ok and no_tool.error == "missing_tool" and "axe" in no_tool.text
    # refused after the walk to the node: the walk is kept in the effects and said (it read only "refused")
    walk = no_tool.effects.move
    assert walk is not None and walk.path_length > 0, no_tool
    assert no_tool.text.endswith(f"Only the walk to it was done: you are now at ({walk.end[0]},{walk.end[1]}).")
    low = world.harvest_resource("agent_2", "61889703")  # willow needs lumberjacking 30
    assert not low.ok and low.error == "level_too_low"
    far = world.harvest_resource("agent_1", "123456")
    assert not far.ok and far.error == "unknown_target"


def test_a_walk_to_a_target_cut_short_keeps_the_part_walked(fake):
    fake.game.tiles_per_s = 20.0  # slow: the walk to the node does not end within the move timeout
    w = world_on(fake, move_timeout_s=0.3)
    w.add_player(lumberjack(x=20, y=40))
    r = w.harvest_resource("agent_1", "61889701")
    assert not r.ok and r.error == "blocked" and "Could not get next to" in r.text, r.text
    walk = r.effects.move  # it was refused with no effects: the tiles walked were lost from the trajectory
    assert walk is not None and walk.start == (20, 40) and walk.end == (w.player_state("agent_1").x, 40)
    assert walk.path_length > 0 and f"now at ({walk.end[0]},{walk.end[1]})" in r.text
    w.close()


# ----------------------------------------------------------------------------------------------- combat
def test_attack_fights_to_the_end_and_picks_up_the_loot(fake, world):
    world.add_player(lumberjack(x=58, y=52, skills={"strength": 30}, equipment=[StackSpec(item="sword")]))
    r = world.attack_entity("agent_1", "4001")
    assert r.ok and r.effects.kills and r.effects.kills[0].mob == "rat", r.text
    assert {d.item for d in r.effects.gained if d.source == "loot:4001"} == {"ratfur", "bone"}
    assert world.player_state("agent_1").kills == {"rat": 1}
    dead = world.attack_entity("agent_1", "4001")  # the corpse still shows with 0 HP, or is gone
    assert not dead.ok and dead.error in ("invalid", "unknown_target")


def test_a_fight_that_does_not_end_in_time_is_stopped(fake):
    w = world_on(fake, combat_timeout_s=0.3)
    w.add_player(lumberjack(x=118, y=100, skills={"health": 90, "defense": 90}))
    r = w.attack_entity("agent_1", "4003")  # an ogre with 400 HP
    assert r.ok and not r.effects.kills and "did not end" in r.text
    assert fake.game.players[w.chars["agent_1"].name].fighting is None
    w.close()


def test_attack_refusals(fake, world):
    world.add_player(lumberjack())
    world.add_player(helper())
    assert world.attack_entity("agent_1", "9999").error == "unknown_target"
    assert world.attack_entity("agent_1", "woodworker_agent").error == "invalid"


def test_pickup_success_and_refusal(fake, world):
    world.add_player(lumberjack())
    fake.game.ground["777"] = {"instance": "777", "key": "bead", "name": "Bead", "count": 2, "x": 53, "y": 43}
    r = world.pickup_resource("agent_1", "777")
    assert r.ok and [(d.item, d.count) for d in r.effects.gained] == [("bead", 2)]
    assert world.pickup_resource("agent_1", "777").error == "unknown_target"


# ---------------------------------------------------------------------------------------------- crafting
def test_craft_splits_counts_the_server_does_not_take(fake, world):
    world.add_player(helper(inventory=[StackSpec(item="knife"), StackSpec(item="logs", count=7)]))
    r = world.craft_item("agent_2", "fletching", "stick", 7)  # 5 + 1 + 1 on the server
    assert r.ok and r.effects.crafted[0].count == 14 and world.player_state("agent_2").crafted == {"stick": 14}
    assert {(d.item, d.count) for d in r.effects.lost} == {("logs", 7)}


def test_craft_refusals_carry_the_servers_details(fake, world):
    world.add_player(helper(skills={"crafting": 10}, inventory=[StackSpec(item="knife"), StackSpec(item="stick")]))
    missing = world.craft_item("agent_2", "crafting", "staff", 1)
    assert not missing.ok and missing.error == "missing_items" and "2 more stick" in missing.text and "bead" in missing.text
    low = world.craft_item("agent_2", "smithing", "sword", 1)
    assert not low.ok and low.error == "level_too_low"
    quest = world.craft_item("agent_2", "alchemy", "flask", 1)
    assert not quest.ok and "quest" in quest.text.lower()
    unknown = world.craft_item("agent_2", "cooking", "cake", 1)
    assert not unknown.ok and unknown.error == "unknown_target"


def test_a_short_crafting_cooldown_is_waited_out_within_the_turn(fake):
    fake.game.craft_cooldown_s = 0.2
    w = world_on(fake)
    w.add_player(helper(inventory=[StackSpec(item="knife"), StackSpec(item="logs", count=2)]))
    r = w.craft_item("agent_2", "fletching", "stick", 2)  # two server calls of 1, the second after the cooldown
    assert r.ok and r.effects.crafted[0].count == 4
    w.close()


# ------------------------------------------------------------------------------------------------ equip
def test_equip_by_index_or_key_and_eating(fake, world):
    world.add_player(lumberjack(equipment=[], inventory=[StackSpec(item="sword"), StackSpec(item="flask"),
                                                          StackSpec(item="logs")]))
    r = world.equip_item("agent_1", index=0)
    assert r.ok and r.effects.equipped.item == "sword" and r.effects.equipped.slot == "weapon"
    by_key = world.equip_item("agent_1", item_key="axe")
    assert not by_key.ok and by_key.error == "missing_items"
    server_player(fake, world, "agent_1").hp = 10
    world.stale()
    eat = world.equip_item("agent_1", item_key="flask")
    assert eat.ok and eat.effects.hp[0].after > 10 and eat.effects.lost[0].source == "eat"
    logs = world.player_state("agent_1").inventory
    not_gear = world.equip_item("agent_1", index=next(s.index for s in logs if s.item == "logs"))
    assert not not_gear.ok and not_gear.error == "invalid" and "cannot be equipped" in not_gear.text
    empty = world.equip_item("agent_1", index=20)
    assert not empty.ok and empty.error == "missing_items"


def test_equip_requirements(fake, world):
    world.add_player(lumberjack(equipment=[], inventory=[StackSpec(item="heavysword")]))
    r = world.equip_item("agent_1", index=0)
    assert not r.ok and r.error == "level_too_low" and "Strength" in r.text


# ---------------------------------------------------------------------------------------------- transfer
def test_transfer_moves_items_through_set_inventory(fake, world):
    world.add_player(lumberjack(inventory=[StackSpec(item="logs", count=5), StackSpec(item="apple", count=2)]))
    world.add_player(helper())
    r = world.transfer_items("agent_1", "woodworker_agent", "logs", 3)
    assert r.ok and r.effects.transfers[0].count == 3
    assert server_player(fake, world, "agent_1").count("logs") == 2
    assert server_player(fake, world, "agent_2").count("logs") == 3
    assert world.player_state("agent_2").count("logs") == 3
    assert any("gave you 3 logs" in n for n in world.observe("agent_2").notes)


def test_transfer_refusals_and_rollback(fake, world):
    world.add_player(lumberjack(inventory=[StackSpec(item="logs", count=5)]))
    world.add_player(helper(x=90, y=90))
    assert world.transfer_items("agent_1", "nobody", "logs", 1).error == "unknown_target"
    assert world.transfer_items("agent_1", "woodworker_agent", "bead", 1).error == "missing_items"
    far = world.transfer_items("agent_1", "woodworker_agent", "logs", 1)
    assert far.error == "out_of_range" and "woodworker_agent is at (90,90), 90 tiles away" in far.text, far.text
    world.move_character("agent_2", 51, 40)
    target = server_player(fake, world, "agent_2")
    target.slots = [["apple", 1, {}] if i else ["knife", 1, {}] for i in range(25)]  # full, no logs stack
    full = world.transfer_items("agent_1", "woodworker_agent", "logs", 2)
    assert not full.ok and full.error == "inventory_full" and "Nothing was moved" in full.text
    assert server_player(fake, world, "agent_1").count("logs") == 5  # rolled back


# -------------------------------------------------------------------------------------------------- chat
def test_chat_is_scoped_to_the_episode(fake, world):
    fake.game.chat_log.append({"timestamp": 1, "player": "someone_before", "message": "old news"})
    world.add_player(lumberjack())
    world.add_player(helper())
    world.add_player(helper(agent_id="agent_3", username="far_agent", x=150, y=110))
    stranger = world_on(fake)  # another run on the same server, with the same task usernames
    stranger.add_player(lumberjack())
    stranger.chat("agent_1", "leaked?")
    team = world.chat("agent_1", "logs soon")
    assert team.ok and team.effects.chat.recipients == ["agent_2", "agent_3"]
    local = world.send_chat_message("agent_1", "psst")
    assert local.effects.chat.recipients == ["agent_2"]
    seen = [(m.sender, m.text, m.scope) for m in world.observe("agent_2").chat]
    assert seen == [("lumberjack_agent", "logs soon", "team"), ("lumberjack_agent", "psst", "local")]
    assert [m.text for m in world.observe("agent_3").chat] == ["logs soon"]
    assert world.observe("agent_2").chat == []  # handed over once
    assert world.observe("agent_1").chat == []  # nobody hears themselves
    alone = world.send_chat_message("agent_3", "anyone?")  # it said "Message delivered to nobody (...)"
    assert alone.ok and alone.effects.chat.recipients == [] and "delivered" not in alone.text
    assert alone.text.startswith("No teammate received your message: none is within"), alone.text
    stranger.close()


# ------------------------------------------------------------------------------------- complete, tick, view
def test_complete_takes_the_agent_out(fake, world):
    world.add_player(lumberjack())
    assert world.complete("agent_1", "done").effects.completed
    assert world.move_character("agent_1", 51, 40).error == "not_active"
    assert not world.player_state("agent_1").active


def test_end_round_reports_what_the_real_time_world_did(fake, world):
    world.add_player(lumberjack(x=100, y=31))  # next to an aggressive snake
    world.observe("agent_1")
    time.sleep(0.3)  # the snake strikes every 0.2 s
    tick = world.end_round(1)
    assert tick.effects.hp and tick.effects.hp[0].after < tick.effects.hp[0].before
    assert any("lost" in n for n in world.observe("agent_1").notes)


def test_observation_is_compact_and_shows_teammates_by_task_name(fake, world):
    for i in range(40):  # a crowded server: strangers are not shown
        fake.game.create({"username": f"stranger{i}", "password": "x"})
        fake.game.players[f"stranger{i}"].x = 51
    world.add_player(lumberjack())
    world.add_player(helper())
    obs = world.observe("agent_1")
    players = [e for e in obs.nearby if e.kind == "player"]
    assert [p.id for p in players] == ["woodworker_agent"]
    assert any(e.kind == "resource" and e.id == "61889701" for e in obs.nearby)
    assert len(obs.render()) < 3000 and [i.index for i in obs.inventory] == [0]


# ------------------------------------------------------------------------------------------- 401 and 500
def test_an_expired_token_is_answered_by_logging_in_again(fake, world):
    world.add_player(lumberjack())
    name = world.chars["agent_1"].name
    fake.game.login({"username": name, "password": world.chars["agent_1"].password, "force": True})  # old token dies
    r = world.move_character("agent_1", 52, 40)
    assert r.ok and r.effects.move.reached


def test_a_token_that_stays_refused_is_an_infrastructure_error(fake, world):
    world.add_player(lumberjack())
    p = server_player(fake, world, "agent_1")
    fake.game.logout(p)
    p.password = "changed"
    with pytest.raises(WorldUnavailable, match="401"):
        world.move_character("agent_1", 52, 40)


def test_5xx_is_retried_and_4xx_is_not(fake, world):
    world.add_player(lumberjack())
    fake.fail_next(2, status=500, path="/ai/move")
    r = world.move_character("agent_1", 52, 40)
    assert r.ok and world.client.retried == 2
    before = len(fake.requests)
    assert world.move_character("agent_1", 40, 60).error == "blocked"
    moves = [p for _, p in fake.requests[before:] if p == "/ai/move"]
    assert len(moves) == 1  # the 400 was not repeated
    fake.fail_next(5, status=503)
    with pytest.raises(WorldUnavailable, match="HTTP 503"):
        world.stop_action("agent_1")


def test_a_server_that_goes_away_is_an_infrastructure_error(fake, world):
    world.add_player(lumberjack())
    known = world.player_state("agent_1")
    fake.stop()
    with pytest.raises(WorldUnavailable, match="is the server running"):
        world.move_character("agent_1", 52, 40)
    assert world.player_state("agent_1").x == known.x  # the last known state, for verifiers and final state
    fake.start()
    assert world.move_character("agent_1", 52, 40).ok  # and it works again once the server is back


def test_close_logs_every_character_out(fake):
    w = world_on(fake)
    w.add_player(lumberjack())
    name = w.chars["agent_1"].name
    w.close()
    assert fake.game.players[name].token is None


def test_a_dead_character_cannot_act_and_stays_dead(fake, world):
    world.add_player(lumberjack())
    server_player(fake, world, "agent_1").hp = 0
    tick = world.end_round(1)
    assert tick.effects.deaths == ["agent_1"] and not world.player_state("agent_1").alive
    for r in (world.move_character("agent_1", 52, 40), world.sleep("agent_1", 1), world.chat("agent_1", "hi"),
              world.craft_item("agent_1", "fletching", "stick", 1)):
        assert not r.ok and r.error == "dead"
