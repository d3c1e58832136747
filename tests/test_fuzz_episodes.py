"""Property test: whole episodes driven through the turn gate with arbitrary tool calls (hypothesis draws
them: well-formed calls aimed at what the agent sees, junk arguments, unknown tools, second calls, calls out
of turn and by departed agents). After every call and every tick the world's invariants hold
(core/play/fuzzing.py), no exception escapes, and replaying the same calls gives the same trajectory.

Bounded for CI: a 3-agent task on the 40x30 fixture world, at most 8 rounds, 30 examples. Long campaigns on
the real world and the shipped tasks: benchmarks/fuzz.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentworld.core.play.episode import Episode
from agentworld.core.play.fuzzing import Call, Ref, TurnPlan, fuzz_episode
from agentworld.core.play.records import TurnEvent
from agentworld.core.tasks.mobs import world_options
from agentworld.core.tasks.task import parse_task
from agentworld.core.world.engine import EmbeddedWorld
from agentworld.core.world.tools import TOOL_NAMES, TOOLS

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import RECIPES, fixture_world  # noqa: E402

TASK = {
    "id": "fuzz_camp", "category": "crafting",
    "task": {"name": "Fuzz camp", "description": "Three agents near trees, stations and a chicken."},
    "objectives": {"primary": "carol holds a copper bar"},
    "agent_1": {"username": "alice", "location": {"x": 6, "y": 6}, "skill_levels": {"lumberjacking": 10},
                "inventory_items": [{"item": "bronze_axe"}, {"item": "knife"}, {"item": "logs", "count": 2}]},
    "agent_2": {"username": "bob", "location": {"x": 9, "y": 17}, "skill_levels": {"smithing": 10, "smelting": 10},
                "inventory_items": [{"item": "copper_ore", "count": 3}, {"item": "hammer"},
                                    {"item": "cooked_trout", "count": 2}]},
    "agent_3": {"username": "carol", "location": {"x": 4, "y": 4},
                "inventory_items": [{"item": "copper_sword"}, {"item": "berries", "count": 3}]},
    "verifier": {"checks": [{"check": "item_count", "item": "copper_bar", "agent": "agent_3"}]},
}
RECIPE_OUTPUTS = sorted({o for r in RECIPES for o in r.outputs})
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(), st.text(max_size=12),
    st.sampled_from(["", "  ", "x" * 1001, "0", "-1", "7", "logs", "oak_tree#1", "chicken#1", "alice", "agent_2"]))
REF = st.builds(Ref, st.sampled_from(["nearby", "inv_key", "inv_index", "teammate", "x", "y", "recipe"]),
                st.integers(-80, 80))
VALUE = st.one_of(REF, SCALAR, st.lists(SCALAR, max_size=2),
                  st.dictionaries(st.text(max_size=3), SCALAR, max_size=2))
PARAMS = sorted({p for t in TOOLS.values() for p in t.parameter_names()} | {"junk", "item_key", "target_instance"})
JUNK_ARGS = st.one_of(st.dictionaries(st.sampled_from(PARAMS), VALUE, max_size=4),
                      st.sampled_from([None, [], "move", 3, [1, 2], {"": None}]))
SMALL = st.integers(1, 5)
WELL_FORMED = st.one_of(
    st.builds(lambda dx, dy: Call("move_character", {"x": Ref("x", dx), "y": Ref("y", dy)}),
              st.integers(-70, 70), st.integers(-70, 70)),
    *(st.builds(lambda kind, k, t=t: Call(t, {"targetInstance": Ref(kind, k)}),
                st.sampled_from(["nearby", f"nearby:{kind}", f"nearby:{kind}"]), st.integers(0, 30))
      for t, kind in (("harvest_resource", "resource"), ("pickup_resource", "ground_item"), ("attack_entity", "mob"))),
    st.builds(lambda k, j, n: Call("transfer_items", {"targetPlayer": Ref("teammate", k),
                                                      "itemKey": Ref("inv_key", j), "count": n}),
              st.integers(0, 3), st.integers(0, 9), SMALL),
    st.builds(lambda k: Call("equip_item", {"index": Ref("inv_index", k)}), st.integers(0, 9)),
    st.builds(lambda k: Call("equip_item", {"itemKey": Ref("inv_key", k)}), st.integers(0, 9)),
    st.builds(lambda s, k, n: Call("craft_item", {"skill": s, "itemKey": Ref("recipe", k), "count": n}),
              st.sampled_from(["Crafting", "smithing", "Fletching", "Cooking", "Smelting"]), st.integers(0, 20),
              st.integers(1, 10)),
    st.builds(lambda m, g: Call("send_chat_message", {"message": m, "global": g}), st.text(min_size=1, max_size=20),
              st.booleans()),
    st.builds(lambda m: Call("chat", {"message": m}), st.text(min_size=1, max_size=20)),
    st.builds(lambda s: Call("sleep", {"seconds": s}), st.integers(1, 60)),
    st.just(Call("enter_portal", {})), st.just(Call("stop_action", {})),
    st.builds(lambda r: Call("complete", {"response": r}), st.text(max_size=10)),
)
JUNK_CALL = st.builds(Call, st.sampled_from(list(TOOL_NAMES) + ["", "teleport", "Chat", "x" * 300]), JUNK_ARGS)
CALL = st.one_of(WELL_FORMED, WELL_FORMED, WELL_FORMED, JUNK_CALL)  # mostly calls the world acts on
PLAN = st.builds(TurnPlan, st.lists(CALL, max_size=3), st.one_of(st.none(), st.none(), CALL), st.integers(0, 5))


# issue 26's mechanics: moving mobs (a roaming aggressive wolf and a patrolling goblin), finite nodes, a carry limit
MECHANICS = {"mobs": {"wolf": {"roam": 4, "speed": 2}, "goblin#1": {"patrol": [[12, 8], [6, 3]]},
                      "chicken": {"roam": 3}},
             "nodes": {"oak_tree#1": {"total": 2}, "berry_bush": {"total": 3}}}


def episode_factory(rounds: int, death: str, seed: int, folder: Path | None = None, mechanics: bool = False):
    """Episodes of the fuzz task; with ``folder``, each writes its trajectory there (so the writer and the
    reader are fuzzed too, and the replay compares what was written); ``mechanics``: with moving mobs, finite
    nodes and a carrying limit."""
    rules = {"death": death, "move_range": 12, **({"carry_limit": 14} if mechanics else {})}
    raw = json.loads(json.dumps({**TASK, "rounds": rounds, "max_action_steps": 6, "world_rules": rules,
                                 **(MECHANICS if mechanics else {})}))
    task = parse_task(raw, "fuzz_camp.yaml", "fuzz_camp")
    made = []

    def make(team):
        made.append(1)
        out = folder / f"episode_{len(made)}" if folder is not None else None
        return Episode(task, team, seed=seed, out_dir=out,
                       world=EmbeddedWorld(fixture_world(), seed=seed, rules=dict(task.world_rules),
                                           **world_options(task)))
    return make


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans=st.lists(PLAN, max_size=24), rounds=st.integers(1, 8), death=st.sampled_from(["out", "respawn"]),
       seed=st.integers(0, 3), mechanics=st.booleans())
def test_arbitrary_calls_keep_every_invariant_and_replay_identically(plans, rounds, death, seed, mechanics):
    with tempfile.TemporaryDirectory() as tmp:
        report = asyncio.run(fuzz_episode(episode_factory(rounds, death, seed, Path(tmp), mechanics), plans,
                                          RECIPE_OUTPUTS))
    assert not report.exceptions, report.exceptions
    assert not report.violations, report.violations[:5]
    assert report.replayed


def test_the_fuzzer_finds_a_broken_invariant():
    """The checks can fail: an engine that conjures an item without recording it is caught."""
    make = episode_factory(2, "out", 0)

    def broken(team):
        ep = make(team)
        original = ep.world.sleep

        def sleep(agent_id, seconds):
            ep.world.players[agent_id].inv.add("logs", 1)  # an unrecorded gain
            return original(agent_id, seconds)

        ep.world.sleep = sleep
        return ep

    report = asyncio.run(fuzz_episode(broken, [TurnPlan([Call("sleep", {"seconds": 1})])], RECIPE_OUTPUTS,
                                      check_replay=False))
    assert any("items changed by {'logs': 1} but the effects say {}" in v for v in report.violations)


def test_the_trajectory_keeps_the_validated_arguments_next_to_the_raw_ones():
    plans = [TurnPlan([Call("move_character", {"x": "8", "y": 6})]), TurnPlan([Call("move_character", {"x": 1})])]
    make = episode_factory(1, "out", 0)
    episodes = []

    def keep(team):
        episodes.append(make(team))
        return episodes[-1]

    report = asyncio.run(fuzz_episode(keep, plans, RECIPE_OUTPUTS, check_replay=False))
    assert not report.violations
    turns = [e for e in episodes[0].events if isinstance(e, TurnEvent)]
    assert turns[0].arguments == {"x": "8", "y": 6} and turns[0].parsed_arguments == {"x": 8, "y": 6}
    assert turns[1].error == "bad_args" and turns[1].parsed_arguments is None
