"""The task proofs (core/runs/prove.py) catch each kind of bad task, and `agentworld tasks prove` reports them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentworld.core import cli as cli_module
from agentworld.core.cli.prove import prove_cmd
from agentworld.core.runs.prove import SoloAnalysis, prove_task, solo_blockers, work_solo
from agentworld.core.tasks.task import find_task, load_task

STAFF = Path(find_task("task_01_staff", validate=False).path)


@pytest.fixture
def staff_raw() -> dict:
    return yaml.safe_load(STAFF.read_text(encoding="utf-8"))


def _write(tmp_path: Path, raw: dict, name: str = "task_x.yaml") -> Path:
    raw = copy.deepcopy(raw)
    raw["id"] = Path(name).stem
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def _finding(proof, name):
    f = proof.finding(name)
    assert f is not None, [x.name for x in proof.findings]
    return f


def test_shipped_starter_task_is_proven():
    proof = prove_task(find_task("task_01_staff"))
    assert proof.ok, [(f.name, f.detail) for f in proof.findings]
    assert proof.ref_rounds is not None and proof.ref_rounds <= proof.budget
    assert proof.slack == proof.budget - proof.ref_rounds
    assert {f.name for f in proof.findings} == {"solvable", "idle fails", "random fails", "collaborative",
                                                "honest verifier"}


def test_illegal_reference_call_fails_solvable(tmp_path, staff_raw):
    # the woodworker tries to hand over sticks before making them: a tool error, named in the finding
    staff_raw["reference_solution"]["agent_2"][0] = {"tool": "transfer_items",
                                                    "args": {"targetPlayer": "wizard", "itemKey": "stick", "count": 3}}
    proof = prove_task(load_task(_write(tmp_path, staff_raw)))
    f = _finding(proof, "solvable")
    assert not f.ok and not proof.ok
    assert "illegal reference call" in f.detail and "agent_2 round 1 transfer_items" in f.detail


def test_unsolved_reference_fails_solvable_and_honesty(tmp_path, staff_raw):
    staff_raw["reference_solution"]["agent_3"] = [{"tool": "sleep", "args": {"seconds": 1}}]
    proof = prove_task(load_task(_write(tmp_path, staff_raw)))
    assert not _finding(proof, "solvable").ok
    assert "oracle fails" in _finding(proof, "solvable").detail
    honest = _finding(proof, "honest verifier")
    assert not honest.ok and "not reached by the oracle: staff with wizard" in honest.detail
    assert proof.ref_rounds is None


def test_plan_longer_than_action_cap_fails(tmp_path, staff_raw):
    staff_raw["max_action_steps"] = 3
    proof = prove_task(load_task(_write(tmp_path, staff_raw)))
    f = _finding(proof, "solvable")
    assert not f.ok and "max_action_steps 3" in f.detail


def test_checkpoint_met_at_spawn_is_dishonest_and_idle_passes(tmp_path, staff_raw):
    # the only check asks for something the wizard already holds: an idle team passes, the check cannot fail
    staff_raw["verifier"]["checks"] = [{"check": "item_count", "item": "bead", "count": 1, "agent": "agent_3"}]
    proof = prove_task(load_task(_write(tmp_path, staff_raw)))
    assert not _finding(proof, "idle fails").ok
    honest = _finding(proof, "honest verifier")
    assert not honest.ok and "already met by an idle team" in honest.detail


def test_guard_checks_alone_are_not_honest(tmp_path, staff_raw):
    staff_raw["verifier"]["checks"] = [{"check": "all_alive"}]
    proof = prove_task(load_task(_write(tmp_path, staff_raw)))
    assert "every checkpoint holds for an idle team" in _finding(proof, "honest verifier").detail


def test_one_agent_with_everything_is_not_collaborative(tmp_path, staff_raw):
    # give the wizard the knife, fletching and logs: the wizard alone can make the staff
    wiz = staff_raw["agent_3"]
    wiz["skill_levels"]["fletching"] = 5
    wiz["inventory_items"] += [{"item": "knife", "count": 1}, {"item": "logs", "count": 2}]
    task = load_task(_write(tmp_path, staff_raw))
    assert solo_blockers(task)["agent_3"] is None
    assert solo_blockers(task)["agent_1"]  # the lumberjack still cannot (the check names the wizard)
    proof = prove_task(task)
    f = _finding(proof, "collaborative")
    assert not f.ok and "wizard could meet every check alone" in f.detail


def test_work_solo_flags_collaboration_by_pinning_only(tmp_path, staff_raw):
    raw = copy.deepcopy(staff_raw)
    raw["agent_1"]["inventory_items"] += [{"item": "knife", "count": 1}, {"item": "bead", "count": 1}]
    raw["agent_1"]["skill_levels"].update(fletching=5, crafting=8)
    task = load_task(_write(tmp_path, raw))
    assert work_solo(task) == ["agent_1"]  # the lumberjack could make the staff, but the check names the wizard
    proof = prove_task(task)
    f = _finding(proof, "collaborative")
    assert f.ok and f.warning and "could do all the work" in f.detail


def test_solo_analysis_reads_the_requirement_graph():
    task = find_task("task_01_staff")
    sa = SoloAnalysis(task)
    assert sa.obtainable("agent_1", "logs")  # axe + lumberjacking
    assert not sa.obtainable("agent_3", "logs")  # the wizard has no axe and cannot make one
    assert sa.obtainable("agent_2", "stick") is False  # knife but no logs: trees need an axe
    assert not sa.obtainable("agent_2", "staff")


def test_sandbox_fights_tell_strong_from_weak():
    task = find_task("task_04_goblins")
    sa = SoloAnalysis(task, seeds=(0,))
    assert sa.can_kill("agent_2", "chicken", 1)  # a trained fighter kills a chicken bare-handed
    assert not sa.can_kill("agent_1", "bandit_king", 1)  # a smith cannot kill the bandit king


def test_prove_command_is_attached_to_the_tasks_group():
    cli_module._load_commands()  # what `agentworld` does at start-up (cli_prove's hook runs after cli_tasks')
    assert "prove" in cli_module.cli.commands["tasks"].commands


def test_cli_prove_exit_codes_and_json(tmp_path, staff_raw):
    runner = CliRunner(env={"COLUMNS": "200"})
    ok = runner.invoke(prove_cmd, ["task_01_staff", "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.output)
    assert data["ok"] is True and data["tasks"][0]["task"] == "task_01_staff"
    assert {"budget", "ref_rounds", "slack", "findings"} <= set(data["tasks"][0])
    staff_raw["verifier"]["checks"] = [{"check": "all_alive"}]
    bad = runner.invoke(prove_cmd, [str(_write(tmp_path, staff_raw, "task_bad.yaml"))])
    assert bad.exit_code == 1
    assert "honest verifier" in bad.output and "FAIL" in bad.output
    none = runner.invoke(prove_cmd, [])
    assert none.exit_code != 0 and "--all" in none.output


def test_one_agent_cannot_be_in_two_places_at_once():
    # task_26: each landmark needs *a* scout (any of six), all at the same time
    blockers = solo_blockers(find_task("task_26_six_scouts"))
    assert blockers["agent_2"].startswith("cannot stand at") and "at once" in blockers["agent_2"]
    assert "needs one of 6 other agent(s)" in blockers["agent_1"]  # the cartographer is not a scout


def test_oracle_seeds_report_how_often_the_plan_passes():
    proof = prove_task(find_task("task_01_staff"), oracle_seeds=3)
    f = _finding(proof, "solvable")
    assert f.ok and not f.warning and "passes with 3/3 seeds" in f.detail
