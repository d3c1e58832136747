"""Schema of the world data pack (``core/world/data/*.yaml``).

The data pack is our own content. Everything the engine knows about items, recipes, resources, mobs,
places and rules is declared here and validated on load; the engine holds no content of its own.
"""

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from .factories import empty_list

# the skill lists are written once, as the Literal types the schema validates against
GatheringSkill = Literal["lumberjacking", "mining", "fishing", "foraging"]
ProductionSkill = Literal["crafting", "smithing", "smelting", "fletching", "cooking"]
CombatSkill = Literal["accuracy", "strength", "defense", "health", "magic", "archery"]
Skill = Literal[GatheringSkill, ProductionSkill, CombatSkill]
GATHERING_SKILLS: tuple[str, ...] = get_args(GatheringSkill)
PRODUCTION_SKILLS: tuple[str, ...] = get_args(ProductionSkill)
COMBAT_SKILLS: tuple[str, ...] = get_args(CombatSkill)
SKILLS: tuple[str, ...] = GATHERING_SKILLS + PRODUCTION_SKILLS + COMBAT_SKILLS
EquipSlot = Literal["weapon", "shield", "head", "body", "legs", "boots", "gloves", "ring", "amulet", "ammo"]
ItemKind = Literal["tool", "weapon", "armour", "material", "food", "potion", "ammo", "gem", "quest", "misc"]
ToolType = Literal["axe", "pickaxe", "fishing_rod", "sickle", "hammer", "knife", "needle", "tinderbox"]
AttackStyle = Literal["melee", "ranged", "magic"]
Station = Literal["furnace", "anvil", "fire", "workbench", "loom"]


class _Strict(BaseModel):
    # defer_build: a world loaded from the built-world cache is unpickled, never validated, so most of these
    # models never need their validators; each is built on its first validation (a data pack being read)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ItemStats(_Strict):
    accuracy: int = 0
    strength: int = 0
    defense: int = 0
    magic: int = 0
    archery: int = 0


class ItemDef(_Strict):
    key: str
    name: str
    kind: ItemKind
    description: str = ""
    slot: EquipSlot | None = None  # where it is worn/wielded; None = cannot be equipped
    tool_type: ToolType | None = None  # gathering/crafting tool it acts as (from inventory or equipped)
    tool_tier: int = 0  # better tools gather faster / reach higher nodes
    attack_style: AttackStyle | None = None  # weapons only
    requirements: dict[Skill, int] = Field(default_factory=dict)  # to equip (or use, for tools)
    stats: ItemStats = ItemStats()
    heal: int = 0  # HP restored when eaten / drunk (food, potion)
    value: int = 1
    stackable: bool = True  # equipment is not stackable: one slot per piece


class RecipeDef(_Strict):
    key: str
    skill: ProductionSkill
    level: int = 1
    inputs: dict[str, int]  # item key -> count consumed per craft
    outputs: dict[str, int]  # item key -> count produced per craft
    station: Station | None = None  # must be within rules.station_range of one
    tool: ToolType | None = None  # must be in the inventory or equipped
    xp: int = 10


class Yield(_Strict):
    item: str
    min: int = 1
    max: int = 1
    chance: float = 1.0


class NodeTypeDef(_Strict):
    key: str
    name: str
    kind: Literal["tree", "rock", "fishing_spot", "plant"]
    skill: GatheringSkill
    level: int = 1
    tool: ToolType | None = None  # None: bare hands (foraging)
    yields: list[Yield]
    harvests: int = 3  # gathers before the node is depleted (one harvest_resource call takes them all)
    respawn_rounds: int = 5
    xp: int = 10  # per gather
    biomes: list[str] = Field(default_factory=empty_list)  # where the generator places it
    density: float = 0.0  # nodes per 10,000 walkable tiles of those biomes


class Drop(Yield):
    """What a killed mob leaves: the same fields as a node's ``Yield``."""


class MobTypeDef(_Strict):
    key: str
    name: str
    level: int
    hp: int
    attack: int  # max hit before modifiers
    accuracy: int
    defense: int
    attack_style: AttackStyle = "melee"
    aggro_range: int = 0  # 0: passive; otherwise engages agents that come within this many tiles (a walk or the tick)
    respawn_rounds: int = 10
    # movement (roaming.py): a leash radius to wander within around the spawn (Manhattan; 0 = stays put), or a
    # patrol route walked in a loop from the spawn (waypoints as offsets from each mob's spawn); `speed` tiles a round
    roam: int = Field(0, ge=0, le=50)
    patrol: list[tuple[int, int]] = Field(default_factory=empty_list)
    speed: int = Field(1, ge=1, le=20)
    drops: list[Drop] = Field(default_factory=empty_list)
    xp: int = 10
    boss: bool = False
    description: str = ""


class MobSpawn(_Strict):
    mob: str
    area: tuple[int, int, int, int] | None = None  # x0, y0, x1, y1 inclusive; None = anywhere in `biomes`
    biomes: list[str] = Field(default_factory=empty_list)
    count: int = 1


class BiomeDef(_Strict):
    key: str
    name: str
    color: tuple[int, int, int]  # for rendering
    walkable: bool = True
    description: str = ""


