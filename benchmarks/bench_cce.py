"""CCE figures: judge calls per episode (paper method vs grounded), their agreement, and scoring speed.

    /work/venv/bin/python benchmarks/bench_cce.py RUN_DIR [RUN_DIR ...]   # recorded runs (e.g. oracle, random)
    /work/venv/bin/python benchmarks/bench_cce.py --synthetic             # synthetic episodes of growing size

For recorded runs, every episode is scored twice with the same scripted judge (rule ``effects``): once by the
paper method (the judge answers step 1 and every sweep round) and once by the grounded method (the judge
answers only the chat questions). Failed episodes are judged too (``judge_failed``), so random runs give
figures. Printed: calls per episode for each method, action-level agreement and Cohen's kappa, CCE means.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1].parent))  # not needed when installed editable

from agentworld.core.cce.graph import find_episode_dirs, load_episode
from agentworld.core.cce.score import ScoreOptions, score_episode  # noqa: E402
from agentworld.core.cce.compare import cohen_kappa  # noqa: E402
from agentworld.core.cce.grounded import GroundedJudge  # noqa: E402
from agentworld.core.cce.judges import ScriptedJudge  # noqa: E402
from agentworld.core.cce.synth import EpisodeBuilder  # noqa: E402
from agentworld.core.play.records import Checkpoint  # noqa: E402


def compare_methods(run_dirs: list[str]) -> None:
    opts = ScoreOptions(judge_failed=True)
    for run_dir in run_dirs:
        folders = find_episode_dirs(run_dir)
        rows = []
        labels_paper: list[bool] = []
        labels_grounded: list[bool] = []
        for folder in folders:
            ep = load_episode(folder)
            t0 = time.perf_counter()
            paper = score_episode(ep, ScriptedJudge.from_rule("effects"), options=opts)
            t1 = time.perf_counter()
            grounded = score_episode(ep, GroundedJudge(ScriptedJudge.from_rule("effects")), options=opts)
            t2 = time.perf_counter()
            cp, cg = paper.contributing_ids(), grounded.contributing_ids()
            ids = [n.id for n in paper.nodes]
            labels_paper += [i in cp for i in ids]
            labels_grounded += [i in cg for i in ids]
            agree = sum((i in cp) == (i in cg) for i in ids) / len(ids) if ids else float("nan")
            rows.append((ep.task_id, ep.success, len(ids), paper.judge_calls, grounded.judge_calls, paper.raw_cce,
                         grounded.raw_cce, agree, (t1 - t0) * 1000, (t2 - t1) * 1000))
        print(f"\n== {run_dir}: {len(rows)} episodes (scripted judge 'effects' answers both methods)")
        print(f"{'task':28} {'ok':3} {'acts':>5} {'paper calls':>11} {'grounded calls':>14} {'raw CCE paper':>13} "
              f"{'raw CCE grounded':>16} {'agree':>6} {'ms paper':>8} {'ms grounded':>11}")
        for r in rows:
            print(f"{r[0]:28} {'yes' if r[1] else 'no':3} {r[2]:5d} {r[3]:11d} {r[4]:14d} {r[5] or 0:13.3f} "
                  f"{r[6] or 0:16.3f} {r[7]:6.3f} {r[8]:8.1f} {r[9]:11.1f}")
        if rows:
            kappa = cohen_kappa(labels_paper, labels_grounded) if labels_paper else float("nan")
            agree = sum(a == b for a, b in zip(labels_paper, labels_grounded)) / max(1, len(labels_paper))
            print(f"mean judge calls per episode: paper {mean(r[3] for r in rows):.2f}, "
                  f"grounded {mean(r[4] for r in rows):.2f}; action-level agreement {agree:.3f}, "
                  f"Cohen's kappa {kappa:.3f} over {len(labels_paper)} actions")


def synthetic_episode(folder: Path, agents: int, rounds: int, seed: int = 0) -> Path:
    """A busy episode: gatherers harvest and hand logs to a crafter, who crafts; others wander and chat."""
    rng = random.Random(seed)
    names = {f"agent_{i + 1}": f"p{i + 1}" for i in range(agents)}
    b = EpisodeBuilder(task_id=f"synthetic_{agents}x{rounds}", agents=names)
    held = {a: 0 for a in names}
    crafter = "agent_1"
    for rnd in range(1, rounds + 1):
        for a in names:
            roll = rng.random()
            if a == crafter and held[a] >= 3:
                b.craft(rnd, a, "plank", {"oak_logs": 3})
                held[a] -= 3
            elif roll < 0.3:
                b.move(rnd, a, (rng.randrange(100), rng.randrange(100)), (rng.randrange(100), rng.randrange(100)))
            elif roll < 0.55:
                b.harvest(rnd, a, f"oak_tree#{rng.randrange(50)}", "oak_logs", 2)
                held[a] += 2
            elif roll < 0.75 and held[a] >= 2 and a != crafter:
                b.transfer(rnd, a, crafter, "oak_logs", 2)
                held[a] -= 2
                held[crafter] += 2
            elif roll < 0.85:
                b.chat(rnd, a, f"{names[crafter]}, I will bring oak_logs soon")
            else:
                b.idle(rnd, a)
    return b.write(folder, checkpoints=[Checkpoint(name="plank with p1", check="item_count", value=1, target=1,
                                                   achieved=True)])


def synthetic_scaling() -> None:
    print("== synthetic episodes: scoring time and calls (scripted judge 'effects')")
    print(f"{'agents x rounds':>16} {'actions':>8} {'paper calls':>11} {'paper ms':>9} {'grounded ms':>11} "
          f"{'CCE paper':>9} {'CCE grounded':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for agents, rounds in ((3, 20), (5, 55), (10, 55), (20, 55), (50, 100)):
            folder = synthetic_episode(Path(tmp) / f"{agents}x{rounds}", agents, rounds)
            ep = load_episode(folder)
            t0 = time.perf_counter()
            paper = score_episode(ep, ScriptedJudge.from_rule("effects"))
            t1 = time.perf_counter()
            grounded = score_episode(ep, GroundedJudge())
            t2 = time.perf_counter()
            print(f"{agents:>7} x {rounds:<6} {paper.n_actions:8d} {paper.judge_calls:11d} {(t1 - t0) * 1000:9.0f} "
                  f"{(t2 - t1) * 1000:11.0f} {paper.cce:9.3f} {grounded.cce:12.3f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args == ["--synthetic"]:
        synthetic_scaling()
    else:
        compare_methods([a for a in args if a != "--synthetic"])
        if "--synthetic" in args:
            synthetic_scaling()
