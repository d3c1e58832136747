"""The 13 tools driven through ``TOOLS[name].execute(world, agent, args)``: aliases, bad arguments, and
property tests (hypothesis) showing that no argument, however odd, makes the engine raise."""

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import MOBS, NODES, make_world, spec  # noqa: E402

from agentworld.core.world.effects import ToolResult  # noqa: E402
from agentworld.core.world.tools import TOOL_NAMES, TOOLS, ToolArgsError  # noqa: E402


def run(world, agent, name, args):
    return TOOLS[name].execute(world, agent, args)


def test_every_tool_reaches_the_engine_with_paper_parameter_names():
    w = make_world(players=[spec("a", "alice", 27, 5, inventory={"logs": 2, "knife": 1, "copper_sword": 1, "bronze_axe": 1}),
                            spec("b", "bob", 28, 6)])
    results = {
        "send_chat_message": run(w, "a", "send_chat_message", {"message": "hi", "global": True}),
        "chat": run(w, "a", "chat", {"message": "team"}),
        "equip_item": run(w, "a", "equip_item", {"itemKey": "copper_sword"}),
        "craft_item": run(w, "a", "craft_item", {"skill": "fletching", "itemKey": "stick", "count": 1}),
        "transfer_items": run(w, "a", "transfer_items", {"targetPlayer": "bob", "itemKey": "stick", "count": 2}),
        "move_character": run(w, "a", "move_character", {"x": 26, "y": 5}),
        "harvest_resource": run(w, "a", "harvest_resource", {"targetInstance": "oak_tree#3"}),
        "attack_entity": run(w, "a", "attack_entity", {"targetInstance": "goblin#1"}),
        "pickup_resource": run(w, "b", "pickup_resource", {"targetInstance": "ground#1"}),
        "sleep": run(w, "b", "sleep", {"seconds": 3}),
        "stop_action": run(w, "b", "stop_action", {}),
        "enter_portal": run(w, "b", "enter_portal", None),
        "complete": run(w, "b", "complete", {"response": "done"}),
    }
    assert set(results) | {"pickup_resource"} == set(TOOL_NAMES)
    for name, r in results.items():
        if name == "pickup_resource":
            assert r.error == "unknown_target"
        elif name == "attack_entity":  # a level-1 alice may lose, but the fight happens
            assert r.ok and r.effects.hp and r.effects.hp[0].cause == "combat:goblin#1", r.text
        else:
            assert r.ok, (name, r.text)
    assert w.player_state("b").count("stick") == 2
    assert results["equip_item"].effects.equipped.item == "copper_sword"
    assert results["enter_portal"].effects.portal == "isle_boat"


def test_snake_case_arguments_and_numeric_target_ids_are_accepted():
    w = make_world()
    assert run(w, "agent_1", "harvest_resource", {"target_instance": "oak_tree#1"}).ok
    r = run(w, "agent_1", "harvest_resource", {"targetInstance": 12})
    assert r.error == "unknown_target" and "'12'" in r.text


def test_bad_arguments_are_refused_before_the_engine():
    w = make_world()
    cases = [
        ("move_character", {"x": 3}), ("move_character", {"x": "left", "y": 2}), ("sleep", {"minutes": 3}),
        ("craft_item", {"skill": "Alchemy", "itemKey": "stick"}), ("equip_item", {}),
        ("transfer_items", {"targetPlayer": "miner", "itemKey": "logs", "count": 0}),
        ("harvest_resource", {"targetInstance": ""}), ("chat", {"message": ""}), ("stop_action", {"foo": 1}),
        ("move_character", [1, 2]),
    ]
    for name, args in cases:
        r = run(w, "agent_1", name, args)
        assert not r.ok and r.error == "bad_args", (name, args, r)
        assert "Example:" in r.text
    assert w.player_state("agent_1").x == 6


def test_dead_agent_gets_dead_for_every_tool():
    w = make_world(players=[spec("a", "a", 35, 6)])
    w.attack_entity("a", "dragon#1")
    for name in TOOL_NAMES:
        args = {"move_character": {"x": 1, "y": 1}, "send_chat_message": {"message": "x"}, "sleep": {"seconds": 1},
                "equip_item": {"index": 0}, "harvest_resource": {"targetInstance": "oak_tree#1"},
                "pickup_resource": {"targetInstance": "ground#1"}, "attack_entity": {"targetInstance": "dragon#1"},
                "craft_item": {"skill": "Cooking", "itemKey": "cooked_trout"}, "complete": {"response": ""},
                "chat": {"message": "x"}, "transfer_items": {"targetPlayer": "a", "itemKey": "logs", "count": 1},
                }.get(name, {})
        r = run(w, "a", name, args)
        assert r.error == "dead", (name, r)