class Landmark(_Strict):
    key: str
    name: str
    kind: Literal["village", "forge", "camp", "dock", "ruin", "shrine", "mine", "farm", "tower", "dungeon", "cave", "island", "castle"]
    x: int
    y: int
    radius: int = 6
    stations: list[Station] = Field(default_factory=empty_list)
    description: str = ""


class Portal(_Strict):
    key: str
    name: str
    kind: Literal["door", "cave", "dungeon", "boat", "stairs", "teleport"]
    x: int
    y: int
    to_x: int
    to_y: int
    two_way: bool = True  # a return portal sits at the destination
    # what the return side is called where it stands (required when two_way): it leads somewhere else than
    # the entrance, so it cannot borrow the entrance's name ("Ferry to Palm Isle" on the island sent pilots
    # the wrong way); written by hand rather than derived, since a landmark's name does not say how one goes
    return_name: str | None = None
    requires_item: str | None = None  # e.g. a key or a ticket, kept (not consumed)
    requires_level: dict[Skill, int] = Field(default_factory=dict)


class NpcDef(_Strict):
    key: str
    name: str
    x: int
    y: int
    says: str  # shown in the observation of agents nearby


class XpCurve(_Strict):
    """xp needed to reach level L (L >= 2) is round(base * (L - 1) ** exponent); level 1 is 0 xp."""

    base: float = 30.0
    exponent: float = 2.2
    max_level: int = 99


class Rules(_Strict):
    """World rules: data, overridable per task (``world_rules:`` in the task YAML).

    Every rule is range-checked (finite numbers, positive ranges, non-negative regeneration): a task file
    is untrusted input, and a rule out of range would give a world the engine was never meant to run
    (an agent alive at -62 HP from negative regeneration, a NaN respawn time, a billion inventory slots)."""

    move_range: int = Field(60, ge=1, le=100_000)  # path length in tiles one move_character call covers
    interact_range: int = Field(60, ge=0, le=100_000)  # harvest/attack/pickup walk to a target this far away (path length) first
    transfer_range: int = Field(6, ge=0, le=100_000)  # max Manhattan distance between two players for transfer_items
    chat_radius: int = Field(40, ge=0, le=100_000)  # send_chat_message without global reaches players this close
    station_range: int = Field(4, ge=0, le=100_000)  # crafting at a furnace/anvil/fire/workbench/loom needs one this close
    portal_range: int = Field(1, ge=0, le=100_000)  # enter_portal works when standing this close to the portal
    view_radius: int = Field(12, ge=0, le=1_000)  # entities within this Manhattan distance appear in the observation
    max_nearby: int = Field(24, ge=0, le=1_000)  # at most this many nearby entities are listed (closest first)
    hp_regen_per_round: int = Field(1, ge=0, le=100_000)  # HP regenerated by every living agent at the round tick
    mob_regen_per_round: int = Field(2, ge=0, le=100_000)  # HP regenerated by wounded mobs at the round tick
    respawn_scale: float = Field(1.0, ge=0, le=1_000, allow_inf_nan=False)  # multiplies every node/mob respawn time
    death: Literal["out", "respawn"] = "out"  # out: a dead agent leaves the episode; respawn: back at spawn, items dropped
    inventory_slots: int = Field(28, ge=1, le=1_000)
    max_fight_exchanges: int = Field(60, ge=1, le=100_000)  # a fight ends after this many exchanges even if nobody died
    auto_eat_below: float = Field(0.35, ge=0, le=1, allow_inf_nan=False)  # in a fight, eat the best food when HP falls below this fraction of max
    retreat_below: float = Field(0.0, ge=0, le=1, allow_inf_nan=False)  # in a fight, disengage when HP falls below this fraction (0 = fight to the end)
    aggro: bool = True  # aggressive mobs attack at the round tick (and, with walk_aggro, engage a walk)
    walk_aggro: bool = True  # an aggressive mob stops a walk that enters its range and strikes (combat.py)
    roaming: bool = True  # mobs with a leash or a patrol move every round (false: every mob stays at its spawn)
    carry_limit: int = Field(0, ge=0, le=1_000_000)  # most item pieces one agent carries (inventory; 0 = no limit)


class MapSpec(_Strict):
    """Compact description from which the tile map is generated (deterministically)."""

    width: int
    height: int
    seed: int
    version: str
    # the rest is free-form for the generator (regions, roads, lakes, island, dungeons...)
    layout: dict = Field(default_factory=dict)
    tiles_sha256: str | None = None  # pinned hash of the generated tiles: a changed map is refused


class WorldData(_Strict):
    """The whole data pack, as loaded from ``core/world/data/``."""

    version: str
    map: MapSpec
    biomes: list[BiomeDef]
    items: list[ItemDef]
    recipes: list[RecipeDef]
    node_types: list[NodeTypeDef]
    mob_types: list[MobTypeDef]
    mob_spawns: list[MobSpawn] = Field(default_factory=empty_list)
    landmarks: list[Landmark] = Field(default_factory=empty_list)
    portals: list[Portal] = Field(default_factory=empty_list)
    npcs: list[NpcDef] = Field(default_factory=empty_list)
    xp_curve: XpCurve = XpCurve()
    rules: Rules = Rules()
