"""The generated map: pinned and deterministic, connected where it should be, separated where it should be,
placements on sensible tiles, path queries, the spatial index, rendering and the world CLI."""

from __future__ import annotations

import json
from types import SimpleNamespace

import click
import numpy as np
import pytest
from click.testing import CliRunner

from agentworld.core.world.datapack import (MobPlacement, NodePlacement, PortalEnd, StationPlacement, load_world,
                                            load_world_data)
from agentworld.core.world.generate import StableRandom, generate, label_components


@pytest.fixture(scope="module")
def world():
    return load_world()


def component(world, x, y):
    return world.map.component(x, y)


def test_tiles_are_pinned_and_generation_is_deterministic(world):
    assert world.map.tiles_sha256() == world.data.map.tiles_sha256
    again = generate(load_world_data())
    assert again.map.tiles_sha256() == world.map.tiles_sha256()
    assert again.nodes == world.nodes and again.mobs == world.mobs and again.stations == world.stations


def test_stable_random_is_reproducible_and_uniform():
    a, b = StableRandom(1, 2, 3), StableRandom(1, 2, 3)
    fa = a.floats(10_000)
    assert np.array_equal(fa, b.floats(10_000)) and 0 <= fa.min() and fa.max() < 1
    assert abs(fa.mean() - 0.5) < 0.02
    s = StableRandom(5).sample(100, 30)
    assert len(set(s)) == 30 and all(0 <= i < 100 for i in s)
    assert sorted(StableRandom(5).permutation(50).tolist()) == list(range(50))


