"""How long and how much memory refusing each hostile task file takes, beside a floor measured in the same
run: loading (and validating) the valid base task the corpus is derived from.

The corpus is tests/data/bad_tasks/ plus generated files too big to commit: a 50 MB file (sparse), a file
just over the 2 MB cap, and a document of 120,000 values (over the 50,000 cap). The target of issue 17 is each refused within
2 s and 200 MB. Usage: ``python benchmarks/bench_hostile_tasks.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

from agentworld.core.tasks.task import TaskError, load_task, world_index
from agentworld.core.yamlio import MAX_FILE_BYTES

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def generated(folder: Path) -> list[Path]:
    good = (DATA / "good_base_task.yaml").read_text()
    huge = folder / "fifty_mb_sparse.yaml"
    with open(huge, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    over = folder / "just_over_cap.yaml"
    over.write_text(good + "#" * (MAX_FILE_BYTES + 1) + "\n")
    many = folder / "120k_values.yaml"
    many.write_text(good + "success_criteria: [" + ", ".join(["x"] * 120_000) + "]\n")
    return [huge, over, many]


def measure(path: Path, repeat: int) -> tuple[float, float, str]:
    """(best seconds, peak MiB of Python allocations, outcome) of loading ``path``."""
    best, outcome = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            load_task(path)
            outcome = "loaded"
        except TaskError as exc:
            outcome = f"refused: {exc.problems[0].field}"
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    try:
        load_task(path)
    except TaskError:
        pass
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, peak, outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed loads per file (the best is shown)")
    args = ap.parse_args()
    world_index()  # the world loads once per process; not part of any file's figure
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted((DATA / "bad_tasks").glob("*.yaml")) + generated(Path(tmp))
        floor, floor_mem, _ = measure(DATA / "good_base_task.yaml", args.repeat)
        print(f"floor (valid base task): {floor * 1000:.1f} ms, {floor_mem:.1f} MiB")
        print(f"{'file':36} {'ms':>8} {'x floor':>8} {'MiB':>7}  outcome")
        worst_s = worst_mb = 0.0
        for f in files:
            s, mb, outcome = measure(f, args.repeat)
            worst_s, worst_mb = max(worst_s, s), max(worst_mb, mb)
            print(f"{f.name:36} {s * 1000:8.1f} {s / floor:8.1f} {mb:7.1f}  {outcome[:60]}")
    print(f"{len(files)} files; slowest {worst_s:.3f} s (target < 2 s), most memory {worst_mb:.1f} MiB "
          f"(target < 200 MB)")


if __name__ == "__main__":
    main()
