"""The round-robin episode: the turn gate, turn accounting, retirement, end reasons, determinism,
a killed run, and the starter tasks (pass with the oracle team, fail with an idle one)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentworld.core.play.episode import Episode, run_episode
from agentworld.core.play.protocol import Team, Turn, TurnOutcome
from agentworld.core.play.records import EndEvent, StartEvent, TickEvent, TurnEvent
from agentworld.core.tasks.plans import rounds_needed
from agentworld.core.tasks.task import find_task, load_task, suite_files
from agentworld.core.play.trajectory import read_events
from agentworld.core.play.policies import IdlePolicy, OraclePolicy, PolicyTeam, RandomPolicy

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

pytestmark = pytest.mark.anyio
DATA = Path(__file__).parent / "data"


class ScriptTeam(Team):
    """Plays ``script[(round, agent)]``: an async function of the turn (default: sleep)."""

    def __init__(self, script=None):
        self.script = script or {}
        self.turns: list[Turn] = []
        self.started = self.closed = False

    async def start(self, episode):
        self.started = True
        self.episode = episode

    async def act(self, turn: Turn) -> TurnOutcome:
        self.turns.append(turn)
        fn = self.script.get((turn.round, turn.agent_id))
        if fn is None:
            await turn.port.call("sleep", {"seconds": 1})
            return TurnOutcome()
        return await fn(turn) or TurnOutcome()

    async def aclose(self):
        self.closed = True


def base_task(**update):
    return load_task(DATA / "good_base_task.yaml").model_copy(update=update)


def turn_events(ep: Episode) -> list[TurnEvent]:
    return [e for e in ep.events if isinstance(e, TurnEvent)]


# -- the gate --------------------------------------------------------------------------------------
async def test_gate_refuses_second_call_and_other_agents(tmp_path):
    seen = {}

    async def double(turn):
        seen["first"] = await turn.port.call("chat", {"message": "hello"})
        seen["second"] = await turn.port.call("sleep", {"seconds": 1})
        seen["other"] = await ep.gate.call("agent_2", "sleep", {"seconds": 1})  # not agent_2's turn
        return None

    team = ScriptTeam({(1, "agent_1"): double})
    ep = Episode(base_task(rounds=2), team, out_dir=tmp_path)
    assert [n for n in dir(ep.gate.port("agent_1")) if not n.startswith("_")] == ["agent_id", "call"]
    res = await ep.run()
    assert seen["first"].ok
    assert seen["second"].error == "refused" and "already acted this turn" in seen["second"].text
    assert seen["other"].error == "refused" and "not your turn" in seen["other"].text
    ev = turn_events(ep)
    first = ev[0]
    assert first.agent == "agent_1" and first.tool == "chat" and not first.counts_as_action
    assert [r.tool for r in first.refused] == ["sleep"]
    # the stray call made as agent_2 is reported on agent_2's own next turn
    assert [r.reason.startswith("it is not your turn") for r in ev[1].refused] == [True]
    assert res.refused_calls == 2
    assert team.started and team.closed


async def test_stray_call_with_no_later_turn_is_recorded_at_the_end(tmp_path):
    """A call made out of turn in the last round has no later turn of its caller to be reported with."""
    task = base_task(rounds=1)
    last, earlier = task.agent_ids[-1], task.agent_ids[0]

    async def poke_earlier(turn):
        await turn.port.call("sleep", {"seconds": 1})
        await ep.gate.call(earlier, "sleep", {"seconds": 2})  # as the agent whose turn has passed
        return None

    ep = Episode(task, ScriptTeam({(1, last): poke_earlier}), out_dir=tmp_path)
    res = await ep.run()
    end = read_events(tmp_path / "trajectory.jsonl")[-1]
    assert end.type == "end" and [r.tool for r in end.refused[earlier]] == ["sleep"]
    assert end.refused[earlier][0].reason.startswith("it is not your turn")
    assert res.refused_calls == 1


async def test_gate_out_of_turn_and_after_the_end(tmp_path):
    ep = Episode(base_task(rounds=1), ScriptTeam(), out_dir=tmp_path)
    r = await ep.gate.call("agent_1", "sleep", {"seconds": 1})
    assert r.error == "refused" and "no turn is open" in r.text
    await ep.run()
    r = await ep.gate.call("agent_1", "sleep", {"seconds": 1})
    assert r.error == "refused" and "episode is over" in r.text


async def test_external_seat_waits_for_its_turn(tmp_path):
    """An MCP-style seat: agent_2 acts from outside ``act`` via wait_turn; act only waits for that call."""
    ep_box = {}
    results = []

    async def seat():
        ep = ep_box["ep"]
        for _ in range(2):
            assert await ep.gate.wait_turn("agent_2", timeout=5)
            results.append(await ep.gate.call("agent_2", "chat", {"message": "from outside"}))

    class SeatTeam(ScriptTeam):
        async def act(self, turn):
            if turn.agent_id == "agent_2":
                assert await ep_box["ep"].gate.wait_first_call(timeout=5)
                return TurnOutcome(thinking="external")
            return await super().act(turn)

    ep = Episode(base_task(rounds=2), SeatTeam(), out_dir=tmp_path)
    ep_box["ep"] = ep
    seat_task = asyncio.ensure_future(seat())
    await ep.run()
    await seat_task
    assert [r.ok for r in results] == [True, True]
    assert [e.tool for e in turn_events(ep) if e.agent == "agent_2"] == ["chat", "chat"]
    assert await ep.gate.wait_turn("agent_2", timeout=0.01) is False


# -- turns that go wrong ---------------------------------------------------------------------------------
async def test_no_call_unknown_tool_bad_args_use_the_turn(tmp_path):
    async def nothing(turn):
        return TurnOutcome(thinking="I will think about it")

    async def unknown(turn):
        await turn.port.call("fly", {})

    async def bad(turn):
        await turn.port.call("move_character", {"x": "far"})

    team = ScriptTeam({(1, "agent_1"): nothing, (1, "agent_2"): unknown, (1, "agent_3"): bad})
    ep = Episode(base_task(rounds=1), team, out_dir=tmp_path)
    res = await ep.run()
    ev = turn_events(ep)
    assert [(e.tool, e.error) for e in ev] == [(None, "no_call"), ("fly", "unknown_tool"), ("move_character", "bad_args")]
    assert ev[0].thinking == "I will think about it"
    assert "Tools:" in ev[1].result and "missing argument 'y'" in ev[2].result
    assert res.no_calls == 1 and res.tool_errors == 2
    assert all(ep.actions_used[a] == 1 for a in ep.agent_ids)
    # the next turn's observation tells the agent what went wrong
    assert ep.last_result["agent_2"].error == "unknown_tool"


async def test_timeout_infra_error_and_crashing_team(tmp_path):
    async def slow(turn):
        await asyncio.Event().wait()  # an answer that never comes: the turn timeout ends it, however busy the machine

    async def infra(turn):
        return TurnOutcome(infra_error="HTTP 503 after 3 retries")

    async def crash(turn):
        raise RuntimeError("framework bug")

    team = ScriptTeam({(1, "agent_1"): slow, (1, "agent_2"): infra, (1, "agent_3"): crash})
    ep = Episode(base_task(rounds=1), team, out_dir=tmp_path, turn_timeout=0.05)
    res = await ep.run()
    ev = turn_events(ep)
    assert ev[0].error == "timeout"
    assert ev[1].error == "infra" and ev[1].infra_error == "HTTP 503 after 3 retries"
    # the team's own exception is a harness error (with its traceback), not the model service's nor the agent's
    assert ev[2].error == "harness_error" and ev[2].infra_error is None
    assert "RuntimeError: framework bug" in ev[2].harness_error and "Traceback" in ev[2].harness_error
    assert "not held against you" in ev[2].result
    assert res.infra_errors == 1 and res.harness_errors == 1 and res.no_calls == 1
    # a lost model call is not the agent's failure: it does not use up an action step
    assert ep.actions_used == {"agent_1": 1, "agent_2": 0, "agent_3": 0}
    assert [e.counts_as_action for e in ev] == [True, False, False]


async def test_a_model_that_does_not_answer_within_the_turn_timeout_is_an_infrastructure_error(tmp_path):
    async def waiting_for_the_model(turn):
        turn.trace.model_pending, turn.trace.pending_since = True, time.perf_counter()
        await asyncio.Event().wait()  # the model never answers

    ep = Episode(base_task(rounds=1), ScriptTeam({(1, "agent_1"): waiting_for_the_model}), out_dir=tmp_path,
                 turn_timeout=0.05)
    res = await ep.run()
    first = turn_events(ep)[0]
    assert first.error == "infra" and "did not answer within the 0.05 s turn timeout" in first.infra_error
    assert not first.counts_as_action and res.infra_errors == 1 and res.no_calls == 0
    assert [(a.ok, a.error) for a in first.attempts] == [(False, "no answer within the 0.05 s turn timeout")]


async def test_an_engine_exception_is_a_harness_error_and_the_episode_goes_on(tmp_path, monkeypatch):
    from agentworld.core.world.engine import EmbeddedWorld

    def broken_sleep(self, *a, **kw):
        raise IndexError("engine bug")

    monkeypatch.setattr(EmbeddedWorld, "sleep", broken_sleep)
    ep = Episode(base_task(rounds=2), ScriptTeam({}), out_dir=tmp_path)  # every agent sleeps every turn
    res = await ep.run()
    ev = turn_events(ep)
    assert len(ev) == 2 * len(ep.agent_ids) and res.end_reason == "round_budget"
    assert all(e.error == "harness_error" and "IndexError: engine bug" in e.harness_error for e in ev)
    assert all("the game engine failed" in e.result and not e.counts_as_action for e in ev)
    assert res.harness_errors == len(ev) and res.tool_errors == 0 and res.actions == 0 and res.infra_errors == 0
    assert all(n == 0 for n in ep.actions_used.values())


async def test_whatever_a_model_sends_is_sanitised_and_cannot_end_the_episode(tmp_path):
    deep: dict = {}
    cur = deep
    for _ in range(300):
        cur["a"] = {}
        cur = cur["a"]

    async def surrogate(turn):
        await turn.port.call("chat", {"message": "hi \ud800 there"})

    async def nested(turn):
        await turn.port.call("move_character", {"x": deep, "y": 1})

    async def text(turn):
        await turn.port.call("move_character", '{"x": 3, "y": ' + "[" * 5000)

    team = ScriptTeam({(1, "agent_1"): surrogate, (1, "agent_2"): nested, (1, "agent_3"): text})
    ep = Episode(base_task(rounds=1), team, out_dir=tmp_path)
    res = await ep.run()
    ev = [e for e in read_events(tmp_path) if isinstance(e, TurnEvent)]  # the file was written and reads back
    assert ev[0].ok and ev[0].arguments == {"message": "hi \ufffd there"}
    assert ev[1].error == "bad_args" and "cut: nested deeper" in json.dumps(ev[1].arguments)
    assert ev[2].error == "bad_args" and "not valid JSON" in ev[2].result
    assert res.end_reason == "round_budget" and res.tool_errors == 2


# -- retirement and end reasons -------------------------------------------------------------------------------
async def test_max_action_steps_retires_and_chat_and_sleep_do_not_count(tmp_path):
    async def talk(turn):
        await turn.port.call("chat", {"message": "still here"})

    async def stop(turn):
        await turn.port.call("stop_action", {})

    script = {(r, "agent_1"): talk for r in range(1, 10)} | {(r, "agent_2"): stop for r in range(1, 10)}
    team = ScriptTeam(script)  # agent_3 sleeps every turn
    ep = Episode(base_task(rounds=6, max_action_steps=2), team, out_dir=tmp_path)
    res = await ep.run()
    per_agent = {a: [e for e in turn_events(ep) if e.agent == a] for a in ep.agent_ids}
    assert len(per_agent["agent_1"]) == 6  # chat only: never retired
    assert len(per_agent["agent_3"]) == 6  # sleep only: never retired either
    assert len(per_agent["agent_2"]) == 2 and not ep.world.player_state("agent_2").active
    assert [t.extra["actions_left"] for t in team.turns if t.agent_id == "agent_3"] == [2] * 6
    assert all(not e.counts_as_action for e in per_agent["agent_3"] + per_agent["agent_1"])
    assert res.end_reason == "round_budget" and res.rounds == 6
    assert (res.chats, res.waits, res.actions) == (6, 6, 2)
    written = json.loads((tmp_path / "result.json").read_text())
    assert (written["chats"], written["waits"], written["actions"]) == (6, 6, 2)


async def test_a_failed_chat_is_a_tool_error_not_a_chat(tmp_path):
    async def empty(turn):
        await turn.port.call("chat", {"message": ""})

    async def bare_sleep(turn):
        await turn.port.call("sleep", {})

    script = {(1, "agent_1"): empty, (1, "agent_2"): bare_sleep}
    ep = Episode(base_task(rounds=1), ScriptTeam(script), out_dir=tmp_path)
    res = await ep.run()
    first = {e.agent: e for e in turn_events(ep)}
    assert first["agent_1"].error == "bad_args" and not first["agent_1"].counts_as_action
    assert first["agent_2"].ok and "wait" in first["agent_2"].result
    assert (res.chats, res.waits, res.tool_errors, res.actions) == (0, 2, 1, 0)


async def test_complete_retires_and_no_active_agents_ends(tmp_path):
    async def done(turn):
        await turn.port.call("complete", {"response": "done"})

    script = {(1, a): done for a in ("agent_1", "agent_2", "agent_3")}
    ep = Episode(base_task(rounds=10), ScriptTeam(script), out_dir=tmp_path)
    res = await ep.run()
    assert res.end_reason == "no_active_agents" and res.rounds == 1
    events = read_events(tmp_path)
    assert isinstance(events[0], StartEvent) and isinstance(events[-1], EndEvent)
    assert isinstance(events[-2], TickEvent) and events[-1].reason == "no_active_agents"
    assert json.loads((tmp_path / "result.json").read_text())["end_reason"] == "no_active_agents"
    state = json.loads((tmp_path / "final_state.json").read_text())
    assert state["active"] == [] and set(state["players"]) == {"agent_1", "agent_2", "agent_3"}


async def test_turn_contents(tmp_path):
    team = ScriptTeam()
    staff = find_task(STAFF)
    n = rounds_needed(staff.reference_solution)  # a horizon the plan fits in
    ep = Episode(staff, team, out_dir=tmp_path, variant=f"short_horizon:{n}")
    await ep.run()
    t = team.turns[0]
    assert t.agent_id == "agent_1" and t.username == "lumberjack" and t.round == 1
    assert t.observation.round == 1 and t.observation.max_rounds == n
    assert t.observation.actions_left == staff.max_action_steps
    assert "lumberjack" in t.system_prompt and "woodworker" in t.system_prompt and "wizard" in t.system_prompt
    assert "3 players" in t.system_prompt and "You are the team's lumberjack" in t.system_prompt
    assert "staff" in t.system_prompt.lower() and "transfer_items gives items to a teammate within 6 tiles" in t.system_prompt
    assert t.observation_text in t.user_prompt and f"round 1 of {n}" in t.user_prompt
    assert {s.name for s in t.tools} >= {"chat", "move_character", "transfer_items"} and len(t.tools) == 13
    assert "shared_plan" in t.extra and t.extra["shared_plan"] is None  # vanilla: the plan is not shown
    later = [x for x in team.turns if x.agent_id == "agent_1" and x.round == 2][0]
    assert later.last_result is not None and later.observation.last_result


async def test_a_message_reaches_each_teammate_at_its_next_turn_as_the_rules_say(tmp_path):
    # pilots asked why a teammate answered a round late: one who acts before the sender reads it next round
    async def hello(turn):
        await turn.port.call("chat", {"message": "hello from the middle"})

    team = ScriptTeam({(1, "agent_2"): hello})  # the turn order is agent_1, agent_2, agent_3
    ep = Episode(base_task(rounds=2), team, out_dir=tmp_path)
    await ep.run()
    seen = {(t.round, t.agent_id): [m.text for m in t.observation.chat] for t in team.turns}
    assert seen[(1, "agent_3")] == ["hello from the middle"]  # after the sender: later in the same round
    assert seen[(1, "agent_1")] == [] and seen[(2, "agent_1")] == ["hello from the middle"]  # before: next round
    rules = team.turns[0].system_prompt
    assert ("A message shows in each receiver's observation at its next turn: later in this round for those after "
            "you in the turn order, next round for those before you.") in rules


async def test_given_items_show_in_the_receivers_next_observation_as_the_rules_say(tmp_path):
    async def give_logs(turn):
        assert (await turn.port.call("transfer_items", {"targetPlayer": "lumberjack", "itemKey": "logs",
                                                        "count": 2})).ok

    async def give_knife(turn):
        assert (await turn.port.call("transfer_items", {"targetPlayer": "wizard", "itemKey": "knife",
                                                        "count": 1})).ok

    team = ScriptTeam({(1, "agent_2"): give_logs, (2, "agent_2"): give_knife})  # order: agent_1, agent_2, agent_3
    ep = Episode(base_task(rounds=3), team, out_dir=tmp_path)
    await ep.run()
    held = {(t.round, t.agent_id): {i.key for i in t.observation.inventory} for t in team.turns}
    notes = {(t.round, t.agent_id): " ".join(t.observation.notes) for t in team.turns}
    assert "logs" not in held[(1, "agent_1")] and "logs" in held[(2, "agent_1")]  # before the giver: next round
    assert "woodworker gave you 2 logs in round 1" in notes[(2, "agent_1")]
    assert "knife" in held[(2, "agent_3")]  # after the giver: later in the same round
    assert ("transfer_items gives items to a teammate within 6 tiles of you; they are its own at once, and its next "
            "observation shows them (a teammate who acts before you in the turn order sees them next round)."
            ) in team.turns[0].system_prompt


def _prompt_as_rendered_up_front(task, agent, rules, can_chat=True, shared_plan=""):
    """The system prompt as the episode rendered it before prompts were rendered on demand."""
    from agentworld.core.play.prompts import guideline_document, template
    from agentworld.core.play.view import BriefRules

    return template("system.j2").render(
        username=agent.username, team_size=len(task.agents),
        teammates=[a.username for a in task.agents if a.agent_id != agent.agent_id], role=agent.role,
        turn_order=[a.username for a in task.agents],
        task_name=task.name, description=task.description.strip(), objective=task.objectives.primary.strip(),
        secondary=task.objectives.secondary, rules=BriefRules.of(rules, task, can_chat), can_chat=can_chat, max_action_steps=task.max_action_steps,
        max_rounds=task.rounds, guideline=guideline_document(task, agent), shared_plan=shared_plan).strip() + "\n"


async def test_prompts_are_rendered_when_read_and_say_what_they_always_said(tmp_path, monkeypatch):
    """Turn texts and system prompts are rendered on first read (a scripted team pays nothing), with the
    same text as rendering them up front; the episode keeps only a few rendered system prompts and the
    team's view none (memory stays linear in the team size, though every prompt lists every teammate)."""
    from agentworld.core.play.episode import SystemPrompts
    from agentworld.core.play.prompts import Brief, render_user

    rendered = []
    real_render = Brief.render
    monkeypatch.setattr(Brief, "render", lambda self: rendered.append(self.index) or real_render(self))
    staff = load_task(DATA / "small_staff.yaml")  # suite v1's 5-round staff task: a small fixture
    quiet = Episode(staff, PolicyTeam(IdlePolicy()), out_dir=tmp_path / "idle", variant="short_horizon:5")
    await quiet.run()
    assert rendered == []  # a team that never reads its prompts never has them rendered
    team = ScriptTeam()
    ep = Episode(staff, team, out_dir=tmp_path / "read", variant="short_horizon:5")
    await ep.run()
    for t in team.turns:
        agent = ep.task.agent(t.agent_id)
        assert t.system_prompt == _prompt_as_rendered_up_front(ep.task, agent, ep.world.rules)
        assert t.observation_text == t.observation.render("text")
        assert t.user_prompt == render_user(t.observation_text, username=agent.username, round=t.round,
                                            max_rounds=ep.task.rounds)
    assert [a.brief for a in ep.view().agents] == [ep.system_prompts[a] for a in ep.agent_ids]
    assert set(ep.system_prompts) == set(ep.agent_ids) and len(ep.system_prompts) == 3
    many = staff.model_copy(update={"agents": [a.model_copy(update={"agent_id": f"agent_{i}", "username": f"p{i}"})
                                               for i, a in enumerate(staff.agents * 10)]})
    prompts = Episode(many, PolicyTeam(IdlePolicy()), out_dir=tmp_path / "many").system_prompts
    texts = [prompts[a] for a in prompts]
    assert all(f"p{j}" in texts[0] for j in range(1, 30)) and "teammates are: p1, p2," in texts[0]
    assert len(prompts._kept) <= SystemPrompts.KEEP


