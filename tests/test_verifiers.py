"""Every built-in verifier check against a real world, plus a custom Python verifier from a plugin."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentworld.core import plugins
from agentworld.core.world.effects import Effects
from agentworld.core.hookspecs import hookimpl
from agentworld.core.play.records import Checkpoint
from agentworld.core.tasks.task import CheckSpec, Task, TaskError, VerifierSpec, load_task, parse_task
from agentworld.core.world.tools import TOOLS
from agentworld.core.tasks.verify import verify
from agentworld.core.world.datapack import load_world
from agentworld.core.world.engine import EmbeddedWorld

DATA = Path(__file__).parent / "data"


class Bench:
    """A task's agents in a fresh world; ``act`` runs a tool and keeps the effects history."""

    def __init__(self, task: Task):
        self.task = task
        self.world = EmbeddedWorld(load_world(), seed=0)
        for a in task.agents:
            self.world.add_player(a.player_spec())
        self.history: list[tuple[str, Effects]] = []

    def act(self, agent: str, tool: str, **args):
        res = TOOLS[tool].execute(self.world, agent, args)
        assert res.ok, res.text
        self.history.append((agent, res.effects))
        return res

    def check(self, **spec) -> Checkpoint:
        t = self.task.model_copy(update={"verifier": VerifierSpec(checks=[CheckSpec.model_validate(spec)])})
        result = verify(t, self.world, self.history)
        return result.checkpoints[0]


@pytest.fixture
def bench() -> Bench:
    return Bench(load_task(DATA / "good_base_task.yaml"))


def test_item_count_agent_any_team(bench: Bench):
    cp = bench.check(check="item_count", item="bead", agent="agent_3")
    assert (cp.value, cp.target, cp.achieved) == (1, 1, True)
    assert cp.name == "bead with wizard"
    assert not bench.check(check="item_count", item="bead", agent="wizard", count=2).achieved  # username works too
    bench.act("agent_2", "transfer_items", targetPlayer="lumberjack", itemKey="logs", count=1)
    assert bench.check(check="item_count", item="logs").value == 1  # any one agent: the best holder
    assert bench.check(check="item_count", item="logs", scope="team", count=2).achieved
    assert not bench.check(check="item_count", item="logs", count=2).achieved


def test_item_count_counts_equipped_pieces(bench: Bench):
    bench.act("agent_1", "equip_item", itemKey="axe")
    assert bench.world.player_state("agent_1").count("axe") == 0
    assert bench.check(check="item_count", item="axe", agent="agent_1").achieved


def test_equipped(bench: Bench):
    assert not bench.check(check="equipped", item="axe").achieved
    bench.act("agent_1", "equip_item", itemKey="axe")
    assert bench.check(check="equipped", item="axe").achieved
    assert bench.check(check="equipped", item="axe", agent="agent_1").achieved
    assert not bench.check(check="equipped", item="axe", agent="agent_2").achieved


def test_crafted_and_delivered(bench: Bench):
    assert bench.check(check="crafted", item="stick").value == 0
    bench.act("agent_2", "craft_item", skill="Fletching", itemKey="stick", count=2)
    cp = bench.check(check="crafted", item="stick", count=4)
    assert cp.achieved and cp.value == 4
    assert not bench.check(check="crafted", item="stick", agent="agent_1").achieved
    assert not bench.check(check="delivered", item="stick", to="agent_3").achieved
    bench.act("agent_2", "transfer_items", targetPlayer="wizard", itemKey="stick", count=3)
    cp = bench.check(check="delivered", item="stick", to="agent_3", count=3)
    assert cp.achieved and cp.name == "stick delivered to wizard"
    assert bench.check(check="delivered", item="stick", to="agent_3", **{"from": "agent_2"}).achieved
    assert not bench.check(check="delivered", item="stick", to="agent_3", **{"from": "agent_1"}).achieved
    # held from the start but never handed over: not a delivery
    assert not bench.check(check="delivered", item="bead", to="agent_3").achieved


def test_at_location(bench: Bench):
    assert bench.check(check="at_location", landmark="hearthmoor").achieved  # everyone, landmark radius
    cp = bench.check(check="at_location", x=450, y=400, radius=0)
    assert (cp.value, cp.target, cp.achieved) == (1, 3, False)
    assert bench.check(check="at_location", x=450, y=400, radius=0, require="any").achieved
    assert bench.check(check="at_location", x=451, y=400, radius=0, agent="agent_2").achieved
    assert not bench.check(check="at_location", x=451, y=400, radius=0, agents=["agent_1", "agent_3"]).achieved
    bench.act("agent_1", "move_character", x=430, y=400)
    assert not bench.check(check="at_location", x=450, y=400, radius=5, agent="agent_1").achieved


class _OneDead:
    """A world whose agent_2 is dead (reads only: verifiers never act)."""

    def __init__(self, world):
        self.world = world

    def player_state(self, agent_id):
        st = self.world.player_state(agent_id)
        return st.model_copy(update={"alive": False, "hp": 0}) if agent_id == "agent_2" else st


