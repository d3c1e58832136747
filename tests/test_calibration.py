"""Pilot records and the calibration table: pilot.json is validated with errors naming file and field,
`tasks record-pilot` writes a pilot folder from a real episode folder, a pilot of an older task version is
stale, and `tasks calibration --json` computes the per-task, per-category and target figures from fixture
pilots."""

from __future__ import annotations

import asyncio
import gzip
import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli.calibration import calibration_cmd, record_pilot_cmd
from agentworld.core.play.episode import Episode
from agentworld.core.play.policies import PolicyTeam, make_policy
from agentworld.core.runs import calibration as C
from agentworld.core.runs.pilots import PilotError, load_pilots, read_pilot, task_digest
from agentworld.core.tasks.task import find_task

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

SHIPPED = Path(__file__).resolve().parents[1] / "pilots"


def _episode(tmp_path: Path, task_id: str, policy: str, name: str) -> Path:
    task = find_task(task_id)
    out = tmp_path / name
    asyncio.run(Episode(task, PolicyTeam(make_policy(policy, 0, task)), seed=0, out_dir=out).run())
    return out


def _record(episode: Path, pilots: Path, *args: str):
    return CliRunner().invoke(record_pilot_cmd, [str(episode), "--out", str(pilots), "--commit", "abc1234",
                                                 "--team", "fixture team", *args])


def _fake(pilots: Path, name: str, task_id: str, *, success: bool, rounds: int, variant: str = "vanilla",
          failure_class: str | None = None, stale: bool = False, budget: int | None = None) -> None:
    """A pilot folder written by hand (the table reads pilot.json and task.json only)."""
    task = find_task(task_id)
    folder = pilots / name
    folder.mkdir(parents=True)
    raw = dict(task.raw)
    if stale:
        raw["revised_after_the_pilot"] = True  # stands for any change of content (a brief, a check)
    if budget is not None:
        raw["rounds"] = budget  # played under another budget, the task otherwise as it is
    (folder / "task.json").write_text(json.dumps(raw, default=str), encoding="utf-8")
    (folder / "pilot.json").write_text(json.dumps({
        "task": task.id, "variant": variant, "seed": 0, "harness_commit": "abc1234", "harness_version": "0.3.0",
        "success": success, "rounds": rounds, "budget": task.rounds, "failure_class": failure_class,
        "cause": "fixture" if not success else ""}), encoding="utf-8")


def test_the_shipped_pilot_records_are_valid_and_current():
    pilots, problems = load_pilots(SHIPPED, {find_task(t).id: find_task(t).raw
                                             for t in (STAFF, "task_316_mirelight_flood")})
    assert problems == [] and len(pilots) >= 2
    assert all(not p.stale for p in pilots if p.record.task in ("task_01_staff", "task_316_mirelight_flood"))


def test_a_bad_pilot_json_names_the_file_and_the_field(tmp_path):
    folder = tmp_path / "p1"
    folder.mkdir()
    (folder / "pilot.json").write_text(json.dumps({
        "task": "task_01_staff", "harness_commit": "x", "harness_version": "0.3.0", "success": False,
        "rounds": 25, "budget": 25, "failure_class": "model", "cause": "c", "outcome": "lost"}), encoding="utf-8")
    with pytest.raises(PilotError) as exc:
        read_pilot(folder)
    text = str(exc.value)
    assert str(folder / "pilot.json") in text and "failure_class" in text and "outcome: unknown field" in text
    (folder / "pilot.json").write_text(json.dumps({
        "task": "task_01_staff", "harness_commit": "x", "harness_version": "0.3.0", "success": False,
        "rounds": 25, "budget": 25}), encoding="utf-8")
    with pytest.raises(PilotError, match="a failed pilot needs failure_class"):
        read_pilot(folder)