def test_component_labelling_matches_a_flood_fill():
    rng = np.random.default_rng(0)
    walk = rng.random((60, 80)) < 0.55
    labels = label_components(walk)
    assert ((labels > 0) == walk).all()
    # neighbours that are both walkable share a label; and the count matches a reference flood fill
    assert (labels[:, 1:][walk[:, 1:] & walk[:, :-1]] == labels[:, :-1][walk[:, 1:] & walk[:, :-1]]).all()
    assert (labels[1:, :][walk[1:, :] & walk[:-1, :]] == labels[:-1, :][walk[1:, :] & walk[:-1, :]]).all()
    seen = np.zeros_like(walk)
    count = 0
    for y, x in zip(*np.nonzero(walk)):
        if seen[y, x]:
            continue
        count += 1
        stack = [(y, x)]
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            for ny, nx in ((cy - 1, cx), (cy + 1, cx), (cy, cx - 1), (cy, cx + 1)):
                if 0 <= ny < 60 and 0 <= nx < 80 and walk[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
    assert labels.max() == count


def test_main_continent_is_one_component(world):
    home = component(world, 450, 400)
    assert home > 0
    mainland = [lm for lm in world.data.landmarks if lm.x < 850]
    assert len(mainland) >= 15
    for lm in mainland:
        assert component(world, lm.x, lm.y) == home, lm.key
    # the mainland is the biggest component by far
    sizes = np.bincount(world.map.component_labels.ravel())
    assert sizes[1:].argmax() + 1 == home and sizes[home] > 300_000


def test_island_and_underground_are_reachable_only_through_portals(world):
    home = component(world, 450, 400)
    isle = world.landmark("palm_isle")
    isle_c = component(world, isle.x, isle.y)
    assert isle_c not in (0, home)
    assert world.map.find_path((450, 400), (isle.x, isle.y)) is None
    underground = ["deepdelve_depths", "smugglers_grotto", "ice_cavern", "sunken_crypt", "ember_lair"]
    ug_comps = {component(world, world.landmark(k).x, world.landmark(k).y) for k in underground}
    assert len(ug_comps) == 5 and not ug_comps & {0, home, isle_c}
    # which portals link which components: the island only by boat from the mainland
    links = {}
    for p in world.data.portals:
        links[p.key] = (component(world, p.x, p.y), component(world, p.to_x, p.to_y))
    into_isle = [k for k, (a, b) in links.items() if isle_c in (a, b) and home in (a, b)]
    assert into_isle == ["isle_ferry"] and world.portal("isle_ferry").kind == "boat"
    for k, (a, b) in links.items():  # only teleports are shortcuts within one area
        assert (a == b) == (world.portal(k).kind == "teleport"), k
    # every underground area has a portal end inside it
    assert ug_comps <= {b for _, b in links.values()}


def test_placements_sit_on_sensible_tiles(world):
    m = world.map
    for lm in world.data.landmarks:
        assert m.walkable(lm.x, lm.y), lm.key
    for p in world.data.portals:
        assert m.walkable(p.x, p.y) and m.walkable(p.to_x, p.to_y), p.key
    for n in world.data.npcs:
        assert m.walkable(n.x, n.y), n.key
    rules = world.data.rules
    for s in world.stations:
        lm = world.landmark(s.landmark)
        assert m.walkable(s.x, s.y) and abs(s.x - lm.x) + abs(s.y - lm.y) <= lm.radius
        assert component(world, s.x, s.y) == component(world, lm.x, lm.y)
        assert s.kind in lm.stations
    assert sum(len(lm.stations) for lm in world.data.landmarks) == len(world.stations)
    assert len({(s.x, s.y) for s in world.stations}) == len(world.stations)
    ids = [n.id for n in world.nodes] + [mb.id for mb in world.mobs]
    assert len(set(ids)) == len(ids)
    for n in world.nodes:
        assert n.id.startswith(n.type + "#") and not m.walkable(n.x, n.y)
        assert m.adjacent_walkable(n.x, n.y), n.id
    node_tiles = {(n.x, n.y) for n in world.nodes}
    for mb in world.mobs:
        assert mb.id.startswith(mb.type + "#") and m.walkable(mb.x, mb.y) and (mb.x, mb.y) not in node_tiles
    # every station can be reached on foot from its landmark's centre, and crafting spots exist around it
    for s in world.stations:
        lm = world.landmark(s.landmark)
        path = m.find_path((lm.x, lm.y), (s.x, s.y))
        assert path is not None and len(path) <= 3 * rules.station_range, s
        spots = [(x, y) for x in range(s.x - rules.station_range, s.x + rules.station_range + 1)
                 for y in range(s.y - rules.station_range, s.y + rules.station_range + 1)
                 if abs(x - s.x) + abs(y - s.y) <= rules.station_range and m.walkable(x, y)]
        assert len(spots) >= 10, s


def test_fishing_spots_touch_the_shore_and_nodes_follow_biomes(world):
    m = world.map
    for n in world.nodes:
        t = world.node_type(n.type)
        if t.kind == "fishing_spot":
            assert m.biome_at(n.x, n.y) in ("sea", "lake"), n.id
            assert m.adjacent_walkable(n.x, n.y), n.id


def test_each_production_chain_has_a_place(world):
    """Ore, furnace and anvil near Ironhold; trees and a workbench near Hearthmoor; clay near Mirelight."""
    def types_near(key, r=30):
        lm = world.landmark(key)
        return {e.type for e in world.entities_near(lm.x, lm.y, r, NodePlacement)}

    assert {"copper_rock", "tin_rock", "iron_rock", "coal_rock"} <= types_near("ironhold")
    assert {"furnace", "anvil"} <= set(world.landmark("ironhold").stations)
    assert {"tree", "oak_tree", "apple_tree", "copper_rock", "tin_rock"} <= types_near("hearthmoor")
    assert "clay_pit" in types_near("mirelight") and "furnace" in world.landmark("hearthmoor").stations
    assert "trout_spot" in types_near("hearthmoor", 80)
    assert "wheat_field" in types_near("goldfield_farm")


def test_path_queries(world):
    m = world.map
    a = (450, 400)
    b = (world.landmark("ironhold").x, world.landmark("ironhold").y)
    path = m.find_path(a, b)
    assert path is not None and path[-1] == b
    assert len(path) >= abs(a[0] - b[0]) + abs(a[1] - b[1])
    prev = a
    for step in path:
        assert abs(step[0] - prev[0]) + abs(step[1] - prev[1]) == 1 and m.walkable(*step)
        prev = step
    assert m.find_path(a, b, max_len=20) is None
    # across a bridge: Hearthmoor to the east dock
    dock = world.landmark("saltmarsh_dock")
    assert m.find_path(a, (dock.x, dock.y)) is not None
    assert m.find_path(a, (5, 5)) is None  # sea


def test_entities_near_matches_brute_force(world):
    x, y, r = 470, 255, 25
    got = world.entities_near(x, y, r)
    everything = [*world.nodes, *world.mobs, *world.stations, *world.portal_ends(), *world.data.npcs]
    want = [e for e in everything if abs(e.x - x) + abs(e.y - y) <= r]
    assert len(got) == len(want) > 10
    dists = [abs(e.x - x) + abs(e.y - y) for e in got]
    assert dists == sorted(dists)
    stations = world.stations_near(x, y, 6)
    assert {s.kind for s in stations} == {"furnace", "anvil", "fire"}
    assert world.stations_near(x, y, 6, kind="anvil")[0].landmark == "ironhold"
    ends = world.entities_near(866, 378, 2, PortalEnd)
    assert ends and ends[0].returning and (ends[0].to_x, ends[0].to_y) == (560, 216)
    assert all(isinstance(e, MobPlacement) for e in world.entities_near(x, y, r, MobPlacement))
    assert all(isinstance(e, StationPlacement) for e in stations)


def test_render_png_with_markers(world, tmp_path):
    from PIL import Image

    from agentworld.core.world.render import Marker, render_map

    out = render_map(world, tmp_path / "m.png", scale=0.5,
                     markers=[Marker(450, 400, "agent_1", "spawn"), Marker(470, 255, "forge")], title="t")
    with Image.open(out) as im:
        assert im.format == "PNG" and im.size[0] >= 500 + 190 and im.size[1] >= 375
        px = np.asarray(im.convert("RGB"))
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 50  # a picture, not a blank
    # the map part shows the biome colours where they are: sea in the corner, meadow at Hearthmoor
    assert tuple(px[2, 2]) != tuple(px[200, 225])
    zoom = render_map(world, tmp_path / "z.png", scale=10, window=(430, 380, 470, 420),
                      markers=[Marker(450, 400, "agent_1", "spawn")])
    with Image.open(zoom) as im:
        assert im.size[0] >= 410 and im.size[1] >= 410
    with pytest.raises(ValueError, match="scale must be > 0"):
        render_map(world, tmp_path / "x.png", scale=0)
    with pytest.raises(ValueError, match="does not overlap"):
        render_map(world, tmp_path / "x.png", window=(2000, 2000, 2100, 2100))


def _cli():
    from agentworld.core.cli import world as cli_world

    group = click.Group("agentworld")
    cli_world.register_commands(group)
    return group


def test_cli_stats_json_and_tools(world, tmp_path):
    runner = CliRunner()
    res = runner.invoke(_cli(), ["world", "stats", "--json"])
    assert res.exit_code == 0, res.output
    stats = json.loads(res.output)
    for key in ("width", "height", "biomes", "items", "recipes", "resource_nodes", "mob_types", "portals",
                "version", "landmarks", "mobs"):
        assert key in stats
    assert stats["resource_nodes"] == len(world.nodes) and stats["version"] == world.version
    res = runner.invoke(_cli(), ["tools", "--json"])
    names = [t["function"]["name"] for t in json.loads(res.output)]
    assert names == ["move_character", "send_chat_message", "enter_portal", "stop_action", "equip_item",
                     "harvest_resource", "pickup_resource", "attack_entity", "sleep", "craft_item", "complete",
                     "chat", "transfer_items"]
    res = runner.invoke(_cli(), ["tools"])
    assert res.exit_code == 0 and "transfer_items" in res.output
    res = runner.invoke(_cli(), ["world", "render", "--out", str(tmp_path / "m.png"), "--scale", "0.5", "--no-nodes"])
    assert res.exit_code == 0 and "m.png" in res.output and (tmp_path / "m.png").exists()
    res = runner.invoke(_cli(), ["world", "render", "--out", str(tmp_path / "m.png"), "--scale", "-1"])
    assert res.exit_code != 0 and "--scale" in res.output
    res = runner.invoke(_cli(), ["world", "render", "--out", str(tmp_path / "z.png"), "--around", "ironhold",
                                 "--radius", "10"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(_cli(), ["world", "render", "--out", str(tmp_path / "z.png"), "--around", "atlantis"])
    assert res.exit_code != 0 and "not a landmark" in res.output and "hearthmoor" in res.output


def test_task_markers_find_spawns_and_targets(world):
    from agentworld.core.cli.world import task_markers

    node = next(n for n in world.nodes if n.type == "tree")
    task = SimpleNamespace(
        agents=[SimpleNamespace(x=450, y=401, username="woody", agent_id="agent_1")],
        reference_solution={"agent_1": [SimpleNamespace(tool="move_character", args={"x": 470, "y": 255}),
                                        SimpleNamespace(tool="harvest_resource", args={"targetInstance": node.id})]},
        verifier=None)
    marks = task_markers(world, task)
    assert [(m.kind, m.x, m.y) for m in marks] == [("spawn", 450, 401), ("target", 470, 255),
                                                   ("target", node.x, node.y)]


def test_cli_near_and_sources(world):
    runner = CliRunner()
    res = runner.invoke(_cli(), ["world", "near", "ironhold", "--radius", "12", "--json"])
    assert res.exit_code == 0, res.output
    near = json.loads(res.output)
    assert (near["x"], near["y"]) == (470, 255) and near["walkable"]
    kinds = {r["what"] for r in near["entities"]}
    assert {"station", "node", "npc"} <= kinds
    assert [r["distance"] for r in near["entities"]] == sorted(r["distance"] for r in near["entities"])
    ids = {r["id"] for r in near["entities"] if r["what"] == "node"}
    assert ids and ids <= set(world.node_by_id)
    res = runner.invoke(_cli(), ["world", "near", "450,400", "--radius", "5"])
    assert res.exit_code == 0 and "furnace" in res.output
    res = runner.invoke(_cli(), ["world", "near", "5000,1"])
    assert res.exit_code != 0 and "outside" in res.output
    res = runner.invoke(_cli(), ["world", "sources", "bead", "--json"])
    found = json.loads(res.output)
    assert [r["recipe"] for r in found["recipes"]] == ["bead"] and found["recipes"][0]["station"] == "furnace"
    assert "goblin" in {m["mob"] for m in found["mobs"]}
    res = runner.invoke(_cli(), ["world", "sources", "raw_trout"])
    assert res.exit_code == 0 and "trout_spot" in res.output
    res = runner.invoke(_cli(), ["world", "sources", "unobtainium"])
    assert res.exit_code != 0 and "unknown item 'unobtainium'" in res.output


def test_marker_labels_never_overlap_even_for_16_neighbouring_spawns():
    from agentworld.core.world.render import _overlap, place_labels

    # the spawns of task_37_four_corners: 16 agents on neighbouring tiles, 24 px per tile
    spawns = [(447, 400), (448, 399), (448, 400), (448, 401), (449, 399), (449, 400), (449, 401), (450, 398),
              (450, 399), (450, 400), (450, 401), (450, 402), (451, 399), (451, 400), (451, 401), (452, 400)]
    anchors = [(24 * (x - 440), 24 * (y - 390)) for x, y in spawns]
    sizes = [(30.0, 16.0)] * len(anchors)
    avoid = [(150.0, 240.0, 230.0, 256.0)]  # a station name already drawn there
    boxes = place_labels(anchors, sizes, gap=11, bounds=(0, 0, 1000, 1000), avoid=avoid)
    assert len(boxes) == 16
    assert all(_overlap(a, b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all(_overlap(b, avoid[0]) == 0 for b in boxes)
    # no label covers any spawn's marker
    marks = [(x - 11, y - 11, x + 11, y + 11) for x, y in anchors]
    assert all(_overlap(b, m) == 0 for b in boxes for m in marks)
    assert place_labels(anchors, sizes, gap=11, bounds=(0, 0, 1000, 1000), avoid=avoid) == boxes


def test_render_with_a_crowded_task_draws(tmp_path):
    from PIL import Image

    from agentworld.core.tasks.task import find_task
    from agentworld.core.world.datapack import load_world
    from agentworld.core.world.render import Marker, render_map

    task = find_task("task_80_great_survey")  # 20 agents on neighbouring tiles at Hearthmoor
    markers = [Marker(a.x, a.y, a.username, "spawn") for a in task.agents]
    out = render_map(load_world(), tmp_path / "t.png", scale=24, markers=markers, window=(430, 380, 470, 420))
    with Image.open(out) as img:
        assert img.size[0] > 41 * 24
