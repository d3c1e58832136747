"""A small hand-built world (40 x 30 tiles) for fast engine tests, made from the real data-pack models.

Layout (x to the right, y down)::

    x 0..29   mainland: meadow, with a forest strip (x 0..14, y 0..9)
    x 15      a mountain wall from y 0 to y 20 (paths go round it through y 21..29)
    x 30..39  sea, with an island (x 34..38, y 2..8) reachable only by the boat portal at (28,5)

Nodes, mobs and stations sit at fixed tiles (see the tables below) so tests can name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agentworld.core.world.api import PlayerSpec, StackSpec
from agentworld.core.world.gamemap import GameMap
from agentworld.core.world.generate import MobPlacement, NodePlacement, StationPlacement
from agentworld.core.world.models import (BiomeDef, Drop, ItemDef, ItemStats, Landmark, MapSpec, MobTypeDef,
                                          NodeTypeDef, NpcDef, Portal, RecipeDef, Rules, WorldData, Yield)

W, H = 40, 30
MEADOW, FOREST, MOUNTAIN, SEA = 0, 1, 2, 3

BIOMES = [
    BiomeDef(key="meadow", name="Meadow", color=(120, 200, 90)),
    BiomeDef(key="forest", name="Forest", color=(30, 120, 40)),
    BiomeDef(key="mountain", name="Mountain", color=(120, 120, 120), walkable=False),
    BiomeDef(key="sea", name="Sea", color=(30, 60, 200), walkable=False),
]

ITEMS = [
    ItemDef(key="logs", name="Logs", kind="material"),
    ItemDef(key="willow_logs", name="Willow Logs", kind="material"),
    ItemDef(key="copper_ore", name="Copper Ore", kind="material"),
    ItemDef(key="copper_bar", name="Copper Bar", kind="material"),
    ItemDef(key="stick", name="Stick", kind="material"),
    ItemDef(key="feather", name="Feather", kind="material"),
    ItemDef(key="bones", name="Bones", kind="material"),
    ItemDef(key="raw_trout", name="Raw Trout", kind="food"),
    ItemDef(key="cooked_trout", name="Cooked Trout", kind="food", heal=8),
    ItemDef(key="berries", name="Berries", kind="food", heal=2),
    ItemDef(key="health_potion", name="Health Potion", kind="potion", heal=30),
    ItemDef(key="cave_key", name="Cave Key", kind="quest"),
    ItemDef(key="bronze_axe", name="Bronze Axe", kind="tool", slot="weapon", tool_type="axe", tool_tier=1,
            attack_style="melee", stats=ItemStats(strength=1), stackable=False),
    ItemDef(key="steel_axe", name="Steel Axe", kind="tool", slot="weapon", tool_type="axe", tool_tier=2,
            attack_style="melee", requirements={"lumberjacking": 10}, stats=ItemStats(strength=2), stackable=False),
    ItemDef(key="bronze_pickaxe", name="Bronze Pickaxe", kind="tool", slot="weapon", tool_type="pickaxe", tool_tier=1,
            attack_style="melee", stackable=False),
    ItemDef(key="fishing_rod", name="Fishing Rod", kind="tool", tool_type="fishing_rod", tool_tier=1, stackable=False),
    ItemDef(key="hammer", name="Hammer", kind="tool", tool_type="hammer", stackable=False),
    ItemDef(key="knife", name="Knife", kind="tool", tool_type="knife", stackable=False),
    ItemDef(key="copper_sword", name="Copper Sword", kind="weapon", slot="weapon", attack_style="melee",
            stats=ItemStats(accuracy=3, strength=4), stackable=False),
    ItemDef(key="iron_sword", name="Iron Sword", kind="weapon", slot="weapon", attack_style="melee",
            requirements={"strength": 20}, stats=ItemStats(accuracy=6, strength=8), stackable=False),
    ItemDef(key="shortbow", name="Shortbow", kind="weapon", slot="weapon", attack_style="ranged",
            stats=ItemStats(archery=3), stackable=False),
    ItemDef(key="arrow", name="Arrow", kind="ammo", slot="ammo", stats=ItemStats(archery=1)),
    ItemDef(key="oak_staff", name="Oak Staff", kind="weapon", slot="weapon", attack_style="magic",
            stats=ItemStats(magic=4), stackable=False),
    ItemDef(key="leather_body", name="Leather Body", kind="armour", slot="body", stats=ItemStats(defense=3),
            stackable=False),
    ItemDef(key="dragon_plate", name="Dragon Plate", kind="armour", slot="body", stats=ItemStats(defense=200),
            stackable=False),
]

RECIPES = [
    RecipeDef(key="copper_bar", skill="smelting", inputs={"copper_ore": 2}, outputs={"copper_bar": 1},
              station="furnace", xp=15),
    RecipeDef(key="copper_sword", skill="smithing", level=2, inputs={"copper_bar": 2}, outputs={"copper_sword": 1},
              station="anvil", tool="hammer", xp=30),
    RecipeDef(key="stick", skill="fletching", inputs={"logs": 1}, outputs={"stick": 2}, tool="knife", xp=5),
    RecipeDef(key="willow_sticks", skill="fletching", inputs={"willow_logs": 1}, outputs={"stick": 3}, tool="knife", xp=8),
    RecipeDef(key="cooked_trout", skill="cooking", inputs={"raw_trout": 1}, outputs={"cooked_trout": 1},
              station="fire", xp=10),
    RecipeDef(key="oak_staff", skill="crafting", level=5, inputs={"stick": 2, "feather": 1}, outputs={"oak_staff": 1},
              station="workbench", xp=25),
]

NODE_TYPES = [
    NodeTypeDef(key="oak_tree", name="Oak Tree", kind="tree", skill="lumberjacking", tool="axe",
                yields=[Yield(item="logs")], harvests=3, respawn_rounds=5, xp=25),
    NodeTypeDef(key="willow_tree", name="Willow Tree", kind="tree", skill="lumberjacking", level=10, tool="axe",
                yields=[Yield(item="willow_logs")], harvests=2, respawn_rounds=8, xp=40),
    NodeTypeDef(key="copper_rock", name="Copper Rock", kind="rock", skill="mining", tool="pickaxe",
                yields=[Yield(item="copper_ore")], harvests=2, respawn_rounds=4, xp=20),
    NodeTypeDef(key="trout_spot", name="Trout Spot", kind="fishing_spot", skill="fishing", tool="fishing_rod",
                yields=[Yield(item="raw_trout")], harvests=3, respawn_rounds=3, xp=15),
    NodeTypeDef(key="berry_bush", name="Berry Bush", kind="plant", skill="foraging",
                yields=[Yield(item="berries", min=1, max=3), Yield(item="feather", chance=0.5)], harvests=2,
                respawn_rounds=2, xp=5),
]

MOB_TYPES = [
    MobTypeDef(key="chicken", name="Chicken", level=1, hp=3, attack=1, accuracy=1, defense=0, respawn_rounds=3,
               drops=[Drop(item="feather", min=1, max=3), Drop(item="bones")], xp=5),
    MobTypeDef(key="goblin", name="Goblin", level=3, hp=12, attack=3, accuracy=4, defense=3, respawn_rounds=6,
               drops=[Drop(item="bones"), Drop(item="copper_ore", chance=0.5)], xp=20),
    MobTypeDef(key="wolf", name="Wolf", level=5, hp=20, attack=4, accuracy=6, defense=4, aggro_range=3,
               respawn_rounds=8, drops=[Drop(item="bones")], xp=30),
    MobTypeDef(key="dragon", name="Dragon", level=40, hp=300, attack=30, accuracy=60, defense=60, aggro_range=2,
               respawn_rounds=30, drops=[Drop(item="dragon_plate")], xp=500, boss=True),
]

# instance tables: id -> (type, x, y)
NODES = {
    "oak_tree#1": ("oak_tree", 5, 5), "oak_tree#2": ("oak_tree", 7, 5), "willow_tree#1": ("willow_tree", 10, 8),
    "copper_rock#1": ("copper_rock", 5, 12), "trout_spot#1": ("trout_spot", 30, 15),
    "berry_bush#1": ("berry_bush", 3, 20), "oak_tree#3": ("oak_tree", 25, 5),
}
MOBS = {
    "chicken#1": ("chicken", 3, 3), "goblin#1": ("goblin", 12, 3), "wolf#1": ("wolf", 22, 22),
    "dragon#1": ("dragon", 37, 4),
}
STATIONS = [("furnace", 8, 18), ("anvil", 9, 18), ("fire", 10, 18), ("workbench", 11, 18)]


@dataclass
class FixtureWorld:
    """Same fields as ``datapack.LoadedWorld`` (the engine reads data, map, nodes, mobs, stations)."""

    data: WorldData
    map: GameMap
    nodes: list[NodePlacement]
    mobs: list[MobPlacement]
    stations: list[StationPlacement]
    extra: dict = field(default_factory=dict)


def build_world(rules: Rules | None = None) -> FixtureWorld:
    biome = np.full((H, W), MEADOW, dtype=np.uint8)
    biome[0:10, 0:15] = FOREST
    biome[0:21, 15] = MOUNTAIN
    biome[:, 30:] = SEA
    biome[2:9, 34:39] = MEADOW  # the island
    walkable = np.array([[BIOMES[b].walkable for b in row] for row in biome], dtype=bool)
    for _, x, y in NODES.values():
        walkable[y, x] = False  # node tiles are blocked
    gm = GameMap(biome, [b.key for b in BIOMES], walkable, version="fixture-1")
    data = WorldData(
        version="fixture-1",
        map=MapSpec(width=W, height=H, seed=1, version="fixture-1"),
        biomes=BIOMES, items=ITEMS, recipes=RECIPES, node_types=NODE_TYPES, mob_types=MOB_TYPES,
        landmarks=[Landmark(key="millbrook", name="Millbrook", kind="village", x=9, y=19, radius=5,
                            stations=["furnace", "anvil", "fire", "workbench"]),
                   Landmark(key="dragon_isle", name="Dragon Isle", kind="island", x=36, y=5, radius=4)],
        portals=[Portal(key="isle_boat", name="Boat to Dragon Isle", kind="boat", x=28, y=5, to_x=34, to_y=6),
                 Portal(key="old_cave", name="Old Cave", kind="cave", x=2, y=28, to_x=20, to_y=28, two_way=False,
                        requires_item="cave_key", requires_level={"mining": 5})],
        npcs=[NpcDef(key="elder", name="Elder Rowan", x=6, y=22, says="The furnace is north of me.")],
        rules=rules or Rules(),
    )
    return FixtureWorld(
        data=data, map=gm,
        nodes=[NodePlacement(i, t, x, y) for i, (t, x, y) in NODES.items()],
        mobs=[MobPlacement(i, t, x, y) for i, (t, x, y) in MOBS.items()],
        stations=[StationPlacement(k, x, y, "millbrook") for k, x, y in STATIONS],
    )


_CACHE: FixtureWorld | None = None


def fixture_world() -> FixtureWorld:
    """The fixture is immutable (all state lives in the engine), so one copy serves every test."""
    global _CACHE
    if _CACHE is None:
        _CACHE = build_world()
    return _CACHE


def make_world(seed: int = 0, rules: dict | None = None, players: list[PlayerSpec] | None = None, **task_blocks):
    """``task_blocks``: a task's ``mobs=`` and ``nodes=`` (issue 26's moving mobs and finite nodes)."""
    from agentworld.core.world.engine import EmbeddedWorld

    w = EmbeddedWorld(fixture_world(), seed=seed, rules=rules, **task_blocks)
    for spec in players if players is not None else default_players():
        w.add_player(spec)
    return w


def spec(agent_id: str, username: str, x: int, y: int, skills: dict | None = None,
         inventory: dict | None = None, equipment: list[str] | None = None) -> PlayerSpec:
    return PlayerSpec(agent_id=agent_id, username=username, x=x, y=y, skills=skills or {},
                      inventory=[StackSpec(item=k, count=n) for k, n in (inventory or {}).items()],
                      equipment=[StackSpec(item=k) for k in (equipment or [])])


def default_players() -> list[PlayerSpec]:
    return [
        spec("agent_1", "woodcutter", 6, 6, inventory={"bronze_axe": 1, "knife": 1}),
        spec("agent_2", "miner", 5, 13, skills={"mining": 5}, inventory={"bronze_pickaxe": 1}),
        spec("agent_3", "smith", 8, 19, skills={"smithing": 5, "crafting": 5},
             inventory={"copper_ore": 4, "hammer": 1}),
    ]