# -- property tests ----------------------------------------------------------------------------------
IDS = [*NODES, *MOBS, "ground#1", "ground#2", "nothing", "oak_tree#", "#1", "miner", "agent_2", ""]
ITEM_KEYS = ["logs", "stick", "copper_ore", "copper_bar", "copper_sword", "cooked_trout", "arrow", "shortbow",
             "bronze_axe", "nope", "", "LOGS"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=30), st.sampled_from(IDS), st.sampled_from(ITEM_KEYS))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=5), scalars, max_size=2))


@st.composite
def raw_args(draw, name):
    """Arguments that are sometimes well typed and sometimes garbage."""
    params = TOOLS[name].parameter_names() + ["target_instance", "item_key", "bogus"]
    if draw(st.booleans()):  # plausible, well-typed
        good = {
            "x": st.integers(-20, 60), "y": st.integers(-20, 45), "message": st.text(min_size=1, max_size=50),
            "global": st.booleans(), "index": st.integers(0, 40), "itemKey": st.sampled_from(ITEM_KEYS),
            "targetInstance": st.sampled_from(IDS), "seconds": st.integers(1, 60),
            "skill": st.sampled_from(["Crafting", "smithing", "FLETCHING", "Cooking", "Smelting"]),
            "count": st.integers(1, 50), "response": st.text(max_size=20),
            "targetPlayer": st.sampled_from(["miner", "smith", "woodcutter", "agent_2", "ghost"]),
        }
        return {p: draw(good[p]) for p in TOOLS[name].parameter_names() if p in good and draw(st.booleans()) or
                (p in good and TOOLS[name].args.model_fields[_field(name, p)].is_required())}
    keys = draw(st.lists(st.sampled_from(params), max_size=4, unique=True))
    return {k: draw(values) for k in keys}


def _field(name, param):
    for n, f in TOOLS[name].args.model_fields.items():
        if (f.alias or n) == param:
            return n
    return param


call = st.sampled_from(TOOL_NAMES).flatmap(lambda n: st.tuples(st.just(n), raw_args(n)))
agents = st.sampled_from(["agent_1", "agent_2", "agent_3", "ghost"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 3), death=st.sampled_from(["out", "respawn"]),
       calls=st.lists(st.tuples(agents, call), min_size=1, max_size=12))
def test_random_tool_calls_never_raise_and_keep_the_state_sane(seed, death, calls):
    w = make_world(seed=seed, rules={"death": death})
    for rnd, (agent, (name, args)) in enumerate(calls, start=1):
        r = TOOLS[name].execute(w, agent, args)
        assert isinstance(r, ToolResult)
        assert r.ok == (r.error is None)
        assert r.text
        for aid in w.players:
            st_ = w.player_state(aid)
            assert 0 <= st_.hp <= st_.max_hp
            assert all(s.count > 0 for s in st_.inventory)
            assert len(st_.inventory) <= w.rules.inventory_slots
            assert w.map.walkable(st_.x, st_.y)
            assert len(w.observe(aid).render_text()) < 4096
        if rnd % 3 == 0:
            w.end_round(rnd)
    w.snapshot()


@settings(max_examples=60, deadline=None)
@given(x=st.integers(-10**9, 10**9), y=st.integers(-10**9, 10**9))
def test_move_to_any_coordinate_never_raises(x, y):
    w = make_world()
    r = TOOLS["move_character"].execute(w, "agent_1", {"x": x, "y": y})
    assert isinstance(r, ToolResult)
    assert w.map.walkable(w.players["agent_1"].x, w.players["agent_1"].y)


def test_model_facing_schemas_have_no_repetition_bounds_and_validation_keeps_the_limits():
    # llama.cpp's grammar builder gives up on maxLength 2000 (the server crashed on the first `complete`):
    # the limit is said in the description and enforced by parse, never put into the schema.
    for spec in TOOLS.values():
        text = json.dumps(spec.json_schema())
        assert "maxLength" not in text and "maxItems" not in text, spec.name
    response = TOOLS["complete"].json_schema()["properties"]["response"]
    assert "At most 2000 characters" in response["description"]
    with pytest.raises(ToolArgsError, match="at most 2000 characters"):
        TOOLS["complete"].parse({"response": "x" * 2001})
    assert TOOLS["complete"].parse({"response": "x" * 2000}).response == "x" * 2000


