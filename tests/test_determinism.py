"""Same seed + same actions -> identical states and effects; the seed is the only source of chance."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from worldfix import make_world, spec  # noqa: E402

from agentworld.core.world.tools import TOOLS  # noqa: E402

PLAYERS = [
    spec("agent_1", "fighter", 4, 4, skills={"strength": 5, "accuracy": 5, "health": 6}, inventory={"cooked_trout": 4},
         equipment=["copper_sword"]),
    spec("agent_2", "forager", 3, 21, inventory={"bronze_axe": 1}),
    spec("agent_3", "hunter", 20, 20, skills={"health": 8}, inventory={"berries": 3}),
]
SCRIPT = [  # (agent, tool, args), one round = three calls
    ("agent_1", "attack_entity", {"targetInstance": "chicken#1"}),
    ("agent_2", "harvest_resource", {"targetInstance": "berry_bush#1"}),
    ("agent_3", "attack_entity", {"targetInstance": "wolf#1"}),
    ("agent_1", "attack_entity", {"targetInstance": "goblin#1"}),
    ("agent_2", "chat", {"message": "berries ready"}),
    ("agent_3", "equip_item", {"itemKey": "berries"}),
    ("agent_1", "move_character", {"x": 20, "y": 25}),
    ("agent_2", "move_character", {"x": 19, "y": 24}),
    ("agent_3", "attack_entity", {"targetInstance": "wolf#1"}),
    ("agent_1", "attack_entity", {"targetInstance": "wolf#1"}),
    ("agent_2", "harvest_resource", {"targetInstance": "berry_bush#1"}),
    ("agent_3", "sleep", {"seconds": 5}),
]


# issue 26: mobs that roam and patrol (the wolf crosses agent_3's ground), finite nodes, a carrying limit
MECHANICS = {"mobs": {"wolf": {"roam": 4, "speed": 2}, "goblin#1": {"patrol": [[12, 8], [6, 3]]}},
             "nodes": {"berry_bush#1": {"total": 4}}}


def play(seed: int, death: str = "respawn", mechanics: bool = False) -> tuple[str, str]:
    rules = {"death": death, **({"carry_limit": 12} if mechanics else {})}
    w = make_world(seed=seed, rules=rules, players=PLAYERS, **(MECHANICS if mechanics else {}))
    log = []
    for rnd in range(1, 4):  # the script three times over, with ticks: respawns and aggro come back in
        for i, (agent, tool, args) in enumerate(SCRIPT):
            r = TOOLS[tool].execute(w, agent, args)
            log.append(r.model_dump())
            log.append(w.observe(agent).model_dump())
            if i % 3 == 2:
                log.append(w.end_round(rnd * 10 + i).model_dump())
    return json.dumps(log, sort_keys=True), json.dumps(w.snapshot(), sort_keys=True)


def test_same_seed_and_actions_give_identical_effects_and_state():
    for death in ("out", "respawn"):
        assert play(7, death) == play(7, death)


def test_the_seed_changes_the_outcome():
    outcomes = {play(seed)[1] for seed in range(4)}
    assert len(outcomes) > 1


def test_mechanics_same_seed_same_trajectory_and_the_seed_moves_the_mobs():
    for death in ("out", "respawn"):
        assert play(7, death, mechanics=True) == play(7, death, mechanics=True)
    moved = {json.dumps(json.loads(play(seed, mechanics=True)[1])["moving_mobs"]) for seed in range(4)}
    assert len(moved) > 1
    assert play(7, mechanics=True) != play(7)  # the mechanics are in play


def test_worlds_do_not_share_state():
    a = make_world(seed=1, players=PLAYERS)
    b = make_world(seed=1, players=PLAYERS)
    a.attack_entity("agent_1", "chicken#1")
    assert b.mobs["chicken#1"].hp == b.mobs["chicken#1"].type.hp
    assert play(3) == play(3)


def test_identical_across_processes_with_different_hash_seeds():
    """No set or hash order leaks into the outcome: two interpreters with different PYTHONHASHSEED agree."""
    import hashlib
    import os
    import subprocess

    code = ("import sys, hashlib; sys.path.insert(0, %r); import test_determinism as t; "
            "print(hashlib.sha256(''.join(t.play(5) + t.play(5, mechanics=True)).encode()).hexdigest())"
            ) % str(Path(__file__).parent)
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert digests == {hashlib.sha256("".join(play(5) + play(5, mechanics=True)).encode()).hexdigest()}


def test_a_task_with_every_mechanic_plays_the_same_under_the_same_seed():
    """The worked example (events of every kind, joint actions, hidden things drawn from the seed), played by
    the random team: the same seed gives the same trajectory and final state, another seed another."""
    import asyncio
    import tempfile

    from agentworld.core.play.episode import Episode
    from agentworld.core.play.policies import PolicyTeam, make_policy
    from agentworld.core.tasks.task import load_task

    task = load_task(Path(__file__).parent / "data" / "example_mechanics.yaml")

    def play_random(seed: int) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(Episode(task, PolicyTeam(make_policy("random", seed)), seed=seed, out_dir=tmp).run())
            lines = [json.loads(x) for x in (Path(tmp) / "trajectory.jsonl").read_text().splitlines()]
            state = json.loads((Path(tmp) / "final_state.json").read_text())
        volatile = ("timestamp", "harness_s", "model_latency_s", "wall_s")
        return json.dumps([[{k: v for k, v in ev.items() if k not in volatile} for ev in lines], state], sort_keys=True)

    assert play_random(4) == play_random(4)
    assert play_random(4) != play_random(5)
