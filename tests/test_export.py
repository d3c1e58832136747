"""The paper-format export (docs/paper.md): the paper's fields and string formats, and what its scoring
helpers read, checked by re-implementing their reading rules on exports of real episodes."""

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

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

pytestmark = pytest.mark.anyio

STATUS = re.compile(r"^📊 Lv\.\d+ \| XP:\d+ \| ❤️(\d+)/(\d+) \| 💙\d+/\d+ \| 📍\((\d+),(\d+)\)$")


@pytest.fixture
async def episode_dir(tmp_path) -> Path:
    task = find_task(STAFF)
    out = tmp_path / "runs" / "ep1"
    await Episode(task, PolicyTeam(OraclePolicy(task)), seed=0, out_dir=out, variant="vanilla").run()
    return out


async def test_paper_export_fields(episode_dir: Path, tmp_path: Path):
    path = export_paper(episode_dir, tmp_path / "paper")
    assert path.name == "task_01_staff_trajectory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["task_id", "task_key", "task_source", "timestamp", "task_definition", "rounds", "metrics",
                          "replay"]
    assert data["replay"] == {"status": "not checked", "detail": None}  # `agentworld replay --check` never ran
    assert data["task_id"] == "task_01_staff" and data["task_key"] == "task_01_staff"
    assert data["task_source"] == "agentworld"
    assert data["task_definition"]["task"]["name"] == "Staffs for the wizard's circle"
    assert data["task_definition"]["agent_3"]["username"] == "wizard"
    assert [r["round"] for r in data["rounds"]] == list(range(1, 11))  # the oracle's 10-round plan
    assert data["rounds"][0]["actions"][0]["action"] == "sleep(seconds=1)"  # the lumberjack waits for the order
    rec = data["rounds"][2]["actions"][0]
    assert list(rec) == ["agent_name", "status", "action", "observation", "thinking"]
    assert rec["agent_name"] == "agent_1"  # the YAML key, not the username
    m = STATUS.match(rec["status"])
    assert m, rec["status"]
    assert rec["action"].startswith("harvest_resource(targetInstance=tree#")
    assert list(rec["observation"]) == ["result", "status", "inventory", "playerStatus"]
    assert rec["observation"]["status"] == "success" and rec["observation"]["result"]
    items = rec["observation"]["inventory"]["items"]
    assert {"key": "logs", "name": "Logs", "count": 4} in items
    assert all(list(i) == ["key", "name", "count"] for i in items)
    ps = rec["observation"]["playerStatus"]
    assert (ps["hitPoints"], ps["maxHitPoints"]) == (int(m.group(1)), int(m.group(2)))
    # the wizard's last record carries the staff (the paper reads the final inventory from it)
    wizard = [a for r in data["rounds"] for a in r["actions"] if a["agent_name"] == "agent_3"]
    assert any(i["key"] == "staff" for i in wizard[-1]["observation"]["inventory"]["items"])
    crafted = [a["action"] for a in wizard]
    assert "craft_item(skill=Crafting, itemKey=staff, count=3)" in crafted
    metrics = data["metrics"]
    assert metrics == {"total_rounds": 10, "max_rounds": 25, "total_agents": 3,
                       "total_actions": metrics["total_actions"], "total_chats": 2, "task_verified_success": True,
                       "task_verification_message": "three staffs by the wizard: 3/3, staff equipped by wizard: 1/1, "
                                                    "all alive: yes", "early_stopped": True,
                       "total_duration_seconds": metrics["total_duration_seconds"], "successful_agents": 3,
                       "failed_agents": 0}
    assert metrics["total_duration_seconds"] > 0
    assert metrics["total_actions"] == 8  # the plan's sleeps (20 of its 28 turns besides chat) are waits, not actions


