"""Load the world data pack and build the world from it: ``load_world()`` is the one entry point.

``load_world_data(path)`` reads ``*.yaml`` from a pack directory (default ``core/world/data/``), validates
every entry against ``models.py`` and cross-checks the references between files (recipe inputs, drops,
spawns, biomes...). ``load_world()`` then generates the map and placements (``generate.py``), refuses a map
whose tiles hash differs from the pinned ``map.tiles_sha256``, and wraps everything in a ``LoadedWorld``
with lookups and a spatial index. It is cached per process and in the user cache directory
(``buildcache.py``): treat the result as read-only.
"""

from __future__ import annotations

import difflib
import functools
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import ValidationError

from .buildcache import cached_build
from .gamemap import GameMap
from .placements import MobPlacement, NodePlacement, StationPlacement, placements_sha256
from .models import ItemDef, Landmark, MobTypeDef, NodeTypeDef, NpcDef, Portal, RecipeDef, WorldData
from .stats import XpTable

if TYPE_CHECKING:
    from .generate import Generated

__all__ = [
    "DATA_DIR", "REQUIRED_ITEMS", "DataPackError", "LoadedWorld", "MobPlacement", "NodePlacement",
    "StationPlacement", "PortalEnd", "load_world", "load_world_data", "check_pack", "obtainable_items",
    "pin_tiles_hash", "portal_ends", "recipes_by_output",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
# the order in which a pack's files are read; other *.yaml files in the directory are read after them
PACK_FILES = ("world.yaml", "map.yaml", "items.yaml", "recipes.yaml", "nodes.yaml", "mobs.yaml")
# item keys that task files rely on; a pack without them is refused
REQUIRED_ITEMS = ("logs", "stick", "staff", "bead", "axe", "pickaxe", "fishing_rod", "knife", "hammer",
                  "copper_ore", "tin_ore", "bronze_bar", "iron_ore", "iron_bar", "coal", "raw_trout",
                  "cooked_trout", "apple", "bread")
BUCKET = 16  # spatial index cell size in tiles


class DataPackError(ValueError):
    """The data pack is invalid; the message lists every problem with its file, entry and a fix."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("world data pack is invalid:\n  - " + "\n  - ".join(problems))


# -- reading and validating ----------------------------------------------------------------------------
def _read_pack(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Merge the top-level sections of every YAML file; returns (sections, section -> file name)."""
    import yaml  # only to build a world: a cached one is unpickled

    from ..yamlio import YamlInputError, load_yaml

    if not path.is_dir():
        raise DataPackError([f"{path}: not a directory; pass the folder that holds world.yaml, items.yaml, ..."])
    files = [path / f for f in PACK_FILES if (path / f).exists()]
    files += sorted(p for p in path.glob("*.yaml") if p.name not in PACK_FILES)
    missing = [f for f in PACK_FILES if not (path / f).exists()]
    if missing:
        raise DataPackError([f"{path}: missing {', '.join(missing)}; a pack needs {', '.join(PACK_FILES)}"])
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    problems = []
    for f in files:
        try:
            # the shipped pack is tested data; a user's pack gets the hostile-input checks (duplicate keys...)
            doc = load_yaml(f.read_text(encoding="utf-8"), checked=path.resolve() != DATA_DIR.resolve(),
                            max_nodes=2_000_000) or {}
        except YamlInputError as e:
            problems.append(f"{f.name}: {e}")
            continue
        except yaml.YAMLError as e:
            problems.append(f"{f.name}: not valid YAML ({e}); fix the syntax at the position shown")
            continue
        if not isinstance(doc, dict):
            problems.append(f"{f.name}: the top level must be a mapping of sections (items:, recipes:, ...)")
            continue
        for section, value in doc.items():
            if section in merged:
                problems.append(f"{f.name}: section `{section}` is also in {origin[section]}; keep it in one file")
                continue
            merged[section] = value
            origin[section] = f.name
    if problems:
        raise DataPackError(problems)
    return merged, origin


def _describe_validation(e: ValidationError, raw: dict, origin: dict[str, str]) -> list[str]:
    out = []
    for err in e.errors():
        loc = err["loc"]
        section = str(loc[0]) if loc else "?"
        fname = origin.get(section, "world.yaml")
        where = section
        rest = loc[1:]
        if rest and isinstance(rest[0], int) and isinstance(raw.get(section), list):
            entry = raw[section][rest[0]]
            key = entry.get("key") or entry.get("mob") if isinstance(entry, dict) else None
            where = f"{section}[{rest[0]}]" + (f" ({key})" if key else "")
            rest = rest[1:]
        field = ".".join(str(p) for p in rest)
        msg = err["msg"]
        if err["type"] == "missing":
            fix = "add it"
        elif err["type"] == "extra_forbidden":
            fix = "remove it or check its spelling"
        else:
            fix = f"got {err.get('input')!r}"
        out.append(f"{fname}: {where}{'.' + field if field else ''}: {msg} ({fix})")
    return out


def load_world_data(path: str | Path | None = None) -> WorldData:
    """Read and validate a data pack directory (default: the built-in pack). Raises DataPackError."""
    pack = Path(path) if path is not None else DATA_DIR
    raw, origin = _read_pack(pack)
    if "version" not in raw:
        raise DataPackError(["world.yaml: `version` is missing; add e.g. version: \"1.0\""])
    try:
        data = WorldData.model_validate(raw)
    except ValidationError as e:
        raise DataPackError(_describe_validation(e, raw, origin)) from None
    problems = check_pack(data)
    if problems:
        raise DataPackError(problems)
    return data


def obtainable_items(data: WorldData) -> set[str]:
    """Items an agent can come by: node yields, drops of mobs that spawn, and what recipes make from those."""
    have = {y.item for nt in data.node_types for y in nt.yields}
    spawned = {s.mob for s in data.mob_spawns}
    have |= {d.item for m in data.mob_types if m.key in spawned for d in m.drops}
    changed = True
    while changed:
        changed = False
        for r in data.recipes:
            if all(i in have for i in r.inputs) and not all(o in have for o in r.outputs):
                have |= set(r.outputs)
                changed = True
    return have


def _dupes(keys: Iterable[str]) -> list[str]:
    seen, dup = set(), []
    for k in keys:
        if k in seen:
            dup.append(k)
        seen.add(k)
    return dup


def check_pack(data: WorldData) -> list[str]:
    """Cross-reference checks between the pack's files. Returns problems (empty = valid)."""
    p: list[str] = []
    items = {i.key: i for i in data.items}
    biomes = {b.key for b in data.biomes}
    mobs = {m.key for m in data.mob_types}
    w, h = data.map.width, data.map.height
    for fname, what, keys in [("items.yaml", "item", [i.key for i in data.items]),
                              ("recipes.yaml", "recipe", [r.key for r in data.recipes]),
                              ("nodes.yaml", "node type", [n.key for n in data.node_types]),
                              ("mobs.yaml", "mob type", [m.key for m in data.mob_types]),
                              ("map.yaml", "biome", [b.key for b in data.biomes]),
                              ("map.yaml", "landmark", [lm.key for lm in data.landmarks]),
                              ("map.yaml", "portal", [pt.key for pt in data.portals]),
                              ("mobs.yaml", "npc", [n.key for n in data.npcs])]:
        for k in _dupes(keys):
            p.append(f"{fname}: {what} key {k!r} is defined twice; rename or remove one")
    for k in REQUIRED_ITEMS:
        if k not in items:
            p.append(f"items.yaml: required item {k!r} is missing (tasks use it); add it")
    tool_types = {i.tool_type for i in data.items if i.tool_type}
    for it in data.items:
        if it.kind == "weapon" and (it.slot != "weapon" or it.attack_style is None):
            p.append(f"items.yaml: item {it.key}: a weapon needs slot: weapon and an attack_style")
        if it.slot is not None and it.slot != "ammo" and it.stackable:
            p.append(f"items.yaml: item {it.key}: equipment (slot {it.slot}) must have stackable: false")
        if it.kind in ("food", "potion") and it.heal <= 0:
            p.append(f"items.yaml: item {it.key}: {it.kind} needs heal > 0")
    max_level = data.xp_curve.max_level
    for r in data.recipes:
        where = f"recipes.yaml: recipe {r.key}"
        if not r.outputs:
            p.append(f"{where}: outputs is empty; list what one craft produces")
        for k, n in list(r.inputs.items()) + list(r.outputs.items()):
            if k not in items:
                p.append(f"{where}: item {k!r} is not in items.yaml; add it or fix the key")
            if n < 1:
                p.append(f"{where}: count of {k!r} must be >= 1")
        if r.tool and r.tool not in tool_types:
            p.append(f"{where}: tool {r.tool!r} is not the tool_type of any item; add such an item")
        if not 1 <= r.level <= max_level:
            p.append(f"{where}: level {r.level} is outside 1..{max_level}")
    for nt in data.node_types:
        where = f"nodes.yaml: node type {nt.key}"
        for y in nt.yields:
            if y.item not in items:
                p.append(f"{where}: yield {y.item!r} is not in items.yaml; add it or fix the key")
        for b in nt.biomes:
            if b not in biomes:
                p.append(f"{where}: biome {b!r} is not in map.yaml biomes; use one of {', '.join(sorted(biomes))}")
        if nt.tool and nt.tool not in tool_types:
            p.append(f"{where}: tool {nt.tool!r} is not the tool_type of any item; add such an item")
    for m in data.mob_types:
        for d in m.drops:
            if d.item not in items:
                p.append(f"mobs.yaml: mob type {m.key}: drop {d.item!r} is not in items.yaml; add it or fix the key")
        if m.hp < 1:
            p.append(f"mobs.yaml: mob type {m.key}: hp must be >= 1")
    for i, s in enumerate(data.mob_spawns):
        where = f"mobs.yaml: mob_spawns[{i}]"
        if s.mob not in mobs:
            p.append(f"{where}: mob {s.mob!r} is not in mob_types; add it or fix the key")
        for b in s.biomes:
            if b not in biomes:
                p.append(f"{where} ({s.mob}): biome {b!r} is not in map.yaml biomes")
        if s.area is None and not s.biomes:
            p.append(f"{where} ({s.mob}): give an area [x0, y0, x1, y1] or biomes")
        if s.area is not None:
            x0, y0, x1, y1 = s.area
            if not (0 <= x0 <= x1 < w and 0 <= y0 <= y1 < h):
                p.append(f"{where} ({s.mob}): area {list(s.area)} is not inside the {w} x {h} map (x0<=x1, y0<=y1)")
    for lm in data.landmarks:
        if not (0 <= lm.x < w and 0 <= lm.y < h):
            p.append(f"map.yaml: landmark {lm.key} at ({lm.x}, {lm.y}) is outside the {w} x {h} map")
    for pt in data.portals:
        for x, y, end in ((pt.x, pt.y, "x, y"), (pt.to_x, pt.to_y, "to_x, to_y")):
            if not (0 <= x < w and 0 <= y < h):
                p.append(f"map.yaml: portal {pt.key} ({end}) = ({x}, {y}) is outside the {w} x {h} map")
        if pt.requires_item and pt.requires_item not in items:
            p.append(f"map.yaml: portal {pt.key}: requires_item {pt.requires_item!r} is not in items.yaml")
        if pt.two_way and not (pt.return_name or "").strip():
            p.append(f"map.yaml: portal {pt.key} is two-way but has no return_name; add the name its far end at "
                     f"({pt.to_x}, {pt.to_y}) shows, saying where it leads (e.g. return_name: Ferry to Saltmarsh Dock)")
        elif not pt.two_way and pt.return_name:
            p.append(f"map.yaml: portal {pt.key} has a return_name but is not two-way; remove return_name")
    for n in data.npcs:
        if not (0 <= n.x < w and 0 <= n.y < h):
            p.append(f"mobs.yaml: npc {n.key} at ({n.x}, {n.y}) is outside the map")
    if not p:  # only meaningful when the references are sound
        have = obtainable_items(data)
        for r in data.recipes:
            missing = [k for k in r.inputs if k not in have]
            if missing:
                p.append(f"recipes.yaml: recipe {r.key}: inputs {missing} cannot be obtained (no node yields them, "
                         f"no spawned mob drops them, no obtainable recipe makes them); add a source")
            if r.tool and not any(i.tool_type == r.tool and i.key in have for i in data.items):
                p.append(f"recipes.yaml: recipe {r.key}: no obtainable item acts as tool {r.tool!r}")
        for pt in data.portals:
            if pt.requires_item and pt.requires_item not in have:
                p.append(f"map.yaml: portal {pt.key}: requires_item {pt.requires_item!r} cannot be obtained")
    return p


def recipes_by_output(recipes: Iterable[RecipeDef]) -> dict[tuple[str, str], list[RecipeDef]]:
    """(skill, output item) -> the recipes making it: the recipe keyed by the item first, then file order.

    Shared by ``LoadedWorld.recipes_for`` and the engine's craft_item, so both agree on the main recipe."""
    index: dict[tuple[str, str], list[RecipeDef]] = defaultdict(list)
    for r in recipes:
        for out in r.outputs:
            index[(r.skill, out)].append(r)
    for (_, out), rs in index.items():
        rs.sort(key=lambda r: r.key != out)  # stable: file order otherwise
    return dict(index)


def portal_ends(portals: Iterable[Portal]) -> list["PortalEnd"]:
    """Every usable portal tile, in file order: the entrance, then (two-way portals) the return side."""
    out = []
    for pt in portals:
        out.append(PortalEnd(pt.key, pt.x, pt.y, pt.to_x, pt.to_y, pt))
        if pt.two_way:
            out.append(PortalEnd(pt.key, pt.to_x, pt.to_y, pt.x, pt.y, pt, returning=True))
    return out


# -- the loaded world ----------------------------------------------------------------------------------
class LoadedWorld:
    """A data pack with its generated map and placements. Read-only: the engine keeps live state itself."""

    def __init__(self, data: WorldData, generated: Generated, pack_dir: Path):
        self.data = data
        self.map: GameMap = generated.map
        self.nodes: list[NodePlacement] = generated.nodes
        self.mobs: list[MobPlacement] = generated.mobs
        self.stations: list[StationPlacement] = generated.stations
        self.areas: dict[str, tuple[int, int]] = generated.areas  # land mass / underground area -> anchor tile
        self.pack_dir = pack_dir
        self.version = data.version
        self._items = {i.key: i for i in data.items}
        self._recipes = recipes_by_output(data.recipes)
        self._recipe_by_key = {r.key: r for r in data.recipes}
        self.xp_table = XpTable(data.xp_curve)
        self._node_types = {n.key: n for n in data.node_types}
        self._mob_types = {m.key: m for m in data.mob_types}
        self._landmarks = {lm.key: lm for lm in data.landmarks}
        self._portals = {pt.key: pt for pt in data.portals}
        self._npcs = {n.key: n for n in data.npcs}
        self.node_by_id = {n.id: n for n in self.nodes}
        self.mob_by_id = {m.id: m for m in self.mobs}
        self.node_at = {(n.x, n.y): n for n in self.nodes}
        # spatial buckets: (x // BUCKET, y // BUCKET) -> placements
        self._buckets: dict[tuple[int, int], list[Any]] = defaultdict(list)
        for obj in (*self.nodes, *self.mobs, *self.stations, *self.portal_ends(), *data.npcs):
            self._buckets[(obj.x // BUCKET, obj.y // BUCKET)].append(obj)

    # lookups (KeyError with a hint on unknown keys) ---------------------------------------------------
    def _get(self, table: dict, key: str, what: str):
        try:
            return table[key]
        except KeyError:
            close = difflib.get_close_matches(str(key), list(table), n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise KeyError(f"unknown {what} {key!r}; {hint}see docs/world.md or `agentworld world stats`") from None

    def item(self, key: str) -> ItemDef:
        return self._get(self._items, key, "item")

    def has_item(self, key: str) -> bool:
        return key in self._items

    def recipes_for(self, skill: str, item_key: str) -> list[RecipeDef]:
        """Every recipe of ``skill`` producing ``item_key`` (several ways to make some items): the recipe
        keyed ``item_key`` first, then file order (the order in which the engine's craft_item tries them)."""
        skill = skill.lower()
        found = list(self._recipes.get((skill, item_key), []))
        r = self._recipe_by_key.get(item_key)
        if r is not None and r.skill == skill and r not in found:
            found.insert(0, r)
        return found

    def recipe_for(self, skill: str, item_key: str) -> RecipeDef | None:
        """The main recipe of ``skill`` that makes ``item_key`` (or whose key it is); None if there is none."""
        found = self.recipes_for(skill, item_key)
        return found[0] if found else None

    def recipes_making(self, item_key: str) -> list[RecipeDef]:
        """Recipes of any skill that produce ``item_key`` (for hints such as "use Smithing, not Crafting")."""
        return [r for r in self.data.recipes if item_key in r.outputs]

    def node_type(self, key: str) -> NodeTypeDef:
        return self._get(self._node_types, key, "node type")

    def mob_type(self, key: str) -> MobTypeDef:
        return self._get(self._mob_types, key, "mob type")

    def landmark(self, key: str) -> Landmark:
        return self._get(self._landmarks, key, "landmark")

    def portal(self, key: str) -> Portal:
        return self._get(self._portals, key, "portal")

    def npc(self, key: str) -> NpcDef:
        return self._get(self._npcs, key, "npc")

    # places ------------------------------------------------------------------------------------------
    def portal_ends(self) -> list["PortalEnd"]:
        """Every usable portal tile: the entrance, and for two-way portals the return at the destination."""
        return portal_ends(self.data.portals)

    def landmark_at(self, x: int, y: int) -> Landmark | None:
        """The landmark whose radius covers (x, y) (the closest if several)."""
        best, best_d = None, None
        for lm in self.data.landmarks:
            d = abs(lm.x - x) + abs(lm.y - y)
            if d <= lm.radius and (best_d is None or d < best_d):
                best, best_d = lm, d
        return best

    def nearest_landmark(self, x: int, y: int) -> tuple[Landmark, int]:
        """The closest landmark by Manhattan distance and that distance (for "near Hearthmoor" hints)."""
        lm = min(self.data.landmarks, key=lambda l: (abs(l.x - x) + abs(l.y - y), l.key))
        return lm, abs(lm.x - x) + abs(lm.y - y)

    def stations_near(self, x: int, y: int, radius: int, kind: str | None = None) -> list[StationPlacement]:
        return [s for s in self.entities_near(x, y, radius, StationPlacement) if kind is None or s.kind == kind]

    def entities_near(self, x: int, y: int, radius: int, kind: type | tuple[type, ...] | None = None) -> list[Any]:
        """Static placements (nodes, mob spawns, stations, portal ends, NPCs) within Manhattan ``radius``.

        Sorted by distance, then y, then x: deterministic. ``kind`` filters by class (NodePlacement,
        MobPlacement, StationPlacement, PortalEnd, NpcDef). Mobs are listed at their spawn tiles: the
        engine tracks where they are now.
        """
        b0x, b1x = (x - radius) // BUCKET, (x + radius) // BUCKET
        b0y, b1y = (y - radius) // BUCKET, (y + radius) // BUCKET
        found = []
        for by in range(b0y, b1y + 1):
            for bx in range(b0x, b1x + 1):
                for obj in self._buckets.get((bx, by), ()):
                    if kind is not None and not isinstance(obj, kind):
                        continue
                    d = abs(obj.x - x) + abs(obj.y - y)
                    if d <= radius:
                        found.append((d, obj.y, obj.x, obj))
        found.sort(key=lambda t: t[:3])
        return [t[3] for t in found]

    # xp ----------------------------------------------------------------------------------------------
    def xp_for_level(self, level: int) -> int:
        """Total xp needed to reach ``level`` (level 1 = 0)."""
        return self.xp_table.xp_for(level)

    def level_for_xp(self, xp: int) -> int:
        return self.xp_table.level_for(xp)

    # summary -----------------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        d = self.data
        walk = int(self.map.walkable_grid.sum())
        return {
            "version": d.version, "map_version": d.map.version, "width": self.map.width, "height": self.map.height,
            "biomes": len(d.biomes), "items": len(d.items), "recipes": len(d.recipes),
            "resource_nodes": len(self.nodes), "node_types": len(d.node_types), "mob_types": len(d.mob_types),
            "mobs": len(self.mobs), "portals": len(d.portals), "landmarks": len(d.landmarks),
            "stations": len(self.stations), "npcs": len(d.npcs), "walkable_tiles": walk,
            "road_tiles": int(self.map.road.sum()), "tiles_sha256": self.map.tiles_sha256(),
            "placements_sha256": placements_sha256(self.nodes, self.mobs, self.stations),
        }


class PortalEnd:
    """One usable end of a portal: standing within rules.portal_range of (x, y) and entering takes you to (to_x, to_y)."""

    __slots__ = ("key", "x", "y", "to_x", "to_y", "portal", "returning", "id")

    def __init__(self, key: str, x: int, y: int, to_x: int, to_y: int, portal: Portal, returning: bool = False):
        self.key, self.x, self.y, self.to_x, self.to_y = key, x, y, to_x, to_y
        self.portal = portal
        self.returning = returning
        self.id = f"{key}:back" if returning else key  # the engine's target id (observations, effects)

    @property
    def name(self) -> str:
        # the return side has its own name (map.yaml's return_name): it leads elsewhere than the entrance
        return (self.portal.return_name or self.portal.name) if self.returning else self.portal.name

    def __repr__(self) -> str:
        return f"PortalEnd({self.key!r}, ({self.x}, {self.y}) -> ({self.to_x}, {self.to_y}))"


def _generate(data: WorldData) -> Generated:
    """``generate(data)``, its errors reported as data pack errors."""
    from .generate import GenerationError, generate  # numpy: only when a world is built, not loaded

    try:
        return generate(data)
    except GenerationError as e:
        raise DataPackError([str(e)]) from None


def _build(data: WorldData, pack: Path, check_hash: bool) -> LoadedWorld:
    gen = _generate(data)
    got = gen.map.tiles_sha256()
    pinned = data.map.tiles_sha256
    if check_hash and pinned is not None and got != pinned:
        raise DataPackError([
            f"map.yaml: the generated tiles (sha256 {got}) differ from the pinned map.tiles_sha256 ({pinned}). "
            f"The data pack or the generator changed, so coordinates in tasks may now point at other tiles: "
            f"bump map.version (world version {data.map.version}) and set tiles_sha256: {got}, "
            f"then re-check tasks with `agentworld tasks validate`"])
    got_p = gen.placements_sha256()
    pinned_p = data.map.layout.get("placements_sha256")
    if check_hash and pinned_p is not None and got_p != pinned_p:
        raise DataPackError([
            f"map.yaml: the generated placements (sha256 {got_p}) differ from the pinned "
            f"layout.placements_sha256 ({pinned_p}). Nodes, mobs or stations moved or were renumbered, so "
            f"instance ids in tasks may now name other things: bump map.version (world version "
            f"{data.map.version}), run `agentworld world pin`, then re-check tasks with `agentworld tasks validate`"])
    return LoadedWorld(data, gen, pack)


@functools.lru_cache(maxsize=4)
def _load_cached(pack: str, check_hash: bool) -> LoadedWorld:
    p = Path(pack)

    def build() -> LoadedWorld:
        world = _build(load_world_data(p), p, check_hash)
        from .pathing import regions_of

        world.map.component(0, 0)  # label the components and the path regions now, so the cached copy carries them
        regions_of(world.map)
        return world

    world = cached_build(p, check_hash, build)
    world.pack_dir = p  # the cached copy may have been built from another checkout of the same pack
    return world


def load_world(path: str | Path | None = None, *, check_hash: bool = True) -> LoadedWorld:
    """The built world for a data pack (default: built-in). Cached per process, and on disk across
    processes (``buildcache.py``: keyed by the pinned hashes and the pack's content). Raises DataPackError."""
    pack = Path(path).resolve() if path is not None else DATA_DIR
    return _load_cached(str(pack), check_hash)


def pin_tiles_hash(path: str | Path | None = None) -> tuple[str | None, str]:
    """Regenerate the pack's map and write its hashes into map.yaml (``map.tiles_sha256`` and
    ``map.layout.placements_sha256``), for content authors. Returns (old, new) tiles hashes.

    Bumping ``map.version`` when the hash changes is the author's job: tasks written against the old tiles
    may point at other places now.
    """
    pack = Path(path) if path is not None else DATA_DIR
    data = load_world_data(pack)
    gen = _generate(data)
    new, new_p = gen.map.tiles_sha256(), gen.placements_sha256()
    map_file = pack / "map.yaml"
    lines = map_file.read_text(encoding="utf-8").splitlines(keepends=True)
    for key, value in (("tiles_sha256", new), ("placements_sha256", new_p)):
        for i, line in enumerate(lines):
            stripped = line.lstrip()
            if stripped.startswith(f"{key}:"):
                indent = line[: len(line) - len(stripped)]
                lines[i] = f"{indent}{key}: {value}\n"
                break
        else:
            where = "under map:" if key == "tiles_sha256" else "under map.layout:"
            raise DataPackError([f"{map_file}: no `{key}:` line {where}; add `{key}: null` there"])
    map_file.write_text("".join(lines), encoding="utf-8")
    _load_cached.cache_clear()
    return data.map.tiles_sha256, new
