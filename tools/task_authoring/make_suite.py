"""Writes tasks 09-40 of the main suite (a developer tool; the harness never imports it).

    python tools/task_authoring/make_suite.py          # rewrites tasks/main/task_09..40
    agentworld tasks prove --all                        # then prove them

Every id, coordinate and move count comes from the world (see authoring.py beside it). Each task function
states its roles, guideline documents, verifier and reference plan; the YAML it writes is what ships.
"""

from __future__ import annotations

import sys

from agentworld.core.world.pathing import route
from authoring import (GIVE_TIP, MOVE_TIP, Plan, W, agent_block, dist, landmark, mob_text, mobs_near, node_text,
                       nodes_near, recipe_text, spots, station, walkable_near, write_task)

HUB = (450, 400)
TASKS = []


def task(fn):
    TASKS.append(fn)
    return fn


def near_station(kind: str, lm: str, n: int = 1, max_d: int = 3) -> list[tuple[int, int]]:
    return spots(station(kind, lm), n, max_d)


def body(category, name, description, primary, context, shared_plan, criteria, checks, secondary=(), **extra):
    out = {"category": category, "task": {"name": name, "description": description},
           "objectives": {"primary": primary, **({"secondary": list(secondary)} if secondary else {})},
           "relevant_game_context": context, "shared_plan": shared_plan, "success_criteria": criteria,
           "verifier": {"checks": checks}}
    out.update(extra)
    return out


# =====================================================================================================
# three-agent tasks
# =====================================================================================================
@task
def task_09_bronze_blade():
    furnace, anvil = station("furnace", "ironhold"), station("anvil", "ironhold")
    copper, tin = nodes_near("copper_rock", furnace)[0], nodes_near("tin_rock", furnace)[0]
    sm_at, smith_at = spots(furnace, 1)[0], spots(anvil, 1)[0]
    miner_at = walkable_near(copper.x + 3, copper.y - 3)
    p = Plan({"agent_1": miner_at, "agent_2": sm_at, "agent_3": smith_at})
    p.harvest("agent_1", copper)
    p.harvest("agent_1", tin)
    r = p.walk("agent_1", spots(sm_at, 2, 2)[1])
    r = p.give("agent_1", "smelter", "copper_ore", 2, r + 1)
    r = p.give("agent_1", "smelter", "tin_ore", 2, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Smelting", itemKey="bronze_bar", count=2)
    r = p.do("agent_2", "move_character", r + 1, x=spots(smith_at, 2, 2)[1][0], y=spots(smith_at, 2, 2)[1][1])
    r = p.give("agent_2", "smith", "bronze_bar", 2, r + 1)
    r = p.do("agent_3", "craft_item", r + 1, skill="Smithing", itemKey="bronze_sword", count=1)
    p.do("agent_3", "equip_item", r + 1, itemKey="bronze_sword")
    ctx = f"""Ironhold Forge ({W.landmark('ironhold').x},{W.landmark('ironhold').y}) has a furnace at {furnace} and an anvil at {anvil}.
Copper and tin rocks lie a few tiles away. Chain: copper_ore + tin_ore -> bronze_bar (furnace) -> bronze_sword (anvil).
{GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("miner", "miner", miner_at, {"mining": 8, "health": 10}, [("bread", 2)], ["pickaxe"], f"""
            You are the team's miner and the only one with a pickaxe (it is wielded). Nearby: {node_text(copper)};
            {node_text(tin)}. harvest_resource walks you next to a rock and mines it out. The smelter needs 2 copper_ore
            and 2 tin_ore at the furnace {furnace}."""),
        "agent_2": agent_block("smelter", "smelter", sm_at, {"smelting": 6, "health": 10}, [("bread", 2)], [], f"""
            You run Ironhold's furnace at {furnace}. {recipe_text('bronze_bar')}. The smith at the anvil {anvil}
            needs 2 bronze_bar for a sword; walk within {W.data.rules.transfer_range} tiles of the smith to hand them over."""),
        "agent_3": agent_block("smith", "smith", smith_at, {"smithing": 8, "strength": 5, "health": 10},
                               [("hammer", 1), ("bread", 2)], [], f"""
            You are the smith at Ironhold's anvil {anvil} and carry the hammer. {recipe_text('bronze_sword')}.
            When the sword is made, wield it yourself with equip_item(itemKey='bronze_sword')."""),
    }
    write_task("task_09_bronze_blade", body(
        "crafting", "A blade from the mountain",
        "At Ironhold Forge a miner, a smelter and a smith turn raw ore into a bronze sword for the smith.",
        "The smith forges a bronze sword and wields it.", ctx,
        "Miner mines copper and tin and gives 2 of each to the smelter; smelter makes 2 bronze bars for the smith; "
        "smith forges the sword and equips it.",
        ["Two bronze bars smelted", "The smith wields a bronze sword"],
        [{"check": "crafted", "name": "bronze bars smelted", "item": "bronze_bar", "count": 2, "agent": "agent_2"},
         {"check": "equipped", "name": "smith wields the sword", "item": "bronze_sword", "agent": "agent_3"}]),
        agents, p)


@task
def task_10_fishing_rod():
    loom = station("loom", "hearthmoor")
    flax = nodes_near("flax_plant", HUB)[0]
    weaver_at = spots(loom, 1)[0]
    rod_at = spots(weaver_at, 3, 2)[2]
    picker_at = walkable_near(flax.x - 4, flax.y + 2)
    p = Plan({"agent_1": picker_at, "agent_2": weaver_at, "agent_3": rod_at})
    p.harvest("agent_1", flax)
    r = p.walk("agent_1", spots(weaver_at, 2, 2)[1])
    r = p.give("agent_1", "weaver", "flax", 1, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Crafting", itemKey="thread", count=1)
    r = p.give("agent_2", "rodmaker", "thread", 1, r + 1)
    p.do("agent_3", "craft_item", 1, skill="Fletching", itemKey="stick", count=1)
    p.do("agent_3", "craft_item", r + 1, skill="Fletching", itemKey="fishing_rod", count=1)
    ctx = f"""Hearthmoor {HUB}: loom at {loom}. thread comes from flax at a loom; a fishing_rod is 2 sticks + 1 thread
whittled with a knife. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("flax_picker", "forager", picker_at, {"foraging": 5}, [("apple", 3)], [], f"""
            You pick plants by hand. {node_text(flax)}. The weaver at the loom {loom} needs 1 flax."""),
        "agent_2": agent_block("weaver", "weaver", weaver_at, {"crafting": 5}, [("apple", 3)], [], f"""
            You work Hearthmoor's loom at {loom}. {recipe_text('thread')}. The rodmaker needs 1 thread;
            the flax picker brings you flax."""),
        "agent_3": agent_block("rodmaker", "fletcher", rod_at, {"fletching": 6}, [("logs", 1), ("knife", 1)], [], f"""
            You carry a knife and a log. {recipe_text('stick')}. {recipe_text('fishing_rod')}.
            Make the sticks first; the thread comes from the weaver."""),
    }
    write_task("task_10_fishing_rod", body(
        "crafting", "A rod for the pond",
        "Three villagers of Hearthmoor combine flax, thread and whittled sticks into a fishing rod.",
        "The rodmaker holds a finished fishing rod.", ctx,
        "Flax picker brings flax to the weaver, weaver spins thread for the rodmaker, rodmaker whittles sticks and "
        "makes the rod.",
        ["Thread spun", "The rodmaker holds a fishing rod"],
        [{"check": "crafted", "name": "thread spun", "item": "thread", "count": 2, "agent": "agent_2"},
         {"check": "item_count", "name": "rod with rodmaker", "item": "fishing_rod", "count": 1, "agent": "agent_3"}]),
        agents, p)


