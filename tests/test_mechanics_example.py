"""The worked example task (tests/data/example_mechanics.yaml, docs/tasks.md): it uses every mechanic of the
events/joint/hidden blocks, `tasks prove` proves it, its episodes are deterministic, and arbitrary calls on it
keep every invariant of the fuzz campaign and replay identically."""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentworld.core.play.episode import Episode
from agentworld.core.play.fuzzing import fuzz_episode
from agentworld.core.play.policies import PolicyTeam, make_policy
from agentworld.core.runs.prove import prove_task
from agentworld.core.tasks.mechanics import mechanics_of
from agentworld.core.tasks.task import load_task, world_index

sys.path.insert(0, str(Path(__file__).parent))
from test_fuzz_episodes import PLAN  # noqa: E402

EXAMPLE = Path(__file__).parent / "data" / "example_mechanics.yaml"


def test_the_example_uses_every_mechanic():
    task = load_task(EXAMPLE)
    used = set(mechanics_of(task))
    kinds = {"close_portal", "open_portal", "depart", "deplete_node", "refill_node", "spawn_mobs", "announce",
             "change_objective"}
    assert {f"events:{k}" for k in kinds} | {"events:triggered", "joint_action", "joint:guarded_mob",
                                             "joint:held_gate", "joint:heavy_load", "hidden_info"} <= used


def test_the_example_is_proven():
    proof = prove_task(load_task(EXAMPLE))
    assert proof.ok, [str(f) for f in proof.findings if not f.ok]


def _oracle_trajectory(seed):
    task = load_task(EXAMPLE)
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(Episode(task, PolicyTeam(make_policy("oracle", seed, task)), seed=seed,
                                     out_dir=tmp).run())
        lines = [json.loads(x) for x in (Path(tmp) / "trajectory.jsonl").read_text().splitlines()]
        state = json.loads((Path(tmp) / "final_state.json").read_text())
    for ev in lines:
        ev.pop("timestamp", None)
        for k in ("harness_s", "model_latency_s"):
            ev.pop(k, None)
    return result, lines, state


def test_the_example_plays_the_same_under_the_same_seed_and_its_events_are_recorded():
    result, lines, state = _oracle_trajectory(2)
    assert result.success
    again = _oracle_trajectory(2)
    assert (lines, state) == (again[1], again[2])
    fired = [e["id"] for ev in lines if ev["type"] == "tick" for e in ev.get("events", [])]
    assert fired[:2] == ["dawn_order", "crier"] and "tin_blight" in fired and "farm_raid" in fired
    assert state["world"]["mechanics"]["check_overrides"] == {"the circle's order of staffs": {"count": 3}}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans=st.lists(PLAN, max_size=18), seed=st.integers(0, 3))
def test_arbitrary_calls_on_the_example_keep_every_invariant_and_replay_identically(plans, seed):
    task = load_task(EXAMPLE)
    recipes = sorted({o for r in world_index().recipes for o in r.outputs})
    with tempfile.TemporaryDirectory() as tmp:
        made = []

        def make(team):
            made.append(1)
            return Episode(task, team, seed=seed, out_dir=Path(tmp) / str(len(made)))

        report = asyncio.run(fuzz_episode(make, plans, recipes))
    assert not report.exceptions, report.exceptions
    assert not report.violations, report.violations[:5]
    assert report.replayed


def test_one_agent_cannot_play_a_task_with_a_joint_action():
    from agentworld.core.tasks.variants import not_applicable

    reason = not_applicable(load_task(EXAMPLE), "single_agent")
    assert reason and "takes 2 players in the same round" in reason


def test_mechanics_lists_what_the_world_puts_where_the_plan_goes():
    from agentworld.core.tasks.mechanics import mechanic_places
    from agentworld.core.tasks.task import find_task, parse_task
    from agentworld.core.world.datapack import load_world

    wolves = find_task("task_44_oakridge_wolves")
    assert {"roaming_mobs", "hazard"} <= set(mechanics_of(wolves))
    example = load_task(EXAMPLE)
    assert "events:depart" in mechanics_of(example) and "joint:guarded_mob" in mechanics_of(example)
    raw = yaml.safe_load(Path(wolves.path).read_text(encoding="utf-8"))
    raw["mobs"] = {"wolf": {"patrol": [[0, 0], [6, 0], [6, 6]]}}
    patrolled = parse_task(raw, "patrol.yaml", "patrol")
    assert "patrolling_mobs" in mechanics_of(patrolled)
    routes = [p for p in mechanic_places(patrolled, load_world()) if p[4]]
    assert routes and all(len(route) > 2 for *_, route in routes)


def test_a_wolf_position_relayed_in_chat_goes_stale_when_the_wolf_roams_away():
    from agentworld.core.runs.knowledge import knowledge_gaps
    from agentworld.core.runs.prove import play
    from agentworld.core.tasks.task import find_task, parse_task

    raw = yaml.safe_load(Path(find_task("task_44_oakridge_wolves").path).read_text(encoding="utf-8"))
    _, team = play(parse_task(raw, "wolves.yaml", "wolves"), "oracle", record_seen=True)
    assert not knowledge_gaps(team.seen)  # the wolves keep near where the tracker saw them
    raw["mobs"] = {"wolf": {"roam": 25, "speed": 5}}  # now they run far and fast
    _, team = play(parse_task(raw, "wolves.yaml", "wolves"), "oracle", record_seen=True)
    stale = [g for g in knowledge_gaps(team.seen) if g.argument == "x,y"]
    assert stale, "a walk to where the tracker saw a wolf that ran off should not count as known"
