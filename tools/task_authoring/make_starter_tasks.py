"""Author the starter tasks (tasks/main/*.yaml) from the real world.

Instance ids ("tree#1016"), spawn tiles and walking distances come from ``load_world()``, so every id a
task names is one the world really has. Re-run after the world data changes, then prove the tasks:

    python tools/task_authoring/make_starter_tasks.py            # writes tasks/main/*.yaml
    python tools/task_authoring/make_starter_tasks.py --check    # also plays each with the oracle and idle teams

A reference plan is written round by round (``Plan.at(round, agent, tool, **args)``); rounds where an
agent has nothing to do become ``sleep`` steps, so teammates stay in the game until the last delivery.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import yaml

from agentworld.core.world.datapack import load_world

W = load_world()
G = W.map
OUT = Path(__file__).resolve().parents[2] / "tasks" / "main"
MOVE = W.data.rules.move_range

Point = tuple[int, int]


class Flow(dict):
    """A mapping written on one line: steps, locations, item stacks."""


def _str(dumper: yaml.SafeDumper, data: str):
    if "\n" in data:  # documents as readable block literals
        text = "\n".join(line.rstrip() for line in data.strip().splitlines()) + "\n"
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


yaml.add_representer(str, _str, Dumper=yaml.SafeDumper)
yaml.add_representer(Flow, lambda d, m: d.represent_mapping("tag:yaml.org,2002:map", m, flow_style=True),
                     Dumper=yaml.SafeDumper)


# ---------------------------------------------------------------------------------------------------
# finding things
# ---------------------------------------------------------------------------------------------------
def walkable_near(x: int, y: int) -> Point:
    p = G.nearest_walkable(x, y, max_radius=20)
    assert p is not None, (x, y)
    return p


def station(kind: str, landmark: str) -> Point:
    for s in W.stations:
        if s.kind == kind and s.landmark == landmark:
            return s.x, s.y
    raise KeyError((kind, landmark))


def nearest_nodes(node_type: str, near: Point, k: int = 1, exclude: set[str] = frozenset()) -> list[Any]:
    cands = [n for n in W.nodes if n.type == node_type and n.id not in exclude and G.adjacent_walkable(n.x, n.y)]
    cands.sort(key=lambda n: (abs(n.x - near[0]) + abs(n.y - near[1]), n.id))
    return cands[:k]


def nearest_mobs(mob_type: str, near: Point, k: int = 1) -> list[Any]:
    cands = sorted((m for m in W.mobs if m.type == mob_type), key=lambda m: (abs(m.x - near[0]) + abs(m.y - near[1]), m.id))
    return cands[:k]


def path_len(a: Point, b: Point) -> int:
    if not G.walkable(*a):  # a resource node's tile: the agent stands next to it
        a = (G.adjacent_walkable(*a) or [walkable_near(*a)])[0]
    path = G.find_path(a, b)
    assert path is not None, f"no path {a} -> {b}"
    return len(path)


def moves_to(a: Point, b: Point) -> int:
    return max(1, math.ceil(path_len(a, b) / MOVE))


def spots_around(center: Point, n: int, max_d: int = 2) -> list[Point]:
    """n distinct walkable tiles within max_d of center (pairwise within transfer range)."""
    out = []
    for d in range(0, max_d + 1):
        for dx in range(-d, d + 1):
            for dy in (d - abs(dx), -(d - abs(dx))):
                p = (center[0] + dx, center[1] + dy)
                if G.walkable(*p) and p not in out and G.connected(p, center):
                    out.append(p)
    assert len(out) >= n, center
    return out[:n]


# ---------------------------------------------------------------------------------------------------
# plans
# ---------------------------------------------------------------------------------------------------
class Plan:
    def __init__(self, agents: list[str]):
        self.steps: dict[str, dict[int, dict[str, Any]]] = {a: {} for a in agents}

    def at(self, rnd: int, agent: str, tool: str, **args: Any) -> None:
        assert rnd not in self.steps[agent], (agent, rnd, tool)
        self.steps[agent][rnd] = Flow(tool=tool, args=Flow(args))

    def walk(self, rnd: int, agent: str, start: Point, goal: Point) -> int:
        """move_character calls from start to goal, one per round from ``rnd``; returns the next free round."""
        n = moves_to(start, goal)
        for i in range(n):
            self.at(rnd + i, agent, "move_character", x=goal[0], y=goal[1])
        return rnd + n

    def last_round(self) -> int:
        return max(max(s) for s in self.steps.values() if s)

    def solution(self) -> dict[str, list[dict[str, Any]]]:
        end = self.last_round()
        out = {}
        for agent, steps in self.steps.items():
            out[agent] = [steps.get(r, Flow(tool="sleep", args=Flow(seconds=1))) for r in range(1, end + 1)]
        return out


def agent(username: str, role: str, at: Point, skills: dict[str, int], inventory=(), equipped=(), guideline="") -> dict:
    block: dict[str, Any] = {"username": username, "role": role, "new_character": True,
                             "location": Flow(x=at[0], y=at[1]), "skill_levels": dict(skills)}
    tools = [i for i in equipped if W.item(i).slot is None]  # knives, hammers: carried, not worn
    block["inventory_items"] = [Flow(item=i, count=c) for i, c in list(inventory) + [(t, 1) for t in tools]]
    block["equipped_items"] = [Flow(item=i, count=1) for i in equipped if i not in tools]
    block["guideline"] = guideline.strip() + "\n"
    return block


def write(task_id: str, body: dict[str, Any], agents: dict[str, dict], plan: Plan) -> None:
    doc: dict[str, Any] = {"id": task_id}
    doc.update(body)
    if "verifier" in doc:
        doc["verifier"] = {"checks": [Flow(c) for c in doc["verifier"]["checks"]]}
    doc.update(agents)
    doc["reference_solution"] = plan.solution()
    rounds_needed = plan.last_round()
    assert doc["rounds"] >= rounds_needed + 5, (task_id, rounds_needed)
    OUT.mkdir(parents=True, exist_ok=True)
    text = f"# {task_id}: generated by tools/task_authoring/make_starter_tasks.py from the world data ({W.data.version}).\n"
    text += f"# The reference solution passes in {rounds_needed} rounds.\n"
    text += yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)
    (OUT / f"{task_id}.yaml").write_text(text, encoding="utf-8")


HUB = (450, 400)  # Hearthmoor: furnace, anvil, fire, workbench and loom within a few tiles
HUB_STATIONS = {k: station(k, "hearthmoor") for k in ("furnace", "anvil", "fire", "workbench", "loom")}


def hub_spot(kind: str) -> Point:
    """A walkable tile one step from a Hearthmoor station toward the village centre (within transfer range
    of every other hub spot)."""
    sx, sy = HUB_STATIONS[kind]
    tx = sx + (1 if HUB[0] > sx else -1 if HUB[0] < sx else 0)
    ty = sy + (1 if HUB[1] > sy else -1 if HUB[1] < sy else 0)
    return walkable_near(tx, ty)


# ---------------------------------------------------------------------------------------------------
# the tasks
# ---------------------------------------------------------------------------------------------------
def task_01_staff() -> None:
    wb = hub_spot("workbench")
    tree = nearest_nodes("tree", wb)[0]
    wood_at = walkable_near(wb[0] - 2, wb[1] + 1)
    lj_spawn = walkable_near(tree.x + 3, tree.y + 3)
    p = Plan(["agent_1", "agent_2", "agent_3"])
    p.at(1, "agent_1", "harvest_resource", targetInstance=tree.id)
    nxt = p.walk(2, "agent_1", (tree.x, tree.y), wood_at)
    p.at(nxt, "agent_1", "transfer_items", targetPlayer="woodworker", itemKey="logs", count=2)
    p.at(nxt, "agent_2", "craft_item", skill="Fletching", itemKey="stick", count=2)
    p.at(nxt + 1, "agent_2", "transfer_items", targetPlayer="wizard", itemKey="stick", count=3)
    p.at(nxt + 1, "agent_3", "craft_item", skill="Crafting", itemKey="staff", count=1)
    p.at(nxt + 2, "agent_3", "equip_item", itemKey="staff")
    agents = {
        "agent_1": agent("lumberjack", "lumberjack", lj_spawn, {"lumberjacking": 10, "strength": 5, "health": 10},
                         [("apple", 5)], ["axe"], f"""
