"""The paper-format export: exactly the fields and string formats of paper-format.md section 3."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import cli
from agentworld.core.cli.tasks import register_commands
from agentworld.core.play.episode import Episode
from agentworld.core.runs.export import export_paper, export_run, file_stem
from agentworld.core.play.records import TurnEvent
from agentworld.core.tasks.task import Step, find_task
from agentworld.core.play.policies import OraclePolicy, PolicyTeam

pytestmark = pytest.mark.anyio

STATUS = re.compile(r"^📊 Lv\.\d+ \| XP:\d+ \| ❤️(\d+)/(\d+) \| 💙\d+/\d+ \| 📍\((\d+),(\d+)\)$")


@pytest.fixture
async def episode_dir(tmp_path) -> Path:
    task = find_task("task_01_staff")
    out = tmp_path / "runs" / "ep1"
    await Episode(task, PolicyTeam(OraclePolicy(task)), seed=0, out_dir=out, variant="vanilla").run()
    return out


async def test_paper_export_fields(episode_dir: Path, tmp_path: Path):
    path = export_paper(episode_dir, tmp_path / "paper")
    assert path.name == "task_01_staff_trajectory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["task_id", "timestamp", "task_definition", "rounds", "metrics"]
    assert data["task_id"] == "task_01_staff"
    assert data["task_definition"]["task"]["name"] == "A staff for the wizard"
    assert data["task_definition"]["agent_3"]["username"] == "wizard"
    assert [r["round"] for r in data["rounds"]] == [1, 2, 3, 4]
    rec = data["rounds"][0]["actions"][0]
    assert list(rec) == ["agent_name", "status", "action", "observation", "thinking"]
    assert rec["agent_name"] == "agent_1"  # the YAML key, not the username
    m = STATUS.match(rec["status"])
    assert m, rec["status"]
    assert rec["action"].startswith("harvest_resource(targetInstance=tree#")
    assert list(rec["observation"]) == ["inventory", "playerStatus"]
    items = rec["observation"]["inventory"]["items"]
    assert {"key": "logs", "name": "Logs", "count": 4} in items
    assert all(list(i) == ["key", "name", "count"] for i in items)
    ps = rec["observation"]["playerStatus"]
    assert (ps["hitPoints"], ps["maxHitPoints"]) == (int(m.group(1)), int(m.group(2)))
    # the wizard's last record carries the staff (the paper reads the final inventory from it)
    wizard = [a for r in data["rounds"] for a in r["actions"] if a["agent_name"] == "agent_3"]
    assert any(i["key"] == "staff" for i in wizard[-1]["observation"]["inventory"]["items"])
    crafted = [a["action"] for a in wizard]
    assert "craft_item(skill=Crafting, itemKey=staff, count=1)" in crafted
    metrics = data["metrics"]
    assert metrics == {"total_rounds": 4, "max_rounds": 25, "total_agents": 3,
                       "total_actions": metrics["total_actions"], "total_chats": 0, "task_verified_success": True,
                       "task_verification_message": "staff with wizard: 1/1, all alive: yes", "early_stopped": True}
    assert metrics["total_actions"] == 12


async def test_agents_that_left_have_no_later_records(tmp_path: Path):
    task = find_task("task_01_staff").model_copy(update={"reference_solution": {
        "agent_1": [], "agent_2": [Step(tool="sleep", args={"seconds": 1})] * 3,
        "agent_3": [Step(tool="chat", args={"message": "waiting"})] * 3}})
    out = tmp_path / "ep"
    await Episode(task.model_copy(update={"rounds": 3}), PolicyTeam(OraclePolicy(task)), out_dir=out).run()
    data = json.loads(export_paper(out, tmp_path / "x").read_text(encoding="utf-8"))
    names = [[a["agent_name"] for a in r["actions"]] for r in data["rounds"]]
    assert names == [["agent_1", "agent_2", "agent_3"], ["agent_2", "agent_3"], ["agent_2", "agent_3"]]
    assert data["rounds"][0]["actions"][0]["action"] == "complete(response=my part of the plan is done)"
    assert data["rounds"][1]["actions"][1]["action"] == "chat(message=waiting)"
    assert data["metrics"]["total_chats"] == 3 and data["metrics"]["early_stopped"] is False


async def test_export_run_and_cli(episode_dir: Path, tmp_path: Path):
    runner = CliRunner()
    if "export" not in cli.commands:
        register_commands(cli)
    out = tmp_path / "exported"
    res = runner.invoke(cli, ["export", str(episode_dir.parent), "--format", "paper", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "task_01_staff_trajectory.json").is_file()
    # two episodes of the same task go to per-episode folders instead of overwriting each other
    twin = episode_dir.parent / "ep2"
    twin.mkdir()
    for f in episode_dir.iterdir():
        (twin / f.name).write_bytes(f.read_bytes())
    paths = export_run(episode_dir.parent, tmp_path / "two")
    assert sorted(p.parent.name for p in paths) == ["ep1", "ep2"]
    bad = runner.invoke(cli, ["export", str(tmp_path / "exported"), "--out", str(tmp_path / "none")])
    assert bad.exit_code != 0 and "no trajectory.jsonl" in bad.output


def test_file_stem():
    assert file_stem("task_01_staff") == "task_01_staff"
    assert file_stem("bridge") == "task_bridge"


async def test_status_tracks_the_turn_event(episode_dir: Path, tmp_path: Path):
    from agentworld.core.play.trajectory import read_events

    turns = [e for e in read_events(episode_dir) if isinstance(e, TurnEvent)]
    data = json.loads(export_paper(episode_dir, tmp_path / "p").read_text(encoding="utf-8"))
    flat = [a for r in data["rounds"] for a in r["actions"]]
    assert len(flat) == len(turns)
    for ev, rec in zip(turns, flat):
        assert f"❤️{ev.status.hp}/{ev.status.max_hp}" in rec["status"] and f"📍({ev.status.x},{ev.status.y})" in rec["status"]
