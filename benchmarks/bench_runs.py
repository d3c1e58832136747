"""Benchmarks of the runner. Prints figures; asserts nothing.

    python benchmarks/bench_runs.py speedup [--episodes 20] [--sleep 0.2] [--rounds 3]
        A scripted team that sleeps SLEEP seconds per turn (a stand-in for a model call) plays the oracle's
        moves; the same EPISODES episodes run with --concurrency 1 and with --concurrency EPISODES.
        Target: >= 10x faster concurrently.

    python benchmarks/bench_runs.py resume [--episodes 40] [--kills 3] [--concurrency 4]
        The CLI runs EPISODES oracle episodes (main-suite tasks x seeds) once uninterrupted, and once killed
        (SIGKILL) at random moments KILLS times and resumed each time; then checks: all episodes present,
        none duplicated, results identical to the uninterrupted run (timings aside).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentworld.core.play.protocol import Team, TeamSpec, Turn, TurnOutcome

SLEEP_S = float(os.environ.get("AGENTWORLD_BENCH_SLEEP", "0.2"))


class SleepyOracleTeam(Team):
    """The oracle's moves, each after a pause as long as a model call."""

    def __init__(self, spec: TeamSpec) -> None:
        from agentworld.core.play.policies import PolicyTeam, make_policy

        self.inner = PolicyTeam(make_policy("oracle", spec.seed, spec.reference_plan))

    async def act(self, turn: Turn) -> TurnOutcome:
        t0 = time.perf_counter()
        await asyncio.sleep(SLEEP_S)
        outcome = await self.inner.act(turn)
        return outcome.model_copy(update={"model_latency_s": time.perf_counter() - t0, "model_calls": 1})


def sleepy_team(spec: TeamSpec) -> Team:
    return SleepyOracleTeam(spec)


def _tasks_and_seeds(n: int, max_agents: int | None = None) -> tuple[list[str], list[int]]:
    from agentworld.core.tasks.task import load_suite

    ids = [t.id for t in load_suite("main") if max_agents is None or len(t.agents) <= max_agents]
    if not ids:
        raise SystemExit("no tasks in the main suite")
    seeds = (n + len(ids) - 1) // len(ids)
    return ids, list(range(seeds))


def bench_speedup(args: argparse.Namespace) -> None:
    from agentworld.core.runs.run_spec import build_spec
    from agentworld.core.runs.runner import Runner, plan_jobs, select_tasks

    global SLEEP_S
    SLEEP_S = args.sleep
    sys.path.insert(0, str(Path(__file__).parent))
    # Teams of similar size, so that one long episode does not bound the concurrent wall time.
    ids, seeds = _tasks_and_seeds(args.episodes, max_agents=args.max_agents)
    figures = {}
    for conc in (1, args.episodes):
        spec = build_spec({"tasks": ids, "seeds": seeds, "frameworks": ["oracle"],
                           "team_factory": "bench_runs:sleepy_team", "variants": [f"short_horizon:{args.rounds}"],
                           "concurrency": conc})
        jobs = plan_jobs(spec, select_tasks(spec))[: args.episodes]
        with tempfile.TemporaryDirectory() as tmp:
            runner = Runner(spec, Path(tmp) / "run", jobs=jobs)
            t0 = time.perf_counter()
            summary = asyncio.run(runner.run())
            wall = time.perf_counter() - t0
            turns = sum(r.actions + r.chats + r.no_calls for r in summary.results)
        figures[conc] = wall
        print(f"concurrency {conc:>3}: {len(jobs)} episodes, {turns} turns x {SLEEP_S * 1000:.0f} ms, "
              f"wall {wall:.2f} s, {summary.successes} successes")
    print(f"speedup: {figures[1] / figures[args.episodes]:.1f}x (target >= 10x)")


def _cli(*args: str) -> list[str]:
    """The installed `agentworld` command of this interpreter's environment."""
    return [str(Path(sys.executable).parent / "agentworld"), *args]


def _strip(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in rows:
        r.pop("wall_s", None)
        r.pop("harness_s", None)
    return sorted(rows, key=lambda r: r["episode_id"])


def _sessions(run: Path) -> int:
    try:
        return len(json.loads((run / "manifest.json").read_text())["sessions"])
    except (OSError, ValueError, KeyError):
        return 0


def bench_resume(args: argparse.Namespace) -> None:
    ids, seeds = _tasks_and_seeds(args.episodes)
    base = ["run", "--framework", "oracle", "--concurrency", str(args.concurrency), "--no-progress"]
    for t in ids:
        base += ["--task", t]
    base += ["--trials", str(len(seeds))]
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        ref, run = Path(tmp) / "ref", Path(tmp) / "run"
        t0 = time.perf_counter()
        proc = subprocess.Popen(_cli(*base, "--out", str(ref)), stdout=subprocess.DEVNULL)
        while _sessions(ref) == 0 and proc.poll() is None:
            time.sleep(0.005)
        t_session = time.perf_counter()
        if proc.wait() != 0:
            raise SystemExit("the uninterrupted run failed")
        full = time.perf_counter() - t0
        # The time from the session's start (manifest written, after imports and task loading) to the end.
        episodes_s = time.perf_counter() - t_session
        want = _strip(ref / "results.jsonl")
        print(f"uninterrupted: {len(want)} episodes, {full:.1f} s for the command, {episodes_s:.1f} s after "
              f"the session started")
        cmd = _cli(*base, "--out", str(run))
        for k in range(args.kills):
            done = len(_strip(run / "results.jsonl")) if (run / "results.jsonl").exists() else 0
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while _sessions(run) <= k and proc.poll() is None:
                time.sleep(0.005)  # this session has started (its manifest entry exists)
            delay = rng.uniform(0.05, 0.4) * episodes_s * (1 - done / len(want))
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            status = json.loads((run / "manifest.json").read_text())["status"]
            n = len(_strip(run / "results.jsonl"))
            print(f"kill {k + 1}: {delay:.2f} s into session {k + 1}, {n}/{len(want)} episodes recorded, "
                  f"manifest status {status!r}")
            cmd = _cli("run", "--resume", str(run), "--no-progress")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        got = _strip(run / "results.jsonl")
        ids_got = [r["episode_id"] for r in got]
        print(f"after the last resume: {len(got)} episodes, {len(ids_got) - len(set(ids_got))} duplicated, "
              f"identical to the uninterrupted run (timings aside): {got == want}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("speedup")
    s.add_argument("--episodes", type=int, default=20)
    s.add_argument("--sleep", type=float, default=0.2)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--max-agents", type=int, default=5, help="only tasks with at most this many agents")
    r = sub.add_parser("resume")
    r.add_argument("--episodes", type=int, default=40)
    r.add_argument("--kills", type=int, default=3)
    r.add_argument("--concurrency", type=int, default=4)
    r.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    {"speedup": bench_speedup, "resume": bench_resume}[args.cmd](args)


if __name__ == "__main__":
    main()
