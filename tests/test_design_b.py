"""Suite v3's combat and survival designs (``tools/task_authoring/families/b_*.yaml``): the committed task files
are what their families render (mechanics blocks included), the plan steps they use expand as documented, and
the proofs read their joint actions (a warded boss cannot be killed by one agent alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentworld.core.runs.prove import SoloAnalysis, solo_blockers
from agentworld.core.tasks.task import find_task

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "task_authoring"
DESIGNS = sorted(p.stem for p in (TOOLS / "families").glob("b_*.yaml"))


@pytest.mark.parametrize("family", DESIGNS)
def test_committed_files_are_what_the_family_renders(build, family):
    docs = build.family_docs(build.FAMILIES / f"{family}.yaml")
    assert 1 <= len(docs) <= 3  # a design serves at most three tasks
    for doc in docs:
        task_id, text = build.build_task(family, doc)
        committed = (build.OUT / f"{task_id}.yaml").read_text(encoding="utf-8")
        assert committed == text, f"{task_id} is out of date: run build.py {family}"


def test_mechanics_blocks_and_plan_steps_reach_the_task_file(build):
    task = find_task("task_301_gloomwood_warded_treant")
    assert [j.kind for j in task.mechanics.joint_actions] == ["guarded_mob"]
    assert task.mechanics.joint_actions[0].k == 3
    # a walk with spare moves ends with move calls to the same goal (no-ops once there)
    plan = build.A.Plan({"a": (450, 400)})
    build._expand(plan, "a", {"walk": [452, 402], "extra": 2}, 1)
    calls = [plan.steps["a"][r] for r in sorted(plan.steps["a"])]
    assert [c["tool"] for c in calls] == ["move_character"] * 3
    assert {(c["args"]["x"], c["args"]["y"]) for c in calls} == {(452, 402)}
    # a mob the world data does not hold (an event spawns it) is attacked at the place given
    build._expand(plan, "a", {"attack": "goblin#100000", "at": [455, 400]}, 1)
    assert plan.steps["a"][4] == {"tool": "attack_entity", "args": {"targetInstance": "goblin#100000"}}
    build._expand(plan, "a", {"call": "pickup_resource", "args": {"targetInstance": "cache#1"}}, 1)
    assert plan.steps["a"][5]["tool"] == "pickup_resource"


def test_a_warded_boss_is_not_a_solo_kill():
    task = find_task("task_301_gloomwood_warded_treant")
    champion = task.resolve_agent("champion")
    # the ward (3 attackers in one round) is the only reason: without it the champion could fight it alone
    unwarded = task.model_copy(update={"mechanics": None})
    assert SoloAnalysis(unwarded).can_kill(champion, "elder_treant", 1)
    assert not SoloAnalysis(task).can_kill(champion, "elder_treant", 1)
    assert all(why for why in solo_blockers(task).values())
