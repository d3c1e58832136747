"""Shipped tasks picked by what the variants make of them, so that tests follow the suite when it changes.

The variant tests need a task where single_agent applies, one where the objective needs two places at once
and one that is hand-offs only; which shipped tasks those are is decided by the variants themselves.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from agentworld.core.tasks.plans import rounds_needed
from agentworld.core.tasks.task import Task, find_task
from agentworld.core.tasks.variants import not_applicable

# Small tasks first (fast episodes); the pick is the first that fits.
CANDIDATES = (str(Path(__file__).parent / "data" / "task_01_staff.yaml"), str(Path(__file__).parent / "data" / "market_day.yaml"),
              str(Path(__file__).parent / "data" / "survey.yaml"), "task_15_dock_barter", "task_19_twin_beacons",
              "task_20_watchtower_trade", "task_02_harvest", "task_04_goblins", "task_10_fishing_rod",
              "task_11_trout_supper", "task_26_six_scouts", "task_32_grand_bazaar", "task_40_muster")


@lru_cache(maxsize=None)
def _task(task_id: str) -> Task:
    return find_task(task_id)


def pick(kind: str) -> Task:
    """``applies``: single_agent applies; ``places``: n/a, two places at once; ``hand-offs``: n/a, hand-offs only."""
    for task_id in CANDIDATES:
        try:
            task = _task(task_id)
        except KeyError:
            continue
        reason = not_applicable(task, "single_agent")
        if (kind == "applies" and reason is None) or (kind == "places" and reason and "at the same time" in reason) \
                or (kind == "hand-offs" and reason and "hand-offs" in reason):
            return task.model_copy(deep=True)
    raise LookupError(f"no shipped task among {CANDIDATES} is a single_agent {kind!r} case")


def plan_rounds(task: Task) -> int:
    return rounds_needed(task.reference_solution)