@task
def task_11_trout_supper():
    fire = station("fire", "hearthmoor")
    trout = nodes_near("trout_spot", HUB)[0]
    cook_at = spots(fire, 1)[0]
    guest_at = spots(fire, 4, 3)[3]
    fisher_at = walkable_near(trout.x - 6, trout.y)
    p = Plan({"agent_1": fisher_at, "agent_2": cook_at, "agent_3": guest_at})
    p.harvest("agent_1", trout)
    r = p.walk("agent_1", spots(cook_at, 3, 2)[2])
    r = p.give("agent_1", "cook", "raw_trout", 3, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Cooking", itemKey="cooked_trout", count=3)
    p.give("agent_2", "traveller", "cooked_trout", 3, r + 1)
    ctx = f"""Hearthmoor's fire is at {fire}; trout are fished at the east pond. {recipe_text('cooked_trout')}.
{GIVE_TIP} {MOVE_TIP}"""
    agents = {
        "agent_1": agent_block("fisher", "fisher", fisher_at, {"fishing": 8}, [("fishing_rod", 1)], [], f"""
            You fish with the team's only rod. {node_text(trout)}. Bring 3 raw_trout to the cook at the fire {fire}."""),
        "agent_2": agent_block("cook", "cook", cook_at, {"cooking": 7}, [], [], f"""
            You cook at Hearthmoor's fire {fire}. {recipe_text('cooked_trout')}. The traveller by the fire needs
            3 cooked_trout."""),
        "agent_3": agent_block("traveller", "traveller", guest_at, {"health": 3}, [], [], f"""
            You arrived hungry after a long road and wait by the fire {fire}. Tell the others what you need:
            3 cooked trout. Do not wander off."""),
    }
    write_task("task_11_trout_supper", body(
        "survival", "Supper for a traveller",
        "A hungry traveller reaches Hearthmoor; the fisher and the cook must feed them before nightfall.",
        "The traveller receives 3 cooked trout and everyone stays alive.", ctx,
        "Fisher catches 3 trout and gives them to the cook; cook cooks them and gives them to the traveller.",
        ["3 cooked trout delivered to the traveller", "All alive"],
        [{"check": "delivered", "item": "cooked_trout", "to": "agent_3", "count": 3},
         {"check": "all_alive"}]), agents, p)


@task
def task_12_clay_staff():
    wb, furnace = station("workbench", "hearthmoor"), station("furnace", "hearthmoor")
    clay = nodes_near("clay_pit", HUB)[0]
    tree = nodes_near("tree", HUB)[0]
    wiz_at = spots(wb, 1)[0]
    potter_at = walkable_near(clay.x + 3, clay.y)
    wood_at = walkable_near(tree.x + 3, tree.y + 2)
    p = Plan({"agent_1": potter_at, "agent_2": wood_at, "agent_3": wiz_at})
    p.harvest("agent_1", clay)
    r1 = p.walk("agent_1", spots(furnace, 2, 2)[1])
    r1 = p.do("agent_1", "craft_item", r1 + 1, skill="Smelting", itemKey="bead", count=1)
    r1 = p.walk("agent_1", spots(wiz_at, 3, 2)[1], r1 + 1)
    r1 = p.give("agent_1", "wizard", "bead", 1, r1 + 1)
    p.harvest("agent_2", tree)
    r2 = p.do("agent_2", "craft_item", 2, skill="Fletching", itemKey="stick", count=2)
    r2 = p.walk("agent_2", spots(wiz_at, 3, 2)[2], r2 + 1)
    r2 = p.give("agent_2", "wizard", "stick", 3, r2 + 1)
    r = p.do("agent_3", "craft_item", max(r1, r2) + 1, skill="Crafting", itemKey="staff", count=1)
    p.do("agent_3", "equip_item", r + 1, itemKey="staff")
    ctx = f"""A staff is 3 sticks and a bead, joined at a workbench. Hearthmoor {HUB}: workbench {wb}, furnace {furnace}.
Clay is dug from clay pits (pickaxe) and fired into a bead at a furnace. {GIVE_TIP} {MOVE_TIP}"""
    agents = {
        "agent_1": agent_block("potter", "potter", potter_at, {"mining": 5, "smelting": 5}, [], ["pickaxe"], f"""
            You dig clay and fire beads. {node_text(clay)}. {recipe_text('bead')}. Hearthmoor's furnace is at
            {furnace}. Bring the bead to the wizard at the workbench {wb}."""),
        "agent_2": agent_block("woodworker", "woodworker", wood_at, {"lumberjacking": 5, "fletching": 5},
                               [("knife", 1)], ["axe"], f"""
            You fell trees and whittle. {node_text(tree)}. {recipe_text('stick')}. The wizard needs 3 sticks at the
            workbench {wb}."""),
        "agent_3": agent_block("wizard", "wizard", wiz_at, {"crafting": 8, "magic": 12}, [], [], f"""
            You alone can assemble the staff. {recipe_text('staff')}. Stay near the workbench {wb}, then wield the
            staff with equip_item(itemKey='staff')."""),
    }
    write_task("task_12_clay_staff", body(
        "crafting", "Staff of clay and wood",
        "No bead is left in Hearthmoor: the potter must dig and fire one while the woodworker whittles sticks, so "
        "that the wizard can make a staff.",
        "The wizard wields a staff made from a freshly fired bead.", ctx,
        "Potter: clay -> bead at the furnace -> wizard. Woodworker: logs -> 4 sticks -> 3 to the wizard. Wizard: staff.",
        ["A bead fired", "The wizard wields a staff"],
        [{"check": "crafted", "name": "bead fired", "item": "bead", "count": 1},
         {"check": "equipped", "name": "wizard wields a staff", "item": "staff", "agent": "agent_3"}]), agents, p)


@task
def task_13_oakridge_shields():
    wb = station("workbench", "oakridge")
    tree = nodes_near("tree", wb)[0]
    carp_at, shield_at = spots(wb, 2)
    cutter_at = walkable_near(tree.x + 2, tree.y + 3)
    p = Plan({"agent_1": cutter_at, "agent_2": carp_at, "agent_3": shield_at})
    p.harvest("agent_1", tree)
    r = p.walk("agent_1", spots(carp_at, 4, 2)[3])
    r = p.give("agent_1", "carpenter", "logs", 3, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Crafting", itemKey="plank", count=3)
    r = p.give("agent_2", "shieldwright", "plank", 6, r + 1)
    r = p.do("agent_3", "craft_item", r + 1, skill="Crafting", itemKey="wooden_shield", count=2)
    p.do("agent_3", "equip_item", r + 1, itemKey="wooden_shield")
    ctx = f"""Oakridge ({W.landmark('oakridge').x},{W.landmark('oakridge').y}) is a woodcutters' village; its workbench is at {wb}.
logs -> plank (workbench) -> wooden_shield (3 planks, workbench, hammer). {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("woodcutter", "lumberjack", cutter_at, {"lumberjacking": 6}, [], ["axe"], f"""
            You fell trees. {node_text(tree)}. The carpenter at the workbench {wb} needs 3 logs."""),
        "agent_2": agent_block("carpenter", "carpenter", carp_at, {"crafting": 4}, [], [], f"""
            {recipe_text('plank')}. Saw 6 planks and give them all to the shieldwright next to you."""),
        "agent_3": agent_block("shieldwright", "shieldwright", shield_at, {"crafting": 9, "defense": 5},
                               [("hammer", 1)], [], f"""
            {recipe_text('wooden_shield')}. Make two shields for the village's palisade and carry one on your arm
            (equip_item(itemKey='wooden_shield'))."""),
    }
    write_task("task_13_oakridge_shields", body(
        "construction", "Palisade shields of Oakridge",
        "Oakridge needs two wooden shields for its palisade; the woodcutter, the carpenter and the shieldwright "
        "build them at the village workbench.",
        "Two wooden shields are made and the shieldwright carries one.", ctx,
        "Woodcutter: 3 logs to the carpenter. Carpenter: 6 planks to the shieldwright. Shieldwright: 2 shields, equip one.",
        ["Two shields built", "One shield carried by the shieldwright"],
        [{"check": "crafted", "name": "two shields built", "item": "wooden_shield", "count": 2},
         {"check": "equipped", "item": "wooden_shield", "agent": "agent_3"}]), agents, p)


@task
def task_14_prospector():
    anvil, furnace = station("anvil", "ironhold"), station("furnace", "ironhold")
    coal, iron = nodes_near("coal_rock", anvil)[0], nodes_near("iron_rock", anvil)[0]
    smith_at = spots(anvil, 1)[0]
    pros_at = spots(smith_at, 3, 2)[2]
    qm_at = spots(furnace, 1)[0]
    p = Plan({"agent_1": smith_at, "agent_2": pros_at, "agent_3": qm_at})
    r = p.do("agent_1", "craft_item", 1, skill="Smithing", itemKey="pickaxe", count=1)
    r = p.give("agent_1", "prospector", "pickaxe", 1, r + 1)
    p.harvest("agent_2", coal, r + 1)
    p.harvest("agent_2", iron)
    r = p.walk("agent_2", spots(qm_at, 3, 2)[2])
    r = p.give("agent_2", "quartermaster", "coal", 4, r + 1)
    p.give("agent_2", "quartermaster", "iron_ore", 4, r + 1)
    ctx = f"""Ironhold Forge: anvil {anvil}, furnace {furnace}. Coal and iron rocks lie within a few tiles.
Coal rocks need Mining 20 and iron rocks Mining 15, both with a pickaxe. {recipe_text('pickaxe')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("toolsmith", "toolsmith", smith_at, {"smithing": 6}, [("bronze_bar", 2), ("hammer", 1)], [], f"""
            You are Ironhold's toolsmith with two bronze bars and a hammer, next to the anvil {anvil}.
            {recipe_text('pickaxe')}. The prospector has the skill but no pickaxe: forge one and give it."""),
        "agent_2": agent_block("prospector", "prospector", pros_at, {"mining": 25}, [], [], f"""
            You are a master miner without a pickaxe (the toolsmith makes you one). {node_text(coal)}.
            {node_text(iron)}. Deliver 4 coal and 4 iron_ore to the quartermaster at the furnace {furnace}."""),
        "agent_3": agent_block("quartermaster", "quartermaster", qm_at, {"smelting": 3}, [], [], """
            You keep the forge's stores by the furnace. Wait for 4 coal and 4 iron ore and keep track of what
            has arrived."""),
    }
    write_task("task_14_prospector", body(
        "gathering", "Coal and iron for the forge",
        "The forge is out of fuel and ore. Only the prospector can mine coal and iron, but has no pickaxe.",
        "The quartermaster receives 4 coal and 4 iron ore.", ctx,
        "Toolsmith forges a pickaxe for the prospector, who mines a coal rock and an iron rock and delivers.",
        ["A pickaxe forged", "4 coal delivered", "4 iron ore delivered"],
        [{"check": "crafted", "name": "pickaxe forged", "item": "pickaxe", "count": 1},
         {"check": "delivered", "item": "coal", "to": "agent_3", "count": 4},
         {"check": "delivered", "item": "iron_ore", "to": "agent_3", "count": 4}]), agents, p)


@task
def task_15_dock_barter():
    dock = landmark("saltmarsh_dock")
    meet = spots(dock, 3, 2)
    starts = [walkable_near(dock[0] - 70, dock[1] + 5), walkable_near(dock[0] + 5, dock[1] - 75),
              walkable_near(dock[0] - 40, dock[1] + 50)]
    names = ["fishmonger", "furrier", "moneylender"]
    goods = [("cooked_trout", 6), ("wolf_pelt", 3), ("coins", 40)]
    ids = ["agent_1", "agent_2", "agent_3"]
    p = Plan(dict(zip(ids, starts)))
    arrive = max(p.walk(a, meet[i]) for i, a in enumerate(ids))
    for i, a in enumerate(ids):
        item, n = goods[i]
        p.give(a, names[(i + 1) % 3], item, n, arrive + 1)
    ctx = f"""Saltmarsh Dock ({W.landmark('saltmarsh_dock').x},{W.landmark('saltmarsh_dock').y}) is the east coast's market. {GIVE_TIP} {MOVE_TIP}"""
    wants = {0: "3 wolf pelts? no: you want coins", 1: "", 2: ""}
    del wants
    agents = {}
    for i, a in enumerate(ids):
        item, n = goods[i]
        want, wn = goods[(i - 1) % 3]
        agents[a] = agent_block(names[i], "merchant", starts[i], {"health": 8}, [goods[i]], [], f"""
            You are the {names[i]}. You bring {n} {item} to Saltmarsh Dock {dock} and want {wn} {want} in return.
            The deal is a ring: your {item} go to the {names[(i + 1) % 3]}, and the {names[(i - 1) % 3]} pays you.
            Walk to the dock first; {MOVE_TIP}""")
    write_task("task_15_dock_barter", body(
        "trading", "Barter at the dock",
        "Three merchants travel to Saltmarsh Dock and settle a three-way trade of fish, furs and coins.",
        "Each merchant ends with the goods they came for.", ctx,
        "All meet at the dock; fishmonger -> furrier trout, furrier -> moneylender pelts, moneylender -> fishmonger coins.",
        ["Trout delivered", "Pelts delivered", "Coins delivered"],
        [{"check": "delivered", "item": goods[i][0], "to": ids[(i + 1) % 3], "count": goods[i][1]} for i in range(3)]),
        agents, p)


@task
def task_16_ice_cavern():
    camp = landmark("frostpeak_camp")
    portal = next(pt for pt in W.data.portals if pt.key == "ice_cavern_entrance")
    at_portal = spots((portal.x, portal.y), 3, 1)
    wood_at, maker_at, guide_at = spots(camp, 3, 2)
    p = Plan({"agent_1": wood_at, "agent_2": maker_at, "agent_3": guide_at})
    r = p.do("agent_1", "craft_item", 1, skill="Fletching", itemKey="stick", count=1)
    r = p.give("agent_1", "torchbearer", "stick", 2, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Crafting", itemKey="torch", count=2)
    r = p.give("agent_2", "guide", "torch", 1, r + 1)
    r2 = p.walk("agent_2", at_portal[0], r + 1)
    r3 = p.walk("agent_3", at_portal[1], r + 1)
    p.do("agent_2", "enter_portal", r2 + 1)
    p.do("agent_3", "enter_portal", r3 + 1)
    cav = W.landmark("ice_cavern")
    ctx = f"""Frostpeak Camp ({W.landmark('frostpeak_camp').x},{W.landmark('frostpeak_camp').y}). The Ice Cavern entrance is at ({portal.x},{portal.y});
it only lets in someone carrying a torch (kept, not used up). Stand within 1 tile of it and call enter_portal.
{recipe_text('torch')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("woodworker", "woodworker", wood_at, {"fletching": 4}, [("logs", 1), ("knife", 1)], [], f"""
            You carry a log and a knife. {recipe_text('stick')}. The torchbearer needs 2 sticks for two torches.
            You stay at the camp."""),
        "agent_2": agent_block("torchbearer", "torchbearer", maker_at, {"crafting": 4, "health": 12},
                               [("coal", 2), ("tinderbox", 1)], [], f"""
            You carry coal and the tinderbox. {recipe_text('torch')}. Make two torches, give one to the guide, and
            enter the Ice Cavern with the guide: the entrance is at ({portal.x},{portal.y})."""),
        "agent_3": agent_block("guide", "guide", guide_at, {"health": 15, "defense": 10}, [("bread", 3)], [], f"""
            You know the way into the Ice Cavern: entrance at ({portal.x},{portal.y}), north of the camp. You need a
            torch in your bag to pass; the torchbearer makes them. Inside you arrive near ({cav.x},{cav.y})."""),
    }
    write_task("task_16_ice_cavern", body(
        "exploration", "Into the Ice Cavern",
        "The guide and the torchbearer must enter the pitch-dark Ice Cavern under Frostpeak; torches have to be made "
        "first from sticks and coal.",
        "The torchbearer and the guide both stand inside the Ice Cavern.", ctx,
        "Woodworker whittles 2 sticks for the torchbearer; torchbearer makes 2 torches, gives one to the guide; "
        "both walk to the entrance and enter.",
        ["The guide carries a torch", "Torchbearer and guide inside the Ice Cavern"],
        [{"check": "item_count", "name": "guide carries a torch", "item": "torch", "count": 1, "agent": "agent_3"},
         {"check": "at_location", "name": "both inside the cavern", "landmark": "ice_cavern", "radius": 60,
          "agents": ["agent_2", "agent_3"]}]), agents, p)


@task
def task_17_wolf_archer():
    wolves = mobs_near("wolf", (395, 384), 2)
    base = walkable_near(wolves[0].x + 8, wolves[0].y + 6)
    fl_at, ar_at, sk_at = spots(base, 3, 2)
    p = Plan({"agent_1": fl_at, "agent_2": ar_at, "agent_3": sk_at})
    r = p.do("agent_1", "craft_item", 1, skill="Fletching", itemKey="arrow_shaft", count=3)
    r = p.do("agent_1", "craft_item", r + 1, skill="Fletching", itemKey="bronze_arrow", count=4)
    r = p.give("agent_1", "archer", "bronze_arrow", 40, r + 1)
    r = p.do("agent_2", "equip_item", r + 1, itemKey="bronze_arrow")
    r = p.attack("agent_2", wolves[0], r + 1)
    r = p.attack("agent_2", wolves[1], r + 1)
    r = p.walk("agent_2", spots(sk_at, 3, 2)[2], r + 1)
    p.give("agent_2", "skinner", "wolf_pelt", 2, r + 1)
    ctx = f"""Wolves roam west of Hearthmoor. {mob_text(wolves[0])}. {mob_text(wolves[1])}.
A bow needs arrows equipped (ammo slot). {recipe_text('arrow_shaft')}. {recipe_text('bronze_arrow')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("fletcher", "fletcher", fl_at, {"fletching": 6},
                               [("logs", 3), ("knife", 1), ("feather", 40), ("bronze_arrowtips", 40)], [], f"""
            You make arrows. {recipe_text('arrow_shaft')}. {recipe_text('bronze_arrow')}. The archer has a bow
            but no arrows, and every shot uses one: make 40 and give them all."""),
        "agent_2": agent_block("archer", "archer", ar_at, {"archery": 20, "accuracy": 18, "health": 8},
                               [("cooked_trout", 4)], ["shortbow"], f"""
            You are a sharp shot but frail in melee (your bow is useless without arrows). Equip the arrows the
            fletcher gives you (equip_item(itemKey='bronze_arrow')), then hunt: {mob_text(wolves[0])};
            {mob_text(wolves[1])}. Eat trout if hurt. Bring the 2 wolf pelts to the skinner."""),
        "agent_3": agent_block("skinner", "skinner", sk_at, {"crafting": 12}, [("knife", 1)], [], """
            You tan pelts for the village. Wait for 2 wolf pelts from the archer and tell them where you are."""),
    }
    write_task("task_17_wolf_archer", body(
        "combat", "Arrows for the wolf hunt",
        "Two wolves threaten the flocks west of Hearthmoor. The archer can shoot them, once the fletcher has made "
        "arrows; the pelts go to the skinner.",
        "Two wolves are killed, their pelts reach the skinner, and nobody dies.", ctx,
        "Fletcher makes 45 shafts and 40 bronze arrows for the archer; archer equips them, kills both wolves and "
        "gives the pelts to the skinner.",
        ["Two wolves killed", "Two pelts delivered", "All alive"],
        [{"check": "kills", "mob": "wolf", "count": 2, "agent": "agent_2"},
         {"check": "delivered", "item": "wolf_pelt", "to": "agent_3", "count": 2},
         {"check": "all_alive"}]), agents, p)


@task
def task_18_healing_draughts():
    furnace, fire = station("furnace", "hearthmoor"), station("fire", "hearthmoor")
    herbs = nodes_near("redleaf_herb", HUB, 2)
    glass_at, alch_at = spots(furnace, 1)[0], spots(fire, 1)[0]
    herb_at = walkable_near(herbs[0].x + 3, herbs[0].y - 2)
    p = Plan({"agent_1": glass_at, "agent_2": herb_at, "agent_3": alch_at})
    r = p.do("agent_1", "craft_item", 1, skill="Smelting", itemKey="vial", count=2)
    r = p.walk("agent_1", spots(alch_at, 3, 2)[1], r + 1)
    g = p.give("agent_1", "alchemist", "vial", 2, r + 1)
    p.harvest("agent_2", herbs[0])
    p.harvest("agent_2", herbs[1])
    r = p.walk("agent_2", spots(alch_at, 3, 2)[2])
    h = p.give("agent_2", "alchemist", "redleaf", 4, r + 1)
    p.do("agent_3", "craft_item", max(g, h) + 1, skill="Cooking", itemKey="healing_potion", count=2)
    ctx = f"""Hearthmoor {HUB}: furnace {furnace}, fire {fire}. Redleaf grows south of the square. {recipe_text('vial')}.
{recipe_text('healing_potion')}. A healing potion restores 15 HP when drunk (equip_item on it). {GIVE_TIP} {MOVE_TIP}"""
    agents = {
        "agent_1": agent_block("glassblower", "glassblower", glass_at, {"smelting": 8}, [("sand", 4)], [], f"""
            You brought 4 sand from the southern dunes and stand at the furnace {furnace}. {recipe_text('vial')}.
            Blow 2 vials and take them to the alchemist at the fire {fire}."""),
        "agent_2": agent_block("herbalist", "herbalist", herb_at, {"foraging": 8}, [], [], f"""
            You know the herbs. {node_text(herbs[0])}; {node_text(herbs[1])}. The alchemist needs 4 redleaf at the
            fire {fire}."""),
        "agent_3": agent_block("alchemist", "alchemist", alch_at, {"cooking": 10}, [], [], f"""
            You brew at the fire {fire}. {recipe_text('healing_potion')}. Brew 2 potions for the winter road and keep
            them; the glassblower brings vials and the herbalist redleaf."""),
    }
    write_task("task_18_healing_draughts", body(
        "survival", "Healing draughts for the winter road",
        "Before the winter road closes, Hearthmoor needs healing potions: glass, herbs and the alchemist's fire.",
        "The alchemist holds 2 healing potions; nobody dies.", ctx,
        "Glassblower blows 2 vials, herbalist picks 4 redleaf, both bring them to the alchemist, who brews 2 potions.",
        ["2 vials blown", "2 potions with the alchemist", "All alive"],
        [{"check": "crafted", "name": "vials blown", "item": "vial", "count": 2},
         {"check": "item_count", "item": "healing_potion", "count": 2, "agent": "agent_3"},
         {"check": "all_alive"}]), agents, p)


@task
def task_19_twin_beacons():
    north = walkable_near(450, 330)
    south = walkable_near(450, 470)
    start = spots(HUB, 3, 2)
    p = Plan(dict(zip(["agent_1", "agent_2", "agent_3"], start)))
    r = p.give("agent_1", "north_keeper", "torch", 1, 1)
    r = p.give("agent_1", "south_keeper", "torch", 1, r + 1)
    p.walk("agent_2", north, 2)
    p.walk("agent_3", south, 3)
    ctx = f"""Hearthmoor {HUB}. The north beacon stands at {north}, the south beacon at {south}: 70 tiles apart, so one
keeper cannot light both. A beacon counts as lit while its keeper stands within 2 tiles of it holding a torch.
{GIVE_TIP} {MOVE_TIP}"""
    agents = {
        "agent_1": agent_block("warden", "warden", start[0], {"crafting": 5}, [("torch", 2)], [], f"""
            You hold the village's two torches. Give one to each keeper (north_keeper and south_keeper) before they
            leave the square; you stay in Hearthmoor and coordinate."""),
        "agent_2": agent_block("north_keeper", "beacon keeper", start[1], {"health": 8}, [], [], f"""
            You keep the north beacon at {north}. Get a torch from the warden, walk to the beacon and stay there
            until the south beacon is lit as well."""),
        "agent_3": agent_block("south_keeper", "beacon keeper", start[2], {"health": 8}, [], [], f"""
            You keep the south beacon at {south}. Get a torch from the warden, walk to the beacon and stay there
            until the north beacon is lit as well."""),
    }
    write_task("task_19_twin_beacons", body(
        "coordination", "Twin beacons",
        "Hearthmoor signals the valley by lighting its north and south beacons at the same time.",
        "In the same round, a keeper with a torch stands at each beacon.", ctx,
        "Warden gives a torch to each keeper; the keepers walk to their beacons and wait for each other.",
        ["North beacon manned with a torch", "South beacon manned with a torch", "both at once"],
        [{"check": "at_location", "name": "north beacon manned", "x": north[0], "y": north[1], "radius": 2, "agent": "agent_2"},
         {"check": "at_location", "name": "south beacon manned", "x": south[0], "y": south[1], "radius": 2, "agent": "agent_3"},
         {"check": "item_count", "name": "north torch", "item": "torch", "count": 1, "agent": "agent_2"},
         {"check": "item_count", "name": "south torch", "item": "torch", "count": 1, "agent": "agent_3"}]), agents, p)


@task
def task_20_watchtower_trade():
    tower = landmark("east_watchtower")
    meet = spots(tower, 3, 2)
    starts = [walkable_near(tower[0] - 80, tower[1] - 10), walkable_near(tower[0] + 10, tower[1] + 70),
              walkable_near(tower[0] + 60, tower[1] - 40)]
    names = ["blacksmith", "herbalist", "banker"]
    goods = [("iron_bar", 3), ("healing_potion", 2), ("coins", 60)]
    ids = ["agent_1", "agent_2", "agent_3"]
    p = Plan(dict(zip(ids, starts)))
    arrive = max(p.walk(a, meet[i]) for i, a in enumerate(ids))
    for i, a in enumerate(ids):
        item, n = goods[i]
        p.give(a, names[(i + 2) % 3], item, n, arrive + 1)
    ctx = f"""The East Watchtower ({W.landmark('east_watchtower').x},{W.landmark('east_watchtower').y}) is a crossroads on the east road. {GIVE_TIP} {MOVE_TIP}"""
    agents = {}
    for i, a in enumerate(ids):
        item, n = goods[i]
        want, wn = goods[(i + 1) % 3]
        agents[a] = agent_block(names[i], "merchant", starts[i], {"health": 8}, [goods[i]], [], f"""
            You are the {names[i]}: you bring {n} {item} and want {wn} {want}. Your {item} go to the
            {names[(i + 2) % 3]}; the {names[(i + 1) % 3]} pays you. Meet at the East Watchtower {tower}.""")
    write_task("task_20_watchtower_trade", body(
        "trading", "Deal at the watchtower",
        "A blacksmith, a herbalist and a banker meet at the East Watchtower to trade iron, potions and coins.",
        "Each of the three ends with the goods they wanted.", ctx,
        "Meet at the tower; blacksmith iron -> banker, herbalist potions -> blacksmith, banker coins -> herbalist.",
        ["iron to the banker", "potions to the blacksmith", "coins to the herbalist"],
        [{"check": "delivered", "item": goods[i][0], "to": ids[(i + 2) % 3], "count": goods[i][1]} for i in range(3)]),
        agents, p)


@task
def task_21_bowyer():
    loom = station("loom", "hearthmoor")
    flax = nodes_near("flax_plant", HUB)[0]
    weaver_at = spots(loom, 1)[0]
    bow_at = spots(weaver_at, 3, 2)[2]
    picker_at = walkable_near(flax.x - 3, flax.y + 3)
    p = Plan({"agent_1": picker_at, "agent_2": weaver_at, "agent_3": bow_at})
    p.harvest("agent_1", flax)
    r = p.walk("agent_1", spots(weaver_at, 2, 2)[1])
    r = p.give("agent_1", "weaver", "flax", 4, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Crafting", itemKey="bowstring", count=2)
    r = p.give("agent_2", "bowyer", "bowstring", 2, r + 1)
    p.do("agent_3", "craft_item", r + 1, skill="Fletching", itemKey="shortbow", count=2)
    ctx = f"""Hearthmoor's loom is at {loom}. {recipe_text('bowstring')}. {recipe_text('shortbow')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("flax_picker", "forager", picker_at, {"foraging": 4}, [], [], f"""
            {node_text(flax)}. Harvest it out and bring all 4 flax to the weaver at the loom {loom}."""),
        "agent_2": agent_block("weaver", "weaver", weaver_at, {"crafting": 7}, [], [], f"""
            {recipe_text('bowstring')}. Twist 2 bowstrings and give them to the bowyer."""),
        "agent_3": agent_block("bowyer", "bowyer", bow_at, {"fletching": 8}, [("logs", 2), ("knife", 1)], [], f"""
            You have 2 logs and a knife. {recipe_text('shortbow')}. Build 2 shortbows for the village watch."""),
    }
    write_task("task_21_bowyer", body(
        "construction", "Bows for the watch",
        "The village watch needs two shortbows: flax becomes bowstrings at the loom, and the bowyer builds the bows.",
        "The bowyer builds two shortbows.", ctx,
        "Flax picker: 4 flax to the weaver. Weaver: 2 bowstrings to the bowyer. Bowyer: 2 shortbows.",
        ["Two bowstrings twisted", "Two shortbows built"],
        [{"check": "crafted", "name": "bowstrings twisted", "item": "bowstring", "count": 2},
         {"check": "item_count", "name": "two shortbows", "item": "shortbow", "count": 2, "agent": "agent_3"}]),
        agents, p)


@task
def task_22_boar_hunt():
    fire = station("fire", "oakridge")
    boars = mobs_near("boar", fire, 2)
    cook_at = spots(fire, 1)[0]
    elder_at = spots(fire, 3, 2)[2]
    hunter_at = walkable_near(boars[0].x - 5, boars[0].y - 2)
    p = Plan({"agent_1": hunter_at, "agent_2": cook_at, "agent_3": elder_at})
    p.attack("agent_1", boars[0])
    p.attack("agent_1", boars[1])
    r = p.walk("agent_1", spots(cook_at, 4, 2)[3])
    r = p.give("agent_1", "cook", "raw_boar", 2, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Cooking", itemKey="cooked_boar", count=2)
    p.give("agent_2", "elder", "cooked_boar", 2, r + 1)
    ctx = f"""Oakridge's fire is at {fire}. Boars root in the woods around the village: {mob_text(boars[0])}; {mob_text(boars[1])}.
{recipe_text('cooked_boar')}. attack_entity walks to a mob and fights it to the end. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("hunter", "hunter", hunter_at, {"strength": 15, "accuracy": 15, "defense": 10, "health": 12},
                               [("bread", 3)], ["bronze_sword"], f"""
            You are the village hunter. Kill two boars: {mob_text(boars[0])}; {mob_text(boars[1])}. Bring the raw
            boar meat to the cook at the fire {fire}."""),
        "agent_2": agent_block("cook", "cook", cook_at, {"cooking": 12}, [], [], f"""
            {recipe_text('cooked_boar')}. Cook the hunter's meat at the fire {fire} and serve it to the elder."""),
        "agent_3": agent_block("elder", "elder", elder_at, {"health": 4}, [], [], """
            You are Oakridge's elder and host tonight's feast. Wait by the fire for 2 portions of cooked boar."""),
    }
    write_task("task_22_boar_hunt", body(
        "combat", "Boar hunt for the elder",
        "Oakridge's elder hosts a feast: the hunter must kill two boars and the cook roast them.",
        "Two boars are killed and the elder receives 2 cooked boar; nobody dies.", ctx,
        "Hunter kills two boars and gives the meat to the cook; cook roasts it and serves the elder.",
        ["Two boars killed", "2 cooked boar with the elder", "All alive"],
        [{"check": "kills", "mob": "boar", "count": 2},
         {"check": "delivered", "item": "cooked_boar", "to": "agent_3", "count": 2},
         {"check": "all_alive"}]), agents, p)



# =====================================================================================================
# five to nine agents
# =====================================================================================================
@task
def task_23_three_biome_caravan():
    farm = landmark("goldfield_farm")
    master_at = farm
    legs = [("swamp", "mirelight", "flax_plant", "flax", 3, {"foraging": 5}, []),
            ("forest", "oakridge", "tree", "logs", 3, {"lumberjacking": 5}, ["axe"]),
            ("desert", "sunscar_outpost", "sand_dune", "sand", 2, {"foraging": 5}, [])]
    ids = [f"agent_{i}" for i in range(1, 9)]
    names = ["caravan_master", "guide", "swamp_gatherer", "swamp_porter", "forest_gatherer", "forest_porter",
             "desert_gatherer", "desert_porter"]
    meet = spots(farm, 8, 3)
    spawn = {"agent_1": master_at, "agent_2": landmark("hearthmoor")}
    nodes = {}
    for k, (biome, lm, ntype, item, n, skills, gear) in enumerate(legs):
        home = landmark(lm)
        node = nodes_near(ntype, home)[0]
        nodes[biome] = node
        spawn[ids[2 + 2 * k]] = walkable_near(node.x + 2, node.y + 2)
        mid = walkable_near((home[0] + farm[0]) // 2, (home[1] + farm[1]) // 2)
        spawn[ids[3 + 2 * k]] = mid
    p = Plan(spawn)
    p.walk("agent_2", meet[1])
    for k, (biome, lm, ntype, item, n, skills, gear) in enumerate(legs):
        g, po = ids[2 + 2 * k], ids[3 + 2 * k]
        p.harvest(g, nodes[biome])
        r = p.walk(g, spots(spawn[po], 2, 2)[1])
        r = p.give(g, names[3 + 2 * k], item, n, r + 1)
        r = p.walk(po, meet[2 + 2 * k], r + 1)
        p.give(po, "caravan_master", item, n, r + 1)
        p.walk(g, meet[3 + 2 * k], r + 1)
    ctx = f"""The caravan assembles at Goldfield Farm {farm}. Flax grows at Mirelight in the swamp, trees stand at Oakridge in the
forest, and sand dunes lie by Sunscar Outpost in the desert. Each porter waits halfway between their gatherer's biome and
the farm. {GIVE_TIP} {MOVE_TIP}"""
    guide = {}
    for k, (biome, lm, ntype, item, n, skills, gear) in enumerate(legs):
        g, po = ids[2 + 2 * k], ids[3 + 2 * k]
        guide[g] = agent_block(names[2 + 2 * k], f"{biome} gatherer", spawn[g], skills, [("bread", 2)], gear, f"""
            You gather in the {biome}. {node_text(nodes[biome])}. Your porter ({names[3 + 2 * k]}) waits at
            {spawn[po]}: hand them {n} {item}, then walk on to the caravan at Goldfield Farm {farm} yourself.""")
        guide[po] = agent_block(names[3 + 2 * k], f"{biome} porter", spawn[po], {"health": 10, "strength": 8},
                                [("bread", 2)], [], f"""
            You carry the {biome} goods. Wait at {spawn[po]} for the {names[2 + 2 * k]}'s {n} {item}, then carry
            them to the caravan master at Goldfield Farm {farm} and hand them over.""")
    agents = {
        "agent_1": agent_block("caravan_master", "caravan master", master_at, {"health": 10}, [("bread", 4)], [], f"""
            You lead the caravan from Goldfield Farm {farm}. You need 3 flax, 3 logs and 2 sand from the three
            biomes, and every member of the caravan at the farm before it leaves. Keep the team informed."""),
        "agent_2": agent_block("guide", "guide", spawn["agent_2"], {"health": 12}, [("bread", 2)], [], f"""
            You will guide the caravan. Walk from Hearthmoor to Goldfield Farm {farm} and join the master."""),
    }
    agents.update({a: guide[a] for a in ids[2:]})
    checks = [{"check": "delivered", "item": it, "to": "agent_1", "count": n} for _, _, _, it, n, _, _ in legs]
    checks.append({"check": "at_location", "name": "caravan assembled", "landmark": "goldfield_farm", "radius": 12})
    write_task("task_23_three_biome_caravan", body(
        "coordination", "Caravan of three biomes",
        "Goods from the swamp, the forest and the desert are relayed by gatherers and porters to a caravan "
        "assembling at Goldfield Farm.",
        "The caravan master receives 3 flax, 3 logs and 2 sand, and all eight members stand at the farm.", ctx,
        "Each gatherer harvests and hands the goods to their porter halfway; porters carry them to the master; "
        "everyone gathers at the farm.",
        ["flax, logs and sand delivered", "the whole caravan at the farm"], checks), agents, p)


@task
def task_24_harvest_festival():
    farm = landmark("goldfield_farm")
    host_at = farm
    roles = [("orchard_keeper", "apple_tree", "apple", {"foraging": 4}, [], []),
             ("fisher", "trout_spot", "raw_trout", {"fishing": 8}, [("fishing_rod", 1)], []),
             ("miner", "copper_rock", "copper_ore", {"mining": 5}, [], ["pickaxe"]),
             ("woodcutter", "tree", "logs", {"lumberjacking": 5}, [], ["axe"]),
             ("herbalist", "redleaf_herb", "redleaf", {"foraging": 8}, [], [])]
    ids = [f"agent_{i}" for i in range(1, 7)]
    nodes = [nodes_near(nt, farm)[0] for _, nt, _, _, _, _ in roles]
    spawn = {"agent_1": host_at}
    for i, n in enumerate(nodes):
        spawn[ids[i + 1]] = walkable_near(n.x + 3, n.y - 2)
    p = Plan(spawn)
    around = spots(host_at, 6, 3)
    for i, (name, nt, item, sk, inv, eq) in enumerate(roles):
        a = ids[i + 1]
        p.harvest(a, nodes[i])
        r = p.walk(a, around[i + 1])
        p.give(a, "host", item, 2, r + 1)
    ctx = f"""Goldfield Farm {farm} holds its harvest festival. Everything needed grows or swims within a few dozen tiles.
{GIVE_TIP}"""
    agents = {"agent_1": agent_block("host", "festival host", host_at, {"cooking": 5}, [("bread", 2)], [], """
        You host the festival at the farm. Collect 2 apples, 2 raw trout, 2 copper ore, 2 logs and 2 redleaf
        from the five gatherers and tell them what is still missing.""")}
    for i, (name, nt, item, sk, inv, eq) in enumerate(roles):
        agents[ids[i + 1]] = agent_block(name, name.replace("_", " "), spawn[ids[i + 1]], sk, inv, eq, f"""
            {node_text(nodes[i])}. Bring 2 {item} to the host at the farm {farm}.""")
    write_task("task_24_harvest_festival", body(
        "gathering", "Harvest festival",
        "Five gatherers with different tools and skills bring the fruits of the land to the festival host at Goldfield Farm.",
        "The host receives 2 each of apple, raw trout, copper ore, logs and redleaf.", ctx,
        "Each gatherer harvests their own node and gives 2 of their goods to the host.",
        [f"2 {r[2]} delivered" for r in roles],
        [{"check": "delivered", "item": r[2], "to": "agent_1", "count": 2} for r in roles]), agents, p)


@task
def task_25_bandit_king():
    king = mobs_near("bandit_king", (700, 650), 1)[0]
    camp = spots(walkable_near(king.x + 14, king.y), 4, 2)
    ids = ["agent_1", "agent_2", "agent_3", "agent_4"]
    p = Plan(dict(zip(ids, camp)))
    food = 4
    # two waves: the tank opens, each striker fights once fed, everyone steps back out of the king's reach
    p.attack("agent_1", king, 1)
    p.give("agent_2", "striker_a", "cooked_swordfish", food, 1)
    p.walk("agent_1", camp[0], 2)
    p.give("agent_2", "striker_b", "cooked_swordfish", food, 2)
    p.attack("agent_3", king, 2)
    p.give("agent_2", "tank", "cooked_swordfish", food, 3)
    p.walk("agent_3", camp[2], 3)
    p.attack("agent_4", king, 3)
    p.give("agent_2", "striker_a", "cooked_swordfish", food, 4)
    p.walk("agent_4", camp[3], 4)
    p.give("agent_2", "striker_b", "cooked_swordfish", food, 5)
    p.attack("agent_1", king, 5)
    p.attack("agent_3", king, 6)
    p.attack("agent_4", king, 7)
    rules = {"retreat_below": 0.4, "auto_eat_below": 0.55}
    ctx = f"""{mob_text(king)}. It regains 2 HP every round but keeps its wounds between fights. It hits everyone
within {W.mob_type('bandit_king').aggro_range} tiles at the end of every round, so step back out of its reach after you fight.
In this fight everyone breaks off (retreats) when below 40% HP, and eats food from their bag automatically when
below 55% HP: food in the bag is what keeps a fighter in the fight. Camp: {camp[0]}, {dist(camp[0], (king.x, king.y))} tiles east of the king.
A strong defence (the tank) takes far less damage; strong hits (the strikers) deal far more.
{GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("tank", "tank", camp[0], {"defense": 90, "health": 50, "accuracy": 30, "strength": 20},
                               [], ["bronze_platebody", "bronze_helmet", "bronze_shield", "bronze_sword"], f"""
            You are the tank: heavy armour and a huge defence, but weak blows. Open the fight: attack
            {king.id} first and wear it down, then step back to the camp {camp[0]} (out of its reach) and
            take food from the healer before your second bout. {mob_text(king)}."""),
        "agent_2": agent_block("healer", "healer", camp[1], {"health": 30, "defense": 30, "cooking": 30},
                               [("cooked_swordfish", 28)], [], f"""
            You carry all of the team's food: 28 cooked swordfish (16 HP each). You do not fight. Stay at the
            camp {camp[1]}, out of the king's reach, and hand food to each fighter before each of their bouts
            ({food} each time works well): striker_a first, then striker_b, then the tank, and again."""),
        "agent_3": agent_block("striker_a", "striker", camp[2], {"strength": 50, "accuracy": 50, "defense": 5, "health": 12},
                               [], ["iron_sword"], f"""
            You hit hard but cannot take many hits. Fight {king.id} only with food in your bag (ask the healer),
            after the tank has opened, then step back to the camp {camp[2]} before the king's next swing.
            {mob_text(king)}."""),
        "agent_4": agent_block("striker_b", "striker", camp[3], {"strength": 50, "accuracy": 50, "defense": 5, "health": 12},
                               [], ["iron_sword"], f"""
            You hit hard but cannot take many hits. Fight {king.id} only with food in your bag (ask the healer),
            after striker_a, then step back to the camp {camp[3]} before the king's next swing.
            {mob_text(king)}."""),
    }
    write_task("task_25_bandit_king", body(
        "combat", "The Bandit King",
        "The Bandit King holds the desert road. No single fighter can beat him: a tank to wear him down, a "
        "healer with food, and two strikers must fight him together, in turns.",
        "The Bandit King is killed and all four fighters live.", ctx,
        "Tank opens and steps back; healer feeds striker_a, striker_b and the tank in turn; strikers fight one after "
        "the other and step back; a second wave finishes him.",
        ["Bandit King killed", "All alive"],
        [{"check": "kills", "mob": "bandit_king", "count": 1},
         {"check": "all_alive"}], world_rules=rules, rounds=30), agents, p)


@task
def task_26_six_scouts():
    targets = ["deepdelve_mine", "old_crypt", "mirelight", "sunscar_outpost", "frostpeak_camp", "fishers_rest"]
    ids = [f"agent_{i}" for i in range(1, 8)]
    start = spots(HUB, 7, 3)
    p = Plan(dict(zip(ids, start)))
    for i, key in enumerate(targets):
        p.walk(ids[i + 1], landmark(key))
    places = "; ".join(f"{W.landmark(k).name} ({W.landmark(k).x},{W.landmark(k).y})" for k in targets)
    ctx = f"""Landmarks to survey: {places}. All are on the mainland and reachable on foot. {MOVE_TIP}"""
    agents = {"agent_1": agent_block("cartographer", "cartographer", start[0], {"crafting": 5}, [("thread", 2)], [], f"""
        You draw the realm's map from Hearthmoor. Assign each of the six scouts one landmark ({places}) so that every
        landmark gets exactly one scout, and keep track of their reports.""")}
    for i in range(6):
        agents[ids[i + 1]] = agent_block(f"scout_{i + 1}", "scout", start[i + 1], {"health": 10, "defense": 6},
                                         [("apple", 4)], [], f"""
            You are a scout. The landmarks to survey are: {places}. Every landmark needs one scout at the same
            time, so take the one the cartographer gives you (or agree with the others), walk there, stay, and
            report. {MOVE_TIP}""")
    checks = [{"check": "at_location", "name": f"a scout at {k}", "landmark": k, "agents": ids[1:], "require": "any"}
              for k in targets]
    write_task("task_26_six_scouts", body(
        "exploration", "Six scouts, six landmarks",
        "The cartographer of Hearthmoor sends six scouts to six distant landmarks at once.",
        "At the same time, every one of the six landmarks has a scout standing at it.", ctx,
        "The cartographer assigns scout_1 Deepdelve Mine, scout_2 Old Crypt, scout_3 Mirelight, scout_4 Sunscar "
        "Outpost, scout_5 Frostpeak Camp, scout_6 Fisher's Rest; each scout walks to theirs and stays.",
        ["every landmark reached"], checks), agents, p)


@task
def task_27_frostpeak_rations():
    fire = station("fire", "frostpeak_camp")
    hares = mobs_near("snow_hare", fire, 3)
    ids = [f"agent_{i}" for i in range(1, 6)]
    names = ["hunter_a", "hunter_b", "cook", "climber_a", "climber_b"]
    camp = spots(fire, 3, 2)
    spawn = {"agent_1": walkable_near(hares[0].x + 3, hares[0].y), "agent_2": walkable_near(hares[1].x + 3, hares[1].y),
             "agent_3": camp[0], "agent_4": walkable_near(422, 160), "agent_5": walkable_near(440, 165)}
    p = Plan(spawn)
    p.attack("agent_1", hares[0])
    p.attack("agent_2", hares[1])
    p.attack("agent_2", hares[2])
    r1 = p.walk("agent_1", spots(camp[0], 6, 3)[3])
    r2 = p.walk("agent_2", spots(camp[0], 6, 3)[4])
    a = p.give("agent_1", "cook", "raw_chicken", 1, r1 + 1)
    b = p.give("agent_2", "cook", "raw_chicken", 2, r2 + 1)
    r = p.do("agent_3", "craft_item", max(a, b) + 1, skill="Cooking", itemKey="cooked_chicken", count=3)
    p.walk("agent_4", spots(camp[0], 8, 3)[5])
    p.walk("agent_5", spots(camp[0], 8, 3)[6])
    r = p.give("agent_3", "climber_a", "cooked_chicken", 2, r + 1)
    p.give("agent_3", "climber_b", "cooked_chicken", 1, r + 1)
    ctx = f"""Frostpeak Camp's fire is at {fire}. Snow hares graze around the camp: {'; '.join(mob_text(h) for h in hares)}.
{recipe_text('cooked_chicken')}. {GIVE_TIP} {MOVE_TIP}"""
    agents = {
        "agent_1": agent_block("hunter_a", "hunter", spawn["agent_1"], {"strength": 10, "accuracy": 10, "health": 10},
                               [], ["bronze_dagger"], f"Hunt snow hares ({mob_text(hares[0])}) and bring the meat to the cook at the fire {fire}."),
        "agent_2": agent_block("hunter_b", "hunter", spawn["agent_2"], {"strength": 10, "accuracy": 10, "health": 10},
                               [], ["bronze_dagger"], f"Hunt snow hares ({mob_text(hares[1])}; {mob_text(hares[2])}) and bring the meat to the cook at the fire {fire}."),
        "agent_3": agent_block("cook", "camp cook", spawn["agent_3"], {"cooking": 10}, [], [], f"""
            You keep the camp fire at {fire}. {recipe_text('cooked_chicken')}. The two climbers need 3 rations between
            them (2 for climber_a, 1 for climber_b) before the ascent: all the cooking is yours."""),
        "agent_4": agent_block("climber_a", "climber", spawn["agent_4"], {"health": 14, "defense": 6}, [], [], f"""
            You are coming down from the pass to Frostpeak Camp {fire}. Reach the camp and collect 2 cooked rations from the cook."""),
        "agent_5": agent_block("climber_b", "climber", spawn["agent_5"], {"health": 14, "defense": 6}, [], [], f"""
            You are coming down from the pass to Frostpeak Camp {fire}. Reach the camp and collect 1 cooked ration from the cook."""),
    }
    write_task("task_27_frostpeak_rations", body(
        "survival", "Rations at Frostpeak",
        "Two climbers reach Frostpeak Camp half-frozen; the hunters and the camp cook must have hot rations ready.",
        "The cook cooks 3 rations; climber_a receives 2 and climber_b 1; everyone is alive and at the camp.", ctx,
        "Hunters kill three snow hares and give the meat to the cook; the climbers walk to the camp; the cook serves them.",
        ["rations cooked by the cook", "climbers fed", "all at the camp", "all alive"],
        [{"check": "crafted", "name": "rations cooked by the cook", "item": "cooked_chicken", "count": 3, "agent": "agent_3"},
         {"check": "delivered", "item": "cooked_chicken", "to": "agent_4", "count": 2},
         {"check": "delivered", "item": "cooked_chicken", "to": "agent_5", "count": 1},
         {"check": "at_location", "name": "everyone at the camp", "landmark": "frostpeak_camp", "radius": 12},
         {"check": "all_alive"}]), agents, p)


@task
def task_28_ironhold_armoury():
    furnace, anvil = station("furnace", "ironhold"), station("anvil", "ironhold")
    copper, tin = nodes_near("copper_rock", furnace)[0], nodes_near("tin_rock", furnace)[0]
    ids = [f"agent_{i}" for i in range(1, 7)]
    sm_at, smith_at = spots(furnace, 1)[0], spots(anvil, 1)[0]
    g = spots(anvil, 4, 3)
    spawn = {"agent_1": walkable_near(copper.x + 2, copper.y - 3), "agent_2": walkable_near(tin.x - 3, tin.y + 2),
             "agent_3": sm_at, "agent_4": smith_at, "agent_5": g[2], "agent_6": g[3]}
    p = Plan(spawn)
    p.harvest("agent_1", copper)
    p.harvest("agent_2", tin)
    r1 = p.walk("agent_1", spots(sm_at, 3, 2)[1])
    r2 = p.walk("agent_2", spots(sm_at, 3, 2)[2])
    a = p.give("agent_1", "smelter", "copper_ore", 3, r1 + 1)
    b = p.give("agent_2", "smelter", "tin_ore", 3, r2 + 1)
    r = p.do("agent_3", "craft_item", max(a, b) + 1, skill="Smelting", itemKey="bronze_bar", count=3)
    r = p.walk("agent_3", spots(smith_at, 2, 2)[1], r + 1)
    r = p.give("agent_3", "smith", "bronze_bar", 3, r + 1)
    r = p.do("agent_4", "craft_item", r + 1, skill="Smithing", itemKey="bronze_helmet", count=1)
    r = p.do("agent_4", "craft_item", r + 1, skill="Smithing", itemKey="bronze_shield", count=1)
    r = p.give("agent_4", "guard_helm", "bronze_helmet", 1, r + 1)
    r = p.give("agent_4", "guard_shield", "bronze_shield", 1, r + 1)
    p.do("agent_5", "equip_item", r, itemKey="bronze_helmet")
    p.do("agent_6", "equip_item", r + 1, itemKey="bronze_shield")
    ctx = f"""Ironhold Forge: furnace {furnace}, anvil {anvil}. {node_text(copper)}. {node_text(tin)}.
{recipe_text('bronze_bar')}. {recipe_text('bronze_helmet')}. {recipe_text('bronze_shield')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("copper_miner", "miner", spawn["agent_1"], {"mining": 5}, [], ["pickaxe"],
                               f"{node_text(copper)}. Bring 3 copper_ore to the smelter at the furnace {furnace}."),
        "agent_2": agent_block("tin_miner", "miner", spawn["agent_2"], {"mining": 5}, [], ["pickaxe"],
                               f"{node_text(tin)}. Bring 3 tin_ore to the smelter at the furnace {furnace}."),
        "agent_3": agent_block("smelter", "smelter", sm_at, {"smelting": 5}, [], [],
                               f"{recipe_text('bronze_bar')}. Smelt 3 bars and carry them to the smith at the anvil {anvil}."),
        "agent_4": agent_block("smith", "armourer", smith_at, {"smithing": 9}, [("hammer", 1)], [], f"""
            {recipe_text('bronze_helmet')}. {recipe_text('bronze_shield')}. Make a helmet for guard_helm and a
            shield for guard_shield."""),
        "agent_5": agent_block("guard_helm", "guard", spawn["agent_5"], {"defense": 10, "health": 10}, [], [],
                               "Wait by the anvil for your bronze helmet and put it on (equip_item)."),
        "agent_6": agent_block("guard_shield", "guard", spawn["agent_6"], {"defense": 10, "health": 10}, [], [],
                               "Wait by the anvil for your bronze shield and take it up (equip_item)."),
    }
    write_task("task_28_ironhold_armoury", body(
        "construction", "The Ironhold armoury",
        "Two gate guards of Ironhold need armour: ore is mined, smelted into bronze and forged into a helmet and a shield.",
        "guard_helm wears a bronze helmet and guard_shield carries a bronze shield.", ctx,
        "Miners: 3 copper and 3 tin to the smelter; smelter: 3 bars to the smith; smith: helmet and shield to the guards.",
        ["3 bars smelted", "helmet worn", "shield carried"],
        [{"check": "crafted", "item": "bronze_bar", "count": 3},
         {"check": "equipped", "item": "bronze_helmet", "agent": "agent_5"},
         {"check": "equipped", "item": "bronze_shield", "agent": "agent_6"}]), agents, p)


@task
def task_29_sunscar_bandits():
    post = landmark("sunscar_outpost")
    bandits = mobs_near("bandit", post, 2)
    ids = [f"agent_{i}" for i in range(1, 6)]
    names = ["armourer", "healer", "guard_a", "guard_b", "captain"]
    base = walkable_near(post[0] - 12, post[1] - 14)
    around = spots(base, 5, 3)
    p = Plan(dict(zip(ids, around)))
    r = p.give("agent_1", "guard_a", "iron_sword", 1, 1)
    r = p.give("agent_1", "guard_b", "iron_sword", 1, r + 1)
    h = p.give("agent_2", "guard_a", "cooked_trout", 3, 1)
    h = p.give("agent_2", "guard_b", "cooked_trout", 3, h + 1)
    ea = p.do("agent_3", "equip_item", 2, itemKey="iron_sword")
    eb = p.do("agent_4", "equip_item", 3, itemKey="iron_sword")
    ka = p.attack("agent_3", bandits[0], max(ea, h) + 1)
    kb = p.attack("agent_4", bandits[1], max(eb, h) + 1)
    r = p.walk("agent_3", spots(around[4], 3, 2)[1], ka + 1)
    p.give("agent_3", "captain", "coins", 1, r + 1)
    r = p.walk("agent_4", spots(around[4], 3, 2)[2], kb + 1)
    p.give("agent_4", "captain", "coins", 1, r + 1)
    ctx = f"""Bandits hold the road by Sunscar Outpost {post}: {'; '.join(mob_text(b) for b in bandits)}.
iron_sword needs Accuracy 10 to wield. Food in your bag is eaten automatically when badly hurt. {GIVE_TIP}"""
    fighter = {"strength": 18, "accuracy": 16, "defense": 14, "health": 14}
    agents = {
        "agent_1": agent_block("armourer", "armourer", around[0], {"smithing": 20}, [("iron_sword", 2)], [], """
            You carry two iron swords but cannot fight. Arm guard_a and guard_b."""),
        "agent_2": agent_block("healer", "healer", around[1], {"cooking": 15}, [("cooked_trout", 6)], [], """
            You carry the cooked trout. Give 3 to each guard before they attack; stay back from the bandits."""),
        "agent_3": agent_block("guard_a", "guard", around[2], fighter, [], [], f"""
            Take a sword from the armourer and equip it, take food from the healer, then attack {bandits[0].id}.
            Bring a coin of the loot to the captain."""),
        "agent_4": agent_block("guard_b", "guard", around[3], fighter, [], [], f"""
            Take a sword from the armourer and equip it, take food from the healer, then attack {bandits[1].id}.
            Bring a coin of the loot to the captain."""),
        "agent_5": agent_block("captain", "captain", around[4], {"health": 10}, [], [], """
            You command the road patrol. Send the guards against the two bandits and collect proof of each kill
            (a coin from each guard)."""),
    }
    write_task("task_29_sunscar_bandits", body(
        "combat", "Bandits on the Sunscar road",
        "The armourer and the healer equip two guards, who clear two bandits from the Sunscar road for their captain.",
        "Two bandits are killed by armed guards, the captain receives a coin from each, nobody dies.", ctx,
        "Armourer gives each guard an iron sword; healer gives each 3 trout; each guard kills one bandit and gives a "
        "coin to the captain.",
        ["2 bandits killed", "both guards armed", "coins delivered", "all alive"],
        [{"check": "kills", "mob": "bandit", "count": 2},
         {"check": "equipped", "item": "iron_sword", "agent": "agent_3"},
         {"check": "equipped", "item": "iron_sword", "agent": "agent_4"},
         {"check": "delivered", "item": "coins", "to": "agent_5", "count": 2},
         {"check": "all_alive"}]), agents, p)



# =====================================================================================================
# ten agents
# =====================================================================================================
@task
def task_30_smithy_teams():
    furnace, anvil = station("furnace", "ironhold"), station("anvil", "ironhold")
    cop = nodes_near("copper_rock", furnace, 2)
    tin = nodes_near("tin_rock", furnace, 2)
    ids = [f"agent_{i}" for i in range(1, 11)]
    names = ["copper_miner_a", "copper_miner_b", "tin_miner_a", "tin_miner_b", "smelter_a", "smelter_b",
             "smith_a", "smith_b", "soldier_a", "soldier_b"]
    u = dict(zip(ids, names))
    fs, an = spots(furnace, 2, 2), spots(anvil, 4, 2)
    spawn = {ids[0]: walkable_near(cop[0].x + 2, cop[0].y + 2), ids[1]: walkable_near(cop[1].x + 2, cop[1].y - 2),
             ids[2]: walkable_near(tin[0].x - 2, tin[0].y + 2), ids[3]: walkable_near(tin[1].x - 2, tin[1].y - 2),
             ids[4]: fs[0], ids[5]: fs[1], ids[6]: an[0], ids[7]: an[1], ids[8]: an[2], ids[9]: an[3]}
    p = Plan(spawn)
    ready = {}
    drop = spots(furnace, 8, 3)
    for k, (miner, node, item, smelter) in enumerate(((ids[0], cop[0], "copper_ore", 4), (ids[1], cop[1], "copper_ore", 5),
                                                      (ids[2], tin[0], "tin_ore", 4), (ids[3], tin[1], "tin_ore", 5))):
        p.harvest(miner, node)
        r = p.walk(miner, drop[2 + k])
        r = p.give(miner, u[ids[smelter]], item, 2, r + 1)
        ready[ids[smelter]] = max(ready.get(ids[smelter], 0), r)
    for sm, smith, soldier in ((ids[4], ids[6], ids[8]), (ids[5], ids[7], ids[9])):
        r = p.do(sm, "craft_item", ready[sm] + 1, skill="Smelting", itemKey="bronze_bar", count=2)
        r = p.walk(sm, spots(spawn[smith], 3, 2)[2], r + 1)
        r = p.give(sm, u[smith], "bronze_bar", 2, r + 1)
        r = p.do(smith, "craft_item", r + 1, skill="Smithing", itemKey="bronze_sword", count=1)
        r = p.give(smith, u[soldier], "bronze_sword", 1, r + 1)
        p.do(soldier, "equip_item", r + 1, itemKey="bronze_sword")
    ctx = f"""Ironhold Forge: furnace {furnace}, anvil {anvil}; copper and tin rocks within a few tiles.
{recipe_text('bronze_bar')}. {recipe_text('bronze_sword')}. Team A (the *_a roles) and team B (*_b) each arm one soldier.
{GIVE_TIP}"""
    agents = {}
    for k, a in enumerate(ids[:4]):
        node = [cop[0], cop[1], tin[0], tin[1]][k]
        team = "a" if k % 2 == 0 else "b"
        agents[a] = agent_block(names[k], "miner", spawn[a], {"mining": 6}, [], ["pickaxe"], f"""
            {node_text(node)}. Give 2 {'copper_ore' if k < 2 else 'tin_ore'} to smelter_{team} at the furnace {furnace}.""")
    for k, a in enumerate(ids[4:6]):
        team = "ab"[k]
        agents[a] = agent_block(names[4 + k], "smelter", spawn[a], {"smelting": 6}, [], [], f"""
            {recipe_text('bronze_bar')}. Your miners are copper_miner_{team} and tin_miner_{team}. Smelt 2 bars and bring
            them to smith_{team} at the anvil {anvil}.""")
    for k, a in enumerate(ids[6:8]):
        team = "ab"[k]
        agents[a] = agent_block(names[6 + k], "smith", spawn[a], {"smithing": 8}, [("hammer", 1)], [], f"""
            {recipe_text('bronze_sword')}. Forge a sword from smelter_{team}'s 2 bars and give it to soldier_{team}.""")
    for k, a in enumerate(ids[8:]):
        team = "ab"[k]
        agents[a] = agent_block(names[8 + k], "soldier", spawn[a], {"strength": 12, "accuracy": 12, "defense": 10}, [], [], f"""
            Wait at the anvil for smith_{team}'s sword and wield it (equip_item(itemKey='bronze_sword')).""")
    write_task("task_30_smithy_teams", body(
        "crafting", "Two smithies, two soldiers",
        "Ten workers of Ironhold split into mining, smelting and smithing crews, two of each, to arm two soldiers.",
        "soldier_a and soldier_b each wield a bronze sword forged from freshly mined ore.", ctx,
        "Copper and tin miners feed their team's smelter; each smelter makes 2 bars for its smith; each smith arms its soldier.",
        ["4 bars smelted", "soldier_a armed", "soldier_b armed"],
        [{"check": "crafted", "item": "bronze_bar", "count": 4},
         {"check": "equipped", "item": "bronze_sword", "agent": "agent_9"},
         {"check": "equipped", "item": "bronze_sword", "agent": "agent_10"}]), agents, p)


@task
def task_31_stockpile():
    roles = [("copper_miner", "copper_rock", "copper_ore", {"mining": 5}, [], ["pickaxe"]),
             ("tin_miner", "tin_rock", "tin_ore", {"mining": 5}, [], ["pickaxe"]),
             ("woodcutter", "tree", "logs", {"lumberjacking": 5}, [], ["axe"]),
             ("oak_feller", "oak_tree", "oak_logs", {"lumberjacking": 12}, [], ["axe"]),
             ("flax_picker", "flax_plant", "flax", {"foraging": 3}, [], []),
             ("farmer", "wheat_field", "wheat", {"foraging": 3}, [], []),
             ("orchard_keeper", "apple_tree", "apple", {"foraging": 3}, [], []),
             ("fisher", "trout_spot", "raw_trout", {"fishing": 8}, [("fishing_rod", 1)], []),
             ("herbalist", "redleaf_herb", "redleaf", {"foraging": 8}, [], [])]
    ids = [f"agent_{i}" for i in range(1, 11)]
    qm = spots(HUB, 1)[0]
    nodes = [nodes_near(nt, HUB)[0] for _, nt, *_ in roles]
    spawn = {"agent_1": qm}
    for i, n in enumerate(nodes):
        spawn[ids[i + 1]] = walkable_near(n.x + 2, n.y + 3)
    p = Plan(spawn)
    around = spots(qm, 10, 3)
    for i, (name, nt, item, *_r) in enumerate(roles):
        p.harvest(ids[i + 1], nodes[i])
        r = p.walk(ids[i + 1], around[i + 1])
        p.give(ids[i + 1], "quartermaster", item, 2, r + 1)
    ctx = f"""Hearthmoor {HUB} stocks up for the season. Nine kinds of goods lie within a short walk of the square. {GIVE_TIP}"""
    agents = {"agent_1": agent_block("quartermaster", "quartermaster", qm, {"crafting": 5}, [], [], """
        You keep the village stores. Collect 2 of each: copper_ore, tin_ore, logs, oak_logs, flax, wheat, apple,
        raw_trout and redleaf. Tell gatherers what is missing.""")}
    for i, (name, nt, item, sk, inv, eq) in enumerate(roles):
        agents[ids[i + 1]] = agent_block(name, name.replace("_", " "), spawn[ids[i + 1]], sk, inv, eq, f"""
            {node_text(nodes[i])}. Bring 2 {item} to the quartermaster in the square {HUB}.""")
    write_task("task_31_stockpile", body(
        "gathering", "Stocking the stores",
        "Nine gatherers, each with their own tool and skill, fill Hearthmoor's stores for the season.",
        "The quartermaster receives 2 of each of the nine goods.", ctx,
        "Every gatherer harvests their node and delivers 2 to the quartermaster.",
        [f"2 {r[2]}" for r in roles],
        [{"check": "delivered", "item": r[2], "to": "agent_1", "count": 2} for r in roles]), agents, p)


@task
def task_32_grand_bazaar():
    origins = ["oakridge", "ironhold", "goldfield_farm", "east_watchtower", "old_crypt", "deepdelve_mine",
               "hearthmoor", "sunscar_outpost", "frostpeak_camp", "mirelight"]
    goods = [("oak_logs", 4), ("iron_bar", 3), ("bread", 5), ("healing_potion", 2), ("bone", 6), ("coal", 5),
             ("thread", 6), ("sand", 6), ("wolf_pelt", 3), ("clay", 4)]
    names = ["woodseller", "ironmonger", "baker", "apothecary", "bonecarver", "collier", "weaver", "glassman",
             "furrier", "potter"]
    ids = [f"agent_{i}" for i in range(1, 11)]
    market = spots(HUB, 10, 3)
    spawn = {}
    for i, o in enumerate(origins):
        home = landmark(o)
        spawn[ids[i]] = home if o != "hearthmoor" else market[i]
    p = Plan(spawn)
    arrive = max(p.walk(a, market[i]) for i, a in enumerate(ids))
    for i, a in enumerate(ids):
        item, n = goods[i]
        p.give(a, names[(i + 1) % 10], item, n, arrive + 1)
    ctx = f"""The grand bazaar is held in Hearthmoor's square {HUB}. Every merchant sells to the next in the ring and buys from the
previous one: {', '.join(f"{names[i]} -> {names[(i + 1) % 10]} ({goods[i][1]} {goods[i][0]})" for i in range(10))}.
{GIVE_TIP} {MOVE_TIP}"""
    agents = {}
    for i, a in enumerate(ids):
        item, n = goods[i]
        want, wn = goods[(i - 1) % 10]
        agents[a] = agent_block(names[i], "merchant", spawn[a], {"health": 8}, [goods[i]], [], f"""
            You are the {names[i]} from {W.landmark(origins[i]).name}. You sell {n} {item} to the {names[(i + 1) % 10]}
            and buy {wn} {want} from the {names[(i - 1) % 10]}. Travel to Hearthmoor's square {HUB} for the bazaar.""")
    write_task("task_32_grand_bazaar", body(
        "trading", "The grand bazaar",
        "Ten merchants from ten places travel to Hearthmoor and close a ring of ten trades.",
        "Every merchant delivers their goods to the next merchant in the ring.", ctx,
        "Everyone walks to the square, then each hands their goods to the next merchant in the ring.",
        [f"{goods[i][0]} to the {names[(i + 1) % 10]}" for i in range(10)],
        [{"check": "delivered", "item": goods[i][0], "to": ids[(i + 1) % 10], "count": goods[i][1]} for i in range(10)]),
        agents, p)


@task
def task_33_ten_lookouts():
    targets = ["ironhold", "oakridge", "deepdelve_mine", "frostpeak_camp", "gloomwood_camp", "old_crypt", "emberforge",
               "saltmarsh_dock", "sunscar_outpost", "east_watchtower"]
    ids = [f"agent_{i}" for i in range(1, 11)]
    start = spots(landmark("goldfield_farm"), 10, 3)
    p = Plan(dict(zip(ids, start)))
    for i, k in enumerate(targets):
        p.walk(ids[i], landmark(k))
    places = "; ".join(f"{W.landmark(k).name} ({W.landmark(k).x},{W.landmark(k).y})" for k in targets)
    ctx = f"""Lookout posts: {places}. All are on the mainland. {MOVE_TIP}"""
    agents = {ids[i]: agent_block(f"lookout_{i + 1}", "lookout", start[i], {"health": 10}, [("apple", 3)], [], f"""
        You are lookout {i + 1} of 10, sent from Goldfield Farm. Your post is {W.landmark(targets[i]).name}
        ({W.landmark(targets[i]).x},{W.landmark(targets[i]).y}). Get there and hold it; the posts are {places}.""")
              for i in range(10)}
    write_task("task_33_ten_lookouts", body(
        "exploration", "Ten lookout posts",
        "Ten lookouts leave Goldfield Farm to man ten posts across the mainland at the same time.",
        "Every lookout stands at their own post.", ctx,
        "lookout_N walks to post N; each post has exactly one lookout.",
        ["every post manned"],
        [{"check": "at_location", "landmark": k, "agent": ids[i]} for i, k in enumerate(targets)]), agents, p)


@task
def task_34_fishers_feast():
    fire = station("fire", "hearthmoor")
    trout = nodes_near("trout_spot", walkable_near(395, 360), 4)
    ids = [f"agent_{i}" for i in range(1, 11)]
    names = ["fisher_1", "fisher_2", "fisher_3", "fisher_4", "cook_a", "cook_b", "villager_1", "villager_2",
             "villager_3", "villager_4"]
    u = dict(zip(ids, names))
    ring = spots(fire, 10, 3)
    spawn = {ids[i]: walkable_near(trout[i].x + 1, trout[i].y - 3) for i in range(4)}
    spawn.update({ids[4]: ring[0], ids[5]: ring[1], ids[6]: ring[2], ids[7]: ring[3], ids[8]: ring[4], ids[9]: ring[5]})
    p = Plan(spawn)
    got = {ids[4]: 0, ids[5]: 0}
    for i in range(4):
        cook = ids[4] if i < 2 else ids[5]
        p.harvest(ids[i], trout[i])
        r = p.walk(ids[i], ring[6 + i])
        r = p.give(ids[i], u[cook], "raw_trout", 4, r + 1)
        got[cook] = max(got[cook], r)
    for cook, (va, vb) in ((ids[4], (ids[6], ids[7])), (ids[5], (ids[8], ids[9]))):
        r = p.do(cook, "craft_item", got[cook] + 1, skill="Cooking", itemKey="cooked_trout", count=8)
        r = p.give(cook, u[va], "cooked_trout", 4, r + 1)
        p.give(cook, u[vb], "cooked_trout", 4, r + 1)
    ctx = f"""Hearthmoor's fire is at {fire}. Trout are fished in Hearth Pond, north-west of the square:
{'; '.join(node_text(n) for n in trout)}. {recipe_text('cooked_trout')}. {GIVE_TIP} {MOVE_TIP}"""
    agents = {}
    for i in range(4):
        cook = "cook_a" if i < 2 else "cook_b"
        agents[ids[i]] = agent_block(names[i], "fisher", spawn[ids[i]], {"fishing": 8}, [("fishing_rod", 1)], [], f"""
            {node_text(trout[i])}. Fish it out and give 4 raw_trout to {cook} at Hearthmoor's fire {fire}.""")
    for k, c in enumerate((ids[4], ids[5])):
        vs = ("villager_1", "villager_2") if k == 0 else ("villager_3", "villager_4")
        fs = ("fisher_1", "fisher_2") if k == 0 else ("fisher_3", "fisher_4")
        agents[c] = agent_block(names[4 + k], "cook", spawn[c], {"cooking": 8}, [], [], f"""
            {recipe_text('cooked_trout')}. {fs[0]} and {fs[1]} bring you 8 trout; cook them all at the fire {fire}
            and serve 4 each to {vs[0]} and {vs[1]}.""")
    for k, v in enumerate(ids[6:]):
        agents[v] = agent_block(names[6 + k], "villager", spawn[v], {"health": 5}, [], [], f"""
            You wait by the fire {fire} for your 4 cooked trout from {'cook_a' if k < 2 else 'cook_b'}.""")
    checks = [{"check": "crafted", "name": "cook_a cooked 8", "item": "cooked_trout", "count": 8, "agent": "agent_5"},
              {"check": "crafted", "name": "cook_b cooked 8", "item": "cooked_trout", "count": 8, "agent": "agent_6"}]
    checks += [{"check": "delivered", "item": "cooked_trout", "to": v, "count": 4} for v in ids[6:]]
    checks.append({"check": "all_alive"})
    write_task("task_34_fishers_feast", body(
        "survival", "The fishers' feast",
        "After a hard frost, Hearthmoor feeds its villagers: four fishers at Hearth Pond, two cooks at the fire and "
        "four hungry villagers.",
        "Both cooks cook 8 trout and every villager receives 4; nobody dies.", ctx,
        "fisher_1, fisher_2 -> cook_a; fisher_3, fisher_4 -> cook_b; cook_a feeds villagers 1-2, cook_b villagers 3-4.",
        ["both cooks cooked", "every villager fed", "all alive"], checks), agents, p)


@task
def task_35_fletchers_guild():
    furnace, anvil, loom = station("furnace", "hearthmoor"), station("anvil", "hearthmoor"), station("loom", "hearthmoor")
    cop, tin = nodes_near("copper_rock", HUB)[0], nodes_near("tin_rock", HUB)[0]
    tree, flax = nodes_near("tree", HUB)[0], nodes_near("flax_plant", HUB)[0]
    ids = [f"agent_{i}" for i in range(1, 11)]
    names = ["copper_miner", "tin_miner", "smelter", "smith", "lumberjack", "whittler", "flax_picker", "weaver",
             "fletcher", "archer"]
    u = dict(zip(ids, names))
    bench = spots(HUB, 10, 3)
    spawn = {ids[0]: walkable_near(cop.x + 2, cop.y + 2), ids[1]: walkable_near(tin.x - 2, tin.y - 2),
             ids[2]: spots(furnace, 1)[0], ids[3]: spots(anvil, 1)[0], ids[4]: walkable_near(tree.x + 2, tree.y + 2),
             ids[5]: bench[0], ids[6]: walkable_near(flax.x - 2, flax.y + 2), ids[7]: spots(loom, 1)[0],
             ids[8]: bench[1], ids[9]: bench[2]}
    p = Plan(spawn)
    p.harvest(ids[0], cop)
    p.harvest(ids[1], tin)
    a = p.give(ids[0], "smelter", "copper_ore", 2, p.walk(ids[0], spots(spawn[ids[2]], 3, 2)[1]) + 1)
    b = p.give(ids[1], "smelter", "tin_ore", 2, p.walk(ids[1], spots(spawn[ids[2]], 3, 2)[2]) + 1)
    r = p.do(ids[2], "craft_item", max(a, b) + 1, skill="Smelting", itemKey="bronze_bar", count=2)
    r = p.give(ids[2], "smith", "bronze_bar", 2, p.walk(ids[2], spots(spawn[ids[3]], 2, 2)[1], r + 1) + 1)
    r = p.do(ids[3], "craft_item", r + 1, skill="Smithing", itemKey="bronze_arrowtips", count=2)
    tips = p.give(ids[3], "fletcher", "bronze_arrowtips", 20, p.walk(ids[3], spots(bench[1], 3, 2)[1], r + 1) + 1)
    p.harvest(ids[4], tree)
    r = p.walk(ids[4], spots(bench[0], 4, 2)[3])
    r = p.give(ids[4], "whittler", "logs", 2, r + 1)
    r2 = p.give(ids[4], "fletcher", "logs", 1, r + 1)
    r = p.do(ids[5], "craft_item", r + 1, skill="Fletching", itemKey="arrow_shaft", count=2)
    shafts = p.give(ids[5], "fletcher", "arrow_shaft", 20, r + 1)
    p.harvest(ids[6], flax)
    r = p.give(ids[6], "weaver", "flax", 2, p.walk(ids[6], spots(spawn[ids[7]], 2, 2)[1]) + 1)
    r = p.do(ids[7], "craft_item", r + 1, skill="Crafting", itemKey="bowstring", count=1)
    string = p.give(ids[7], "fletcher", "bowstring", 1, p.walk(ids[7], spots(bench[1], 4, 2)[2], r + 1) + 1)
    r = p.do(ids[8], "craft_item", max(r2, string) + 1, skill="Fletching", itemKey="shortbow", count=1)
    r = p.do(ids[8], "craft_item", max(tips, shafts, r) + 1, skill="Fletching", itemKey="bronze_arrow", count=2)
    r = p.give(ids[8], "archer", "shortbow", 1, r + 1)
    r = p.give(ids[8], "archer", "bronze_arrow", 20, r + 1)
    r = p.do(ids[9], "equip_item", r + 1, itemKey="shortbow")
    p.do(ids[9], "equip_item", r + 1, itemKey="bronze_arrow")
    ctx = f"""Hearthmoor {HUB}: furnace {furnace}, anvil {anvil}, loom {loom}. Recipes: {recipe_text('bronze_bar')}.
{recipe_text('bronze_arrowtips')}. {recipe_text('arrow_shaft')}. {recipe_text('bowstring')}. {recipe_text('shortbow')}.
{recipe_text('bronze_arrow')}. {GIVE_TIP}"""
    g = {
        ids[0]: ({"mining": 5}, [], ["pickaxe"], f"{node_text(cop)}. 2 copper_ore to the smelter at the furnace {furnace}."),
        ids[1]: ({"mining": 5}, [], ["pickaxe"], f"{node_text(tin)}. 2 tin_ore to the smelter at the furnace {furnace}."),
        ids[2]: ({"smelting": 5}, [], [], f"{recipe_text('bronze_bar')}. 2 bars to the smith at the anvil {anvil}."),
        ids[3]: ({"smithing": 6}, [("hammer", 1)], [], f"{recipe_text('bronze_arrowtips')}. 20 arrowtips to the fletcher."),
        ids[4]: ({"lumberjacking": 5}, [], ["axe"], f"{node_text(tree)}. 2 logs to the whittler and 1 to the fletcher."),
        ids[5]: ({"fletching": 5}, [("knife", 1)], [], f"{recipe_text('arrow_shaft')}. 20 arrow shafts to the fletcher."),
        ids[6]: ({"foraging": 3}, [], [], f"{node_text(flax)}. 2 flax to the weaver at the loom {loom}."),
        ids[7]: ({"crafting": 6}, [], [], f"{recipe_text('bowstring')}. 1 bowstring to the fletcher."),
        ids[8]: ({"fletching": 8}, [("knife", 1), ("feather", 20)], [], f"""You build the archer's kit: {recipe_text('shortbow')};
            {recipe_text('bronze_arrow')}. You hold 20 feathers; the others bring logs, bowstring, shafts and tips.
            Give the shortbow and 20 arrows to the archer."""),
        ids[9]: ({"archery": 12, "accuracy": 10}, [], [], "Receive a shortbow and 20 bronze arrows from the fletcher and equip both."),
    }
    agents = {a: agent_block(u[a], u[a].replace("_", " "), spawn[a], *g[a]) for a in ids}
    write_task("task_35_fletchers_guild", body(
        "construction", "The fletchers' guild",
        "Ten guild members build an archer's full kit: a shortbow and twenty bronze arrows, from ore, wood and flax.",
        "The archer has a shortbow and 20 bronze arrows equipped.", ctx,
        "Ore -> bars -> arrowtips; logs -> shafts (and one log for the bow); flax -> bowstring; the fletcher builds "
        "bow and arrows; the archer equips them.",
        ["20 arrows built", "bow equipped", "arrows equipped"],
        [{"check": "crafted", "item": "bronze_arrow", "count": 20},
         {"check": "equipped", "item": "shortbow", "agent": "agent_10"},
         {"check": "equipped", "item": "bronze_arrow", "agent": "agent_10"}]), agents, p)


@task
def task_36_saltmarsh_wolves():
    dock = landmark("saltmarsh_dock")
    wolves = mobs_near("wolf", dock, 6)
    ids = [f"agent_{i}" for i in range(1, 11)]
    names = ["armourer"] + [f"hunter_{i}" for i in range(1, 7)] + ["skinner_1", "skinner_2", "skinner_3"]
    u = dict(zip(ids, names))
    camp = spots(dock, 10, 3)
    p = Plan(dict(zip(ids, camp)))
    r = 0
    for i in range(6):
        h = ids[1 + i]
        r = p.give("agent_1", names[1 + i], "bronze_sword", 1, r + 1)
        e = p.do(h, "equip_item", r + 1, itemKey="bronze_sword")
        k = p.attack(h, wolves[i], e + 1)
        sk = ids[7 + i // 2]
        w = p.walk(h, spots(camp[7 + i // 2], 4, 2)[1 + i % 2], k + 1)
        p.give(h, u[sk], "wolf_pelt", 1, w + 1)
    ctx = f"""Wolves prowl around Saltmarsh Dock {dock}: {'; '.join(mob_text(w) for w in wolves)}.
Food in your bag is eaten automatically when badly hurt. {GIVE_TIP}"""
    fighter = {"strength": 14, "accuracy": 14, "defense": 12, "health": 12}
    agents = {"agent_1": agent_block("armourer", "armourer", camp[0], {"smithing": 10}, [("bronze_sword", 6)], [], """
        You hold six bronze swords. Give one to each hunter; you stay at the dock.""")}
    for i in range(6):
        agents[ids[1 + i]] = agent_block(names[1 + i], "hunter", camp[1 + i], fighter, [("bread", 2)], [], f"""
            Get a sword from the armourer and equip it, then kill {wolves[i].id} ({mob_text(wolves[i])}). Bring the
            pelt to {names[7 + i // 2]} at the dock.""")
    for k in range(3):
        agents[ids[7 + k]] = agent_block(names[7 + k], "skinner", camp[7 + k], {"crafting": 12}, [("knife", 1)], [], f"""
            You wait at the dock for 2 wolf pelts from {names[1 + 2 * k]} and {names[2 + 2 * k]}.""")
    checks = [{"check": "kills", "mob": "wolf", "count": 6}]
    checks += [{"check": "equipped", "item": "bronze_sword", "agent": ids[1 + i]} for i in range(6)]
    checks += [{"check": "delivered", "item": "wolf_pelt", "to": ids[7 + k], "count": 2} for k in range(3)]
    checks.append({"check": "all_alive"})
    write_task("task_36_saltmarsh_wolves", body(
        "combat", "Wolves of Saltmarsh",
        "Six hunters armed by the dock's armourer clear the wolves around Saltmarsh Dock; three skinners take the pelts.",
        "Six wolves are killed by sword-armed hunters, each skinner receives 2 pelts, and nobody dies.", ctx,
        "Armourer hands out six swords; hunter_N kills wolf N and gives the pelt to skinner (N+1)//2.",
        ["6 wolves killed", "every hunter armed", "pelts delivered", "all alive"], checks), agents, p)


# =====================================================================================================
# eleven to twenty agents
# =====================================================================================================
def corner_point(cx: int, cy: int) -> tuple[int, int]:
    """The walkable mainland tile nearest a map corner (mainland = Hearthmoor's area)."""
    comp = W.map.component(*HUB)
    best = None
    for r in range(0, 600, 4):
        for x in range(max(0, cx - r), min(W.map.width, cx + r + 1), 4):
            for y in (cy - r, cy + r):
                if 0 <= y < W.map.height and W.map.walkable(x, y) and W.map.component(x, y) == comp:
                    d = abs(x - cx) + abs(y - cy)
                    if best is None or d < best[0]:
                        best = (d, (x, y))
        if best is not None and best[0] <= r:
            return best[1]
    raise ValueError((cx, cy))


@task
def task_37_four_corners():
    corners = {"north-west": corner_point(0, 0), "north-east": corner_point(999, 0),
               "south-west": corner_point(0, 749), "south-east": corner_point(999, 749)}
    ids = [f"agent_{i}" for i in range(1, 17)]
    start = spots(HUB, 16, 4)
    p = Plan(dict(zip(ids, start)))
    checks = []
    k = 0
    for cname, pt in corners.items():
        team = ids[k:k + 4]
        targets = spots(pt, 4, 4)
        for j, a in enumerate(team):
            p.walk(a, targets[j])
        checks.append({"check": "at_location", "name": f"{cname} corner surveyed", "x": pt[0], "y": pt[1], "radius": 8,
                       "agents": team})
        k += 4
    ctx = "Survey points at the four corners of the mainland: " + "; ".join(f"{c} {pt}" for c, pt in corners.items()) \
        + f". {MOVE_TIP} A corner counts as surveyed when its whole team of four stands within 8 tiles of its point."
    agents = {}
    k = 0
    for cname, pt in corners.items():
        for j in range(4):
            a = ids[k]
            agents[a] = agent_block(f"{cname.replace('-', '_')}_{j + 1}", f"{cname} surveyor", start[k],
                                    {"health": 10}, [("apple", 4)], [], f"""
                You belong to the {cname} survey team (four surveyors). Walk with your team to the {cname} survey
                point {pt} and stay within 8 tiles of it. The walk is long: {MOVE_TIP}""")
            k += 1
    write_task("task_37_four_corners", body(
        "exploration", "Four corners of the realm",
        "Sixteen surveyors leave Hearthmoor in four teams of four to survey the four corners of the mainland.",
        "Each corner's full team of four stands at its survey point at the same time.", ctx,
        "Agents 1-4 north-west, 5-8 north-east, 9-12 south-west, 13-16 south-east.",
        ["four corners surveyed"], checks), agents, p)


@task
def task_38_relic_relay():
    start_pt = landmark("mirelight")
    end_pt = landmark("hearthmoor")
    path = route(W.map, start_pt, end_pt)
    ids = [f"agent_{i}" for i in range(1, 13)]
    n = 12
    posts = [start_pt] + [path[min(len(path) - 1, (len(path) * i) // (n - 1) - 1)] for i in range(1, n)]
    names = [f"runner_{i}" for i in range(1, n)] + ["keeper"]
    p = Plan(dict(zip(ids, posts)))
    r = 0
    for i in range(n - 1):
        a = ids[i]
        w = p.walk(a, spots(posts[i + 1], 2, 2)[1], r + 1)
        r = p.give(a, names[i + 1], "ancient_relic", 1, w + 1)
    ctx = f"""The relic must travel from Mirelight {start_pt} to Hearthmoor {end_pt} hand to hand along the road: each runner
carries it only to the next runner's post, never further (the stages are blessed separately). Posts: {', '.join(f'{names[i]} {posts[i]}' for i in range(n))}.
{GIVE_TIP} {MOVE_TIP}"""
    agents = {}
    for i in range(n):
        nxt = f"the next runner, {names[i + 1]}, at {posts[i + 1]}" if i < n - 1 else "nobody: you keep it"
        first = " You start with the relic." if i == 0 else f" Wait at your post {posts[i]} for {names[i - 1]}."
        agents[ids[i]] = agent_block(names[i], "runner" if i < n - 1 else "relic keeper", posts[i], {"health": 8},
                                     [("ancient_relic", 1)] if i == 0 else [], [], f"""
            You are {names[i]} in the relic relay.{first} Carry the relic to {nxt}.""")
    write_task("task_38_relic_relay", body(
        "coordination", "Relay of the relic",
        "Twelve runners carry an ancient relic from Mirelight to Hearthmoor, each over one stage of the road.",
        "The relic reaches the keeper in Hearthmoor from the last runner; runner_6 has run the middle stage.", ctx,
        "runner_1 carries it to runner_2, and so on, until runner_11 hands it to the keeper.",
        ["runner_6 ran the middle stage", "relic handed to the keeper by runner_11"],
        [{"check": "at_location", "name": "middle stage run", "x": posts[6][0], "y": posts[6][1], "radius": 3,
          "agent": "agent_6"},
         {"check": "delivered", "name": "relic with the keeper", "item": "ancient_relic", "to": "agent_12",
          "from": "agent_11", "count": 1}]), agents, p)


@task
def task_39_great_harvest():
    depots = {"hearthmoor": landmark("hearthmoor"), "goldfield_farm": landmark("goldfield_farm")}
    kinds = [("miner", "copper_rock", "copper_ore", {"mining": 5}, [], ["pickaxe"]),
             ("tinner", "tin_rock", "tin_ore", {"mining": 5}, [], ["pickaxe"]),
             ("woodcutter", "tree", "logs", {"lumberjacking": 5}, [], ["axe"]),
             ("flax_picker", "flax_plant", "flax", {"foraging": 3}, [], []),
             ("reaper", "wheat_field", "wheat", {"foraging": 3}, [], []),
             ("orchard_keeper", "apple_tree", "apple", {"foraging": 3}, [], [])]
    ids = [f"agent_{i}" for i in range(1, 15)]
    spawn, used, plan_rows = {}, [], []
    k = 0
    for dname, dpt in depots.items():
        qm = ids[k]
        spawn[qm] = dpt
        k += 1
        for name, nt, item, sk, inv, eq in kinds:
            node = nodes_near(nt, dpt, 1, exclude=tuple(used))[0]
            used.append(node.id)
            spawn[ids[k]] = walkable_near(node.x + 2, node.y - 2)
            plan_rows.append((ids[k], qm, dname, node, name, item, sk, inv, eq))
            k += 1
    p = Plan(spawn)
    drop = {d: spots(pt, 8, 3) for d, pt in depots.items()}
    cnt = {d: 1 for d in depots}
    for a, qm, dname, node, name, item, *_r in plan_rows:
        p.harvest(a, node)
        r = p.walk(a, drop[dname][cnt[dname]])
        cnt[dname] += 1
        p.give(a, f"{dname}_steward", item, 2, r + 1)
    ctx = f"""Two depots take in the harvest: Hearthmoor {depots['hearthmoor']} and Goldfield Farm {depots['goldfield_farm']}.
Each depot needs 2 each of copper_ore, tin_ore, logs, flax, wheat and apple from its own six gatherers. {GIVE_TIP}"""
    agents = {}
    for dname, dpt in depots.items():
        qm = ids[0] if dname == "hearthmoor" else ids[7]
        agents[qm] = agent_block(f"{dname}_steward", "steward", dpt, {"crafting": 4}, [], [], f"""
            You run the {W.landmark(dname).name} depot at {dpt}. Collect 2 each of copper_ore, tin_ore, logs, flax,
            wheat and apple from your six gatherers.""")
    for a, qm, dname, node, name, item, sk, inv, eq in plan_rows:
        agents[a] = agent_block(f"{dname}_{name}", name.replace("_", " "), spawn[a], sk, inv, eq, f"""
            You gather for the {W.landmark(dname).name} depot. {node_text(node)}. Bring 2 {item} to the
            {dname}_steward at {depots[dname]}.""")
    agents = {a: agents[a] for a in ids}
    checks = [{"check": "delivered", "item": item, "to": qm, "count": 2} for _, qm, _, _, _, item, *_r in plan_rows]
    write_task("task_39_great_harvest", body(
        "gathering", "The great harvest",
        "Fourteen villagers stock two depots at once: six gatherers and a steward for Hearthmoor, the same for Goldfield Farm.",
        "Both stewards receive 2 each of copper ore, tin ore, logs, flax, wheat and apples.", ctx,
        "Each gatherer harvests the node next to them and delivers 2 to their own depot's steward.",
        ["Hearthmoor depot full", "Goldfield depot full"], checks), agents, p)


@task
def task_40_muster():
    villages = [("oakridge", "oak_logs"), ("mirelight", "clay"), ("ironhold", "iron_bar"), ("saltmarsh_dock", "raw_shrimp")]
    ids = [f"agent_{i}" for i in range(1, 18)]
    square = spots(HUB, 17, 4)
    marshal = square[0]
    spawn = {"agent_1": marshal}
    rows = []
    k = 1
    for v, token in villages:
        home = spots(landmark(v), 4, 3)
        for j in range(4):
            spawn[ids[k]] = home[j]
            rows.append((ids[k], v, token, j == 0))
            k += 1
    p = Plan(spawn)
    near_marshal = spots(marshal, 6, 2)[1:5]
    c = 0
    for i, (a, v, token, captain) in enumerate(rows):
        if captain:
            r = p.walk(a, near_marshal[c])
            c += 1
            p.give(a, "marshal", token, 2, r + 1)
        else:
            p.walk(a, square[1 + i])
    ctx = f"""The militia musters in Hearthmoor's square {HUB}; the muster counts everyone within 12 tiles of it. Each village's
captain brings its tribute to the marshal: Oakridge 2 oak_logs, Mirelight 2 clay, Ironhold 2 iron_bar, Saltmarsh Dock 2 raw_shrimp.
{GIVE_TIP} {MOVE_TIP}"""
    agents = {"agent_1": agent_block("marshal", "marshal", marshal, {"health": 15, "defense": 10}, [], [], f"""
        You are the marshal in Hearthmoor's square {HUB}. Four squads of four march in from Oakridge, Mirelight,
        Ironhold and Saltmarsh Dock; take each captain's tribute and see that every one of them arrives.""")}
    for a, v, token, captain in rows:
        vname = W.landmark(v).name
        if captain:
            agents[a] = agent_block(f"{v}_captain", "squad captain", spawn[a], {"health": 12, "strength": 8}, [(token, 2)], [], f"""
                You lead the {vname} squad and carry its tribute (2 {token}). March your squad to Hearthmoor's square
                {HUB} and hand the tribute to the marshal.""")
        else:
            n = sum(1 for b, vv, _, cap in rows if vv == v and not cap and b <= a)
            agents[a] = agent_block(f"{v}_militia_{n}", "militia", spawn[a], {"health": 10, "strength": 6}, [("bread", 1)], [], f"""
                You march with the {vname} squad to the muster in Hearthmoor's square {HUB}.""")
    checks = [{"check": "delivered", "item": token, "to": "agent_1", "count": 2} for _, token in villages]
    checks.append({"check": "at_location", "name": "everyone mustered", "landmark": "hearthmoor", "radius": 12})
    write_task("task_40_muster", body(
        "coordination", "The muster at Hearthmoor",
        "Four squads of four march from the corners of the realm to muster before the marshal in Hearthmoor.",
        "All seventeen stand in Hearthmoor's square and the marshal holds every village's tribute.", ctx,
        "Every squad walks to the square; each captain gives the tribute to the marshal.",
        ["four tributes delivered", "everyone mustered"], checks), agents, p)


def main(argv: list[str]) -> None:
    only = set(argv)
    for fn in TASKS:
        if not only or fn.__name__ in only:
            fn()
            print(f"wrote {fn.__name__}")


if __name__ == "__main__":
    main(sys.argv[1:])
