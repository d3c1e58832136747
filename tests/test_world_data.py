"""The world data pack: schema, counts, cross-references, production chains, lookups, and refusals."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from agentworld.core.world.datapack import (DATA_DIR, REQUIRED_ITEMS, DataPackError, check_pack, load_world,
                                            load_world_data, obtainable_items)
from agentworld.core.world.models import SKILLS


@pytest.fixture(scope="module")
def data():
    return load_world_data()


@pytest.fixture(scope="module")
def world():
    return load_world()


def copy_pack(tmp_path: Path) -> Path:
    dst = tmp_path / "pack"
    shutil.copytree(DATA_DIR, dst)
    return dst


def edit_yaml(path: Path, fn) -> None:
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


# -- counts and schema -----------------------------------------------------------------------------------
def test_pack_validates_and_meets_the_targets(data, world):
    assert check_pack(data) == []
    s = world.stats()
    assert (s["width"], s["height"]) == (1000, 750)
    assert s["biomes"] >= 9 and s["items"] >= 120 and s["recipes"] >= 40
    assert s["resource_nodes"] >= 1000 and s["mob_types"] >= 30 and s["portals"] >= 6
    assert s["landmarks"] >= 10 and s["npcs"] >= 3 and s["mobs"] >= 100
    # the biomes really appear on the map, not just in the list
    present = {world.map.biome_keys[i] for i in set(world.map.biome.ravel().tolist())}
    assert len(present) >= 9 and {"meadow", "forest", "dark_forest", "mountains", "desert", "snowfield", "swamp",
                                  "beach", "sea", "volcanic"} <= present


def test_required_item_keys_exist_with_the_right_kinds(world):
    for key in REQUIRED_ITEMS:
        world.item(key)
    assert world.item("axe").tool_type == "axe" and world.item("pickaxe").tool_type == "pickaxe"
    assert world.item("fishing_rod").tool_type == "fishing_rod" and world.item("knife").tool_type == "knife"
    assert world.item("hammer").tool_type == "hammer"
    assert world.item("staff").attack_style == "magic" and world.item("staff").slot == "weapon"
    assert world.item("cooked_trout").heal > world.item("raw_trout").heal
    assert world.item("bread").kind == "food" and world.item("apple").heal > 0


def test_items_cover_every_category_in_tiers(data):
    kinds = {i.kind for i in data.items}
    assert {"tool", "weapon", "armour", "material", "food", "potion", "ammo", "gem"} <= kinds
    styles = {i.attack_style for i in data.items if i.kind == "weapon"}
    assert styles == {"melee", "ranged", "magic"}
    axes = sorted(i.tool_tier for i in data.items if i.tool_type == "axe")
    assert axes == [1, 2, 3, 4]
    tool_types = {i.tool_type for i in data.items if i.tool_type}
    assert {"axe", "pickaxe", "fishing_rod", "hammer", "knife", "needle", "tinderbox", "sickle"} <= tool_types
    slots = {i.slot for i in data.items if i.slot}
    assert {"weapon", "shield", "head", "body", "legs", "ring", "amulet", "ammo"} <= slots


def test_skills_and_xp_curve(world):
    assert len(SKILLS) == 15
    skills_used = {r.skill for r in world.data.recipes} | {n.skill for n in world.data.node_types}
    assert skills_used == {"crafting", "smithing", "smelting", "fletching", "cooking",
                           "lumberjacking", "mining", "fishing", "foraging"}
    assert world.xp_for_level(1) == 0 and world.xp_for_level(2) == 30
    levels = [world.xp_for_level(L) for L in range(1, 100)]
    assert levels == sorted(levels) and len(set(levels)) == 99
    for L in (1, 2, 5, 17, 50, 99):
        assert world.level_for_xp(world.xp_for_level(L)) == L
        if L > 1:
            assert world.level_for_xp(world.xp_for_level(L) - 1) == L - 1


def test_mobs_range_from_level_one_to_bosses(data):
    levels = [m.level for m in data.mob_types]
    assert min(levels) == 1 and max(levels) >= 70
    bosses = [m for m in data.mob_types if m.boss]
    assert len(bosses) >= 5 and all(b.hp > 200 for b in bosses)
    assert any(m.aggro_range == 0 for m in data.mob_types) and any(m.aggro_range > 0 for m in data.mob_types)
    spawned = {s.mob for s in data.mob_spawns}
    assert spawned == {m.key for m in data.mob_types}, "every mob type spawns somewhere"


# -- production chains ----------------------------------------------------------------------------------
def test_paper_chains_exist(world):
    bar = world.recipe_for("smelting", "bronze_bar")
    assert bar.inputs == {"copper_ore": 1, "tin_ore": 1} and bar.station == "furnace"
    iron = world.recipe_for("smelting", "iron_bar")
    assert iron.inputs == {"iron_ore": 1, "coal": 1}
    sword = world.recipe_for("smithing", "bronze_sword")
    assert sword.station == "anvil" and sword.tool == "hammer" and "bronze_bar" in sword.inputs
    stick = world.recipe_for("fletching", "stick")
    assert stick.inputs == {"logs": 1} and stick.tool == "knife"
    staff = world.recipe_for("crafting", "staff")
    assert staff.inputs == {"stick": 3, "bead": 1} and staff.outputs == {"staff": 1}
    trout = world.recipe_for("cooking", "cooked_trout")
    assert trout.inputs == {"raw_trout": 1} and trout.station == "fire"
    assert world.recipe_for("cooking", "bread").inputs == {"flour": 1}
    assert world.recipe_for("Fletching", "stick") is stick  # skill names are case-insensitive
    assert world.recipe_for("crafting", "stick") is None  # wrong skill: no recipe
    assert [r.skill for r in world.recipes_making("stick")] == ["fletching", "fletching"]
    assert len(world.recipes_for("fletching", "stick")) == 2  # logs or oak logs
    assert {r.skill for r in world.data.recipes} == {"crafting", "smithing", "smelting", "fletching", "cooking"}


def test_every_recipe_input_and_tool_is_obtainable(data):
    have = obtainable_items(data)
    for r in data.recipes:
        assert set(r.inputs) <= have, r.key
        assert set(r.outputs) <= have, r.key
        if r.tool:
            assert any(i.tool_type == r.tool and i.key in have for i in data.items), r.key
    for key in REQUIRED_ITEMS:
        assert key in have, key


def test_gathering_nodes_reference_known_items_and_tools(world):
    for nt in world.data.node_types:
        for y in nt.yields:
            world.item(y.item)
        if nt.kind in ("tree", "rock", "fishing_spot"):
            assert nt.tool is not None, nt.key
    assert world.node_type("tree").yields[0].item == "logs"
    assert world.node_type("trout_spot").yields[0].item == "raw_trout"


# -- lookups --------------------------------------------------------------------------------------------
def test_lookups_and_their_errors(world):
    assert world.landmark("hearthmoor").stations == ["furnace", "anvil", "fire", "workbench", "loom"]
    assert world.mob_type("goblin").level == 5
    assert world.portal("isle_ferry").kind == "boat"
    with pytest.raises(KeyError, match="unknown item 'mithril_spoon'"):
        world.item("mithril_spoon")
    with pytest.raises(KeyError, match="unknown landmark"):
        world.landmark("atlantis")
    lm, d = world.nearest_landmark(452, 405)
    assert lm.key == "hearthmoor" and d == 7
    assert world.landmark_at(450, 400).key == "hearthmoor" and world.landmark_at(5, 5) is None


def test_load_world_is_cached(world):
    assert load_world() is world


# -- refusals: clear errors naming file, entry and fix -----------------------------------------------------------
def test_unknown_references_are_listed_with_file_and_entry(tmp_path):
    pack = copy_pack(tmp_path)
    edit_yaml(pack / "recipes.yaml", lambda d: d["recipes"][0]["inputs"].update({"unobtainium": 2}))
    edit_yaml(pack / "mobs.yaml", lambda d: d["mob_spawns"].append({"mob": "griffin", "biomes": ["meadow"]}))
    edit_yaml(pack / "nodes.yaml", lambda d: d["node_types"][0]["biomes"].append("moon"))
    with pytest.raises(DataPackError) as e:
        load_world_data(pack)
    text = str(e.value)
    assert "recipes.yaml: recipe bronze_bar: item 'unobtainium' is not in items.yaml" in text
    assert "mobs.yaml: mob_spawns[" in text and "'griffin' is not in mob_types" in text
    assert "nodes.yaml: node type tree: biome 'moon' is not in map.yaml biomes" in text
    assert len(e.value.problems) == 3


def test_schema_errors_name_file_entry_and_field(tmp_path):
    pack = copy_pack(tmp_path)
    edit_yaml(pack / "items.yaml", lambda d: d["items"][3].update({"slot": "tail", "colour": "red"}))
    with pytest.raises(DataPackError) as e:
        load_world_data(pack)
    text = str(e.value)
    assert re.search(r"items\.yaml: items\[3\] \(willow_logs\)\.slot: .*'tail'", text)
    assert "items.yaml: items[3] (willow_logs).colour: Extra inputs are not permitted (remove it" in text


def test_missing_required_item_and_unobtainable_input(tmp_path):
    pack = copy_pack(tmp_path)

    def drop_bead_sources(d):
        d["recipes"] = [r for r in d["recipes"] if r["key"] != "bead"]

    edit_yaml(pack / "recipes.yaml", drop_bead_sources)
    edit_yaml(pack / "mobs.yaml", lambda d: [m.update({"drops": [x for x in m["drops"] if x["item"] != "bead"]})
                                             for m in d["mob_types"]])
    with pytest.raises(DataPackError, match=r"recipe staff: inputs \['bead'\] cannot be obtained"):
        load_world_data(pack)
    pack2 = copy_pack(tmp_path / "b")
    edit_yaml(pack2 / "items.yaml", lambda d: d.update({"items": [i for i in d["items"] if i["key"] != "apple"]}))
    with pytest.raises(DataPackError, match="required item 'apple' is missing"):
        load_world_data(pack2)


def test_two_way_portal_needs_a_return_name(tmp_path):
    """A two-way portal's far end leads elsewhere than its entrance, so it must be named for where it goes."""
    pack = copy_pack(tmp_path)

    def edit(d):
        del d["portals"][0]["return_name"]
        d["portals"].append({"key": "one_way_door", "name": "Trapdoor", "kind": "door", "x": 450, "y": 400,
                             "to_x": 452, "to_y": 400, "two_way": False, "return_name": "Trapdoor back"})

    edit_yaml(pack / "map.yaml", edit)
    with pytest.raises(DataPackError) as e:
        load_world_data(pack)
    text = str(e.value)
    assert "map.yaml: portal isle_ferry is two-way but has no return_name" in text
    assert "map.yaml: portal one_way_door has a return_name but is not two-way; remove return_name" in text
    assert len(e.value.problems) == 2


