"""Every (task, variant) cell is proven or n/a with a reason, and runs refuse n/a cells at planning time.

A sample of tasks covers the kinds of single_agent cell: applies, two places at once, hand-offs only (picked
by tests/variant_picks.py, so the tests follow the suite). `agentworld tasks prove --all --variants` proves every cell (docs/tasks.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli
from agentworld.core.play.policies import IdlePolicy
from agentworld.core.runs.prove_variants import play_variant, prove_variant, prove_variants
from agentworld.core.runs.runner import read_results_file
from agentworld.core.tasks.task import CheckSpec, find_task
from agentworld.core.tasks.variants import PROVEN_VARIANTS, apply_variant, not_applicable

sys.path.insert(0, str(Path(__file__).parent))
from variant_picks import pick  # noqa: E402

_load_commands()


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


def test_every_cell_of_a_sample_is_proven_or_not_applicable_with_a_reason():
    sample = [pick("applies"), pick("places")]
    cells = prove_variants(sample)
    assert len(cells) == len(sample) * len(PROVEN_VARIANTS)
    assert [c for c in cells if not c.ok] == []
    na = {(c.task_id, c.variant): c.detail for c in cells if c.status == "n/a"}
    assert (sample[0].id, "single_agent") not in na
    assert "at the same time" in na[(sample[1].id, "single_agent")]
    by_id = {t.id: t for t in sample}  # a pick may be a fixture file, not findable by its id
    assert all(reason == not_applicable(by_id[t], v) for (t, v), reason in na.items())
    assert "hand-offs" in not_applicable(pick("hand-offs"), "single_agent")
    for c in cells:
        if c.status == "proven":
            assert c.idle_psr is not None and c.plan_rounds is not None and c.plan_rounds <= c.budget


def test_no_applicable_cell_is_passed_by_an_idle_team():
    for task_id in ("task_04_goblins", "task_16_ice_cavern"):
        task = find_task(task_id)
        for variant in PROVEN_VARIANTS:
            if not_applicable(task, variant):
                continue
            played = apply_variant(task, variant)
            result, _ = play_variant(task, played, variant, IdlePolicy())
            assert not result.success, (task_id, variant, result.message)


def test_a_cell_an_idle_team_passes_fails_the_proof():
    task = pick("applies")
    holder = next(a for a in task.agents if a.inventory)  # a check that holds at spawn: free for an idle team
    free = task.verifier.model_copy(update={"checks": [CheckSpec.model_validate(
        {"check": "item_count", "item": holder.inventory[0].item, "agent": holder.agent_id})]})
    cell = prove_variant(task.model_copy(update={"verifier": free}), "party_status")
    assert cell.status == "failed" and "an idle team passes" in cell.detail
    broken = {k: v[:1] for k, v in task.reference_solution.items()}
    cell = prove_variant(task.model_copy(update={"reference_solution": broken}), "no_documentation")
    assert cell.status == "failed" and "the adapted plan fails" in cell.detail


def test_single_agent_run_passes_with_the_adapted_plan_and_fails_idle(tmp_path: Path):
    for framework, success in (("oracle", True), ("idle", False)):
        out = tmp_path / framework
        res = invoke("run", "--task", pick("applies").path, "--variant", "single_agent", "--framework", framework,
                     "--out", str(out), "--json")
        assert res.exit_code == 0, res.output
        (result,) = read_results_file(out / "results.jsonl")
        assert result.success is success and result.n_agents == 1 and result.infra_errors == 0


def test_single_agent_run_where_it_does_not_apply_is_a_usage_error(tmp_path: Path):
    out = tmp_path / "run"
    na, ok = pick("places").id, pick("applies").id
    na_file, ok_file = pick("places").path, pick("applies").path  # what the command line names (a pick may be a fixture)
    res = invoke("run", "--task", na_file, "--variant", "single_agent", "--framework", "oracle", "--out", str(out))
    assert res.exit_code == 2  # click's exit code for usage errors
    assert f"does not apply to {na}" in res.output and "at the same time" in res.output
    assert "Traceback" not in res.output
    assert not (out / "results.jsonl").exists()  # nothing ran, nothing recorded (no infrastructure error)
    # in a grid the n/a cell is left out and listed; the rest runs
    res = invoke("run", "--task", na_file, "--task", ok_file, "--variant", "single_agent", "--framework", "oracle",
                 "--out", str(out), "--no-progress")
    assert res.exit_code == 0, res.output
    assert f"n/a  single_agent · {na}" in res.output
    assert [r.task_id for r in read_results_file(out / "results.jsonl")] == [ok]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(c["task_id"], c["variant"]) for c in manifest["not_applicable"]] == [(na, "single_agent")]


def test_tasks_prove_variants_prints_the_matrix_and_reasons():
    na = pick("places").id
    res = invoke("tasks", "prove", pick("places").path, "--variant", "single_agent", "--variant", "party_status")
    assert res.exit_code == 0, res.output
    assert "1 (task, variant) cells proven, 1 n/a with a reason, 0 failed" in res.output
    assert f"{na} single_agent: n/a the objective needs agents" in res.output
    res = invoke("tasks", "prove", pick("places").path, "--variant", "party_status", "--json")
    data = json.loads(res.output)
    assert data["ok"] and [c["status"] for c in data["variants"]] == ["proven"]
    res = invoke("tasks", "prove", pick("places").path, "--variant", "no_such")
    assert res.exit_code == 2 and "unknown variant" in res.output