async def test_json_observations(tmp_path):
    team = ScriptTeam()
    await Episode(base_task(rounds=1), team, obs_format="json").run()
    assert json.loads(team.turns[0].observation_text)["username"] == "lumberjack"


# -- determinism and a killed run ----------------------------------------------------------------------------------
TIMING = ("timestamp", "harness_s", "model_latency_s")


def _strip(line: str) -> dict:
    ev = json.loads(line)
    for k in TIMING:
        ev.pop(k, None)
    return ev


async def test_same_task_seed_team_gives_identical_trajectory(tmp_path):
    task = find_task("task_08_convoy").model_copy(update={"rounds": 8})
    for name in ("a", "b"):
        await run_episode(task, PolicyTeam(RandomPolicy(7, task)), seed=7, out_dir=tmp_path / name)
    a = (tmp_path / "a" / "trajectory.jsonl").read_text().splitlines()
    b = (tmp_path / "b" / "trajectory.jsonl").read_text().splitlines()
    assert len(a) == len(b) > 20
    assert [_strip(x) for x in a] == [_strip(x) for x in b]
    other = tmp_path / "c"
    await run_episode(task, PolicyTeam(RandomPolicy(8, task)), seed=8, out_dir=other)
    c = (other / "trajectory.jsonl").read_text().splitlines()
    assert [_strip(x) for x in a] != [_strip(x) for x in c]


