"""Integration: the engine on the real data pack (``load_world()``), through the plugin registry too."""

import pytest

from agentworld.core import plugins
from agentworld.core.world.tools import TOOLS
from agentworld.core.world.api import PlayerSpec, StackSpec
from agentworld.core.world.datapack import load_world
from agentworld.core.world.engine import EmbeddedWorld


@pytest.fixture(scope="module")
def loaded():
    return load_world()


def _spawn_near(loaded, x, y):
    return loaded.map.nearest_walkable(x, y, 40)


def test_embedded_world_is_registered_and_loads_the_real_world():
    factory = plugins.get("world", "embedded")
    w = factory({"move_range": 30}, seed=3)
    assert isinstance(w, EmbeddedWorld) and w.rules.move_range == 30 and w.version == load_world().version
    assert len(w.nodes) >= 1000 and len(w.mobs) > 0


def test_twenty_agents_at_the_capital_observe_compactly(loaded):
    lm = loaded.data.landmarks[0]
    w = EmbeddedWorld(loaded, seed=1)
    for i in range(20):
        x, y = _spawn_near(loaded, lm.x + (i % 5) - 2, lm.y + (i // 5) - 2)
        w.add_player(PlayerSpec(agent_id=f"agent_{i + 1}", username=f"player_{i + 1}", x=x, y=y,
                                inventory=[StackSpec(item="logs", count=3), StackSpec(item="axe")]))
    w.chat("agent_2", "hello team, the anvil is next to the furnace")
    obs = w.observe("agent_1")
    text = obs.render_text()
    assert len(text.encode()) < 4096, len(text)
    assert obs.place == lm.name
    players = [e for e in obs.nearby if e.kind == "player"]
    assert players and all(e.note == "" for e in players)  # position only, never their inventory
    assert any(e.kind == "station" for e in obs.nearby)
    dists = [(e.distance, e.id) for e in obs.nearby]
    assert dists == sorted(dists) and len(obs.nearby) <= w.rules.max_nearby


def test_long_move_across_the_map_is_truncated_and_deterministic(loaded):
    lm = loaded.data.landmarks[0]
    start = _spawn_near(loaded, lm.x, lm.y)
    far = max(((n.x, n.y) for n in loaded.nodes), key=lambda p: abs(p[0] - start[0]) + abs(p[1] - start[1]))
    target = None
    for dx, dy in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        t = (far[0] + dx, far[1] + dy)
        if loaded.map.connected(start, t):
            target = t
            break
    if target is None:  # the farthest node is on another island: aim at the start's own area instead
        target = _spawn_near(loaded, start[0] - 200, start[1])
    ends = []
    for _ in range(2):
        w = EmbeddedWorld(loaded)
        w.add_player(PlayerSpec(agent_id="a", username="a", x=start[0], y=start[1]))
        r = TOOLS["move_character"].execute(w, "a", {"x": target[0], "y": target[1]})
        assert r.ok and r.effects.move.path_length == min(w.rules.move_range, r.effects.move.path_length)
        ends.append(r.effects.move.end)
    assert ends[0] == ends[1]


def test_harvest_a_real_node_with_the_right_tool_and_level(loaded):
    tools = sorted({nt.tool for nt in loaded.data.node_types if nt.tool})
    tool_items = [min((i for i in loaded.data.items if i.tool_type == t and not i.requirements),
                      key=lambda i: (i.tool_tier, i.key), default=None) for t in tools]
    node = next(n for n in loaded.nodes if loaded.node_type(n.type).level == 1)
    x, y = loaded.map.adjacent_walkable(node.x, node.y)[0]
    w = EmbeddedWorld(loaded, seed=5)
    w.add_player(PlayerSpec(agent_id="a", username="a", x=x, y=y,
                            inventory=[StackSpec(item=i.key) for i in tool_items if i is not None]))
    r = w.harvest_resource("a", node.id)
    assert r.ok, r.text
    assert r.effects.harvests[0].instance == node.id
    assert sum(d.count for d in r.effects.gained) == sum(r.effects.harvests[0].items.values())


def test_real_portal_round_trip(loaded):
    portal = next(p for p in loaded.data.portals if p.two_way and not p.requires_item and not p.requires_level)
    x, y = _spawn_near(loaded, portal.x, portal.y)
    w = EmbeddedWorld(loaded)
    w.add_player(PlayerSpec(agent_id="a", username="a", x=x, y=y))
    if abs(x - portal.x) + abs(y - portal.y) > w.rules.portal_range:
        pytest.fail(f"no walkable tile within portal range of {portal.key}")
    [row] = [e for e in w.observe("a").nearby if e.kind == "portal" and e.id == portal.key]
    assert row.name == portal.name
    r = w.enter_portal("a")
    assert r.ok and r.effects.portal == portal.key
    # the far side is the portal's return: its row carries its own name (map.yaml's return_name), which
    # says where it leads, not the entrance's name with "(return)" (read on Palm Isle as a way to the isle)
    [row] = [e for e in w.observe("a").nearby if e.kind == "portal" and e.id == f"{portal.key}:back"]
    assert row.name == portal.return_name and portal.name not in row.name and "(return)" not in row.name
    back = w.enter_portal("a")
    assert back.ok and back.effects.portal == portal.key


def test_ferry_back_end_names_the_dock(loaded):
    """The island end of the Palm Isle ferry says it goes to Saltmarsh Dock, where it leads (pilots of
    task_404 and others read "Ferry to Palm Isle (return)" on the island as a boat to the isle)."""
    ferry = loaded.portal("isle_ferry")
    w = EmbeddedWorld(loaded)
    w.add_player(PlayerSpec(agent_id="a", username="a", x=ferry.to_x, y=ferry.to_y))
    [row] = [e for e in w.observe("a").nearby if e.kind == "portal" and e.id == "isle_ferry:back"]
    assert row.name == "Ferry to Saltmarsh Dock"
    used = w.enter_portal("a")
    assert used.ok and used.text.startswith("You used Ferry to Saltmarsh Dock and arrived")  # not "to Palm Isle"
    me = w.observe("a")
    assert (me.x, me.y) == (ferry.x, ferry.y)  # it went where its name says: the dock's gangway
