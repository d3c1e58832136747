"""Task-clustered statistics (core/runs/stats.py) against cases worked out by hand."""

from __future__ import annotations

import math

import pytest

from agentworld.core.runs.stats import (Interval, cluster_bootstrap, paired_by_task, pooled_mean, seed_spread,
                                        sign_test)


def test_cluster_bootstrap_matches_the_hand_computed_distribution():
    # Three tasks, three seeds each: A succeeds 3/3, B 1/3, C 0/3. Pooled SR = 4/9.
    # A resample draws 3 tasks with replacement (27 equally likely ordered draws); with a A's and b B's its
    # SR is (3a + b) / 9. P(SR = 0) = P(CCC) = 1/27 = 3.7% and P(SR = 1) = P(AAA) = 3.7%, both above the
    # 2.5% tails: the 95% interval is exactly [0, 1]. At 80% the tails are 10%: sorted by SR the draws give
    # P(SR <= 1/9) = P(CCC) + P(two C, one B) = 1/27 + 3/27 = 14.8% >= 10% and P(SR = 0) = 3.7% < 10%, so the
    # lower bound is 1/9; symmetrically P(SR >= 7/9) = P(AAA) + P(two A, one B) = 14.8%, upper bound 7/9.
    values = {"A": [1, 1, 1], "B": [1, 0, 0], "C": [0, 0, 0]}
    ci = cluster_bootstrap(values, reps=20000, seed=3)
    assert math.isclose(ci.mean, 4 / 9) and (ci.lo, ci.hi) == (0.0, 1.0)
    ci80 = cluster_bootstrap(values, reps=20000, seed=3, level=0.80)
    assert math.isclose(ci80.lo, 1 / 9, abs_tol=1e-9) and math.isclose(ci80.hi, 7 / 9, abs_tol=1e-9)


def test_clustered_interval_is_wider_than_a_pooled_one_when_tasks_differ():
    # 4 tasks x 10 seeds: two always succeed, two never. A Wilson interval over 40 "independent" episodes is
    # about [0.35, 0.65]; tasks are what varies, so the honest interval is far wider.
    values = {f"t{i}": [float(i < 2)] * 10 for i in range(4)}
    ci = cluster_bootstrap(values, reps=4000, seed=0)
    assert ci.mean == 0.5 and ci.lo <= 0.25 and ci.hi >= 0.75
    # and the same data with seeds that disagree inside each task but tasks alike: narrow
    alike = {f"t{i}": [1.0, 0.0] * 5 for i in range(4)}
    narrow = cluster_bootstrap(alike, reps=4000, seed=0)
    assert narrow.lo == narrow.hi == 0.5


def test_bootstrap_is_seeded_and_degenerate_cases_are_nan():
    values = {f"t{i}": [float(i % 3 == 0), 1.0] for i in range(7)}
    assert cluster_bootstrap(values, seed=5) == cluster_bootstrap(values, seed=5)
    assert cluster_bootstrap(values, seed=5) != cluster_bootstrap(values, seed=6)
    one = cluster_bootstrap({"t": [1, 0, 1]})
    assert math.isclose(one.mean, 2 / 3) and math.isnan(one.lo) and math.isnan(one.hi)
    assert all(math.isnan(x) for x in (cluster_bootstrap({}).mean, pooled_mean({})))
    clipped = cluster_bootstrap({"a": [2.0], "b": [-1.0]}, lo=0.0, hi=1.0)
    assert clipped.lo >= 0.0 and clipped.hi <= 1.0
    assert Interval(1, 0, 2).as_dict() == {"mean": 1, "lo": 0, "hi": 2}


def test_sign_test_exact_values():
    assert sign_test(0, 0) == 1.0
    assert math.isclose(sign_test(6, 0), 2 / 64)  # 2 * (1/2)^6
    assert math.isclose(sign_test(4, 1), 2 * (1 + 5) / 32)  # P(X <= 1) of Binomial(5, 1/2), doubled
    assert sign_test(3, 3) == 1.0


def test_paired_by_task_pairs_seeds_within_tasks_and_counts_task_wins():
    a = {"t1": {0: 0.0, 1: 0.0}, "t2": {0: 1.0, 1: 0.0}, "t3": {0: 1.0}, "t4": {0: 1.0}, "only_a": {0: 1.0}}
    b = {"t1": {0: 1.0, 1: 1.0, 2: 1.0}, "t2": {0: 1.0, 1: 1.0}, "t3": {0: 1.0}, "t4": {0: 0.0}}
    res = paired_by_task(a, b, reps=2000, seed=1)
    # shared pairs: t1 seeds 0,1 (+1, +1), t2 seeds 0,1 (0, +1), t3 (0), t4 (-1): 6 pairs over 4 tasks
    assert res["tasks"] == 4 and res["pairs"] == 6
    assert math.isclose(res["diff"]["mean"], 2 / 6)
    # per task: t1 +1, t2 +0.5, t3 0, t4 -1: B better on 2, A on 1, 1 tie
    assert (res["b_better"], res["a_better"], res["ties"]) == (2, 1, 1)
    assert math.isclose(res["p"], sign_test(2, 1)) and res["p"] == 1.0
    assert paired_by_task({"x": {0: 1.0}}, {"y": {0: 1.0}}) == {"tasks": 0, "pairs": 0}


def test_seed_spread_is_the_run_to_run_analysis():
    # seeds 0..2 of two tasks; task a always succeeds, task b succeeds only with seed 1
    rows = [("a", s, 1.0) for s in range(3)] + [("b", s, float(s == 1)) for s in range(3)]
    out = seed_spread(rows)
    assert out["per_seed"] == {0: 0.5, 1: 1.0, 2: 0.5}
    assert math.isclose(out["between_seed_sd"], math.sqrt(((0.5 - 2 / 3) ** 2 * 2 + (1 / 3) ** 2) / 2))
    assert out["per_task"]["a"]["sd"] == 0.0
    assert math.isclose(out["per_task"]["b"]["sd"], math.sqrt((2 * (1 / 3) ** 2 + (2 / 3) ** 2) / 2))
    assert math.isclose(out["within_task_sd"], out["per_task"]["b"]["sd"] / 2)
    assert math.isnan(seed_spread([("a", 0, 1.0)])["between_seed_sd"])


@pytest.mark.parametrize("reps", [200, 2000])
def test_bootstrap_of_identical_tasks_has_no_width(reps: int):
    ci = cluster_bootstrap({f"t{i}": [1.0, 0.0] for i in range(5)}, reps=reps)
    assert (ci.mean, ci.lo, ci.hi) == (0.5, 0.5, 0.5)
