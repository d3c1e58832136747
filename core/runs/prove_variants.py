"""Per-task proofs of the protocol variants: each (task, variant) cell is proven or not applicable.

A cell is **proven** when the variant applies to the task and, played under the variant (its task rewrite
and its run-time changes: chat tools, chat delivery, shared plan, party status):

- **idle fails**: a team that sleeps every turn does not pass (a baseline cannot be free), and
- **plan passes**: the reference plan as the variant adapts it (``Variant.plan`` says how) passes the
  verifier within the round budget with only legal calls.

A cell is **n/a** when the variant does not apply; the reason comes from the variant itself
(``core/tasks/variants.py``; ``core/tasks/solo.py`` for single_agent), and runs and reports show the same
reason. Anything else is **failed**, with what went wrong.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from ..tasks.task import Task
from ..tasks.variants import PROVEN_VARIANTS, NotApplicable, apply_variant, get_variant
from .prove import RecordingTeam

Status = Literal["proven", "n/a", "failed"]


@dataclass
class VariantCell:
    task_id: str
    variant: str  # the variant's label (short_horizon:10)
    status: Status
    detail: str  # n/a: the reason; proven: rounds used and idle PSR; failed: what failed
    idle_psr: float | None = None
    plan_rounds: int | None = None
    budget: int | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status != "failed"

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task_id, "variant": self.variant, "status": self.status, "detail": self.detail,
                "idle_psr": self.idle_psr, "plan_rounds": self.plan_rounds, "budget": self.budget,
                "seconds": round(self.seconds, 3)}


def play_variant(task: Task, played: Task, variant: str, policy: Any, seed: int = 0) -> tuple[Any, RecordingTeam]:
    """One episode of a scripted policy on ``task`` under ``variant`` (``played`` is the rewritten task)."""
    from ..play.episode import Episode

    team = RecordingTeam(policy)
    return asyncio.run(Episode(task, team, seed=seed, variant=variant, played_task=played).run()), team


def prove_variant(task: Task, variant: str, seed: int = 0) -> VariantCell:
    from ..play.policies import IdlePolicy, OraclePolicy

    t0 = time.perf_counter()
    label = get_variant(variant).label
    try:
        played = apply_variant(task, variant, seed)
    except NotApplicable as e:
        return VariantCell(task.id, label, "n/a", e.reason, seconds=time.perf_counter() - t0)
    cell = VariantCell(task.id, label, "failed", "", budget=played.rounds)
    problems = []
    idle, _ = play_variant(task, played, variant, IdlePolicy(), seed)
    cell.idle_psr = idle.psr
    if idle.success:
        problems.append(f"an idle team passes ({idle.message})")
    if not played.reference_solution:
        problems.append("no reference plan to adapt (the task has none)")
    else:
        oracle, team = play_variant(task, played, variant, OraclePolicy(played, seed), seed)
        if oracle.success:
            cell.plan_rounds = oracle.rounds
        else:
            problems.append(f"the adapted plan fails: {oracle.message} (ended {oracle.end_reason} after "
                            f"{oracle.rounds}/{played.rounds} rounds)")
        if illegal := team.illegal_calls("the adapted plan"):
            problems.append(illegal)
    cell.seconds = time.perf_counter() - t0
    if problems:
        cell.detail = "; ".join(problems)
        return cell
    cell.status = "proven"
    cell.detail = (f"idle fails (PSR {idle.psr:.2f}); plan ({get_variant(variant).plan}) passes in "
                   f"{cell.plan_rounds}/{played.rounds} rounds")
    return cell


def prove_variants(tasks: Iterable[Task], variants: Iterable[str] = PROVEN_VARIANTS, *, seed: int = 0,
                   progress: Any = None) -> list[VariantCell]:
    cells = []
    for task in tasks:
        for v in variants:
            cells.append(prove_variant(task, v, seed))
            if progress is not None:
                progress(cells[-1])
    return cells