KILL_SCRIPT = """
import asyncio, os, signal, sys
from agentworld.core.play.episode import Episode
from agentworld.core.tasks.task import find_task
from agentworld.core.play.policies import PolicyTeam, RandomPolicy
task = find_task("task_08_convoy")
count = 0
def progress(event):
    global count
    count += 1
    if count == 25:
        os.kill(os.getpid(), signal.SIGKILL)
asyncio.run(Episode(task, PolicyTeam(RandomPolicy(1, task)), seed=1, out_dir=sys.argv[1], progress=progress).run())
"""


def test_killed_run_leaves_a_readable_trajectory(tmp_path):
    out = tmp_path / "ep"
    proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(out)], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    events = read_events(out)
    assert len(events) == 25 and isinstance(events[0], StartEvent)
    assert not (out / "result.json").exists()
    # a line cut mid-write (the process died while writing) is ignored, not an error
    path = out / "trajectory.jsonl"
    with path.open("a") as fh:
        fh.write('{"type": "turn", "step": 99, "rou')
    assert len(read_events(path)) == 25
    # a damaged line in the middle is an error that names the line
    lines = path.read_text().splitlines()
    lines[3] = "garbage"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 4"):
        read_events(path)


# -- the starter tasks -------------------------------------------------------------------------------------------------
SUITE = suite_files("main")


