"""The worked example task (tests/data/example_mechanics.yaml, docs/tasks.md): it uses every mechanic of the
events/joint/hidden blocks, `tasks prove` proves it, its episodes are deterministic, and arbitrary calls on it
keep every invariant of the fuzz campaign and replay identically."""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

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