async def test_agents_that_left_have_no_later_records(tmp_path: Path):
    task = find_task(STAFF).model_copy(update={"reference_solution": {
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


# ---------------------------------------------------------------------------------------------------------------
# The paper's scoring helpers, re-implemented from their documented reading rules (docs/paper.md): what they
# would count on our exports must be what the engine recorded.

KILL_WORDS = ("victory", "killed", "slain", "defeated")
HP = re.compile(r"❤️(\d+)/(\d+)")


def records(traj: dict):
    for rnd in traj["rounds"]:
        yield from rnd["actions"]


def paper_final_inventories(traj: dict) -> dict[str, dict[str, int]]:
    """The last record of each agent with ``observation.inventory.items`` (keys lower-case)."""
    out: dict[str, dict[str, int]] = {}
    for rec in records(traj):
        items = ((rec.get("observation") or {}).get("inventory") or {}).get("items")
        if items is not None:
            out[rec["agent_name"]] = {i["key"].lower(): i["count"] for i in items}
    return out


def paper_kills(traj: dict, mob_name: str) -> int:
    seen: set[str] = set()
    count = 0
    for rec in records(traj):
        if "attack" not in rec["action"]:
            continue
        obs = rec.get("observation") or {}
        mobs = obs.get("mobs") or []
        if mobs:
            for m in mobs:
                if m.get("hitPoints") == 0 and mob_name.lower() in str(m.get("name", "")).lower() \
                        and m.get("instance") not in seen:
                    seen.add(m.get("instance"))
                    count += 1
        elif any(w in json.dumps(obs).lower() for w in KILL_WORDS) and \
                mob_name.lower() in (str(obs.get("result", "")) + str(obs.get("message", ""))).lower():
            count += 1
    return count


def paper_crafts(traj: dict, item_key: str) -> int:
    return sum(1 for rec in records(traj) if "craft" in rec["action"] and item_key in rec["action"]
               and (rec.get("observation") or {}).get("status") == "success")


def paper_all_alive(traj: dict) -> bool:
    for rec in records(traj):
        m = HP.search(rec["status"])
        hp = ((rec.get("observation") or {}).get("playerStatus") or {}).get("hitPoints")
        if (m and int(m.group(1)) <= 0) or hp == 0:
            return False
    return True


def paper_task_identity(traj: dict) -> str:
    if re.fullmatch(r"task_\d+", traj.get("task_id", "")):
        return traj["task_id"]
    assert traj.get("task_key") and traj.get("task_source"), "the paper's scorer would refuse this file"
    return f"{traj['task_source']}:{traj['task_key']}"


def engine_facts(folder: Path):
    from agentworld.core.play.records import TickEvent
    from agentworld.core.play.trajectory import read_events

    kills, crafts, deaths = {}, {}, set()
    for ev in read_events(folder):
        if isinstance(ev, TurnEvent) and ev.ok:
            for k in ev.effects.kills:
                kills[k.mob] = kills.get(k.mob, 0) + 1
            for c in ev.effects.crafted:
                crafts[c.item] = crafts.get(c.item, 0) + 1
        if isinstance(ev, (TurnEvent, TickEvent)):
            deaths |= set(ev.effects.deaths)
    final = json.loads((folder / "final_state.json").read_text())
    return kills, crafts, deaths, final


def _final_inventory(final: dict, agent: str) -> dict[str, int]:
    player = (final.get("players") or final)[agent]
    return {s["item"]: s["count"] for s in player["inventory"]}


@pytest.mark.parametrize("task_id,mob,item", [("task_17_wolf_archer", "wolf", "bronze_arrow"),
                                               ("task_321_hearthmoor_four_roads", "ghoul", None),
                                               ("task_14_prospector", None, "pickaxe")])
async def test_the_paper_helpers_score_real_episodes(task_id: str, mob: str | None, item: str | None, tmp_path: Path):
    task = find_task(task_id)
    out = tmp_path / "ep"
    result = await Episode(task, PolicyTeam(OraclePolicy(task)), seed=0, out_dir=out).run()
    assert result.success
    traj = json.loads(export_paper(out, tmp_path / "paper").read_text(encoding="utf-8"))
    kills, crafts, deaths, final = engine_facts(out)
    assert paper_task_identity(traj) == f"agentworld:{task_id}"
    if mob:
        assert kills.get(mob, 0) >= 2 and paper_kills(traj, mob) == kills[mob]
    if item:
        assert crafts.get(item, 0) >= 1 and paper_crafts(traj, item) == crafts[item]
    assert paper_all_alive(traj) is (not deaths)
    inventories = paper_final_inventories(traj)
    for agent in inventories:
        assert inventories[agent] == _final_inventory(final, agent), agent
    # equipped items are visible: every equip the engine recorded is in the agent's next records
    equips = [r for r in records(traj) if r["action"].startswith("equip_item") and r["observation"]["status"] == "success"]
    for r in equips:
        assert r["observation"]["inventory"]["equipped"], r


async def test_a_death_at_the_world_tick_is_exported(tmp_path: Path):
    """The wizard sleeps beside an aggressive elder treant: it dies between its turns, at a round's tick."""
    base = find_task(STAFF)
    agents = [a.model_copy(update={"x": 104, "y": 256}) if a.agent_id == "agent_3" else a for a in base.agents]
    plan = {**base.reference_solution, "agent_3": [Step(tool="sleep", args={"seconds": 1})] * 20}
    task = base.model_copy(update={"agents": agents, "reference_solution": plan, "rounds": 14})
    out = tmp_path / "ep"
    result = await Episode(task, PolicyTeam(OraclePolicy(task)), seed=0, out_dir=out).run()
    _, _, deaths, _ = engine_facts(out)
    assert deaths == {"agent_3"} and "all alive: no" in result.message
    traj = json.loads(export_paper(out, tmp_path / "paper").read_text(encoding="utf-8"))
    ticks = [r for r in records(traj) if r.get("source") == "world_tick" and r["agent_name"] == "agent_3"]
    assert ticks and "❤️0/" in ticks[-1]["status"] and ticks[-1]["action"] == ""
    assert ticks[-1]["observation"]["playerStatus"] == {"hitPoints": 0, "maxHitPoints": 60, "alive": False}
    assert not paper_all_alive(traj)
    assert traj["metrics"]["failed_agents"] == 1 and traj["metrics"]["successful_agents"] == 2
    # the dead agent has no records in later rounds
    last = max(r["round"] for r in traj["rounds"] if any(a is ticks[-1] for a in r["actions"]))
    assert not any(a["agent_name"] == "agent_3" for r in traj["rounds"] if r["round"] > last for a in r["actions"])


async def test_no_call_is_an_empty_action_and_paper_id_is_the_task_id(tmp_path: Path):
    from agentworld.core.play.protocol import Team, TurnOutcome

    class Silent(Team):  # answers every turn without calling a tool
        async def act(self, turn):
            return TurnOutcome()

    task = find_task(STAFF).model_copy(update={"rounds": 1})
    task.raw["paper_id"] = "task_07"
    out = tmp_path / "ep"
    await Episode(task, Silent(), out_dir=out).run()
    path = export_paper(out, tmp_path / "paper")
    traj = json.loads(path.read_text(encoding="utf-8"))
    assert path.name == "task_07_trajectory.json" and traj["task_id"] == "task_07"
    assert traj["task_key"] == "task_01_staff" and paper_task_identity(traj) == "task_07"
    assert {r["action"] for r in records(traj)} == {""}
    assert {r["observation"]["status"] for r in records(traj)} == {"failure"}


def test_a_task_file_may_name_its_paper_id(tmp_path: Path):
    import yaml

    from agentworld.core.tasks.task import TaskError, load_task

    raw = yaml.safe_load(Path(find_task(STAFF).path).read_text())
    raw["paper_id"] = "task_01"
    f = tmp_path / "t.yaml"
    f.write_text(yaml.safe_dump(raw))
    assert load_task(f).paper_id == "task_01"
    raw["paper_id"] = "01_staff"
    f.write_text(yaml.safe_dump(raw))
    with pytest.raises(TaskError, match="paper_id"):
        load_task(f)
