"""Every protocol variant changes exactly the one thing it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentworld.core.play.episode import Episode
from agentworld.core.play.protocol import Team, Turn, TurnOutcome
from agentworld.core.play.records import TurnEvent
from agentworld.core.tasks.task import find_task, load_task, team_skills
from agentworld.core.tasks.plans import plan_world, rounds_needed
from agentworld.core.tasks.verify import verify
from agentworld.core.tasks.variants import VARIANTS, NotApplicable, apply_variant, get_variant, not_applicable
from agentworld.core.world.datapack import load_world
from agentworld.core.play.policies import OraclePolicy, PolicyTeam

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

pytestmark = pytest.mark.anyio
DATA = Path(__file__).parent / "data"


class Recorder(Team):
    def __init__(self, script=None):
        self.turns: list[Turn] = []
        self.script = script or {}

    async def act(self, turn: Turn) -> TurnOutcome:
        self.turns.append(turn)
        tool, args = self.script.get((turn.round, turn.agent_id), ("sleep", {"seconds": 1}))
        await turn.port.call(tool, args)
        return TurnOutcome()


def staff():
    return find_task(STAFF)


async def play(task, variant, rounds=2, script=None, seed=0):
    team = Recorder(script)
    ep = Episode(task.model_copy(update={"rounds": rounds}), team, variant=variant, seed=seed)
    await ep.run()
    return ep, team


def test_all_variants_are_known():
    assert set(VARIANTS) == {"vanilla", "no_communication", "oracle_communication", "single_agent", "shared_plan",
                             "shared_plan_no_communication", "no_roles", "short_horizon", "random_spawn",
                             "no_documentation", "party_status"}
    with pytest.raises(ValueError, match="did you mean 'no_roles'"):
        get_variant("no_role")
    with pytest.raises(ValueError, match="takes no parameter"):
        get_variant("party_status:3")


async def test_vanilla_changes_nothing():
    t = staff()
    assert apply_variant(t, "vanilla") is t
    ep, team = await play(t, "vanilla", rounds=1)
    assert len(team.turns[0].tools) == 13 and team.turns[0].observation.party is None
    assert "Shared team plan" not in team.turns[0].system_prompt


async def test_no_communication_removes_chat_tools():
    ep, team = await play(staff(), "no_communication", rounds=1, script={(1, "agent_1"): ("chat", {"message": "hi"})})
    names = {s.name for s in team.turns[0].tools}
    assert "chat" not in names and "send_chat_message" not in names and len(names) == 11
    ev = [e for e in ep.events if isinstance(e, TurnEvent)][0]
    assert ev.error == "unknown_tool" and "chat is disabled" in ev.result
    brief = team.turns[0].system_prompt  # no word of chat: nothing it says may be untrue without it
    assert "chat" not in brief.lower() and "sleep uses your turn but not your action budget" in brief
    assert "nobody can send or receive messages in this game" in brief  # the rules say so, not only the tools


async def test_oracle_communication_delivers_everything_to_agent_1():
    t = staff().model_copy(update={"world_rules": {"chat_radius": 0}})  # local chat reaches nobody
    script = {(1, "agent_2"): ("send_chat_message", {"message": "psst, logs please"})}
    ep, team = await play(t, "oracle_communication", script=script)
    coord = [x for x in team.turns if x.agent_id == "agent_1" and x.round == 2][0]
    assert [m.text for m in coord.observation.chat] == ["psst, logs please"]
    other = [x for x in team.turns if x.agent_id == "agent_3" and x.round == 2][0]
    assert other.observation.chat == []
    ep, team = await play(t, "vanilla", script=script)
    coord = [x for x in team.turns if x.agent_id == "agent_1" and x.round == 2][0]
    assert coord.observation.chat == []


async def test_oracle_communication_coordinator_is_the_only_one_who_reads_every_message():
    t = staff().model_copy(update={"world_rules": {"chat_radius": 0}})
    script = {(1, "agent_2"): ("chat", {"message": "I need logs"}),  # team chat of a teammate...
              (1, "agent_3"): ("send_chat_message", {"message": "bead ready", "global": True}),
              (2, "agent_1"): ("chat", {"message": "relay: woodworker needs logs"})}
    ep, team = await play(t, "oracle_communication", rounds=3, script=script)
    heard = {(x.agent_id, x.round): [m.text for m in x.observation.chat] for x in team.turns}
    assert sorted(heard[("agent_1", 2)]) == ["I need logs", "bead ready"]  # the coordinator reads everything
    # a teammate's message reaches no one else beyond the radius; the coordinator's chat reaches everyone
    assert heard[("agent_3", 1)] == [] and heard[("agent_2", 2)] == heard[("agent_3", 2)] == [
        "relay: woodworker needs logs"]
    assert "You are the team's coordinator" in team.turns[0].system_prompt
    assert "lumberjack is the team's coordinator" in [x for x in team.turns if x.agent_id == "agent_2"][0].system_prompt
    ev = [e for e in ep.events if isinstance(e, TurnEvent) and e.agent == "agent_2"][0]
    assert ev.ok and "coordinator" in ev.result
    # no teammate in the radius: it reaches the coordinator only, and "use global=true or chat" would be untrue
    assert ev.result.startswith("Only lumberjack (the coordinator, who receives every message) gets it: no other "
                                "teammate is within the chat radius") and "global" not in ev.result, ev.result
    ep, team = await play(t, "vanilla", rounds=2, script=script)
    assert [m.text for m in [x for x in team.turns if x.agent_id == "agent_3" and x.round == 1][0].observation.chat] \
        == ["I need logs"]  # without the variant, team chat reaches everyone


async def test_single_agent_holds_every_role():
    t = staff()
    solo = apply_variant(t, "single_agent")
    assert solo.agent_ids == ["agent_1"]
    a = solo.agents[0]
    assert (a.x, a.y) == (t.agents[0].x, t.agents[0].y)
    assert a.skills == team_skills(t)
    held = {s.item for s in a.inventory} | {s.item for s in a.equipment}
    assert {"axe", "knife", "bead"} <= held
    assert solo.verifier.checks[0].params["agent"] == "agent_1"  # the staff check now targets the one agent
    assert solo.max_action_steps == t.max_action_steps * len(t.agents)  # the team's action allowance
    steps = [s.tool for s in solo.reference_solution["agent_1"]]  # the team's plan, done by one agent
    assert steps and "transfer_items" not in steps  # no hand-offs for one agent
    ep, team = await play(t, "single_agent", rounds=t.rounds)
    assert {x.agent_id for x in team.turns} == {"agent_1"}
    assert "playing alone" in team.turns[0].system_prompt and "Your teammates are" not in team.turns[0].system_prompt


async def test_single_agent_turns_delivery_into_holding():
    t = find_task("task_02_harvest")
    solo = apply_variant(t, "single_agent")
    assert {c.check for c in solo.verifier.checks} == {"item_count"}
    assert all(c.params["agent"] == "agent_1" for c in solo.verifier.checks)


def test_single_agent_drops_a_hand_off_of_a_material_used_up():
    """delivered with kept: false asks only that the receiver was handed the material: one agent hands
    nothing over, so the check is dropped; the kept hand-off becomes holding as before."""
    from agentworld.core.tasks.solo import _mapped
    from agentworld.core.tasks.task import CheckSpec

    spec = {"check": "delivered", "item": "logs", "to": "agent_2", "count": 2, "exact": True}
    assert _mapped(CheckSpec.model_validate({**spec, "kept": False}), "agent_1") is None
    held = _mapped(CheckSpec.model_validate({**spec, "kept": True}), "agent_1")
    assert held is not None and held.check == "item_count" and held.params["agent"] == "agent_1"


def _archer_staff(checks):
    """The small staff fixture with the lumberjack wearing a quiver of 50 bronze arrows, and these checks."""
    from agentworld.core.tasks.task import CheckSpec, YamlStack

    t = load_task(DATA / "small_staff.yaml")
    lumberjack = t.agents[0].model_copy(update={"equipment": [*t.agents[0].equipment,
                                                              YamlStack(item="bronze_arrow", count=50)]})
    return t.model_copy(update={"agents": [lumberjack, *t.agents[1:]], "verifier": t.verifier.model_copy(
        update={"checks": [CheckSpec.model_validate(c) for c in checks]})})


def test_single_agent_counts_an_equipped_stack_by_its_size_as_the_check_does():
    quiver = {"check": "equipped", "item": "bronze_arrow", "count": 50, "agent": "agent_1"}
    staff_check = {"check": "item_count", "item": "staff", "agent": "agent_3"}
    t = _archer_staff([staff_check, quiver, {"check": "all_alive"}])
    assert verify(t, plan_world(t), []).checkpoints[1].achieved  # the check holds at the start
    solo = apply_variant(t, "single_agent")
    # met before the one agent acts, so it asks nothing of it and is dropped like a hand-off of a held item
    assert [c.check for c in solo.verifier.checks] == ["item_count", "all_alive"]
    with pytest.raises(NotApplicable, match="meets every check at the start"):
        apply_variant(_archer_staff([quiver, {"check": "all_alive"}]), "single_agent")
    # one arrow more than the quiver holds is work: kept (and the team's plan, which fletches none, misses it)
    with pytest.raises(NotApplicable, match="does not meet the objective.*50/51"):
        apply_variant(_archer_staff([staff_check, {**quiver, "count": 51}]), "single_agent")


def test_single_agent_is_not_applicable_where_one_agent_cannot_play_it():
    # two places at once
    survey = str(DATA / "survey.yaml")  # retired task_05_survey, a fixture
    assert "at the same time" in not_applicable(find_task(survey), "single_agent")
    # hand-offs of items the team already holds: one agent would pass by doing nothing
    assert "hand-offs" in not_applicable(find_task(str(DATA / "market_day.yaml")), "single_agent")
    with pytest.raises(NotApplicable, match="single_agent does not apply to task_05_survey"):
        apply_variant(find_task(survey), "single_agent")
    with pytest.raises(NotApplicable):
        Episode(find_task(survey), Recorder(), variant="single_agent")


async def test_shared_plan_variants_show_the_plan():
    t = staff()
    ep, team = await play(t, "shared_plan", rounds=1)
    assert "Shared team plan" in team.turns[0].system_prompt and t.shared_plan.strip() in team.turns[0].system_prompt
    assert team.turns[0].extra["shared_plan"] == t.shared_plan
    assert len(team.turns[0].tools) == 13
    ep, team = await play(t, "shared_plan_no_communication", rounds=1)
    assert "Shared team plan" in team.turns[0].system_prompt and len(team.turns[0].tools) == 11
    with pytest.raises(NotApplicable, match="no shared_plan"):
        apply_variant(load_task(DATA / "paper_task_01.yaml"), "shared_plan")


async def test_no_roles_equalises_skills_and_removes_role_documents():
    t = find_task("task_08_convoy")
    flat = apply_variant(t, "no_roles")
    best = team_skills(t)
    assert all(a.skills == best and a.role == "" and a.guideline == "" for a in flat.agents)
    # items stay with their holders: the team's plan stays playable
    assert [(a.inventory, a.equipment) for a in flat.agents] == [(a.inventory, a.equipment) for a in t.agents]
    assert flat.reference_solution == t.reference_solution
    ep, team = await play(t, "no_roles", rounds=1)
    assert "Your role" not in team.turns[0].system_prompt


async def test_short_horizon_overrides_the_round_budget():
    need = rounds_needed(staff().reference_solution)
    if need <= 10:
        assert apply_variant(staff(), "short_horizon").rounds == 10
    n = need + 1
    assert apply_variant(staff(), f"short_horizon:{n}").rounds == n
    ep = Episode(staff(), Recorder(), variant=f"short_horizon:{n}")
    res = await ep.run()
    assert res.rounds == n and res.max_rounds == n and res.end_reason == "round_budget"
    assert res.variant == f"short_horizon:{n}"
    with pytest.raises(ValueError, match="round count"):
        apply_variant(staff(), "short_horizon:soon")
    # shorter than the reference plan needs: n/a, with how many rounds it needs
    assert f"needs {need} rounds" in not_applicable(staff(), f"short_horizon:{need - 1}")


def test_episode_plays_a_task_its_caller_already_transformed():
    # the runner transforms once (to build the team for that task) and hands the result in as played_task;
    # a second transform would move random spawns again (task_01_staff: random_spawn applies to it; task_08_convoy's
    # trades now work in five regions, and walking back from spawns near the team's centre takes it past its budget)
    t = find_task(STAFF)
    played = apply_variant(t, "random_spawn", seed=1)
    ep = Episode(t, Recorder(), variant="random_spawn", seed=1, played_task=played)
    assert ep.task is played and ep.base_task is t
    spawns = lambda ep: [ep.world.player_state(a).x for a in ep.agent_ids]  # noqa: E731
    assert spawns(ep) == spawns(Episode(t, Recorder(), variant="random_spawn", seed=1)) == [a.x for a in played.agents]


def test_random_spawn_is_seeded_walkable_and_near():
    t = find_task("task_119_oakridge_survey")  # 10 agents spawned together (task_36, used before, is retired)
    a = apply_variant(t, "random_spawn", seed=1)
    b = apply_variant(t, "random_spawn", seed=1)
    c = apply_variant(t, "random_spawn", seed=2)
    spawns = lambda task: [(x.x, x.y) for x in task.agents]  # noqa: E731
    assert spawns(a) == spawns(b) != spawns(c)
    assert spawns(a) != spawns(t)
    gmap = load_world().map
    cx = sum(x.x for x in t.agents) / len(t.agents)
    cy = sum(x.y for x in t.agents) / len(t.agents)
    for x, y in spawns(a):
        assert gmap.walkable(x, y) and abs(x - cx) <= 26 and abs(y - cy) <= 26


async def test_no_documentation_removes_guides():
    t = staff()
    ep, team = await play(t, "no_documentation", rounds=1)
    prompt = team.turns[0].system_prompt
    assert "# Your part" not in prompt and "You are the team's lumberjack" not in prompt
    assert "Recipes:" not in prompt and t.objectives.primary in prompt
    ep, team = await play(t, "vanilla", rounds=1)
    assert "You are the team's lumberjack" in team.turns[0].system_prompt and "Recipes:" in team.turns[0].system_prompt


async def test_party_status_shows_teammates_hp():
    ep, team = await play(staff(), "party_status", rounds=1)
    party = team.turns[0].observation.party
    assert [p.username for p in party] == ["woodworker", "wizard"] and all(p.hp > 0 for p in party)
    assert "Party: woodworker" in team.turns[0].observation_text


async def test_oracle_still_solves_under_runtime_variants():
    t = staff()
    for variant in ("party_status", "oracle_communication", "no_documentation", "no_communication"):
        res = await Episode(t, PolicyTeam(OraclePolicy(t)), variant=variant).run()
        assert res.success, variant


def test_no_roles_keeps_checks_that_name_a_role_on_the_same_agents():
    task = next((t for t in (find_task(i) for i in ("task_321_hearthmoor_four_roads",))
                 if any(c.params.get("role") for c in t.verifier.checks)), None)
    if task is None:
        pytest.skip("no shipped task names a role in its verifier")
    flat = apply_variant(task, "no_roles")
    for before, after in zip(task.verifier.checks, flat.verifier.checks):
        role = before.params.get("role")
        if role:
            assert "role" not in after.params
            assert after.params["agents"] == [a.agent_id for a in task.agents if a.role == role]
    assert all(a.role == "" for a in flat.agents)


def test_no_communication_keeps_facts_an_agent_was_told_before_the_episode():
    # A no-communication pilot of task_521 lost the keeper's one fact: "A fisher told you where the relic
    # washed up: on Palm Isle at (971,243)." went with the promises of messages the variant removes.
    from agentworld.core.tasks.variants import without_talk

    fact = "A fisher told you where the relic washed up: on Palm Isle at (971,243)."
    assert without_talk(fact + " The porters do not know.") == fact + " The porters do not know."
    for promise in ("The scouts do not know the posts until told.", "If the need changes, you will be told.",
                    "The steward tells you which nodes to work.", "Ask the smith for a blade."):
        assert without_talk(promise + " Keep the fire.") == "Keep the fire.", promise
    task = find_task("task_521_saltmarsh_last_ferry")
    keeper = apply_variant(task, "no_communication").agents[0]
    assert "(971,243)" in keeper.guideline
