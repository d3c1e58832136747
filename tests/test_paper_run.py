"""`agentworld run --world paper-server` end to end against the fake paper server on 127.0.0.1: the oracle
solves a paper-shaped 3-agent task, the paper-format export passes paper-style checks, and a server killed
mid-episode ends the episode as an infrastructure error that `--resume` finishes once the server is back."""

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from paper_server_fake import FakeGame, FakePaperServer  # noqa: E402

from agentworld.core.cli import _load_commands, cli  # noqa: E402

TASK = Path(__file__).parent / "data" / "paper_server" / "task_01_staff_fake.yaml"
FAST = ["poll_s=0.01", "move_timeout_s=3", "harvest_timeout_s=3", "combat_timeout_s=3", "pickup_timeout_s=2",
        "stall_s=0.5", "sleep_cap_s=0.01", "retries=1", "backoff_s=0.01", "request_timeout_s=10"]
# request_timeout_s is generous on purpose: a server that is down refuses at once, while a busy CI machine can
# hold an answer past a short timeout, and the client then retries a POST the server has already applied
KILL_WORDS = ("victory", "killed", "slain", "defeated")


def run(*args: str):
    _load_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def run_on(fake, out: Path, *extra: str):
    opts = [x for o in FAST for x in ("--world-option", o)]
    return run("run", "--task", str(TASK), "--framework", "oracle", "--world", "paper-server", "--server-url",
               fake.url, *opts, "--out", str(out), "--no-progress", *extra)


def results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]


def turns(out: Path) -> str:
    """Every turn of the run's episode, one line each: what an assertion shows when the episode went wrong."""
    lines = []
    for episode in sorted((out / "episodes").iterdir()):
        for line in (episode / "trajectory.jsonl").read_text().splitlines():
            e = json.loads(line)
            if e.get("type") == "turn":
                lines.append(f"r{e['round']} {e['agent']} {e['tool']} ok={e['ok']}: {str(e.get('result'))[:100]}")
    return "\n".join(lines)


# -- the paper's scoring helpers' reading rules (shared/reference/paper-format.md section 3.1) ----------------
def final_inventories(traj: dict) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for rnd in traj["rounds"]:
        for rec in rnd["actions"]:
            items = ((rec.get("observation") or {}).get("inventory") or {}).get("items")
            if items is not None:
                out[rec["agent_name"]] = {i["key"].lower(): i["count"] for i in items}
    return out


def last_hp(traj: dict) -> dict[str, int]:
    hp: dict[str, int] = {}
    for rnd in traj["rounds"]:
        for rec in rnd["actions"]:
            m = re.search(r"❤️(\d+)/(\d+)", rec["status"])
            if m:
                hp[rec["agent_name"]] = int(m.group(1))
    return hp


def kills(traj: dict, mob: str) -> int:
    seen, words = set(), 0
    for rnd in traj["rounds"]:
        for rec in rnd["actions"]:
            if "attack" not in rec["action"]:
                continue
            obs = rec.get("observation") or {}
            mobs = obs.get("mobs") or []
            if mobs:
                seen |= {m["instance"] for m in mobs if m.get("hitPoints") == 0 and m.get("name", "").lower() == mob}
            elif any(w in json.dumps(obs).lower() for w in KILL_WORDS) and \
                    mob in (str(obs.get("result", "")) + str(obs.get("message", ""))).lower():
                words += 1
    return len(seen) + words


@pytest.fixture
def fake():
    with FakePaperServer(FakeGame(respawn_s=0.2), lifetime_s=120) as srv:
        yield srv