def test_call_gives_the_validated_arguments_and_lengths_stay_out_of_the_schemas():
    w = make_world(players=[spec("a", "alice", 27, 5, inventory={"logs": 2})])
    result, parsed = TOOLS["move_character"].call(w, "a", {"x": "26", "y": 5})
    assert result.ok and parsed == {"x": 26, "y": 5}  # what the world acted on, not the raw "26"
    result, parsed = TOOLS["craft_item"].call(w, "a", {"skill": " fletching ", "item_key": "stick"})
    assert parsed == {"skill": "Fletching", "itemKey": "stick", "count": 1}
    result, parsed = TOOLS["chat"].call(w, "a", {"message": "x" * 1_000_000})
    assert not result.ok and parsed is None and len(result.text) < 300 and "1,000,000 characters" in result.text
    for t in TOOLS.values():
        validated = t.args.model_json_schema(by_alias=True)["properties"]
        for name, prop in validated.items():  # every string argument has a maximum length in validation
            kinds = prop.get("anyOf", [prop])
            if any(k.get("type") == "string" and "enum" not in k for k in kinds):
                assert any("maxLength" in k for k in kinds), f"{t.name}.{name} has no maximum length"


def test_validated_arguments_kept_per_model_and_exact_values_are_what_validating_again_gives():
    """Calls with the same argument model and the same values of the same types reuse one validation; a value
    equal but of another type (True and 1, 1 and 1.0) is validated on its own, and a refused call is refused
    again. Each call gets its own dump of the validated arguments."""
    import random

    from agentworld.core.world import tools as tools_module
    from agentworld.core.world.tools import ToolArgsError

    class Recorder:  # a world that answers with what the executor asked of it
        def __getattr__(self, name):
            return lambda *args: (name, args)

    world = Recorder()

    def validated_again(spec, raw):
        try:
            args = spec.parse(raw)
        except ToolArgsError as exc:
            return ToolResult.fail("bad_args", str(exc)), None
        return spec.run(world, "a", args), args.model_dump(mode="json", by_alias=True)

    rng = random.Random(3)
    values = [0, 1, 2, True, False, None, "1", " 5 ", "oak_tree#1", "", "logs", "Fletching", "fletching", 1.0, [1]]
    names = ["x", "y", "index", "itemKey", "targetInstance", "seconds", "skill", "count", "message", "global",
             "targetPlayer", "response", "item_key"]
    tools_module._VALIDATED.clear()
    dumps = []
    pairs = [("sleep", {"seconds": 1}), ("sleep", {"seconds": True}), ("equip_item", {"index": 0}),
             ("equip_item", {"index": False}), ("move_character", {"x": 1, "y": 2}), ("move_character", {"x": True, "y": 2}),
             ("move_character", {"x": 1.0, "y": 2}), ("craft_item", {"skill": "fletching", "itemKey": "stick"})]
    calls = [(tools_module.TOOLS[n], raw) for n, raw in pairs * 2]
    for _ in range(4000):
        spec = rng.choice(list(tools_module.TOOLS.values()))
        calls.append((spec, {k: rng.choice(values) for k in rng.sample(names, rng.randint(0, 2))}))
    for spec, raw in calls:
        got = spec.call(world, "a", dict(raw))
        assert got == validated_again(spec, dict(raw)), (spec.name, raw)
        if got[1] is not None:
            dumps.append(got[1])
    assert len({id(d) for d in dumps}) == len(dumps)  # every call its own dump

    class FloatArgs(tools_module.ToolArgs):  # a float argument keeps its sign: 0.0 and -0.0 are equal, not the same
        v: float

    spec = tools_module.ToolSpec("t", "float", FloatArgs, lambda w, a, p: w.t(p.v), "t(v=1.5)")
    for v in (0.0, -0.0, 0.0):
        assert json.dumps(spec.call(world, "a", {"v": v})[1]) == json.dumps({"v": v})
    assert 20 < len(tools_module._VALIDATED) <= tools_module.VALIDATED_KEEP  # and many were kept


def test_validated_arguments_shared_by_calls_cannot_be_changed_by_an_executor():
    """ToolSpec.call hands every call that sends the same values one validated arguments object: an executor
    (a plugin's too) that wrote to it would change every later such call, so it is frozen."""
    import pydantic

    from agentworld.core.world import tools as tools_module

    seen = []
    spec = tools_module.ToolSpec("t", "t", tools_module.MoveArgs, lambda w, a, p: seen.append(p) or w.t(p), "t(x=1, y=2)")

    class World:
        def t(self, parsed):
            with pytest.raises(pydantic.ValidationError, match="frozen"):
                parsed.x = 99
            return ToolResult.fail("bad_args", "not here")

    for _ in range(2):
        spec.call(World(), "a", {"x": 1, "y": 2})
    assert seen[0] is seen[1] and seen[0].x == 1