def test_all_alive(bench: Bench):
    cp = bench.check(check="all_alive")
    assert cp.achieved and cp.value == 3
    t = bench.task.model_copy(update={"verifier": VerifierSpec(checks=[CheckSpec(check="all_alive")])})
    res = verify(t, _OneDead(bench.world), [])
    assert not res.success and res.checkpoints[0].value == 2 and res.message == "all alive: no"


def test_kills_come_from_engine_state_not_text():
    w = load_world()
    chicken = min((m for m in w.mobs if m.type == "chicken"), key=lambda m: m.id)
    spot = w.map.nearest_walkable(chicken.x + 2, chicken.y)
    raw = {
        "id": "kill_test", "task": {"name": "k"}, "objectives": {"primary": "kill"},
        "agent_1": {"username": "hunter", "location": {"x": spot[0], "y": spot[1]},
                    "skill_levels": {"strength": 20, "accuracy": 20, "defense": 20, "health": 20}},
        "agent_2": {"username": "talker", "location": {"x": spot[0], "y": spot[1]}},
    }
    b = Bench(parse_task(raw, "kill_test.yaml", "kill_test"))
    b.act("agent_2", "chat", message="I killed a chicken! chicken killed!")
    assert b.check(check="kills", mob="chicken").value == 0
    b.act("agent_1", "attack_entity", targetInstance=chicken.id)
    cp = b.check(check="kills", mob="chicken")
    assert cp.achieved and cp.value == 1 and cp.name == "chicken killed"
    assert b.check(check="kills", mob="chicken", agent="agent_1").achieved
    assert not b.check(check="kills", mob="chicken", agent="agent_2").achieved
    assert not b.check(check="kills", mob="goblin").achieved


def test_verify_message_psr_and_unverifiable(bench: Bench):
    t = bench.task.model_copy(update={"verifier": VerifierSpec(checks=[
        CheckSpec.model_validate({"check": "item_count", "item": "staff", "agent": "agent_3", "name": "staff with wizard"}),
        CheckSpec(check="all_alive")])})
    res = verify(t, bench.world, [])
    assert res.message == "staff with wizard: 0/1, all alive: yes"
    # all_alive is a guard: it can fail the task but is never progress, so nothing achieved yet is PSR 0
    assert res.psr == 0.0 and not res.success and [cp.guard for cp in res.checkpoints] == [False, True]
    paper = load_task(DATA / "paper_task_01.yaml")
    res = verify(paper, bench.world, [])
    assert not res.verifiable and not res.success and res.checkpoints == []


class _CustomVerifierPlugin:
    @hookimpl
    def register_verifiers(self, register):
        def woodworker_has_logs(ctx, minimum=1):
            n = ctx.state("woodworker").count("logs")
            return Checkpoint(name="woodworker logs", check="woodworker_has_logs", value=n, target=minimum,
                              achieved=n >= minimum)

        register("woodworker_has_logs", woodworker_has_logs, description="test verifier")


def test_custom_python_verifier_from_a_plugin(bench: Bench):
    plugins.register_plugin(_CustomVerifierPlugin(), name="test-custom-verifier")
    try:
        t = bench.task.model_copy(update={"verifier": VerifierSpec(python="woodworker_has_logs", python_args={"minimum": 2})})
        res = verify(t, bench.world, [])
        assert res.success and res.message == "woodworker logs: 2/2"
        bench.act("agent_2", "transfer_items", targetPlayer="lumberjack", itemKey="logs", count=1)
        assert not verify(t, bench.world, []).success
    finally:
        plugins.unregister_plugin("test-custom-verifier")


def test_a_guard_fails_the_task_but_is_never_progress(bench: Bench):
    t = bench.task.model_copy(update={"verifier": VerifierSpec(checks=[
        CheckSpec.model_validate({"check": "item_count", "item": "bead", "agent": "agent_3"}),
        CheckSpec.model_validate({"check": "at_location", "landmark": "hearthmoor", "guard": True}),
        CheckSpec(check="all_alive")])})
    res = verify(t, bench.world, [])
    assert res.success and res.psr == 1.0  # one progress checkpoint, achieved; the guards hold
    assert verify(t, _OneDead(bench.world), []).success is False  # a broken guard fails the task
    only_guards = bench.task.model_copy(update={"verifier": VerifierSpec(checks=[CheckSpec(check="all_alive")])})
    res = verify(only_guards, bench.world, [])
    assert not res.success and res.psr == 0.0  # nothing to make progress on


