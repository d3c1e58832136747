"""How long the whole main suite takes when played by the oracle team (the figure that keeps task proofs in CI).

    /work/venv/bin/python benchmarks/bench_suite.py [--repeat 3]

Prints, per repeat, the wall time of 40 oracle episodes (no files written) and the agent-turns played, then
the median. The proof itself (`agentworld tasks prove --all`) adds idle and random episodes and the static
analysis; it prints its own total.
"""

from __future__ import annotations

import argparse
import statistics
import time

from agentworld.core.runs.prove import play
from agentworld.core.tasks.task import load_suite


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    tasks = load_suite("main")
    print(f"loaded and validated {len(tasks)} tasks in {time.perf_counter() - t0:.2f} s")
    walls = []
    for i in range(args.repeat):
        t0 = time.perf_counter()
        turns = rounds = passed = 0
        for task in tasks:
            result, team = play(task, "oracle", seed=0)
            turns += len(team.calls)
            rounds += result.rounds
            passed += result.success
        wall = time.perf_counter() - t0
        walls.append(wall)
        print(f"repeat {i + 1}: {passed}/{len(tasks)} passed, {rounds} rounds, {turns} agent-turns, "
              f"{wall:.2f} s ({1000 * wall / max(1, turns):.2f} ms per agent-turn)")
    print(f"median suite time (oracle team): {statistics.median(walls):.2f} s")


if __name__ == "__main__":
    main()
