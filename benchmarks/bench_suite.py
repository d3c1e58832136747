"""How long the main suite takes: the oracle team over every task, and `agentworld tasks prove --all`.

    python benchmarks/bench_suite.py [--repeat 3] [--prove] [--jobs 2] [--random-seeds 5]

Prints, per repeat, the wall and CPU time of one oracle episode per task (no files written) and the
agent-turns played, then the median; beside it a floor measured in the same run (the idle team over the
same tasks for the same number of rounds: the per-turn cost of the harness with nothing happening), so a
figure taken on a busy machine can still be compared. With ``--prove`` it then runs the strict default
proof of every task (five random seeds, necessity, the knowledge check) in ``--jobs`` worker processes and
prints its wall time, CPU time and the suite's shape. Target: the proof in under 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from agentworld.core.runs.prove import default_jobs, play, prove_tasks, suite_summary
from agentworld.core.tasks.task import load_suite


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def oracle_pass(tasks) -> tuple[float, float, int, int, int]:
    """(wall s, cpu s, tasks passed, rounds, agent-turns) of one oracle episode per task."""
    w0, c0 = time.perf_counter(), _cpu()
    turns = rounds = passed = 0
    for task in tasks:
        result, team = play(task, "oracle", seed=0)
        turns += len(team.calls)
        rounds += result.rounds
        passed += result.success
    return time.perf_counter() - w0, _cpu() - c0, passed, rounds, turns


def idle_floor(tasks, rounds_by_task: dict[str, int]) -> float:
    """Wall time of the idle team over the same tasks, each cut to the oracle's rounds."""
    w0 = time.perf_counter()
    for task in tasks:
        play(task.model_copy(update={"rounds": rounds_by_task[task.id]}), "idle", seed=0)
    return time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--prove", action="store_true", help="also time `tasks prove --all` (the strict default proof)")
    ap.add_argument("--jobs", type=int, default=default_jobs())
    ap.add_argument("--random-seeds", type=int, default=5)
    args = ap.parse_args()
    t0 = time.perf_counter()
    tasks = load_suite("main")
    print(f"loaded and validated {len(tasks)} tasks in {time.perf_counter() - t0:.2f} s")
    rounds_by_task = {t.id: play(t, "oracle", seed=0)[0].rounds for t in tasks}  # warm-up, and the floor's rounds
    walls, floors = [], []
    for i in range(args.repeat):
        wall, cpu, passed, rounds, turns = oracle_pass(tasks)
        floor = idle_floor(tasks, rounds_by_task)
        walls.append(wall)
        floors.append(floor)
        print(f"repeat {i + 1}: {passed}/{len(tasks)} passed, {rounds} rounds, {turns} agent-turns, {wall:.2f} s wall, "
              f"{cpu:.2f} s CPU ({1000 * wall / max(1, turns):.2f} ms per agent-turn); idle floor {floor:.2f} s "
              f"(ratio {wall / floor:.2f})")
    print(f"median suite time (oracle team): {statistics.median(walls):.2f} s; idle floor {statistics.median(floors):.2f} s")
    if args.prove:
        w0, c0 = time.perf_counter(), _cpu()
        proofs = prove_tasks(tasks, random_seeds=range(args.random_seeds), jobs=args.jobs)
        wall, cpu = time.perf_counter() - w0, _cpu() - c0
        s = suite_summary(proofs)
        print(f"tasks prove --all: {s['proven']}/{s['tasks']} proven in {wall:.1f} s wall, {cpu:.1f} s CPU "
              f"({args.jobs} job(s), {args.random_seeds} random seeds, necessity on); "
              f"{wall / max(statistics.median(floors), 1e-9):.0f}x the idle floor")
        print(f"shape: {s}")


if __name__ == "__main__":
    main()