def test_equipped_counts_a_stack_and_its_wearers():
    w = load_world()
    raw = {"id": "eq", "task": {"name": "e"}, "objectives": {"primary": "arm"},
           "agent_1": {"username": "archer", "location": {"x": 450, "y": 400}, "skill_levels": {"archery": 10},
                       "inventory_items": [{"item": "bronze_arrow", "count": 30}, {"item": "axe", "count": 1}]},
           "agent_2": {"username": "squire", "location": {"x": 451, "y": 400},
                       "inventory_items": [{"item": "axe", "count": 1}]}}
    b = Bench(parse_task(raw, "eq.yaml", "eq"))
    assert w is not None
    b.act("agent_1", "equip_item", itemKey="bronze_arrow")
    cp = b.check(check="equipped", item="bronze_arrow", count=20)
    assert cp.achieved and cp.value == 30 and cp.name == "20 bronze_arrow equipped"
    assert not b.check(check="equipped", item="bronze_arrow", count=31).achieved
    assert b.check(check="item_count", item="bronze_arrow", agent="archer", count=30).achieved  # the worn stack counts
    b.act("agent_1", "equip_item", itemKey="axe")
    assert b.check(check="equipped", item="axe").value == 1
    b.act("agent_2", "equip_item", itemKey="axe")
    assert b.check(check="equipped", item="axe", count=2).achieved  # two wearers
    assert not b.check(check="equipped", item="axe", count=2, agents=["agent_1"]).achieved


def test_kills_are_credited_to_named_agents_and_roles():
    w = load_world()
    chickens = sorted((m for m in w.mobs if m.type == "chicken"), key=lambda m: m.id)[:2]
    spot = w.map.nearest_walkable(chickens[0].x + 2, chickens[0].y)
    fighter = {"strength": 20, "accuracy": 20, "defense": 20, "health": 20}
    raw = {"id": "kr", "task": {"name": "k"}, "objectives": {"primary": "kill"},
           "agent_1": {"username": "h1", "role": "hunter", "location": {"x": spot[0], "y": spot[1]}, "skill_levels": fighter},
           "agent_2": {"username": "h2", "role": "cook", "location": {"x": spot[0], "y": spot[1]}, "skill_levels": fighter}}
    b = Bench(parse_task(raw, "kr.yaml", "kr"))
    b.act("agent_2", "attack_entity", targetInstance=chickens[0].id)
    assert b.check(check="kills", mob="chicken").achieved  # the team
    assert not b.check(check="kills", mob="chicken", role="hunter").achieved  # the cook's kill is not the hunter's
    assert b.check(check="kills", mob="chicken", agents=["h1", "h2"]).achieved
    cp = b.check(check="kills", mob="chicken", role="cook")
    assert cp.achieved and cp.name == "chicken killed by the cooks"


def test_provenance_follows_units_through_transfers_and_crafts(bench: Bench):
    # the woodworker starts with 2 logs (kit) and fletches sticks (crafted); the wizard's bead is kit
    bench.act("agent_2", "craft_item", skill="Fletching", itemKey="stick", count=1)
    bench.act("agent_2", "transfer_items", targetPlayer="wizard", itemKey="stick", count=2)
    assert bench.check(check="item_count", item="stick", agent="agent_3", origin="crafted", count=2).achieved
    assert not bench.check(check="item_count", item="logs", agent="agent_2", origin="harvested").achieved
    assert bench.check(check="item_count", item="logs", agent="agent_2", origin="kit").achieved
    assert bench.check(check="delivered", item="stick", to="agent_3", count=2, origin="crafted").achieved
    assert not bench.check(check="delivered", item="stick", to="agent_3", origin="looted").achieved
    # a craft whose consumed stick was crafted passes from_origin; one made from kit does not
    cp = bench.check(check="crafted", item="stick", from_origin={"logs": "kit"})
    assert cp.achieved and cp.name == "stick crafted from kit logs"
    assert not bench.check(check="crafted", item="stick", from_origin={"logs": "harvested"}).achieved


def test_at_location_by_interior_area_not_radius():
    w = load_world()
    inside = w.map.nearest_walkable(905, 520, max_radius=10)  # the Ice Cavern
    raw = {"id": "area", "task": {"name": "a"}, "objectives": {"primary": "in"},
           "agent_1": {"username": "a", "location": {"x": inside[0], "y": inside[1]}},
           "agent_2": {"username": "b", "location": {"x": 450, "y": 400}}}
    b = Bench(parse_task(raw, "area.yaml", "area"))
    cp = b.check(check="at_location", area="ice_cavern", agent="agent_1")
    assert cp.achieved and cp.name == "a in ice_cavern"
    assert not b.check(check="at_location", area="ice_cavern").achieved  # b is on the mainland
    assert not b.check(check="at_location", area="ice_cavern", agent="agent_1", biome="cave").achieved  # ice_cave tiles
    assert b.check(check="at_location", area="ice_cavern", agent="agent_1", biome="ice_cave").achieved


def test_area_checks_name_real_interiors(tmp_path):
    raw = yaml.safe_load((DATA / "good_base_task.yaml").read_text())
    raw["verifier"]["checks"].append({"check": "at_location", "area": "hearthmoor"})
    raw["verifier"]["checks"].append({"check": "kills", "mob": "wolf", "role": "archer"})
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(TaskError) as err:
        load_task(path)
    text = str(err.value)
    assert "verifier.checks[1].area" in text and "mainland" in text
    assert "verifier.checks[2].role" in text and "no agent has the role 'archer'" in text
