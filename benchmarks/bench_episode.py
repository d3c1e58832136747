"""Harness overhead per agent-turn, everything but the model: observation, prompt rendering, tool
execution through the turn gate, verification and recording (trajectory.jsonl written and flushed).

Plays the random team (no model) on a 10-agent task and reads each turn's ``harness_s`` from the
trajectory. Usage: ``python benchmarks/bench_episode.py [--task ID] [--rounds N] [--seeds K]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agentworld.core.play.episode import Episode
from agentworld.core.play.records import TurnEvent
from agentworld.core.tasks.task import find_task
from agentworld.core.play.trajectory import read_events
from agentworld.core.world.datapack import load_world
from agentworld.core.play.policies import PolicyTeam, RandomPolicy


class TimedPolicy(RandomPolicy):
    """The random policy, timing its own decisions (they stand in for the model, so they are not harness)."""

    spent = 0.0

    def decide(self, turn):
        t0 = time.perf_counter()
        try:
            return super().decide(turn)
        finally:
            TimedPolicy.spent += time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="task_08_convoy", help="a task with 10 agents")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    load_world()
    print(f"world load: {time.perf_counter() - t0:.2f} s (once per process, not per turn)")
    task = find_task(args.task).model_copy(update={"rounds": args.rounds})
    samples: list[float] = []
    totals = []
    records: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            out = Path(tmp) / f"s{seed}"
            ep = Episode(task, PolicyTeam(TimedPolicy(seed, task)), seed=seed, out_dir=out, framework="random")
            w0 = time.perf_counter()
            res = asyncio.run(ep.run())
            wall = time.perf_counter() - w0
            records.append(ep.record_s)
            turns = [e for e in read_events(out) if isinstance(e, TurnEvent)]
            samples += [e.harness_s for e in turns]
            totals.append((len(turns), wall, res.harness_s))
    n_agents = len(task.agents)
    ms = sorted(s * 1000 for s in samples)
    print(f"task {task.id}: {n_agents} agents, {args.seeds} episodes, {len(ms)} agent-turns")
    print(f"harness overhead per agent-turn: median {statistics.median(ms):.3f} ms, "
          f"p90 {ms[int(0.9 * (len(ms) - 1))]:.3f} ms, max {ms[-1]:.3f} ms (target < 2 ms median)")
    turns = sum(t[0] for t in totals)
    rec_ms = sum(records) / turns * 1000
    print(f"writing each turn event (JSON line + flush; outside the per-turn figure above): mean {rec_ms:.3f} ms "
          f"-> median overhead incl. recording about {statistics.median(ms) + rec_ms:.3f} ms per agent-turn")
    wall = sum(t[1] for t in totals)
    print(f"whole episode wall time per agent-turn (incl. ticks, verifier, policy): {wall / turns * 1000:.3f} ms")
    print(f"  of which the random policy's decisions (the model's stand-in): {TimedPolicy.spent / turns * 1000:.3f} ms; "
          f"harness incl. world ticks and per-round verification, amortised: "
          f"{(wall - TimedPolicy.spent) / turns * 1000:.3f} ms")


if __name__ == "__main__":
    main()