You are the team's lumberjack: you carry the axe and are the only one who can fell trees.
- Trees are listed in your Nearby view as `tree#N` ("needs axe + lumberjacking 1; gives logs").
  harvest_resource(targetInstance=...) fells one completely (4 logs).
- The woodworker needs 2 logs to whittle 4 sticks. Walk to within {W.data.rules.transfer_range} tiles of the
  woodworker and use transfer_items(targetPlayer='woodworker', itemKey='logs', count=2).
"""),
        "agent_2": agent("woodworker", "woodworker", wood_at, {"fletching": 5, "crafting": 1, "health": 10},
                         [("apple", 5)], ["knife"], """
You are the woodworker: you hold the knife and know fletching.
- craft_item(skill='Fletching', itemKey='stick', count=N) turns N logs into 2*N sticks (knife needed, no station).
- The wizard needs 3 sticks for the staff. Give them with transfer_items(targetPlayer='wizard', itemKey='stick', count=3).
- You have no axe: ask the lumberjack for logs.
"""),
        "agent_3": agent("wizard", "wizard", wb, {"crafting": 8, "magic": 10, "health": 10},
                         [("bead", 1), ("apple", 5)], [], """
You are the wizard. You hold the bead, the heart of the staff, and are the only one skilled enough to assemble it.
- craft_item(skill='Crafting', itemKey='staff') needs 3 sticks + 1 bead, within 4 tiles of a workbench
  (Hearthmoor's workbench is next to you).
- Then equip the staff (equip_item(itemKey='staff')).
"""),
    }
    body = {
        "category": "crafting",
        "task": {"name": "A staff for the wizard",
                 "description": "The lumberjack, the woodworker and the wizard turn logs into sticks and sticks "
                                "into a staff for the wizard (the paper's Task 01, in our world)."},
        "objectives": {"primary": "The wizard ends up holding a staff.",
                       "secondary": ["Nobody dies."]},
        "relevant_game_context": """
Recipes: stick = 1 logs -> 2 sticks (Fletching 1, needs a knife). staff = 3 stick + 1 bead (Crafting 5,
within 4 tiles of a workbench). Hearthmoor (450,400) has a workbench at (450,397).
Items: logs (from trees, axe needed), stick, bead, staff. Transfers need the two players within 6 tiles.
""",
        "max_action_steps": 20,
        "rounds": 25,
        "shared_plan": "Lumberjack fells a tree and gives 2 logs to the woodworker. Woodworker crafts 4 sticks and "
                       "gives 3 to the wizard. Wizard crafts the staff at the workbench.",
        "success_criteria": ["The wizard holds a staff", "All three are alive"],
        "verifier": {"checks": [
            {"check": "item_count", "name": "staff with wizard", "item": "staff", "count": 1, "agent": "agent_3"},
            {"check": "all_alive"}]},
    }
    write("task_01_staff", body, agents, p)


def task_02_harvest() -> None:
    qm = HUB
    rock = nearest_nodes("copper_rock", HUB)[0]
    tree = nearest_nodes("tree", HUB)[0]
    wheat = nearest_nodes("wheat_field", HUB)[0]
    flax = nearest_nodes("flax_plant", HUB)[0]
    spots = spots_around(HUB, 5)
    names = ["miner", "lumberjack", "farmer", "flax_picker"]
    nodes = [rock, tree, wheat, flax]
    items = ["copper_ore", "logs", "wheat", "flax"]
    ids = [f"agent_{i}" for i in range(1, 6)]
    p = Plan(ids)
    last = 0
    for i, (node, item) in enumerate(zip(nodes, items)):
        a = ids[i]
        p.at(1, a, "harvest_resource", targetInstance=node.id)
        nxt = p.walk(2, a, (node.x, node.y), spots[i + 1])
        p.at(nxt, a, "transfer_items", targetPlayer="quartermaster", itemKey=item, count=3 if item != "wheat" else 2)
        last = max(last, nxt)
    spawn = [walkable_near(n.x + 2, n.y + 2) for n in nodes]
    gl = "Harvest your resource node (harvest_resource takes it until it is depleted), walk back to the " \
         "quartermaster in Hearthmoor's square and give what you gathered with transfer_items."
    agents = {
        "agent_1": agent("miner", "miner", spawn[0], {"mining": 5}, [], ["pickaxe"], gl + "\nYou need 3 copper_ore delivered."),
        "agent_2": agent("lumberjack", "lumberjack", spawn[1], {"lumberjacking": 5}, [], ["axe"], gl + "\nYou need 3 logs delivered."),
        "agent_3": agent("farmer", "farmer", spawn[2], {"foraging": 5}, [], [], gl + "\nWheat fields need no tool; 2 wheat are needed."),
        "agent_4": agent("flax_picker", "forager", spawn[3], {"foraging": 5}, [], [], gl + "\nFlax plants need no tool; 3 flax are needed."),
        "agent_5": agent("quartermaster", "quartermaster", qm, {"crafting": 5}, [("bread", 3)], [],
                         "You keep the stores at Hearthmoor's square. Stay there, tell the gatherers what is "
                         "still missing, and receive their deliveries."),
    }
    body = {
        "category": "gathering",
        "task": {"name": "Harvest day", "description": "Four gatherers bring copper ore, logs, wheat and flax to "
                                                       "the quartermaster in Hearthmoor."},
        "objectives": {"primary": "The quartermaster receives 3 copper_ore, 3 logs, 2 wheat and 3 flax."},
        "relevant_game_context": f"""
Hearthmoor's square is around {HUB}. Copper rocks need a pickaxe (mining 1), trees an axe (lumberjacking 1);
wheat fields and flax plants are picked by hand (foraging 1). One harvest_resource call gathers a node until
it is depleted. transfer_items needs the two players within {W.data.rules.transfer_range} tiles.
""",
        "max_action_steps": 20, "rounds": 25,
        "shared_plan": "Everyone harvests their node in round 1, walks back to the quartermaster and hands over.",
        "success_criteria": ["Quartermaster has the four deliveries"],
        "verifier": {"checks": [
            {"check": "delivered", "item": "copper_ore", "to": "agent_5", "count": 3},
            {"check": "delivered", "item": "logs", "to": "agent_5", "count": 3},
            {"check": "delivered", "item": "wheat", "to": "agent_5", "count": 2},
            {"check": "delivered", "item": "flax", "to": "agent_5", "count": 3}]},
    }
    write("task_02_harvest", body, agents, p)


def task_03_market() -> None:
    spots = spots_around(HUB, 4)
    spawn = [walkable_near(HUB[0] + dx, HUB[1] + dy) for dx, dy in ((-30, 0), (30, 0), (0, -30), (0, 30))]
    goods = [("apple", 4), ("bread", 3), ("thread", 5), ("coins", 20)]
    names = ["orchardist", "baker", "weaver", "banker"]
    ids = [f"agent_{i}" for i in range(1, 5)]
    p = Plan(ids)
    nxt_all = 1
    for i, a in enumerate(ids):
        nxt_all = max(nxt_all, p.walk(1, a, spawn[i], spots[i]))
    for i, a in enumerate(ids):
        item, count = goods[i]
        p.at(nxt_all, a, "transfer_items", targetPlayer=names[(i + 1) % 4], itemKey=item, count=count)
    agents = {}
    for i, a in enumerate(ids):
        item, count = goods[i]
        want, wcount = goods[(i - 1) % 4]
        agents[a] = agent(names[i], "merchant", spawn[i], {"crafting": 3}, [goods[i]], [], f"""
You are the {names[i]}. You bring {count} {item} to market and you want {wcount} {want}.
The market is Hearthmoor's square around {HUB}. Your {item} go to the {names[(i + 1) % 4]}.
""")
    body = {
        "category": "trading",
        "task": {"name": "Market day", "description": "Four merchants meet in Hearthmoor and trade around the ring."},
        "objectives": {"primary": "Each merchant ends with the goods they came for."},
        "relevant_game_context": "Transfers need both players within 6 tiles. Meet in Hearthmoor's square first.",
        "max_action_steps": 15, "rounds": 25,
        "shared_plan": "Everyone walks to the square; then orchardist->baker apples, baker->weaver bread, "
                       "weaver->banker thread, banker->orchardist coins.",
        "success_criteria": ["All four trades happened"],
        "verifier": {"checks": [
            {"check": "delivered", "item": goods[i][0], "to": ids[(i + 1) % 4], "count": goods[i][1]}
            for i in range(4)]},
    }
    write("task_03_market", body, agents, p)


def task_04_goblins() -> None:
    anvil = hub_spot("anvil")
    goblins = nearest_mobs("goblin", HUB, 2)
    spots = spots_around(anvil, 3, max_d=2)
    ids = ["agent_1", "agent_2", "agent_3"]
    p = Plan(ids)
    p.at(1, "agent_1", "craft_item", skill="Smithing", itemKey="bronze_sword", count=2)
    p.at(2, "agent_1", "transfer_items", targetPlayer="militia_a", itemKey="bronze_sword", count=1)
    p.at(3, "agent_1", "transfer_items", targetPlayer="militia_b", itemKey="bronze_sword", count=1)
    last = 0
    for a, who, g, start_rnd in (("agent_2", "militia_a", goblins[0], 3), ("agent_3", "militia_b", goblins[1], 4)):
        p.at(start_rnd, a, "equip_item", itemKey="bronze_sword")
        r = start_rnd + 1
        # walk until the goblin is within interact range, then attack (the fight walks the rest of the way)
        near = walkable_near(g.x + 4, g.y)
        dist = path_len(spots[1], near)
        if dist > W.data.rules.interact_range - 10:
            r = p.walk(r, a, spots[1], near)
        p.at(r, a, "attack_entity", targetInstance=g.id)
        p.at(r + 1, a, "equip_item", itemKey="cooked_beef")
        last = max(last, r + 1)
    fighter = {"strength": 20, "accuracy": 20, "defense": 15, "health": 20}
    gl = (f"Goblins (level 5, 16 HP, aggressive within 3 tiles) raid the fields around Hearthmoor: {goblins[0].id} "
          f"near ({goblins[0].x},{goblins[0].y}) and {goblins[1].id} near ({goblins[1].x},{goblins[1].y}). Get a sword from the smith, "
          "equip it (equip_item), then attack_entity a goblin. Eat food (equip_item on it) if hurt.")
    agents = {
        "agent_1": agent("smith", "smith", spots[0], {"smithing": 10}, [("bronze_bar", 4)], ["hammer"],
                         "You are the smith at Hearthmoor's anvil. bronze_sword = 2 bronze_bar (Smithing 5, anvil, hammer). "
                         "Forge two and hand one to each militia fighter."),
        "agent_2": agent("militia_a", "fighter", spots[1], fighter, [("cooked_beef", 3)], [], gl),
        "agent_3": agent("militia_b", "fighter", spots[2], fighter, [("cooked_beef", 3)], [], gl),
    }
    body = {
        "category": "combat",
        "task": {"name": "Goblin raid", "description": "The smith arms two militia fighters, who drive off two goblins."},
        "objectives": {"primary": "Both militia fighters wield bronze swords and two goblins are killed; nobody dies."},
        "relevant_game_context": "bronze_sword: 2 bronze_bar, Smithing 5, at an anvil with a hammer. "
                                 "attack_entity walks to a mob within reach and fights to the end; loot goes to the inventory.",
        "max_action_steps": 20, "rounds": 25,
        "shared_plan": "Smith forges 2 swords and gives one to each fighter; each fighter equips and kills one goblin.",
        "success_criteria": ["Two goblins killed", "Both fighters armed", "All alive"],
        "verifier": {"checks": [
            {"check": "kills", "mob": "goblin", "count": 2},
            {"check": "equipped", "item": "bronze_sword", "agent": "agent_2"},
            {"check": "equipped", "item": "bronze_sword", "agent": "agent_3"},
            {"check": "all_alive"}]},
    }
    write("task_04_goblins", body, agents, p)


def task_05_survey() -> None:
    targets = ["ironhold", "oakridge", "goldfield_farm", "east_watchtower"]
    names = ["scout_north", "scout_west", "scout_south", "scout_east"]
    spots = spots_around(HUB, 5)
    ids = [f"agent_{i}" for i in range(1, 6)]
    p = Plan(ids)
    for i, key in enumerate(targets):
        lm = W.landmark(key)
        goal = walkable_near(lm.x, lm.y)
        n = p.walk(1, ids[i], spots[i], goal)
        p.at(n, ids[i], "chat", message=f"{names[i]}: arrived at {lm.name}.")
    p.at(1, "agent_5", "chat", message="Scouts: north to Ironhold, west to Oakridge, south to Goldfield Farm, "
                                       "east to the East Watchtower. Report when you arrive.")
    agents = {ids[i]: agent(names[i], "scout", spots[i], {"health": 10, "defense": 5}, [("apple", 5)], [],
                            f"You are a fast scout. Landmarks: " + ", ".join(
                                f"{W.landmark(k).name} ({W.landmark(k).x},{W.landmark(k).y})" for k in targets)
                            + ". move_character covers at most " + str(MOVE) + " tiles of path per call.")
              for i in range(4)}
    agents["agent_5"] = agent("cartographer", "coordinator", spots[4], {"crafting": 5}, [("thread", 2)], [],
                              "You coordinate the survey from Hearthmoor: assign each scout a different landmark.")
    body = {
        "category": "exploration",
        "task": {"name": "Survey the realm", "description": "Four scouts each reach a different landmark."},
        "objectives": {"primary": "A scout stands at each of Ironhold, Oakridge, Goldfield Farm and the East Watchtower."},
        "relevant_game_context": "Landmark coordinates: " + "; ".join(
            f"{W.landmark(k).name} {W.landmark(k).x},{W.landmark(k).y}" for k in targets),
        "max_action_steps": 20, "rounds": 25,
        "shared_plan": "scout_north -> Ironhold, scout_west -> Oakridge, scout_south -> Goldfield Farm, scout_east -> East Watchtower.",
        "success_criteria": ["Every landmark reached by its scout"],
        "verifier": {"checks": [
            {"check": "at_location", "landmark": k, "agent": ids[i]} for i, k in enumerate(targets)]},
    }
    write("task_05_survey", body, agents, p)


def task_06_provisions() -> None:
    farm = W.landmark("goldfield_farm")
    fire = station("fire", "goldfield_farm")
    cook_at = walkable_near(fire[0], fire[1] - 1)
    keep_at = walkable_near(fire[0] + 2, fire[1] - 1)
    chickens = nearest_mobs("chicken", fire, 2)
    cow = nearest_mobs("cow", fire, 1)[0]
    ids = ["agent_1", "agent_2", "agent_3", "agent_4"]
    p = Plan(ids)
    hunter_back = walkable_near(fire[0] - 2, fire[1] - 1)
    p.at(1, "agent_1", "attack_entity", targetInstance=chickens[0].id)
    p.at(1, "agent_2", "attack_entity", targetInstance=cow.id)
    r1 = p.walk(2, "agent_1", (chickens[0].x, chickens[0].y), hunter_back)
    r2 = p.walk(2, "agent_2", (cow.x, cow.y), walkable_near(fire[0] + 1, fire[1] - 2))
    r = max(r1, r2)
    p.at(r, "agent_1", "transfer_items", targetPlayer="cook", itemKey="raw_chicken", count=1)
    p.at(r, "agent_2", "transfer_items", targetPlayer="cook", itemKey="raw_beef", count=1)
    p.at(r, "agent_3", "craft_item", skill="Cooking", itemKey="cooked_chicken", count=1)
    p.at(r + 1, "agent_3", "craft_item", skill="Cooking", itemKey="cooked_beef", count=1)
    p.at(r + 2, "agent_3", "transfer_items", targetPlayer="keeper", itemKey="cooked_chicken", count=1)
    p.at(r + 3, "agent_3", "transfer_items", targetPlayer="keeper", itemKey="cooked_beef", count=1)
    hunter = {"strength": 10, "accuracy": 10, "defense": 5, "health": 10}
    agents = {
        "agent_1": agent("hunter", "hunter", walkable_near(chickens[0].x + 5, chickens[0].y), hunter, [], ["bronze_sword"],
                         "Hunt a chicken (attack_entity) for raw_chicken and bring it to the cook at the farm's fire."),
        "agent_2": agent("herder", "herder", walkable_near(cow.x + 4, cow.y), hunter, [], ["bronze_dagger"],
                         "Slaughter a cow (attack_entity) for raw_beef and bring it to the cook at the farm's fire."),
        "agent_3": agent("cook", "cook", cook_at, {"cooking": 10}, [], [],
                         f"You cook at Goldfield Farm's fire ({fire[0]},{fire[1]}): cooked_chicken and cooked_beef "
                         "(Cooking 1, within 4 tiles of a fire). Give the cooked food to the keeper."),
        "agent_4": agent("keeper", "keeper", keep_at, {"health": 5}, [], [],
                         "You keep the winter larder. Stay by the fire and collect cooked food."),
    }
    body = {
        "category": "survival",
        "task": {"name": "Provisions before winter",
                 "description": f"At {farm.name}, the team stocks the larder with cooked meat before the frost."},
        "objectives": {"primary": "The keeper holds cooked chicken and cooked beef; everyone is alive and at the farm."},
        "relevant_game_context": "Chickens drop raw_chicken, cows raw_beef. Cooking needs a fire within 4 tiles.",
        "max_action_steps": 20, "rounds": 25,
        "shared_plan": "Hunter kills a chicken, herder a cow; both bring the meat to the cook, who cooks and gives it to the keeper.",
        "success_criteria": ["cooked chicken and beef with the keeper", "all alive", "all at the farm"],
        "verifier": {"checks": [
            {"check": "delivered", "item": "cooked_chicken", "to": "agent_4", "count": 1},
            {"check": "delivered", "item": "cooked_beef", "to": "agent_4", "count": 1},
            {"check": "all_alive"},
            {"check": "at_location", "landmark": "goldfield_farm", "radius": 15}]},
    }
    write("task_06_provisions", body, agents, p)


def task_07_shield_wall() -> None:
    wb = hub_spot("workbench")
    trees = nearest_nodes("tree", wb, 1)
    ids = [f"agent_{i}" for i in range(1, 6)]
    spots = spots_around(wb, 5, max_d=2)
    p = Plan(ids)
    t = trees[0]
    p.at(1, "agent_1", "harvest_resource", targetInstance=t.id)
    r = p.walk(2, "agent_1", (t.x, t.y), spots[0])
    p.at(r, "agent_1", "transfer_items", targetPlayer="carpenter", itemKey="logs", count=3)
    p.at(r + 1, "agent_2", "craft_item", skill="Crafting", itemKey="plank", count=3)
    p.at(r + 2, "agent_2", "transfer_items", targetPlayer="shieldwright", itemKey="plank", count=6)
    p.at(r + 3, "agent_3", "craft_item", skill="Crafting", itemKey="wooden_shield", count=2)
    p.at(r + 4, "agent_3", "transfer_items", targetPlayer="guard_east", itemKey="wooden_shield", count=1)
    p.at(r + 5, "agent_3", "transfer_items", targetPlayer="guard_west", itemKey="wooden_shield", count=1)
    p.at(r + 5, "agent_4", "equip_item", itemKey="wooden_shield")
    p.at(r + 6, "agent_5", "equip_item", itemKey="wooden_shield")
    agents = {
        "agent_1": agent("woodcutter", "lumberjack", walkable_near(t.x + 3, t.y + 2), {"lumberjacking": 5}, [], ["axe"],
                         "Fell a tree (harvest_resource) and bring 3 logs to the carpenter at the workbench."),
        "agent_2": agent("carpenter", "carpenter", spots[1], {"crafting": 5}, [], [],
                         "plank = 1 logs -> 2 planks (Crafting 1, at a workbench). Make 6 and pass them to the shieldwright."),
        "agent_3": agent("shieldwright", "shieldwright", spots[2], {"crafting": 8}, [], ["hammer"],
                         "wooden_shield = 3 planks (Crafting 4, workbench, hammer). Make two, one for each guard."),
        "agent_4": agent("guard_east", "guard", spots[3], {"defense": 10, "health": 10}, [], [],
                         "Receive a wooden shield and equip it (equip_item)."),
        "agent_5": agent("guard_west", "guard", spots[4], {"defense": 10, "health": 10}, [], [],
                         "Receive a wooden shield and equip it (equip_item)."),
    }
    body = {
        "category": "construction",
        "task": {"name": "Shield wall", "description": "Build wooden shields for Hearthmoor's two gate guards."},
        "objectives": {"primary": "Both guards have a wooden shield equipped."},
        "relevant_game_context": "logs -> plank (Crafting, workbench) -> wooden_shield (3 planks, Crafting 4, workbench, hammer).",
        "max_action_steps": 25, "rounds": 25,
        "shared_plan": "Woodcutter: 3 logs to carpenter. Carpenter: 6 planks to shieldwright. Shieldwright: 2 shields, one per guard.",
        "success_criteria": ["guard_east shield equipped", "guard_west shield equipped"],
        "verifier": {"checks": [
            {"check": "equipped", "item": "wooden_shield", "agent": "agent_4"},
            {"check": "equipped", "item": "wooden_shield", "agent": "agent_5"},
            {"check": "crafted", "item": "wooden_shield", "count": 2}]},
    }
    write("task_07_shield_wall", body, agents, p)


def task_08_convoy() -> None:
    """Ten agents: ore to bars to a sword for the guard; logs to planks, flax to thread, wheat, all to the quartermaster."""
    ids = [f"agent_{i}" for i in range(1, 11)]
    names = ["copper_miner", "tin_miner", "smelter", "smith", "guard", "lumberjack", "carpenter", "flax_picker",
             "weaver", "quartermaster"]
    u = dict(zip(ids, names))
    fur, anv, wb, loom = (hub_spot(k) for k in ("furnace", "anvil", "workbench", "loom"))
    centre = walkable_near(*HUB)
    copper = nearest_nodes("copper_rock", HUB)[0]
    tin = nearest_nodes("tin_rock", HUB)[0]
    tree = nearest_nodes("tree", HUB)[0]
    flax = nearest_nodes("flax_plant", HUB)[0]
    p = Plan(ids)
    # round 1: the gatherers harvest; then walk back to the station of whoever takes their goods
    for a, node, back in (("agent_1", copper, fur), ("agent_2", tin, fur), ("agent_6", tree, wb), ("agent_8", flax, loom)):
        p.at(1, a, "harvest_resource", targetInstance=node.id)
        r = p.walk(2, a, (node.x, node.y), walkable_near(back[0], back[1] + (1 if back[1] <= HUB[1] else -1)))
        item = {"agent_1": "copper_ore", "agent_2": "tin_ore", "agent_6": "logs", "agent_8": "flax"}[a]
        to = {"agent_1": "smelter", "agent_2": "smelter", "agent_6": "carpenter", "agent_8": "weaver"}[a]
        p.at(r, a, "transfer_items", targetPlayer=to, itemKey=item, count=2)
    r_ore = max(max(p.steps["agent_1"]), max(p.steps["agent_2"]))
    p.at(r_ore + 1, "agent_3", "craft_item", skill="Smelting", itemKey="bronze_bar", count=2)
    p.at(r_ore + 2, "agent_3", "transfer_items", targetPlayer="smith", itemKey="bronze_bar", count=2)
    p.at(r_ore + 3, "agent_4", "craft_item", skill="Smithing", itemKey="bronze_sword", count=1)
    p.at(r_ore + 4, "agent_4", "transfer_items", targetPlayer="guard", itemKey="bronze_sword", count=1)
    p.at(r_ore + 5, "agent_5", "equip_item", itemKey="bronze_sword")
    r_log = max(p.steps["agent_6"])
    p.at(r_log + 1, "agent_7", "craft_item", skill="Crafting", itemKey="plank", count=2)
    p.at(r_log + 2, "agent_7", "transfer_items", targetPlayer="quartermaster", itemKey="plank", count=4)
    r_flax = max(p.steps["agent_8"])
    p.at(r_flax + 1, "agent_9", "craft_item", skill="Crafting", itemKey="thread", count=2)
    p.at(r_flax + 2, "agent_9", "transfer_items", targetPlayer="quartermaster", itemKey="thread", count=4)
    spawn = {
        "agent_1": walkable_near(copper.x + 2, copper.y + 2), "agent_2": walkable_near(tin.x + 2, tin.y + 2),
        "agent_3": fur, "agent_4": anv, "agent_5": walkable_near(anv[0], anv[1] + 1),
        "agent_6": walkable_near(tree.x + 2, tree.y + 2), "agent_7": wb, "agent_8": walkable_near(flax.x + 2, flax.y + 2),
        "agent_9": loom, "agent_10": centre,
    }
    for a in ids:
        for b in ("agent_3", "agent_4", "agent_5", "agent_7", "agent_9", "agent_10"):
            if a in ("agent_3", "agent_4", "agent_5", "agent_7", "agent_9", "agent_10"):
                d = abs(spawn[a][0] - spawn[b][0]) + abs(spawn[a][1] - spawn[b][1])
                assert d <= W.data.rules.transfer_range, (a, b, d)
    gather_gl = "Harvest your node in round 1 (harvest_resource), walk back to Hearthmoor and hand the goods over."
    skills = {
        "agent_1": {"mining": 5}, "agent_2": {"mining": 5}, "agent_3": {"smelting": 5}, "agent_4": {"smithing": 10},
        "agent_5": {"strength": 10, "accuracy": 10, "defense": 10}, "agent_6": {"lumberjacking": 5},
        "agent_7": {"crafting": 5}, "agent_8": {"foraging": 5}, "agent_9": {"crafting": 5}, "agent_10": {"health": 5},
    }
    gear = {"agent_1": ["pickaxe"], "agent_2": ["pickaxe"], "agent_4": ["hammer"], "agent_6": ["axe"]}
    guide = {
        "agent_1": gather_gl + " 2 copper_ore go to the smelter at the furnace.",
        "agent_2": gather_gl + " 2 tin_ore go to the smelter at the furnace.",
        "agent_3": "bronze_bar = 1 copper_ore + 1 tin_ore (Smelting 1, furnace). Make 2 and give them to the smith.",
        "agent_4": "bronze_sword = 2 bronze_bar (Smithing 5, anvil, hammer). Forge one for the guard.",
        "agent_5": "Wait for the smith's sword and equip it.",
        "agent_6": gather_gl + " 2 logs go to the carpenter at the workbench.",
        "agent_7": "plank = 1 logs -> 2 planks (Crafting 1, workbench). Give 4 planks to the quartermaster.",
        "agent_8": gather_gl + " 2 flax go to the weaver at the loom.",
        "agent_9": "thread = 1 flax -> 2 thread (Crafting 1, loom). Give 4 thread to the quartermaster.",
        "agent_10": "You keep the convoy's stores in Hearthmoor's square: collect planks and thread.",
    }
    agents = {a: agent(u[a], u[a].replace("_", " "), spawn[a], skills[a], [], gear.get(a, []), guide[a]) for a in ids}
    body = {
        "category": "coordination",
        "task": {"name": "Outfit the convoy",
                 "description": "Ten specialists outfit a convoy: a bronze sword for its guard, planks and thread for its stores."},
        "objectives": {"primary": "The guard wields a bronze sword; the quartermaster holds 4 planks and 4 thread."},
        "relevant_game_context": "bronze_bar: copper_ore + tin_ore at a furnace. bronze_sword: 2 bronze_bar, anvil, hammer. "
                                 "plank: 1 logs -> 2 (workbench). thread: 1 flax -> 2 (loom). Stations are in Hearthmoor "
                                 f"around {HUB}. Transfers need 6 tiles or less between players.",
        "max_action_steps": 30, "rounds": 30,
        "shared_plan": "Miners -> smelter (ore), smelter -> smith (bars), smith -> guard (sword); lumberjack -> carpenter "
                       "-> quartermaster (planks); flax picker -> weaver -> quartermaster (thread).",
        "success_criteria": ["guard armed", "planks and thread in the stores"],
        "verifier": {"checks": [
            {"check": "equipped", "item": "bronze_sword", "agent": "agent_5"},
            {"check": "delivered", "item": "plank", "to": "agent_10", "count": 4},
            {"check": "delivered", "item": "thread", "to": "agent_10", "count": 4},
            {"check": "all_alive"}]},
    }
    write("task_08_convoy", body, agents, p)


TASKS = [task_01_staff, task_02_harvest, task_03_market, task_04_goblins, task_05_survey, task_06_provisions,
         task_07_shield_wall, task_08_convoy]


def check() -> int:
    import asyncio

    from agentworld.core.play.episode import Episode
    from agentworld.core.tasks.task import load_suite
    from agentworld.core.play.policies import IdlePolicy, OraclePolicy, PolicyTeam

    bad = 0
    for task in load_suite("main"):
        for seed in (0, 1, 2):
            r = asyncio.run(Episode(task, PolicyTeam(OraclePolicy(task)), seed=seed).run())
            print(f"{task.id} oracle seed {seed}: {r.success} rounds {r.rounds} {r.message} [{r.end_reason}]")
            bad += not r.success
        r = asyncio.run(Episode(task, PolicyTeam(IdlePolicy()), seed=0).run())
        print(f"{task.id} idle: {r.success} {r.message}")
        bad += r.success
    return bad


if __name__ == "__main__":
    for make in TASKS:
        make()
    print(f"wrote {len(TASKS)} tasks to {OUT}")
    if "--check" in sys.argv:
        sys.exit(1 if check() else 0)