@pytest.mark.parametrize("path", SUITE, ids=[p.stem for p in SUITE])
async def test_starter_task_passes_with_oracle_and_fails_idle(path, oracle_episode):
    task = load_task(path)
    # seed 0, the proofs' seed: with mobs that move under the seed (issue 26), how a plan fares on other seeds is
    # what `tasks prove --oracle-seeds N` reports, not a property every task has
    res, _ = await oracle_episode(task)  # the oracle's episode at seed 0, shared with test_cce_oracle.py
    assert res.success and res.end_reason == "verifier_passed" and res.psr == 1.0, res.message
    assert res.rounds < task.rounds
    idle = await run_episode(task, PolicyTeam(IdlePolicy()), seed=3)
    assert not idle.success and idle.psr < 1.0 and idle.end_reason in ("round_budget", "no_active_agents")


async def test_oracle_needs_a_reference_solution():
    with pytest.raises(ValueError, match="no reference_solution"):
        OraclePolicy(load_task(DATA / "paper_task_01.yaml"))


async def test_random_team_only_picks_sensible_actions(tmp_path):
    task = find_task("task_08_convoy").model_copy(update={"rounds": 5})
    ep = Episode(task, PolicyTeam(RandomPolicy(3, task)), seed=3)
    res = await ep.run()
    tools = [e.tool for e in turn_events(ep)]
    assert len(set(tools)) >= 4 and None not in tools  # a mix of actions, always one call
    assert all(e.error != "bad_args" and e.error != "unknown_tool" for e in turn_events(ep))
    assert not res.success


