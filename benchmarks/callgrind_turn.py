"""Instructions per agent-turn of the 1,000-agent round's workload, counted by callgrind.

Instruction counts do not move with the machine's load, so this is the figure to compare two trees on a
shared machine. The method of docs/performance.md: ``scale_once`` (the random team round the map, the full
episode layer, the trajectory written) with N agents, once for R1 rounds and once for R2 rounds, each in its
own process under ``valgrind --tool=callgrind`` with the ``agentworld`` program's collector settings; the
difference of the two totals over ``(R2 - R1) * N`` is what one agent-turn costs once the process is set up
(start-up, the world's load and the first rounds' path searches cancel out).

    python benchmarks/callgrind_turn.py [--agents 300] [--rounds 2,5] [--python PATH]

``--python`` names the interpreter of the tree to measure (a venv with that tree installed); by default this
one. Needs ``valgrind`` on the PATH. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CODE = ("from agentworld.core.cli.collector import for_program\n"
        "from agentworld.core.runs.bench_play import scale_once\n"
        "with for_program():\n"
        "    scale_once({agents}, {rounds})\n")


def instructions(python: str, agents: int, rounds: int) -> int:
    """Total instructions (Ir) of one ``scale_once`` process under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-c",
                               CODE.format(agents=agents, rounds=rounds)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"callgrind run failed ({python}, {agents} agents, {rounds} rounds):\n"
                             f"{proc.stderr[-2000:]}")
        with open(out) as f:
            text = f.read()
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if found is None:
        raise SystemExit(f"no instruction total in callgrind's output for {python}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=300)
    ap.add_argument("--rounds", default="2,5", help="the two round counts whose difference is measured")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the tree to measure")
    args = ap.parse_args()
    r1, r2 = (int(r) for r in args.rounds.split(","))
    if not 0 < r1 < r2:
        raise SystemExit(f"--rounds: two round counts, the first smaller (got {args.rounds!r})")
    low, high = instructions(args.python, args.agents, r1), instructions(args.python, args.agents, r2)
    per_turn = (high - low) / ((r2 - r1) * args.agents)
    print(json.dumps({"python": args.python, "agents": args.agents, "rounds": [r1, r2],
                      "instructions": [low, high], "per_agent_turn": round(per_turn)}))


if __name__ == "__main__":
    main()
