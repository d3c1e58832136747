"""The shipped main suite: 40 tasks with the agreed spread, every one valid and proven.

`tasks prove --all` here is the CI gate: each task's reference solution passes within its budget using
only legal calls, an idle and a random team fail, no single agent can meet the verifier alone, and every
checkpoint is reached by the oracle and can fail.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from agentworld.core.cli.prove import prove_cmd
from agentworld.core.cli.tasks import tasks_group
from agentworld.core.tasks.task import CATEGORIES, load_suite


@pytest.fixture(scope="module")
def listed() -> list[dict]:
    result = CliRunner().invoke(tasks_group, ["list", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def suite():
    return load_suite("main")


def test_forty_tasks_listed(listed):
    assert len(listed) == 40
    assert len({t["id"] for t in listed}) == 40
    assert all(t["verifiable"] for t in listed)


def test_every_category_has_at_least_three(listed):
    counts = Counter(t["category"] for t in listed)
    assert set(counts) == set(CATEGORIES)
    assert min(counts.values()) >= 3, counts


def test_team_sizes(listed):
    sizes = [t["agents"] for t in listed]
    assert min(sizes) >= 3 and max(sizes) <= 20
    assert sum(1 for n in sizes if n == 3) >= 15
    assert sum(1 for n in sizes if 5 <= n <= 9) >= 8
    assert sum(1 for n in sizes if n == 10) >= 8
    assert sum(1 for n in sizes if 11 <= n <= 20) >= 4


def test_round_budgets(listed):
    assert all(25 <= t["rounds"] <= 55 for t in listed), [(t["id"], t["rounds"]) for t in listed
                                                         if not 25 <= t["rounds"] <= 55]


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


def test_every_task_has_several_checkpoints(suite):
    for task in suite:
        assert task.verifier is not None and len(task.verifier.checks) >= 2, task.id


def test_prove_all_command_passes():
    result = CliRunner(env={"COLUMNS": "200"}).invoke(prove_cmd, ["--all", "--json"])
    data = json.loads(result.output)
    failed = {t["task"]: [f for f in t["findings"] if not f["ok"]] for t in data["tasks"] if not t["ok"]}
    assert result.exit_code == 0 and data["ok"], failed
    assert len(data["tasks"]) == 40
    for t in data["tasks"]:
        assert t["ref_rounds"] is not None and t["slack"] >= 5, t
        assert t["plan_steps"] <= t["max_action_steps"], t