async def test_the_random_policys_kept_calls_are_what_it_would_work_out_afresh():
    """Every turn's candidates from the policy's caches (walks per tile, calls per inventory by row identity and
    by value, target calls, the tool filter per list of tools) equal those of a policy with empty caches."""
    from agentworld.core.runs.bench_play import scale_task

    class Checking(PolicyTeam):
        checked = 0

        async def act(self, turn):
            assert self.policy.candidates(turn) == RandomPolicy(0).candidates(turn)
            Checking.checked += 1
            return await super().act(turn)

    policy = RandomPolicy(2)  # one policy for three episodes: the last one offers no chat
    for task, variant in ((find_task("task_08_convoy").model_copy(update={"rounds": 10}), "vanilla"),
                          (scale_task(60, 4, packed=True), "vanilla"),
                          (find_task("task_08_convoy").model_copy(update={"rounds": 3}), "no_communication")):
        await Episode(task, Checking(policy), seed=2, variant=variant).run()
    assert Checking.checked > 300 and not policy._allowed_kept[2]


def test_the_random_policy_keeps_an_inventorys_rows_while_it_keeps_their_calls_by_identity():
    """Rows made afresh every turn (another world) and freed: CPython gives the next rows their memory, so their
    ids; they must not get the freed rows' calls (kept rows stay alive, so their ids are not reused)."""
    from agentworld.core.world.observation import InvItem

    kits = (["logs", "copper_ore", "tin_ore"], ["bronze_bar", "logs", "hammer"])  # different crafts
    policy, differ = RandomPolicy(0), set()
    for n in range(40):
        rows = [InvItem(index=i, key=k, name=k, count=2) for i, k in enumerate(kits[n // 3 % 2])]
        fresh = RandomPolicy(0)._inventory_calls(rows)
        assert policy._inventory_calls(rows) == fresh
        differ.add(str(fresh))
        del rows
    assert len(differ) == 2
    kept = policy._inventory_rows  # each entry holds the very rows whose ids are its key (alive while it lasts)
    assert kept and all(tuple(map(id, rows)) == ids for ids, (rows, _) in kept.items())


async def test_gate_lets_exactly_the_first_call_of_the_current_agent_through():
    """Any burst of calls from any agents during a turn: only the current agent's first call executes."""
    import random

    rng = random.Random(11)
    ep = Episode(base_task(rounds=1), ScriptTeam())
    gate = ep.gate
    for trial in range(40):
        current = rng.choice(ep.agent_ids)
        gate.open(current, 1)
        callers = [rng.choice(ep.agent_ids) for _ in range(rng.randint(0, 6))]
        results = [await gate.call(a, "chat", {"message": f"t{trial}"}) for a in callers]
        rec = gate.close()
        executed = [r for r in results if r.error != "refused"]
        if current in callers:
            assert len(executed) == 1 and results[callers.index(current)].ok
            assert rec.tool == "chat" and len(rec.refused) == callers.count(current) - 1
        else:
            assert executed == [] and rec.tool is None
    assert sum(len(v) for v in gate.stray.values()) > 0


def test_event_timestamps_are_iso_8601_to_the_millisecond(monkeypatch):
    """``_now`` formats the second once and looks the milliseconds up: the same text as ``isoformat``."""
    from datetime import datetime, timezone

    from agentworld.core.play import episode as episode_module

    # instants half a millisecond off the boundaries (isoformat rounds to the microsecond first), over many seconds
    for t in [1_700_000_000 + k * 0.007 + 0.0005 for k in range(3000)] + [0.0004, 1_999_999_999.9994]:
        monkeypatch.setattr(episode_module.time, "time", lambda t=t: t)
        assert episode_module._now() == datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds")
