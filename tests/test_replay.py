"""`agentworld replay --check`: an episode's record re-executed on the engine matches it turn for turn, and a
record that was edited (a result, a dropped turn, another task file, another seed) is caught with the turn
named. Runs of the oracle, the random team, a framework over MCP (--tools mcp) and external MCP seats
(`agentworld serve` with MCP SDK clients); a team that produces every odd kind of turn."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.play.mcp_sdk import structured_content
from agentworld.core.cli import _load_commands, cli
from agentworld.core.play.episode import Episode
from agentworld.core.play.protocol import Team, TurnOutcome
from agentworld.core.play.records import TurnEvent
from agentworld.core.play.replay import RecordedTeam, check_episode, load_record, replay_episode, resolve_task
from agentworld.core.play.trajectory import read_events
from agentworld.core.runs.integrity import replay_status
from agentworld.core.tasks.task import find_task, load_task

_load_commands()
DATA = Path(__file__).parent / "data"
SHIPPED = "task_205_goldfield_two_forges"  # a main task: an old record without task.json replays against it
SMALL = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task: 3 agents, a few rounds
COMBAT = "task_44_oakridge_wolves"  # fights: the seed decides the rolls


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


def episodes(run_dir: Path) -> list[Path]:
    return sorted(p for p in (run_dir / "episodes").iterdir() if p.is_dir())


def check(folder: Path, **kw):
    return asyncio.run(check_episode(folder, **kw))


@pytest.fixture(scope="module")
def random_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("random") / "run"
    r = invoke("run", "--task", SMALL, "--task", COMBAT, "--framework", "random", "--seed", "3", "--out", str(out),
               "--no-progress")
    assert r.exit_code == 0, r.output
    return out


def test_every_episode_of_an_oracle_run_replays_and_report_marks_it(tmp_path):
    out = tmp_path / "run"
    r = invoke("run", "--task", SHIPPED, "--task", "task_02_harvest", "--framework", "oracle", "--out", str(out),
               "--no-progress")  # two shipped tasks: their records name the file under main/
    assert r.exit_code == 0, r.output
    before = invoke("report", str(out))
    assert "replay: 0 verified, 2 not checked" in before.output
    r = invoke("replay", str(out), "--check")
    assert r.exit_code == 0, r.output
    assert "2/2 episodes replay exactly as recorded" in r.output
    for folder in episodes(out):
        assert replay_status(folder) == ("verified", None)
        start = read_events(folder)[0]
        assert start.harness_version and start.task_sha256 and start.world_pins["data_sha256"]
        assert start.task_file == f"main/{start.task_id}.yaml"
        assert all(e.observation_sha256 for e in read_events(folder) if isinstance(e, TurnEvent))
    assert "replay: 2 verified" in invoke("report", str(out)).output
    r = invoke("export", str(out), "--out", str(tmp_path / "paper"))
    assert "replay: 2 verified, 0 not checked, 0 failed" in r.output
    exported = [json.loads(p.read_text()) for p in (tmp_path / "paper").glob("*.json")]
    assert [e["replay"]["status"] for e in exported] == ["verified", "verified"]
    # an edit after the check makes the stamp stale: report says so
    folder = episodes(out)[0]
    (folder / "final_state.json").write_text((folder / "final_state.json").read_text() + " ", encoding="utf-8")
    assert replay_status(folder)[0] == "not checked"


def test_a_random_run_replays(random_run):
    for folder in episodes(random_run):
        report = check(folder)
        assert report.ok, [m.text() for m in report.mismatches]
        assert report.observations_checked == report.turns > 0


def test_a_framework_over_mcp_replays(tmp_path):
    out = tmp_path / "run"
    r = invoke("run", "--task", SMALL, "--framework", "openai", "--model", "scripted:random", "--tools", "mcp",
               "--out", str(out), "--no-progress", "--seed", "1")
    assert r.exit_code == 0, r.output
    [folder] = episodes(out)
    report = check(folder)
    assert report.ok, [m.text() for m in report.mismatches]
    errors = {e.error for e in read_events(folder) if isinstance(e, TurnEvent)}
    assert errors - {None}, "the random model should have made some calls the world refused"


@pytest.mark.anyio
async def test_external_seats_over_mcp_replay(tmp_path):
    """`agentworld serve`'s episode: every seat an MCP SDK client (a malformed call and an unknown tool among
    their calls), replayed without any client."""
    from agentworld.mcp_server.clients import mcp_session
    from agentworld.mcp_server.plugin import serve_episode
    from agentworld.mcp_server.seats import read_seats_file

    task = find_task(str(DATA / "small_market.yaml"), validate=False)
    announced = asyncio.get_running_loop().create_future()

    async def players():
        seats = {s.agent_id: s for s in read_seats_file(await announced).seats}

        async def play(agent_id: str) -> None:
            plan = [(s.tool, s.args) for s in task.reference_solution.get(agent_id, [])]
            if agent_id == "agent_1":  # two malformed calls first: each uses a turn, as in process
                plan = [("move_character", {"_raw_arguments": '{"x": 3,'}), ("fly", {})] + plan
            plan.append(("complete", {"response": "done"}))
            async with mcp_session(seats[agent_id].url, seats[agent_id].token) as s:
                for tool, args in plan:
                    r = await s.call_tool(tool, args)
                    data = structured_content(r)
                    if data["turn"].get("episode_over") or data["error"] in ("not_active", "refused"):
                        return

        await asyncio.gather(*(play(a) for a in task.agent_ids))

    client = asyncio.create_task(players())
    result = await serve_episode(task, turn_timeout=30, out_dir=str(tmp_path / "ep"), linger=0,
                                 seats_path=str(tmp_path / "seats.json"),
                                 announce=lambda server, path: announced.set_result(path))
    await client
    assert result.framework == "mcp" and result.turns > 8
    events = [e for e in read_events(tmp_path / "ep") if isinstance(e, TurnEvent)]
    assert {e.error for e in events} >= {"bad_args", "unknown_tool"}
    report = await check_episode(tmp_path / "ep")
    assert report.ok, [m.text() for m in report.mismatches]
    # the task came from a file outside the suites: the record names its path and digest
    start = read_events(tmp_path / "ep")[0]
    assert start.task_file == str(DATA / "small_market.yaml") and start.framework == "mcp"


class OddTurns(Team):
    """Every kind of turn the contract knows, in turn: a second call in the turn, bad JSON, an unknown tool,
    arguments that are not an object, no call, a lost turn (the agent's timeout), the team's own exception,
    a model service that failed, and an out-of-turn call through another agent's port."""

    def __init__(self):
        self.n = 0
        self.ports = {}

    async def act(self, turn):
        self.ports[turn.agent_id] = turn.port
        self.n += 1
        kind = self.n % 9
        if kind == 1:
            await turn.port.call("sleep", {})
            await turn.port.call("chat", {"message": "a second call: refused"})
        elif kind == 2:
            await turn.port.call("move_character", '{"x": 3,')
        elif kind == 3:
            await turn.port.call("teleport", {"x": 1})
        elif kind == 4:
            await turn.port.call("move_character", [1, 2])
        elif kind == 5:
            return TurnOutcome(thinking="I will think about it")
        elif kind == 6:
            raise TimeoutError  # the agent did not act in time
        elif kind == 7:
            raise RuntimeError("the team's own bug")
        elif kind == 8:
            return TurnOutcome(infra_error="HTTP 500: upstream", tokens_in=7)
        else:
            other = next((p for a, p in self.ports.items() if a != turn.agent_id), None)
            if other is not None:
                await other.call("chat", {"message": "out of turn"})
            await turn.port.call("chat", {"message": "hello", "scope": "team"})
        return TurnOutcome(thinking=f"turn {self.n}", tokens_in=3, tokens_out=2)


def test_every_odd_kind_of_turn_replays(tmp_path):
    task = find_task(SMALL)
    ep = Episode(task, OddTurns(), seed=2, out_dir=tmp_path / "ep", turn_timeout=9.5)
    asyncio.run(ep.run())
    events = [e for e in read_events(tmp_path / "ep") if isinstance(e, TurnEvent)]
    assert {e.error for e in events} >= {"bad_args", "unknown_tool", "no_call", "timeout", "harness_error", "infra"}
    assert any(r.reason.startswith("it is not your turn") for e in events for r in e.refused)
    assert any(r.reason.startswith("you already acted") for e in events for r in e.refused)
    report = check(tmp_path / "ep")
    assert report.ok, [m.text() for m in report.mismatches]


def test_the_recorded_team_answers_what_was_recorded_and_takes_a_substitute(random_run):
    folder = episodes(random_run)[0]
    record = load_record(folder)
    team = RecordedTeam(record)
    first = next(e for e in record.events if isinstance(e, TurnEvent))
    assert team.recorded(first.round, first.agent) is first
    assert team.planned(first.round, first.agent).tool == first.tool
    assert team.recorded(999, first.agent) is None
    team.substitute(first.round, first.agent, "sleep", {})
    ep = replay_episode(record, resolve_task(record).task, team=team, out_dir=folder.parent / "sub")
    asyncio.run(ep.run())
    replayed = next(e for e in read_events(folder.parent / "sub") if isinstance(e, TurnEvent))
    assert (replayed.round, replayed.agent, replayed.tool) == (first.round, first.agent, "sleep")
    assert team.played[0] == (first.round, first.agent) and not team.unrecorded


# ------------------------------------------------------------------ tampering
def _tamper(src: Path, dst: Path, edit) -> Path:
    shutil.copytree(src, dst)
    lines = (dst / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()
    lines = edit(lines)
    (dst / "trajectory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dst


def _turn_lines(lines):
    return [i for i, line in enumerate(lines) if line.startswith('{"type":"turn"')]


def test_an_edited_result_is_caught_at_its_turn(random_run, tmp_path):
    src = episodes(random_run)[0]

    def edit(lines):
        i = _turn_lines(lines)[4]
        d = json.loads(lines[i])
        d["result"] += " and found a diamond"
        lines[i] = json.dumps(d, separators=(",", ":"))
        return lines

    folder = _tamper(src, tmp_path / "t", edit)
    bad = json.loads(folder.joinpath("trajectory.jsonl").read_text().splitlines()[_turn_lines(
        folder.joinpath("trajectory.jsonl").read_text().splitlines())[4]])
    r = invoke("replay", str(folder), "--check")
    assert r.exit_code == 1
    assert f"round {bad['round']}, {bad['agent']} ({bad['tool'] or 'no call'}): result: recorded" in r.output
    assert replay_status(folder)[0] == "failed"
    # result.json claiming success is caught too
    res = json.loads((src / "result.json").read_text())
    folder2 = tmp_path / "t2"
    shutil.copytree(src, folder2)
    (folder2 / "result.json").write_text(json.dumps({**res, "success": True, "psr": 1.0}))
    report = check(folder2)
    assert [m.text() for m in report.mismatches] == ["result.json: success: recorded true, replayed false"]


def test_a_dropped_turn_is_caught_and_named(random_run, tmp_path):
    src = episodes(random_run)[1]

    def edit(lines):
        i = _turn_lines(lines)[7]
        dropped.update(json.loads(lines[i]))
        return lines[:i] + lines[i + 1:]

    dropped: dict = {}
    report = check(_tamper(src, tmp_path / "t", edit))
    first = report.first
    assert (first.round, first.agent) == (dropped["round"], dropped["agent"])
    assert "the record has no turn of" in first.field


def test_another_task_file_is_caught_by_its_hash_and_at_the_first_turn_it_changes(tmp_path):
    own = tmp_path / "task_01_staff.yaml"
    shutil.copy(find_task(SMALL).path, own)
    out = tmp_path / "run"
    r = invoke("run", "--task", str(own), "--framework", "oracle", "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    [folder] = episodes(out)
    assert check(folder).ok
    # the woodworker starts with one more log: the first turn that shows it differs
    text = own.read_text(encoding="utf-8")
    task = load_task(own, validate=False)
    assert "x: 449" in text
    own.write_text(text.replace("x: 449", "x: 448", 1), encoding="utf-8")
    report = check(folder)
    assert not report.ok
    assert report.mismatches[0].where == "task file" and "sha256" in report.mismatches[0].field
    turn = next(m for m in report.mismatches if m.round is not None)
    assert turn.agent in task.agent_ids and turn.where.startswith(f"round {turn.round}, {turn.agent}")


def test_another_seed_is_caught_at_the_first_roll_it_changes(random_run, tmp_path):
    src = next(p for p in episodes(random_run) if COMBAT in p.name)

    def edit(lines):
        d = json.loads(lines[0])
        d["seed"] += 1
        lines[0] = json.dumps(d, separators=(",", ":"))
        return lines

    report = check(_tamper(src, tmp_path / "t", edit))
    assert not report.ok
    first = report.first
    assert first.round is not None and first.agent is not None and first.where.startswith(f"round {first.round}")
    assert any(m.where == "result.json" and m.field == "seed" for m in report.mismatches)


def test_what_cannot_be_replayed_is_said_clearly(tmp_path):
    r = invoke("replay", str(tmp_path))
    assert r.exit_code != 0 and "neither an episode folder" in r.output
    (tmp_path / "ep").mkdir()
    (tmp_path / "ep" / "trajectory.jsonl").write_text('{"type":"tick","round":1}\n')
    r = invoke("replay", str(tmp_path / "ep"), "--check")
    assert r.exit_code == 2 and "does not start with a start event" in r.output


@pytest.mark.parametrize("framework", ["oracle", "random"])
def test_a_task_with_world_events_joint_actions_and_hidden_info_replays(tmp_path, framework):
    """The mechanics (scheduled and triggered events, joint actions, hidden caches) run inside the episode loop
    from the task and seed: their replay is exact too, ticks' fired events included."""
    out = tmp_path / "run"
    r = invoke("run", "--task", str(DATA / "example_mechanics.yaml"), "--framework", framework, "--seed", "4",
               "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    [folder] = episodes(out)
    assert any(getattr(e, "events", None) for e in read_events(folder)), "no world event fired"
    report = check(folder)
    assert report.ok, [m.text() for m in report.mismatches]


class _StopAt:
    """A run's budget callback: asks the episode to stop after its ``n``-th turn event."""

    def __init__(self, n: int, reason: str = "budget_stop"):
        self.n, self.seen, self.reason = n, 0, reason

    def __call__(self, event):
        if isinstance(event, TurnEvent):
            self.seen += 1
            if self.seen == self.n:
                return self.reason
        return None


def test_an_episode_stopped_by_the_run_budget_replays_to_the_same_point(tmp_path):
    from agentworld.core.play.policies import PolicyTeam, make_policy

    task = find_task(SMALL)
    ep = Episode(task, PolicyTeam(make_policy("oracle", 0, task)), out_dir=tmp_path / "ep", progress=_StopAt(7))
    result = asyncio.run(ep.run())
    assert result.end_reason == "budget_stop" and result.turns == 7
    report = check(tmp_path / "ep")
    assert report.ok, [m.text() for m in report.mismatches]
    assert report.turns == 7


def test_a_record_without_its_task_file_replays_from_task_json_and_an_old_record_says_what_it_lacks(tmp_path):
    own = tmp_path / "mine.yaml"
    shutil.copy(find_task(SHIPPED).path, own)
    out = tmp_path / "run"
    assert invoke("run", "--task", str(own), "--framework", "random", "--out", str(out), "--no-progress").exit_code == 0
    [folder] = episodes(out)
    own.unlink()
    report = check(folder)
    assert report.ok and report.task_source.endswith("task.json")
    assert any("sha256 cannot be checked" in n for n in report.notes)
    # a v0.2 record: no provenance fields, no observation digests, no task.json: replayed against the shipped task
    lines = (folder / "trajectory.jsonl").read_text().splitlines()
    old = []
    for line in lines:
        d = json.loads(line)
        for k in ("harness_version", "task_file", "task_sha256", "world_pins", "world_backend", "turn_timeout",
                  "observation_sha256"):
            d.pop(k, None)
        old.append(json.dumps(d, separators=(",", ":")))
    (folder / "trajectory.jsonl").write_text("\n".join(old) + "\n")
    (folder / "task.json").unlink()
    report = check(folder)
    assert report.ok, [m.text() for m in report.mismatches]
    assert any("does not record harness_version, task_sha256, world_pins, turn_timeout" in n for n in report.notes)
    assert any("no observation digests" in n for n in report.notes)
    assert any(f"replayed against the shipped {SHIPPED}" in n for n in report.notes)


def test_a_game_server_episode_is_refused_with_the_reason(random_run, tmp_path):
    def edit(lines):
        d = json.loads(lines[0])
        d["world_backend"] = "paper-server"
        lines[0] = json.dumps(d, separators=(",", ":"))
        return lines

    folder = _tamper(episodes(random_run)[0], tmp_path / "t", edit)
    r = invoke("replay", str(folder), "--check")
    assert r.exit_code == 2 and "'paper-server' world backend" in r.output


def test_a_record_from_another_world_is_named_by_its_pin(random_run, tmp_path):
    def edit(lines):
        d = json.loads(lines[0])
        d["world_pins"]["data_sha256"] = "0" * 64
        lines[0] = json.dumps(d, separators=(",", ":"))
        return lines

    report = check(_tamper(episodes(random_run)[0], tmp_path / "t", edit))
    assert [m.text() for m in report.mismatches][0].startswith(
        "world: world_pins.data_sha256: recorded '000000")


def test_replay_without_check_reports_but_neither_fails_nor_stamps(random_run, tmp_path):
    def edit(lines):
        i = _turn_lines(lines)[0]
        d = json.loads(lines[i])
        d["ok"] = not d["ok"]
        lines[i] = json.dumps(d, separators=(",", ":"))
        return lines

    folder = _tamper(episodes(random_run)[0], tmp_path / "t", edit)
    r = invoke("replay", str(folder), "--out", str(tmp_path / "again"))
    assert r.exit_code == 0 and "differs from the record" in r.output and ": ok: recorded" in r.output
    assert not (folder / "replay.json").exists() and (tmp_path / "again" / "trajectory.jsonl").is_file()


def test_a_truncated_record_is_caught_where_it_stops(random_run, tmp_path):
    cut: dict = {}

    def edit(lines):
        i = _turn_lines(lines)[20]
        cut.update(json.loads(lines[i]))
        return lines[:i]  # a copy that stopped mid-episode: no end event

    report = check(_tamper(episodes(random_run)[0], tmp_path / "t", edit))
    assert any("no end event" in n for n in report.notes)
    first = report.first
    assert (first.round, first.agent) == (cut["round"], cut["agent"])
    assert "the replay goes on" in first.field
