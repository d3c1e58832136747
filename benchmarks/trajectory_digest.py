"""Digests of scripted episodes, timings stripped: a speed change must leave every trajectory byte-identical.

Plays oracle and random teams on several shipped tasks, variants and seeds, plus a 100-agent team spread
round the map and a 60-agent team packed into one village (``bench scale``'s generated tasks), and prints
one sha256 per case over ``trajectory.jsonl``, ``result.json`` and ``final_state.json`` with the fields that
measure time removed. Write the digests of the merge base and of the branch, then compare them:

    python benchmarks/trajectory_digest.py base.json      # on the merge base
    python benchmarks/trajectory_digest.py branch.json    # on the branch
    python benchmarks/trajectory_digest.py --compare base.json branch.json

``--big`` adds bench scale's sizes (400 and 1,000 agents round the map, 300 and 1,000 packed; a few minutes).
``--observations`` also digests every observation the world hands out, as JSON, per case (``KEY/obs``): a
change to how an observation is built must not change one, even where no trajectory shows it. Compare files
written with the same flags.

A change of which shortest path the engine takes changes trajectories legitimately: take the base again
from the new merge base after a rebase.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
from pathlib import Path

VOLATILE = {"timestamp", "harness_s", "model_latency_s", "wall_s"}  # what a run's timing changes

# (task, team, seed, variant); "scale:N" / "packed:N" are bench scale's generated tasks of N agents
CASES = [
    ("task_01_staff", "oracle", 0, "vanilla"),
    ("task_01_staff", "random", 3, "vanilla"),
    ("task_03_market", "oracle", 1, "vanilla"),
    ("task_05_survey", "oracle", 0, "vanilla"),
    ("task_05_survey", "random", 2, "party_status"),
    ("task_08_convoy", "random", 1, "vanilla"),
    ("task_08_convoy", "oracle", 2, "oracle_communication"),
    ("task_04_goblins", "random", 5, "no_communication"),
    ("task_16_ice_cavern", "oracle", 0, "vanilla"),
    ("task_16_ice_cavern", "random", 0, "random_spawn"),
    ("task_17_wolf_archer", "oracle", 4, "single_agent"),
    ("task_35_fletchers_guild", "random", 1, "shared_plan"),
    ("task_44_oakridge_wolves", "oracle", 3, "vanilla"),
    ("task_119_oakridge_survey", "random", 2, "no_roles"),
    ("scale:100", "random", 0, "vanilla"),
    ("packed:60", "random", 1, "vanilla"),
]
# shipped tasks the suite has retired since, played from their copies in tests/data (same content, same digests)
DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
RETIRED = {"task_01_staff": str(DATA / "task_01_staff.yaml"), "task_03_market": str(DATA / "market_day.yaml"),
           "task_05_survey": str(DATA / "survey.yaml")}
BIG_CASES = [
    ("scale:400", "random", 0, "vanilla"),
    ("packed:300", "random", 2, "vanilla"),
    ("scale:1000", "random", 1, "vanilla"),
    ("packed:1000", "random", 0, "vanilla"),
]


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in VOLATILE}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


def play(task_id: str, team: str, seed: int, variant: str, out: Path) -> None:
    from agentworld.core.play.episode import Episode
    from agentworld.core.play.policies import PolicyTeam, make_policy
    from agentworld.core.runs.bench_play import scale_task
    from agentworld.core.tasks.task import find_task
    from agentworld.core.tasks.variants import apply_variant

    if task_id.startswith(("scale:", "packed:")):
        kind, n = task_id.split(":")
        task = scale_task(int(n), 6, packed=kind == "packed", seed=seed)
    else:
        task = find_task(RETIRED.get(task_id, task_id))
    played = apply_variant(task, variant, seed)
    policy = make_policy(team, seed, reference_plan=played if team == "oracle" else None)
    ep = Episode(task, PolicyTeam(policy), seed=seed, variant=variant, played_task=played, out_dir=out,
                 framework=team)
    asyncio.run(ep.run())


class ObservationDigest:
    """A sha256 over every observation (and peek) the embedded world hands out while it is installed."""

    def __init__(self) -> None:
        from agentworld.core.world.engine import EmbeddedWorld

        self.hash = hashlib.sha256()
        self._world = EmbeddedWorld
        self._own = {name: EmbeddedWorld.__dict__.get(name) for name in ("observe", "peek")}  # None: inherited
        observe, peek = EmbeddedWorld.observe, EmbeddedWorld.peek
        update = self.hash.update

        def observed(world, agent_id):
            obs = observe(world, agent_id)
            update(b"O" + obs.model_dump_json().encode())
            return obs

        def peeked(world, agent_id):
            obs = peek(world, agent_id)
            update(b"P" + obs.model_dump_json().encode())
            return obs

        EmbeddedWorld.observe, EmbeddedWorld.peek = observed, peeked

    def close(self) -> str:
        for name, own in self._own.items():
            if own is None:
                delattr(self._world, name)
            else:
                setattr(self._world, name, own)
        return self.hash.hexdigest()


def digest(out: Path) -> str:
    h = hashlib.sha256()
    for name in ("trajectory.jsonl", "result.json", "final_state.json"):
        text = (out / name).read_text(encoding="utf-8")
        lines = text.splitlines() if name.endswith(".jsonl") else [text]
        for line in lines:
            h.update(json.dumps(strip(json.loads(line))).encode())
    return h.hexdigest()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="write the digests here (JSON)")
    ap.add_argument("--compare", nargs=2, metavar=("BASE", "BRANCH"), help="compare two digest files")
    ap.add_argument("--big", action="store_true", help="add 400- to 1,000-agent teams (a few minutes)")
    ap.add_argument("--observations", action="store_true", help="also digest every observation, per case")
    args = ap.parse_args(argv)
    if args.compare:
        a, b = (json.loads(Path(p).read_text()) for p in args.compare)
        differ = [k for k in a if a.get(k) != b.get(k)] + [k for k in b if k not in a]
        for k in differ:
            print(f"DIFFERS {k}")
        print(f"{len(a) - len(differ)}/{len(a)} identical")
        return 1 if differ else 0
    if not args.out:
        ap.error("give an output file, or --compare BASE BRANCH")
    digests = {}
    with tempfile.TemporaryDirectory() as tmp:
        for task_id, team, seed, variant in CASES + (BIG_CASES if args.big else []):
            key = f"{task_id}-{team}-{variant}-s{seed}"
            out = Path(tmp) / key.replace(":", "_")
            seen = ObservationDigest() if args.observations else None
            try:
                play(task_id, team, seed, variant, out)
            finally:
                if seen is not None:
                    digests[key + "/obs"] = seen.close()
            digests[key] = digest(out)
            result = json.loads((out / "result.json").read_text(encoding="utf-8"))
            print(key, digests[key][:16], "success" if result["success"] else "not passed", flush=True)
    Path(args.out).write_text(json.dumps(digests, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
