"""The task proofs (core/runs/prove.py) catch each kind of bad task, and `agentworld tasks prove` reports them."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentworld.core import cli as cli_module
from agentworld.core.cli.prove import prove_cmd
from agentworld.core.runs.knowledge import TurnSeen, knowledge_gaps
from agentworld.core.runs.prove import (FINDINGS, SoloAnalysis, TaskProof, play, prove_task, solo_blockers,
                                        suite_summary, work_solo)
from agentworld.core.tasks.task import find_task, load_task

FIXTURE = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path
# suite v1's 5-round staff task: a small task the tests below edit into each kind of bad task
STAFF = Path(__file__).parent / "data" / "small_staff.yaml"


@pytest.fixture
def staff_raw() -> dict:
    return yaml.safe_load(STAFF.read_text(encoding="utf-8"))


def _write(tmp_path: Path, raw: dict, name: str = "task_x.yaml") -> Path:
    raw = copy.deepcopy(raw)
    raw["id"] = Path(name).stem
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


FAST = {"random_seeds": (0,), "necessity": False}  # for proofs a test reads one finding of


def _finding(proof, name):
    f = proof.finding(name)
    assert f is not None, [x.name for x in proof.findings]
    return f


def test_shipped_starter_task_is_proven():
    proof = prove_task(find_task(FIXTURE))
    assert proof.ok, [(f.name, f.detail) for f in proof.findings]
    assert proof.ref_rounds is not None and proof.ref_rounds <= proof.budget
    assert proof.slack == proof.budget - proof.ref_rounds
    assert [f.name for f in proof.findings] == list(FINDINGS)
    assert "5 seed(s)" in _finding(proof, "random fails").detail  # five random seeds by default
    assert _finding(proof, "every agent needed").ok  # necessity is on by default


def test_illegal_reference_call_fails_solvable(tmp_path, staff_raw):
    # the woodworker tries to hand over sticks before making them: a tool error, named in the finding
    staff_raw["reference_solution"]["agent_2"][0] = {"tool": "transfer_items",
                                                    "args": {"targetPlayer": "wizard", "itemKey": "stick", "count": 3}}
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), **FAST)
    f = _finding(proof, "solvable")
    assert not f.ok and not proof.ok
    assert "illegal call(s) in the reference plan" in f.detail and "agent_2 round 1 transfer_items" in f.detail


def test_unsolved_reference_fails_solvable_and_honesty(tmp_path, staff_raw):
    staff_raw["reference_solution"]["agent_3"] = [{"tool": "sleep", "args": {"seconds": 1}}]
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), **FAST)
    assert not _finding(proof, "solvable").ok
    assert "oracle fails" in _finding(proof, "solvable").detail
    honest = _finding(proof, "honest verifier")
    assert not honest.ok and "not reached by the oracle: staff with wizard" in honest.detail
    assert proof.ref_rounds is None


def test_plan_longer_than_action_cap_fails(tmp_path, staff_raw):
    staff_raw["max_action_steps"] = 1  # chat and sleep steps are free: the plan's actions alone must exceed it
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), **FAST)
    f = _finding(proof, "solvable")
    assert not f.ok and "max_action_steps 1" in f.detail


def test_checkpoint_met_at_spawn_is_dishonest_and_idle_passes(tmp_path, staff_raw):
    # the only check asks for something the wizard already holds: an idle team passes, the check cannot fail
    staff_raw["verifier"]["checks"] = [{"check": "item_count", "item": "bead", "count": 1, "agent": "agent_3"}]
    staff_raw["objectives"]["primary"] = "The wizard keeps a bead."  # (an objective of staffs would not load)
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), **FAST)
    assert not _finding(proof, "idle fails").ok
    honest = _finding(proof, "honest verifier")
    assert not honest.ok and "already met by an idle team" in honest.detail


def test_guard_checks_alone_are_not_honest(tmp_path, staff_raw):
    staff_raw["verifier"]["checks"] = [{"check": "all_alive"}]
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), **FAST)
    assert "every checkpoint is a guard" in _finding(proof, "honest verifier").detail


def test_one_agent_with_everything_is_not_collaborative(tmp_path, staff_raw):
    # give the wizard the knife, fletching and logs: the wizard alone can make the staff
    wiz = staff_raw["agent_3"]
    wiz["skill_levels"]["fletching"] = 5
    wiz["inventory_items"] += [{"item": "knife", "count": 1}, {"item": "logs", "count": 2}]
    task = load_task(_write(tmp_path, staff_raw))
    assert solo_blockers(task)["agent_3"] is None
    assert solo_blockers(task)["agent_1"]  # the lumberjack still cannot (the check names the wizard)
    proof = prove_task(task, **FAST)
    f = _finding(proof, "collaborative")
    assert not f.ok and "wizard could meet every check alone" in f.detail


def test_work_solo_flags_collaboration_by_pinning_only(tmp_path, staff_raw):
    raw = copy.deepcopy(staff_raw)
    raw["agent_1"]["inventory_items"] += [{"item": "knife", "count": 1}, {"item": "bead", "count": 1}]
    raw["agent_1"]["skill_levels"].update(fletching=5, crafting=8)
    task = load_task(_write(tmp_path, raw))
    assert work_solo(task) == ["agent_1"]  # the lumberjack could make the staff, but the check names the wizard
    proof = prove_task(task, **FAST)
    f = _finding(proof, "collaborative")
    assert not f.ok and "rests only on whom the verifier names" in f.detail  # refused, not a warning


def test_solo_analysis_reads_the_requirement_graph():
    task = find_task(FIXTURE)
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
    ok = runner.invoke(prove_cmd, [FIXTURE, "--json"])
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


def test_one_agent_cannot_be_in_two_places_at_once(tmp_path, staff_raw):
    # two beacons far apart, each needing *a* keeper (any agent), at the same time
    staff_raw["verifier"]["checks"] = [
        {"check": "at_location", "x": 470, "y": 255, "radius": 2, "require": "any"},
        {"check": "at_location", "x": 220, "y": 450, "radius": 2, "require": "any"}]
    blockers = solo_blockers(load_task(_write(tmp_path, staff_raw)))
    assert all(b.startswith("cannot stand at") and "at once" in b for b in blockers.values()), blockers

def test_oracle_seeds_report_how_often_the_plan_passes():
    proof = prove_task(find_task(FIXTURE), oracle_seeds=3)
    f = _finding(proof, "solvable")
    assert f.ok and not f.warning and "passes with 3/3 seeds" in f.detail


# -- suite v2: knowledge, necessity, strict defaults ---------------------------------------------------------
HUNT = "task_44_oakridge_wolves"  # the tracker alone knows where the wolves are


def _seen(agent, rnd, tool, args, *, brief="", obs="", chat=(), held=None):
    return TurnSeen(agent_id=agent, round=rnd, system_prompt=brief, observation_text=obs, chat=list(chat),
                    held=held or {}, tool=tool, args=args)


def test_knowledge_check_refuses_an_id_its_agent_never_saw():
    brief = "You mine copper. Your rock: copper_rock#12 at (100,100)."
    ok = _seen("agent_1", 1, "harvest_resource", {"targetInstance": "copper_rock#12"}, brief=brief)
    unseen = _seen("agent_1", 2, "harvest_resource", {"targetInstance": "tin_rock#99"}, brief=brief)
    gaps = knowledge_gaps([ok, unseen])
    assert [(g.round, g.argument, g.value) for g in gaps] == [(2, "targetInstance", "tin_rock#99")]
    assert "never shown to it" in str(gaps[0])
    # seen in its own observation, or told in chat: known
    assert not knowledge_gaps([_seen("agent_1", 1, "attack_entity", {"targetInstance": "wolf#7"},
                                     obs="- mob wolf#7 | Wolf | 10,10 | 3 | lv 10")])
    told = _seen("agent_1", 1, "move_character", {"x": 301, "y": 402}, chat=["scout: the camp is at (300,400)"])
    assert not knowledge_gaps([told]) and knowledge_gaps([told], without_chat=True)
    # a chat message may only pass on what its sender knows
    lie = _seen("agent_2", 1, "chat", {"message": "the rock is iron_rock#5 at (9,9)"})
    assert {g.value for g in knowledge_gaps([lie])} == {"iron_rock#5", "(9,9)"}


def test_a_plan_using_an_id_the_agent_cannot_know_fails_the_proof(tmp_path):
    raw = yaml.safe_load(Path(find_task(HUNT, validate=False).path).read_text(encoding="utf-8"))
    wolf = raw["reference_solution"]["agent_3"]
    first = next(s for s in wolf if s["tool"] == "attack_entity")
    first["args"]["targetInstance"] = "wolf#2749"  # a wolf at Saltmarsh that nobody in this team was told of
    proof = prove_task(load_task(_write(tmp_path, raw)), **FAST)
    f = _finding(proof, "knowable")
    assert not f.ok and "targetInstance='wolf#2749' was never shown to it" in f.detail


def test_a_communication_task_fails_the_knowledge_check_without_its_chat(tmp_path):
    task = find_task(HUNT)
    assert task.needs_communication
    _, team = play(task, "oracle", record_seen=True)
    assert not knowledge_gaps(team.seen)  # the plan as written is knowable
    silent = knowledge_gaps(team.seen, without_chat=True)
    assert silent and {g.agent_id for g in silent} == {"agent_3"}  # the archer: where the wolves are
    # the same plan with its chat steps turned into sleeps is refused by the proof
    raw = yaml.safe_load(Path(task.path).read_text(encoding="utf-8"))
    for steps in raw["reference_solution"].values():
        for i, s in enumerate(steps):
            if s["tool"] == "chat":
                steps[i] = {"tool": "sleep", "args": {"seconds": 1}}
    f = _finding(prove_task(load_task(_write(tmp_path, raw)), **FAST), "knowable")
    assert not f.ok and "cannot know" in f.detail


def test_needs_communication_must_match_the_plan(tmp_path):
    raw = yaml.safe_load(Path(find_task(HUNT, validate=False).path).read_text(encoding="utf-8"))
    raw["needs_communication"] = False
    f = _finding(prove_task(load_task(_write(tmp_path, raw)), **FAST), "knowable")
    assert not f.ok and "mark the task needs_communication: true" in f.detail
    staff = yaml.safe_load(STAFF.read_text(encoding="utf-8"))
    staff["needs_communication"] = True  # the staff's briefs name everything: talking is not needed
    f = _finding(prove_task(load_task(_write(tmp_path, staff, "task_y.yaml")), **FAST), "knowable")
    assert not f.ok and "still knowable" in f.detail


def test_an_agent_the_plan_does_not_need_fails_the_proof(tmp_path, staff_raw):
    staff_raw["agent_4"] = {"username": "onlooker", "role": "onlooker", "location": {"x": 452, "y": 401},
                            "guideline": "You watch.", "skill_levels": {"crafting": 2}}
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), random_seeds=(0,))
    f = _finding(proof, "every agent needed")
    assert not f.ok and "without onlooker" in f.detail


def test_an_informant_is_needed_through_what_it_tells():
    # the tracker does no physical work: without its chat the archer cannot know where to shoot
    from agentworld.core.runs.prove import plan_needs

    task = find_task(HUNT)
    assert plan_needs(task, "agent_1") and plan_needs(task, "agent_2")


def test_progress_at_spawn_fails_idle_with_psr(tmp_path, staff_raw):
    staff_raw["verifier"]["checks"].append({"check": "at_location", "landmark": "hearthmoor"})
    f = _finding(prove_task(load_task(_write(tmp_path, staff_raw)), **FAST), "idle fails")
    assert not f.ok and "PSR 0.50" in f.detail and "guard" in f.detail
    staff_raw["verifier"]["checks"][-1]["guard"] = True  # a post the team must keep: a constraint, not progress
    proof = prove_task(load_task(_write(tmp_path, staff_raw)), **FAST)
    assert _finding(proof, "idle fails").ok and _finding(proof, "honest verifier").ok


def test_random_seeds_are_required():
    with pytest.raises(ValueError, match="at least one random seed"):
        prove_task(find_task(FIXTURE), random_seeds=())
    r = CliRunner().invoke(prove_cmd, [FIXTURE, "--random-seeds", "0"])
    assert r.exit_code == 2 and "--random-seeds" in r.output


def test_a_suite_without_tasks_is_an_error(monkeypatch):
    import agentworld.core.tasks.task as task_module

    monkeypatch.setattr(task_module, "load_suite", lambda suite="main", **kw: [])
    r = CliRunner().invoke(prove_cmd, ["--all", "--suite", "augmented"])
    assert r.exit_code == 1 and "has no tasks" in r.output
    r = CliRunner().invoke(prove_cmd, ["--all", "--suite", "nonsense"])
    assert r.exit_code == 2 and "unknown suite" in r.output


def test_solo_levels_grow_within_the_budget():
    task = find_task(FIXTURE)
    sa = SoloAnalysis(task)
    lumberjack = task.agent("agent_1")
    assert sa.level("agent_1", "lumberjacking") > lumberjack.skills["lumberjacking"]
    assert sa.level("agent_1", "strength") == lumberjack.skills.get("strength", 1)  # fights play out their own XP


def test_suite_summary_counts_the_shape():
    proofs = [TaskProof("a", "combat", 3, 30, 30, ref_rounds=15, needs_communication=True, item_handoffs=2,
                        fact_handoffs=2),
              TaskProof("b", "crafting", 10, 40, 40, ref_rounds=20, item_handoffs=6)]
    s = suite_summary(proofs)
    assert s["by_category"] == {"combat": 1, "crafting": 1} and s["by_team_size"] == {3: 1, 10: 1}
    assert s["ref_rounds"]["median"] == 17.5 and s["budget_ratio"]["min"] == 2.0 and s["needs_communication"] == 1
    assert s["handoffs"]["max"] == 6


# -- a fact is known only while it is true (moving mobs, events) ------------------------------------------------
def test_a_mob_place_told_in_chat_goes_stale_once_the_mob_moves():
    from agentworld.core.world.datapack import load_world

    mob = load_world().mobs[0]
    told = [f"scout: {mob.id} is at ({mob.x},{mob.y})"]
    walk = {"x": mob.x, "y": mob.y}
    still = _seen("agent_1", 2, "move_character", walk, chat=told)
    assert not knowledge_gaps([replace(still, moved={mob.id: (mob.x, mob.y)})])  # still there: the place is true
    gone = replace(still, moved={mob.id: (mob.x + 30, mob.y)})
    assert [g.argument for g in knowledge_gaps([gone])] == ["x,y"]  # it moved away: stale
    news = f"scout: {mob.id} now at ({mob.x + 30},{mob.y})"
    back = replace(still, moved={mob.id: (mob.x + 30, mob.y)}, chat=told + [news], args={"x": mob.x + 30, "y": mob.y})
    assert not knowledge_gaps([back])  # told the new place: known again
    assert not knowledge_gaps([replace(gone, moved=None)])  # no truth recorded: as before
    # a place not tied to a mob stays known whatever the mobs do
    camp = _seen("agent_1", 2, "move_character", {"x": 300, "y": 400}, chat=["scout: the camp is at (300,400)"])
    assert not knowledge_gaps([replace(camp, moved={mob.id: (1, 1)})])


def test_a_raider_seen_before_it_died_is_no_longer_where_it_was():
    obs = "- mob goblin#100000 | Goblin | 450,402 | 3 | lv 5"
    seen = _seen("agent_1", 3, "move_character", {"x": 450, "y": 402}, obs=obs)
    assert not knowledge_gaps([replace(seen, moved={"goblin#100000": (450, 402)})])
    assert knowledge_gaps([replace(seen, moved={})])  # dead and gone at the tick


def test_a_relayed_count_an_event_changed_is_stale_after_the_event():
    from agentworld.core.runs.knowledge import Stale

    chat = ["wizard: I need 9 sticks"]
    before = _seen("agent_2", 2, "transfer_items", {"targetPlayer": "wizard", "itemKey": "stick", "count": 9},
                   brief="Team: wizard. You whittle stick.", chat=chat, held={"stick": 12})
    after = replace(before, round=4, chat=[])
    stale = [Stale(3, numbers=frozenset({9}))]
    assert not knowledge_gaps([before], stale=stale)
    assert [(g.round, g.argument) for g in knowledge_gaps([before, after], stale=stale)] == [(4, "count")]
    assert not knowledge_gaps([before, after])  # without the event the relayed count still holds


def test_kill_chance_counts_every_way_two_strikes_can_kill():
    from itertools import product

    from agentworld.core.world import stats

    def brute(attack: int, hit: float, hp: int) -> float:  # every (hit?, damage) pair, the second only if alive
        total = 0.0
        for (h1, d1), (h2, d2) in product(product((True, False), range(1, attack + 1)), repeat=2):
            p = ((hit if h1 else 1 - hit) * (hit if h2 else 1 - hit)) / attack ** 2
            first = d1 if h1 else 0
            total += p * (first >= hp or first + (d2 if h2 else 0) >= hp)
        return total

    for attack, hit, hp in ((12, 0.8, 15), (12, 0.8, 30), (3, 0.5, 4), (5, 0.95, 5), (12, 0.8, 25)):
        assert stats.kill_chance(attack, hit, hp) == pytest.approx(brute(attack, hit, hp))
    assert stats.kill_chance(12, 0.8, 25) == 0.0  # 2 x 12 < 25: two strikes cannot kill
    assert 0.25 < stats.kill_chance(12, stats.hit_chance(32, 1), 15) < 0.26  # the golem and the 15-HP prospector


def test_a_deadly_beast_on_a_walk_must_be_named_to_its_walker(tmp_path):
    # task_14's prospector (15 HP) walks the shortest way west, past a rock golem whose two strikes kill it one
    # pass in four: shipped, the quartermaster's survey and chat name it; without that the proof fails
    raw = copy.deepcopy(find_task("task_14_prospector").raw)
    assert _finding(prove_task(find_task("task_14_prospector"), **FAST), "warned of deadly beasts").ok
    raw["agent_3"]["guideline"] = raw["agent_3"]["guideline"].split(" The shortest way")[0]
    say = raw["reference_solution"]["agent_3"][0]
    say["args"]["message"] = say["args"]["message"].split(" The way passes")[0]
    unwarned = _finding(prove_task(load_task(_write(tmp_path, raw, "task_14_unwarned.yaml")), **FAST),
                        "warned of deadly beasts")
    assert not unwarned.ok
    assert "prospector walks into rock_golem#2962's range" in unwarned.detail and "25%" in unwarned.detail
    # a prospector with health enough to take both strikes needs no warning
    raw["agent_2"]["skill_levels"] = {**raw["agent_2"].get("skill_levels", {}), "health": 4}
    assert _finding(prove_task(load_task(_write(tmp_path, raw, "task_14_hardy.yaml")), **FAST),
                    "warned of deadly beasts").ok