def test_record_pilot_writes_a_folder_from_an_episode(tmp_path):
    pilots = tmp_path / "pilots"
    won = _episode(tmp_path, STAFF, "oracle", "won")
    result = _record(won, pilots, "--cause", "the oracle", "--report", "wizard: nothing confusing")
    assert result.exit_code == 0, result.output
    (folder,) = list(pilots.iterdir())
    assert sorted(p.name for p in folder.iterdir()) == ["final_state.json.gz", "pilot.json", "result.json",
                                                        "task.json", "trajectory.jsonl.gz"]
    record = read_pilot(folder)
    assert record.success and record.failure_class is None and record.rounds == 10 and record.budget == 25
    assert record.harness_commit == "abc1234" and record.player_reports == ["wizard: nothing confusing"]
    assert record.task_digest == task_digest(find_task(STAFF).raw)
    with gzip.open(folder / "trajectory.jsonl.gz", "rt", encoding="utf-8") as fh:
        assert json.loads(fh.readline())["type"] == "start"
    # a success takes no failure class; a failure needs one, and a cause
    assert "a success has no failure class" in _record(won, pilots, "--class", "agent", "--cause", "x").output
    lost = _episode(tmp_path, STAFF, "idle", "lost")
    result = _record(lost, pilots)
    assert result.exit_code != 0 and "--class system|task|agent" in result.output
    result = _record(lost, pilots, "--class", "agent")
    assert result.exit_code != 0 and "one-line cause" in result.output
    result = _record(lost, pilots, "--class", "agent", "--cause", "the team slept")
    assert result.exit_code == 0 and "lost (agent error) in 25/25 rounds" in result.output
    assert len(list(pilots.iterdir())) == 2  # the same task, variant and seed: a second folder, not overwritten


def test_the_calibration_table_from_fixture_pilots(tmp_path):
    pilots = tmp_path / "pilots"
    _fake(pilots, "a", "task_205_goldfield_two_forges", success=True, rounds=20)
    _fake(pilots, "b", "task_205_goldfield_two_forges", success=False, rounds=25, failure_class="agent")
    _fake(pilots, "g", STAFF, success=True, rounds=6)  # a pilot of a task no longer in the suite
    _fake(pilots, "c", "task_90_hearthmoor_stores", success=False, rounds=25, failure_class="task")
    _fake(pilots, "d", "task_90_hearthmoor_stores", success=True, rounds=9, variant="no_communication")
    _fake(pilots, "e", "task_44_oakridge_wolves", success=True, rounds=18, stale=True)
    wolves_budget = find_task("task_44_oakridge_wolves").rounds
    _fake(pilots, "f", "task_44_oakridge_wolves", success=True, rounds=wolves_budget - 1)
    report = C.calibration(pilots, with_fastest=False)
    rows = {r["task"]: r for r in report["tasks"]}
    forges = rows["task_205_goldfield_two_forges"]
    assert (forges["pilots"], forges["successes"], forges["rounds_used"]) == (2, 1, [20, 25])
    assert forges["budget_used"] == [0.8, 1.0] and forges["failure_classes"] == {"agent": 1}
    assert "task_01_staff" not in rows and report["pilots_of_retired_tasks"] == ["task_01_staff"]  # listed, not counted
    stores = rows["task_90_hearthmoor_stores"]
    assert stores["pilots"] == 1 and stores["successes"] == 0
    assert stores["no_communication"] == [{"success": True, "rounds": 9, "folder": "d"}]
    wolves = rows["task_44_oakridge_wolves"]
    assert (wolves["pilots"], wolves["stale_pilots"]) == (1, 1)  # the stale pilot is listed, not counted
    assert [p["stale"] for p in wolves["pilot_runs"]] == [True, False]
    overall = report["overall"]
    assert (overall["pilots"], overall["successes"], overall["piloted_tasks"]) == (4, 2, 3)
    assert overall["sr"] == 0.5 and overall["all_failed_share"] == round(1 / 3, 3)
    # each share is rounded to 3 places before the median, as the table does
    assert overall["median_budget_used"] == round((0.8 + round((wolves_budget - 1) / wolves_budget, 3)) / 2, 3)
    assert overall["failure_classes"] == {"system": 0, "task": 1, "agent": 1}
    assert report["by_category"]["gathering"]["sr"] == 0.0 and report["by_category"]["crafting"]["sr"] == 0.5
    targets = {t["key"]: t for t in report["targets"]}
    assert targets["sr"]["met"] is True and targets["sr"]["value"] == 0.5
    assert targets["category_sr"]["met"] is False  # combat: 1 of 1
    assert targets["all_failed"]["met"] is True
    assert targets["budget_used"]["met"] is True
    assert targets["no_task_system"]["met"] is False and targets["no_task_system"]["value"] == 1
    assert targets["no_comm_lost"]["met"] is False and targets["no_comm_lost"]["value"] == ["task_90_hearthmoor_stores"]
    assert targets["augmented_harder"]["met"] is None  # no augmented pilots: not measured
    assert report["stale_pilots"] == 1