def test_every_two_way_portal_back_end_is_named_for_where_it_leads(data):
    landmarks = {lm.key: lm.name for lm in data.landmarks}
    for pt in data.portals:
        if pt.two_way:
            assert pt.return_name and pt.return_name != pt.name and "(return)" not in pt.return_name, pt.key
    ferry = next(pt for pt in data.portals if pt.key == "isle_ferry")
    assert landmarks["saltmarsh_dock"] in ferry.return_name


def test_duplicate_sections_and_bad_yaml(tmp_path):
    pack = copy_pack(tmp_path)
    (pack / "extra.yaml").write_text("items: []\n")
    with pytest.raises(DataPackError, match="extra.yaml: section `items` is also in items.yaml"):
        load_world_data(pack)
    (pack / "extra.yaml").write_text("items: [\n")
    with pytest.raises(DataPackError, match="extra.yaml: not valid YAML"):
        load_world_data(pack)
    with pytest.raises(DataPackError, match="not a directory"):
        load_world_data(tmp_path / "nowhere")


def test_changed_map_is_refused_until_repinned(tmp_path):
    pack = copy_pack(tmp_path)
    text = (pack / "map.yaml").read_text().replace("seed: 20260611", "seed: 20260612")
    (pack / "map.yaml").write_text(text)
    with pytest.raises(DataPackError) as e:
        load_world(pack)
    msg = str(e.value)
    assert "differ from the pinned map.tiles_sha256" in msg and "bump map.version" in msg
    from agentworld.core.world.datapack import pin_tiles_hash

    old, new = pin_tiles_hash(pack)
    assert old != new and load_world(pack).map.tiles_sha256() == new


def test_renumbered_placements_are_refused(tmp_path):
    """Same tiles, different mobs: instance ids would shift, so the pinned placements hash refuses it."""
    pack = copy_pack(tmp_path)
    edit_yaml(pack / "mobs.yaml", lambda d: d["mob_spawns"][0].update({"count": d["mob_spawns"][0]["count"] - 1}))
    with pytest.raises(DataPackError) as e:
        load_world(pack)
    msg = str(e.value)
    assert "differ from the pinned layout.placements_sha256" in msg and "instance ids" in msg
    assert "tiles" not in msg.split("placements_sha256")[0]  # the tiles themselves did not change