def test_the_oracle_solves_a_paper_task_on_the_server_and_the_export_scores(fake, tmp_path):
    out = tmp_path / "run"
    res = run_on(fake, out)
    assert res.exit_code == 0, res.output
    [r] = results(out)
    assert r["success"] and r["end_reason"] == "verifier_passed" and r["infra_errors"] == 0, r
    names = {p.username for p in fake.game.players.values()}
    assert all(n.startswith("aw") and n.endswith("_agent") for n in names) and len(names) == 3
    assert all(p.token is None for p in fake.game.players.values())  # logged out at the end
    episode = next((out / "episodes").iterdir())
    for f in ("trajectory.jsonl", "task.json", "final_state.json", "result.json"):
        assert "never-logged" not in (episode / f).read_text()  # the paper's password field is not kept
    exported = tmp_path / "paper"
    res = run("export", str(out), "--out", str(exported))
    assert res.exit_code == 0, res.output
    [path] = list(exported.glob("*_trajectory.json"))
    traj = json.loads(path.read_text())
    inv = final_inventories(traj)
    assert inv["agent_3"]["staff"] == 1 and inv["agent_1"]["logs"] == 1 and inv["agent_3"].get("ratfur") == 1
    assert all(hp > 0 for hp in last_hp(traj).values()) and set(last_hp(traj)) == {"agent_1", "agent_2", "agent_3"}
    assert kills(traj, "rat") == 1
    assert traj["task_definition"]["agent_1"]["username"] == "lumberjack_agent"


def test_a_server_killed_mid_episode_is_an_infrastructure_error_and_resume_finishes(fake, tmp_path):
    out = tmp_path / "run"
    fake.stop_after("/ai/craft")  # the woodworker's craft in round 2
    res = run_on(fake, out)
    assert res.exit_code != 0 and "--resume" in res.output
    [r] = results(out)
    assert r["end_reason"] == "error" and r["infra_errors"] >= 1 and "is the server running" in r["message"]
    fake.start()  # the server is back (same port, same accounts; its map reloaded, as a restarted server's is)
    res = run("run", "--resume", str(out), "--no-progress")
    assert res.exit_code == 0, res.output
    [r] = results(out)
    summary = {k: r.get(k) for k in ("end_reason", "message", "rounds", "infra_errors")}
    assert r["success"] and r["infra_errors"] == 0, f"{summary}\n{turns(out)}"


@pytest.mark.anyio
async def test_serve_seats_play_on_the_server(fake, tmp_path):
    from agentworld.mcp_server.plugin import serve_episode

    options = {"server_url": fake.url, **{k: float(v) for k, v in (o.split("=") for o in FAST)}}
    options["retries"] = 1
    result = await serve_episode(str(TASK), seat_options=("agent_1=oracle", "agent_2=oracle", "agent_3=oracle"),
                                 out_dir=str(tmp_path / "ep"), seats_path=str(tmp_path / "seats.json"), linger=0,
                                 world_backend="paper-server", world_options=options)
    assert result.success and result.infra_errors == 0


def test_paper_server_options_are_checked_up_front(tmp_path):
    res = run("run", "--task", str(TASK), "--framework", "oracle", "--world", "paper-server", "--out", str(tmp_path / "x"))
    assert res.exit_code == 2 and "--server-url" in res.output
    res = run("run", "--task", str(TASK), "--world", "nowhere", "--out", str(tmp_path / "y"))
    assert res.exit_code == 2 and "unknown world 'nowhere'" in res.output
    res = run("run", "--task", str(TASK), "--world", "paper-server", "--server-url", "http://127.0.0.1:9",
              "--variant", "random_spawn", "--out", str(tmp_path / "z"))
    assert res.exit_code == 1 and "random_spawn draws spawns from the embedded world's map" in res.output


def test_tasks_validate_asks_the_server(fake, tmp_path):
    res = run("tasks", "validate", str(TASK), "--world", "paper-server", "--server-url", fake.url,
              *[x for o in FAST for x in ("--world-option", o)])
    assert res.exit_code == 0 and "1/1 task files valid on paper-server" in res.output, res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(TASK.read_text().replace("item: bead", "item: beadd").replace("x: 52, y: 42", "x: 5000, y: 42"))
    res = run("tasks", "validate", str(bad), "--world", "paper-server", "--server-url", fake.url,
              *[x for o in FAST for x in ("--world-option", o)])
    assert res.exit_code == 1 and "beadd" in res.output and "(5000,42)" in res.output
    assert not [p for p in fake.game.players.values() if p.token]  # scratch characters logged out
    fake.stop()
    res = run("tasks", "validate", str(TASK), "--world", "paper-server", "--server-url", fake.url,
              *[x for o in FAST for x in ("--world-option", o)])
    assert res.exit_code == 1 and "start the server" in res.output