def test_the_fastest_known_solution_takes_a_faster_current_pilot(tmp_path):
    pilots = tmp_path / "pilots"
    _fake(pilots, "quick", "task_44_oakridge_wolves", success=True, rounds=12)
    _fake(pilots, "old", "task_44_oakridge_wolves", success=True, rounds=5, stale=True)
    task = find_task("task_44_oakridge_wolves")
    from agentworld.core.runs.fastest import Fastest

    loaded, _ = load_pilots(pilots, {task.id: task.raw})
    rows = C.task_rows([task], {task.id: "main"}, loaded, {task.id: Fastest(task.id, 18, 17)})
    assert (rows[0]["fastest"], rows[0]["fastest_source"]) == (12, "pilot quick")  # the stale 5 does not count
    assert rows[0]["ratio"] == round(task.rounds / 12, 2) and rows[0]["budget_ok"] is False


def test_a_win_under_another_budget_is_a_known_solution_but_not_a_current_pilot(tmp_path):
    # a budget set from a pilot's win must not make that very win unknown: the world and the objective are
    # the same, so the win still bounds the fastest; the team read another budget, so it is no pilot of today's
    pilots = tmp_path / "pilots"
    task = find_task("task_44_oakridge_wolves")
    _fake(pilots, "flown", task.id, success=True, rounds=11, budget=task.rounds + 5)
    from agentworld.core.runs.fastest import Fastest

    loaded, _ = load_pilots(pilots, {task.id: task.raw})
    assert loaded[0].stale and loaded[0].same_play
    rows = C.task_rows([task], {task.id: "main"}, loaded, {task.id: Fastest(task.id, 18, 17)})
    assert (rows[0]["fastest"], rows[0]["fastest_source"]) == (11, "pilot flown")
    assert rows[0]["pilots"] == 0 and rows[0]["stale_pilots"] == 1


def test_calibration_cli_json_and_table(tmp_path):
    pilots = tmp_path / "pilots"
    _fake(pilots, "a", "task_205_goldfield_two_forges", success=True, rounds=20)
    result = CliRunner().invoke(calibration_cmd, ["--pilots", str(pilots), "--no-fastest", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    from agentworld.core.tasks.task import load_suite

    assert len([r for r in report["tasks"] if r["suite"] == "main"]) == len(load_suite("main", validate=False))
    table = CliRunner().invoke(calibration_cmd, ["--pilots", str(pilots), "--no-fastest"])
    assert table.exit_code == 0 and "targets (issue 28)" in table.output and "not met" in table.output
    bad = CliRunner().invoke(calibration_cmd, ["--pilots", str(tmp_path / "nowhere")])
    assert bad.exit_code == 2 and "is not a folder" in bad.output


def test_each_piloted_variant_is_set_beside_its_own_main_task(tmp_path):
    # "harder" is judged on the same task with and without the variant's change, not only suite against suite
    pilots = tmp_path / "pilots"
    main, variant = find_task("task_218_northroad_cracked_furnace"), find_task("aug_218_northroad_cracked_furnace_lean_start")
    _fake(pilots, "m", main.id, success=True, rounds=main.rounds - 6)
    _fake(pilots, "v1", variant.id, success=True, rounds=variant.rounds - 2)
    _fake(pilots, "v2", variant.id, success=False, rounds=variant.rounds, failure_class="agent")
    _fake(pilots, "lone", "aug_424_goldfield_forge_tools_far_spawn_order_grows", success=True, rounds=28)  # main unpiloted
    report = C.calibration(pilots, with_fastest=False)
    paired = report["augmented_paired"]
    (pair,) = paired["pairs"]
    assert (pair["main"], pair["variant"]) == (main.id, variant.id)
    assert (pair["main_sr"], pair["variant_sr"]) == (1.0, 0.5)
    assert (pair["main_rounds"], pair["variant_rounds"]) == (main.rounds - 6, variant.rounds - 1)
    assert (paired["main_sr"], paired["variant_sr"]) == (1.0, 0.5)
    assert paired["median_rounds_added"] == variant.rounds - 1 - (main.rounds - 6)
    used = statistics.median([round((variant.rounds - 2) / variant.rounds, 3), 1.0])
    assert paired["median_used_added"] == round(round(used, 3) - round((main.rounds - 6) / main.rounds, 3), 3)
    table = CliRunner().invoke(calibration_cmd, ["--pilots", str(pilots), "--no-fastest"])
    assert table.exit_code == 0 and "1 pair(s): SR 100 % on the main tasks, 50 % on their variants" in table.output
    assert C.paired([], [], {}) == {"pairs": [], "variant_sr": None, "main_sr": None, "median_rounds_added": None,
                                     "median_used_added": None}
