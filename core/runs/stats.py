"""Statistics that respect how a benchmark run is built: episodes cluster by task.

A run plays each task with several seeds. Seeds of one task share the task's difficulty, so episodes are
not independent draws: an interval that pools episodes (Wilson over all episodes, a t interval over
episodes) is too narrow, and more seeds per task would shrink it without telling us more about the suite.
What we want to generalise over is tasks, so every interval here resamples **tasks**:

- :func:`cluster_bootstrap`: the percentile interval of the pooled mean (the metric over all episodes,
  as the tables report it) when whole tasks, with all their episodes, are drawn with replacement.
  Seeded (``seed``), ``reps`` resamples; fewer than two tasks give no interval (NaN): there is no
  between-task spread to estimate.
- :func:`paired_by_task`: configuration B minus A, paired by task. Per task, both sides are averaged over
  the seeds they share; the difference of the two pooled means gets a task-clustered bootstrap interval,
  and the exact two-sided **sign test** over tasks (binomial at 1/2 on the tasks where B did better vs
  worse; ties dropped) says whether B beats A on more tasks than chance would give. With one seed per task
  and a 0/1 metric the sign test is McNemar's exact test.
- :func:`seed_spread`: the paper's run-to-run analysis: per task, the spread of a metric over seeds, and
  the spread over seeds of the whole-suite figure (seed k of every task is "run k").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

DEFAULT_REPS = 2000
DEFAULT_SEED = 0
LEVEL = 0.95
NAN = float("nan")


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float

    def as_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "lo": self.lo, "hi": self.hi}


def _clusters(values_by_task: Mapping[str, Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Per task (sorted by id, so the resamples do not depend on dict order): sum and count of values."""
    keys = sorted(k for k, v in values_by_task.items() if len(v))
    sums = np.array([float(sum(values_by_task[k])) for k in keys])
    counts = np.array([len(values_by_task[k]) for k in keys], dtype=float)
    return sums, counts


def pooled_mean(values_by_task: Mapping[str, Sequence[float]]) -> float:
    sums, counts = _clusters(values_by_task)
    return float(sums.sum() / counts.sum()) if counts.sum() else NAN


def resample_indices(n_clusters: int, reps: int, seed: int) -> np.ndarray:
    """``reps`` x ``n_clusters`` cluster indices drawn with replacement (numpy's PCG64, seeded)."""
    return np.random.default_rng(seed).integers(0, n_clusters, size=(reps, n_clusters))


def cluster_bootstrap(values_by_task: Mapping[str, Sequence[float]], *, reps: int = DEFAULT_REPS,
                      seed: int = DEFAULT_SEED, level: float = LEVEL, lo: float = -math.inf,
                      hi: float = math.inf) -> Interval:
    """Pooled mean over all episodes and its task-clustered percentile bootstrap interval.

    ``values_by_task`` maps a task id to the metric of each of its episodes. A resample draws as many
    tasks as there are, with replacement, and takes the pooled mean of all their episodes.
    """
    sums, counts = _clusters(values_by_task)
    if not counts.size:
        return Interval(NAN, NAN, NAN)
    mean = float(sums.sum() / counts.sum())
    if counts.size < 2:
        return Interval(mean, NAN, NAN)
    idx = resample_indices(counts.size, reps, seed)
    stats = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    tail = (1 - level) / 2
    a, b = np.quantile(stats, [tail, 1 - tail])
    return Interval(mean, max(lo, float(a)), min(hi, float(b)))


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: P(a split at least this uneven | each non-tied task is a fair coin)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired_by_task(a: Mapping[str, Mapping[int, float]], b: Mapping[str, Mapping[int, float]], *,
                   reps: int = DEFAULT_REPS, seed: int = DEFAULT_SEED, level: float = LEVEL) -> dict:
    """B minus A on the tasks (and, within a task, the seeds) both have.

    ``a[task][seed] = value``. Returns the number of tasks and pairs, the difference of pooled means with
    a task-clustered bootstrap interval, the tasks where B is better / worse / tied, and the sign test p.
    """
    diffs: dict[str, list[float]] = {}
    for task in sorted(set(a) & set(b)):
        shared = sorted(set(a[task]) & set(b[task]))
        if shared:
            diffs[task] = [b[task][s] - a[task][s] for s in shared]
    out: dict = {"tasks": len(diffs), "pairs": sum(len(v) for v in diffs.values())}
    if not diffs:
        return out
    out["diff"] = cluster_bootstrap(diffs, reps=reps, seed=seed, level=level).as_dict()
    per_task = {t: sum(v) / len(v) for t, v in diffs.items()}
    wins = sum(1 for d in per_task.values() if d > 1e-12)
    losses = sum(1 for d in per_task.values() if d < -1e-12)
    out.update(b_better=wins, a_better=losses, ties=len(per_task) - wins - losses, p=sign_test(wins, losses))
    return out


def _sd(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return NAN
    m = sum(values) / n
    return math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))


def seed_spread(values: Iterable[tuple[str, int, float]]) -> dict:
    """Run-to-run variation over seeds: ``values`` are (task, seed, metric) triples.

    ``per_task``: for tasks with two or more seeds, the mean and sample SD over their seeds.
    ``within_task_sd``: the mean of those SDs (how much one task's outcome moves with the seed).
    ``per_seed``: the suite-wide mean of each seed (seed k of every task is one "run").
    ``between_seed_sd``: the SD of those suite-wide means over seeds, as the paper reports run-to-run.
    """
    by_task: dict[str, dict[int, float]] = {}
    by_seed: dict[int, list[float]] = {}
    for task, s, v in values:
        by_task.setdefault(task, {})[s] = v
        by_seed.setdefault(s, []).append(v)
    per_task = {t: {"seeds": len(v), "mean": sum(v.values()) / len(v), "sd": _sd(list(v.values()))}
                for t, v in sorted(by_task.items()) if len(v) > 1}
    sds = [x["sd"] for x in per_task.values()]
    per_seed = {s: sum(v) / len(v) for s, v in sorted(by_seed.items())}
    return {"per_task": per_task, "within_task_sd": sum(sds) / len(sds) if sds else NAN,
            "per_seed": per_seed, "between_seed_sd": _sd(list(per_seed.values()))}
