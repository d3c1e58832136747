"""The shipped main suite (v2): 100 tasks in the paper's shape, every one valid; a sample proven here.

The statistics are read from the task files (no episodes): categories, team sizes, budgets, plan lengths,
hand-offs in the plans and the communication tasks. `agentworld tasks prove --all` proves every task
(minutes, not for every test run; `benchmarks/bench_suite.py` times it); this module proves a sample with
the default strict proofs, through the CLI.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest
from click.testing import CliRunner

from agentworld.core.cli.prove import prove_cmd
from agentworld.core.cli.tasks import tasks_group
from agentworld.core.tasks.task import CATEGORIES, load_suite

HANDOFF_TOOLS = ("transfer_items", "chat", "send_chat_message")


@pytest.fixture(scope="module")
def listed() -> list[dict]:
    result = CliRunner().invoke(tasks_group, ["list", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def suite():
    return load_suite("main")


def plan_rounds(task) -> int:
    return max(len(steps) for steps in task.reference_solution.values())


def plan_handoffs(task) -> int:
    """Transfers and chat messages in the reference plan: the items and facts one agent hands another."""
    return sum(1 for steps in task.reference_solution.values() for s in steps if s.tool in HANDOFF_TOOLS)


def built(task) -> bool:
    """Written from a family template by tools/task_authoring/build.py (the v2 tasks)."""
    with open(task.path, encoding="utf-8") as fh:
        return "tools/task_authoring/build.py" in fh.readline()


def test_a_hundred_tasks_listed(listed):
    assert len(listed) == 100
    assert len({t["id"] for t in listed}) == 100
    assert all(t["verifiable"] for t in listed)


def test_categories_in_the_papers_shape(suite):
    counts = Counter(t.category for t in suite)
    assert set(counts) == set(CATEGORIES)
    ranked = [c for c, _ in counts.most_common()]
    assert set(ranked[:2]) == {"combat", "crafting"}, counts  # the most common
    assert set(ranked[-2:]) == {"coordination", "construction"}, counts  # the rarest ...
    assert counts["coordination"] >= 6 and counts["construction"] >= 6, counts  # ... but at least 6 each


def test_team_sizes_have_a_long_tail(suite):
    sizes = Counter(len(t.agents) for t in suite)
    assert min(sizes) >= 3 and max(sizes) == 20
    assert sizes[3] >= 45, sizes
    assert sum(n for k, n in sizes.items() if k >= 10) >= 10, sizes
    assert sizes[20] >= 3, sizes


def test_round_budgets(suite):
    budgets = [t.rounds for t in suite]
    assert all(25 <= b <= 55 for b in budgets), [(t.id, t.rounds) for t in suite if not 25 <= t.rounds <= 55]
    # suite v3 budgets each design at 1.25x..1.6x of its fastest known solution (16 to 40 rounds), so the mean
    # fell from v2's 40 when the short v2 tasks lost their 2.4x budgets (28 then); it climbs as longer designs
    # replace them (the target is "near 38"): this floor is a ratchet, raised as the suite gets there
    assert 27 <= statistics.fmean(budgets) <= 41, statistics.fmean(budgets)


def test_long_horizon_plans(suite):
    rounds = [plan_rounds(t) for t in suite]
    assert statistics.median(rounds) >= 15, statistics.median(rounds)
    short = [(t.id, plan_rounds(t)) for t in suite if plan_rounds(t) < 10]
    assert not short, short
    ratios = [(t.id, t.rounds / plan_rounds(t)) for t in suite]
    # suite v3 budgets 1.25x to 1.6x of the fastest known solution, which can be much shorter than the plan
    # (task_431: a 26-round plan with no slack in it, budget 33): the plan must fit, and 3x is the v2 ceiling
    assert all(1.0 <= r <= 3.0 for _, r in ratios), [x for x in ratios if not 1.0 <= x[1] <= 3.0]


def test_hand_offs(suite):
    assert statistics.median(plan_handoffs(t) for t in suite) >= 4
    assert all(plan_handoffs(t) >= 3 for t in suite if built(t))


def test_communication_tasks(suite):
    talking = [t for t in suite if t.needs_communication]
    assert len(talking) >= 40
    must = [t.id for t in suite if t.category in ("coordination", "trading", "exploration") and not t.needs_communication]
    assert not must, must
    for t in talking:  # a task that needs talking has a plan that talks
        assert any(s.tool in ("chat", "send_chat_message") for steps in t.reference_solution.values() for s in steps), t.id


def test_roles_are_asymmetric_and_documented(suite):
    for task in suite:
        assert task.reference_solution, task.id
        kits = set()
        for a in task.agents:
            assert a.guideline.strip(), f"{task.id}.{a.agent_id} has no guideline"
            assert a.role, f"{task.id}.{a.agent_id} has no role"
            kits.add((tuple(sorted(a.skills.items())), tuple(sorted(s.item for s in a.inventory + a.equipment)),
                      (a.x, a.y)))
        assert len(kits) == len(task.agents), f"{task.id}: two agents start identical"


def test_every_task_has_a_progress_checkpoint_and_guards_are_not_progress(suite):
    from agentworld.core.tasks.verify import is_guard

    for task in suite:
        assert task.verifier is not None and len(task.verifier.checks) >= 2, task.id
        assert any(not is_guard(c) for c in task.verifier.checks), task.id


SAMPLE = ["task_205_goldfield_two_forges", "task_16_ice_cavern", "task_44_oakridge_wolves", "task_430_saltmarsh_guild_letter",
          "task_76_hearthmoor_survey"]


def test_prove_a_sample_with_the_default_strict_proofs():
    result = CliRunner(env={"COLUMNS": "200"}).invoke(prove_cmd, [*SAMPLE, "--json", "--jobs", "1"])
    data = json.loads(result.output)
    failed = {t["task"]: [f for f in t["findings"] if not f["ok"]] for t in data["tasks"] if not t["ok"]}
    assert result.exit_code == 0 and data["ok"], failed
    assert [t["task"] for t in data["tasks"]] == SAMPLE
    for t in data["tasks"]:
        names = {f["name"] for f in t["findings"]}
        assert {"knowable", "every agent needed", "random fails"} <= names, t["task"]
        assert t["plan_steps"] <= t["max_action_steps"], t
    talking = [t for t in data["tasks"] if t["needs_communication"]]
    assert talking and all(t["fact_handoffs"] >= 1 for t in talking)
    assert data["summary"]["tasks"] == len(SAMPLE) and data["summary"]["proven"] == len(SAMPLE)
