"""Writes tasks 09-40 of the main suite (a developer tool; the harness never imports it).

    /work/venv/bin/python tasks/make_suite.py          # rewrites tasks/main/task_09..40
    agentworld tasks prove --all                        # then prove them

Every id, coordinate and move count comes from the world (see tasks/authoring.py). Each task function
states its roles, guideline documents, verifier and reference plan; the YAML it writes is what ships.
"""

from __future__ import annotations

import sys

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
        ["Two torches made", "Torchbearer and guide inside the Ice Cavern"],
        [{"check": "crafted", "name": "torches made", "item": "torch", "count": 2},
         {"check": "at_location", "name": "both inside the cavern", "landmark": "ice_cavern", "radius": 60,
          "agents": ["agent_2", "agent_3"]}]), agents, p)


@task
def task_17_wolf_archer():
    wolves = mobs_near("wolf", (395, 384), 2)
    base = walkable_near(wolves[0].x + 8, wolves[0].y + 6)
    fl_at, ar_at, sk_at = spots(base, 3, 2)
    p = Plan({"agent_1": fl_at, "agent_2": ar_at, "agent_3": sk_at})
    r = p.do("agent_1", "craft_item", 1, skill="Fletching", itemKey="arrow_shaft", count=2)
    r = p.do("agent_1", "craft_item", r + 1, skill="Fletching", itemKey="bronze_arrow", count=2)
    r = p.give("agent_1", "archer", "bronze_arrow", 20, r + 1)
    r = p.do("agent_2", "equip_item", r + 1, itemKey="bronze_arrow")
    r = p.attack("agent_2", wolves[0], r + 1)
    r = p.attack("agent_2", wolves[1], r + 1)
    r = p.walk("agent_2", spots(sk_at, 3, 2)[2], r + 1)
    p.give("agent_2", "skinner", "wolf_pelt", 2, r + 1)
    ctx = f"""Wolves roam west of Hearthmoor. {mob_text(wolves[0])}. {mob_text(wolves[1])}.
A bow needs arrows equipped (ammo slot). {recipe_text('arrow_shaft')}. {recipe_text('bronze_arrow')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("fletcher", "fletcher", fl_at, {"fletching": 6},
                               [("logs", 2), ("knife", 1), ("feather", 20), ("bronze_arrowtips", 20)], [], f"""
            You make arrows. {recipe_text('arrow_shaft')}. {recipe_text('bronze_arrow')}. The archer has a bow
            but no arrows: make 20 and give them."""),
        "agent_2": agent_block("archer", "archer", ar_at, {"archery": 20, "accuracy": 18, "health": 6},
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
        "Fletcher makes 30 shafts and 20 bronze arrows for the archer; archer equips them, kills both wolves and "
        "gives the pelts to the skinner.",
        ["Two wolves killed", "Two pelts delivered", "All alive"],
        [{"check": "kills", "mob": "wolf", "count": 2, "agent": "agent_2"},
         {"check": "delivered", "item": "wolf_pelt", "to": "agent_3", "count": 2},
         {"check": "all_alive"}]), agents, p)


@task
def task_18_winter_bread():
    fire, wb = station("fire", "hearthmoor"), station("workbench", "hearthmoor")
    fields = nodes_near("wheat_field", HUB, 2)
    miller_at, baker_at = spots(wb, 1)[0], spots(fire, 1)[0]
    farmer_at = walkable_near(fields[0].x + 2, fields[0].y - 3)
    p = Plan({"agent_1": farmer_at, "agent_2": miller_at, "agent_3": baker_at})
    p.harvest("agent_1", fields[0])
    p.harvest("agent_1", fields[1])
    r = p.walk("agent_1", spots(miller_at, 3, 2)[2])
    r = p.give("agent_1", "miller", "wheat", 4, r + 1)
    r = p.do("agent_2", "craft_item", r + 1, skill="Crafting", itemKey="flour", count=2)
    r = p.walk("agent_2", spots(baker_at, 3, 2)[2], r + 1)
    r = p.give("agent_2", "baker", "flour", 2, r + 1)
    p.do("agent_3", "craft_item", r + 1, skill="Cooking", itemKey="bread", count=2)
    ctx = f"""Hearthmoor {HUB}: workbench {wb}, fire {fire}. Wheat fields lie just west of the square.
{recipe_text('flour')}. {recipe_text('bread')}. {GIVE_TIP}"""
    agents = {
        "agent_1": agent_block("farmer", "farmer", farmer_at, {"foraging": 6}, [], [], f"""
            You harvest wheat by hand. {node_text(fields[0])}; {node_text(fields[1])}. A field gives 1-2 wheat per
            gather, so harvest both. The miller at the workbench {wb} needs 4 wheat."""),
        "agent_2": agent_block("miller", "miller", miller_at, {"crafting": 5}, [], [], f"""
            You are the village miller: the flour must come from your millstone. {recipe_text('flour')}. Grind 2 flour at the workbench {wb} and take it to the baker at the fire {fire}."""),
        "agent_3": agent_block("baker", "baker", baker_at, {"cooking": 8}, [], [], f"""
            {recipe_text('bread')}. Bake 2 loaves at the fire {fire} for the winter store and keep them."""),
    }
    write_task("task_18_winter_bread", body(
        "survival", "Bread before the frost",
        "Winter is coming to Hearthmoor and the bread store is empty: farmer, miller and baker must bake two loaves.",
        "The baker holds 2 loaves of bread; nobody dies.", ctx,
        "Farmer harvests two wheat fields and gives 4 wheat to the miller; miller grinds 2 flour for the baker; baker "
        "bakes 2 bread.",
        ["Flour ground", "2 bread with the baker", "All alive"],
        [{"check": "crafted", "name": "flour ground by the miller", "item": "flour", "count": 2, "agent": "agent_2"},
         {"check": "item_count", "item": "bread", "count": 2, "agent": "agent_3"},
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


def main(argv: list[str]) -> None:
    only = set(argv)
    for fn in TASKS:
        if not only or fn.__name__ in only:
            fn()
            print(f"wrote {fn.__name__}")


if __name__ == "__main__":
    main(sys.argv[1:])
