"""The calibration table: the suite against its pilot runs (issue 28, items 4 and 6; the paper's section 3.3).

For every task of a suite: the fastest known solution (:mod:`.fastest`, or a faster successful pilot), the
budget and its ratio to it, and the task's pilots (:mod:`.pilots`) on its current version: how many, how
many won, the rounds they used (and the share of the budget), their failure classes, and the
no-communication pilots with their outcomes. Then per category and overall: the success rate (SR) of the
vanilla pilots, the median share of the budget the successes used, the share of piloted tasks every pilot
lost, and the issue's targets, each met or not.

Pilots of another version of a task (its content digest differs: the task was revised since) are **stale**:
listed with their task, never counted.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .augment import source_of
from .pilots import FAILURE_CLASSES, Pilot, fastest_pilot, load_pilots
from .prove import BUDGET_RATIO, BUDGET_ROUNDS

PILOTED_MAX_AGENTS = 8  # tasks of up to 8 agents are piloted (issue 28, item 4)
NO_COMMUNICATION = "no_communication"


@dataclass(frozen=True)
class Target:
    key: str
    text: str


# issue 28, point 6, and the "done when" figures that come from pilots and budgets
TARGETS = (
    Target("sr", "overall pilot SR between 25 % and 65 %"),
    Target("category_sr", "no category's pilot SR above 80 %"),
    Target("all_failed", "at least 20 % of piloted tasks failed by every pilot"),
    Target("budget_used", "successful pilots use a median of at least 60 % of the budget"),
    Target("no_task_system", "no failure classed as a task or system error"),
    Target("augmented_harder", "the augmented variants' pilot SR lower than the main tasks'"),
    Target("coverage", f"every task of up to {PILOTED_MAX_AGENTS} agents piloted"),
    Target("no_comm_lost", "every needs_communication task's no-communication pilots lost"),
    Target("no_comm_count", "at least 30 no-communication pilots"),
    Target("budgets", f"every budget {BUDGET_RATIO[0]}x-{BUDGET_RATIO[1]}x its fastest known solution and "
                      f"{BUDGET_ROUNDS[0]}-{BUDGET_ROUNDS[1]} rounds"),
)


def _pilot_row(p: Pilot) -> dict[str, Any]:
    r = p.record
    return {"folder": p.folder.name, "variant": r.variant, "seed": r.seed, "success": r.success,
            "rounds": r.rounds, "budget": r.budget, "used": round(p.used, 3), "failure_class": r.failure_class,
            "cause": r.cause, "stale": p.stale, "harness_commit": r.harness_commit, "date": r.date}


def _fastest_of(tasks: list[Any], jobs: int) -> dict[str, Any]:
    """task id -> Fastest, computed (or read from the cache) in ``jobs`` processes."""
    from .fastest import fastest_known

    if jobs <= 1 or len(tasks) <= 1:
        return {t.id: fastest_known(t) for t in tasks}
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        return {t.id: f for t, f in zip(tasks, pool.map(fastest_known, tasks))}


def task_rows(tasks: list[Any], suite_of: dict[str, str], pilots: list[Pilot],
              fastest: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in tasks:
        mine = [p for p in pilots if p.record.task == t.id]
        current = [p for p in mine if not p.stale]
        vanilla = [p for p in current if p.record.variant == "vanilla"]
        won = [p for p in vanilla if p.record.success]
        f = fastest.get(t.id)
        best, source = (f.best, "compressed plan" if f.rounds is not None and f.rounds == f.best
                        else "reference plan") if f is not None else (None, "")
        quick = fastest_pilot(pilots, t.id)
        if quick is not None and (best is None or quick.record.rounds < best):
            best, source = quick.record.rounds, f"pilot {quick.folder.name}"
        ratio = t.rounds / best if best else None
        no_comm = [p for p in current if p.record.variant == NO_COMMUNICATION]
        rows.append({
            "task": t.id, "suite": suite_of[t.id], "category": t.category, "design": t.design,
            "agents": len(t.agents), "needs_communication": t.needs_communication, "budget": t.rounds,
            "fastest": best, "fastest_source": source, "ratio": None if ratio is None else round(ratio, 2),
            "budget_ok": ratio is not None and BUDGET_RATIO[0] <= ratio <= BUDGET_RATIO[1]
            and BUDGET_ROUNDS[0] <= t.rounds <= BUDGET_ROUNDS[1],
            "pilots": len(vanilla), "successes": len(won),
            "rounds_used": [p.record.rounds for p in vanilla],
            "budget_used": [round(p.used, 3) for p in vanilla],
            "failure_classes": dict(Counter(p.record.failure_class for p in vanilla if p.record.failure_class)),
            "no_communication": [{"success": p.record.success, "rounds": p.record.rounds, "folder": p.folder.name}
                                 for p in no_comm],
            "other_variants": len(current) - len(vanilla) - len(no_comm),
            "stale_pilots": len(mine) - len(current),
            "pilot_runs": [_pilot_row(p) for p in mine],
        })
    return rows


def _group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a group of task rows (a category, a suite, everything)."""
    piloted = [r for r in rows if r["pilots"]]
    pilots = sum(r["pilots"] for r in rows)
    wins = sum(r["successes"] for r in rows)
    used = [u for r in rows for u, won in zip(r["budget_used"], _outcomes(r)) if won]
    classes: Counter[str] = Counter()
    for r in rows:
        classes.update(r["failure_classes"])
    return {
        "tasks": len(rows), "piloted_tasks": len(piloted), "pilots": pilots, "successes": wins,
        "sr": round(wins / pilots, 3) if pilots else None,
        "median_budget_used": round(statistics.median(used), 3) if used else None,
        "all_failed_share": round(sum(1 for r in piloted if r["successes"] == 0) / len(piloted), 3)
        if piloted else None,
        "failure_classes": {c: classes.get(c, 0) for c in FAILURE_CLASSES},
    }


def _outcomes(row: dict[str, Any]) -> list[bool]:
    return [p["success"] for p in row["pilot_runs"] if not p["stale"] and p["variant"] == "vanilla"]


def _targets(main: list[dict[str, Any]], augmented: list[dict[str, Any]], by_category: dict[str, Any],
             overall: dict[str, Any], aug: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target: its value, and met (True/False) or None when nothing measures it yet."""
    def between(v: float | None, lo: float | None, hi: float | None) -> bool | None:
        if v is None:
            return None
        return (lo is None or v >= lo) and (hi is None or v <= hi)

    cat_srs = {c: g["sr"] for c, g in by_category.items() if g["sr"] is not None}
    eligible = [r for r in main if r["agents"] <= PILOTED_MAX_AGENTS]
    unpiloted = [r["task"] for r in eligible if not r["pilots"]]
    no_comm = [r for r in main + augmented if r["needs_communication"] and r["no_communication"]]
    no_comm_won = [r["task"] for r in no_comm if any(p["success"] for p in r["no_communication"])]
    n_no_comm = sum(len(r["no_communication"]) for r in main + augmented)
    outside = [r["task"] for r in main if not r["budget_ok"]]
    task_system = overall["failure_classes"]["task"] + overall["failure_classes"]["system"]
    measured = overall["pilots"] > 0
    values: dict[str, tuple[Any, bool | None]] = {
        "sr": (overall["sr"], between(overall["sr"], 0.25, 0.65)),
        "category_sr": (max(cat_srs.values()) if cat_srs else None,
                        None if not cat_srs else all(v <= 0.8 for v in cat_srs.values())),
        "all_failed": (overall["all_failed_share"], between(overall["all_failed_share"], 0.2, None)),
        "budget_used": (overall["median_budget_used"], between(overall["median_budget_used"], 0.6, None)),
        "no_task_system": (task_system, task_system == 0 if measured else None),
        "augmented_harder": ((aug["sr"], overall["sr"]), None if aug["sr"] is None or overall["sr"] is None
                             else aug["sr"] < overall["sr"]),
        "coverage": (f"{len(eligible) - len(unpiloted)}/{len(eligible)}", not unpiloted if eligible else None),
        "no_comm_lost": (no_comm_won, None if not no_comm else not no_comm_won),
        "no_comm_count": (n_no_comm, n_no_comm >= 30),
        "budgets": (f"{len(main) - len(outside)}/{len(main)}", not outside),
    }
    return [{"key": t.key, "target": t.text, "value": values[t.key][0], "met": values[t.key][1]}
            for t in TARGETS]


def paired(augmented: list[dict[str, Any]], main: list[dict[str, Any]], source_of: dict[str, str]) -> dict[str, Any]:
    """Each piloted variant beside its own main task's pilots: the suite-wide SRs compare different tasks, and
    with a main SR near 100 % one loss or win moves them; the same task with and without its change is the
    sharper measure of "harder". Per pair the SR, the median rounds and the median share of the budget of the
    vanilla pilots on the current versions; overall the pooled SRs of the pairs and the median of the
    per-pair differences (variant minus main: rounds, share of its budget)."""
    by_id = {r["task"]: r for r in main}
    pairs = []
    for v in augmented:
        m = by_id.get(source_of.get(v["task"], ""))
        if not v["pilots"] or m is None or not m["pilots"]:
            continue
        pairs.append({"variant": v["task"], "main": m["task"],
                      "variant_sr": round(v["successes"] / v["pilots"], 3), "main_sr": round(m["successes"] / m["pilots"], 3),
                      "variant_rounds": statistics.median(v["rounds_used"]), "main_rounds": statistics.median(m["rounds_used"]),
                      "variant_used": round(statistics.median(v["budget_used"]), 3),
                      "main_used": round(statistics.median(m["budget_used"]), 3),
                      "variant_budget": v["budget"], "main_budget": m["budget"]})
    variants = {v["task"]: v for v in augmented}

    def pooled(side: str) -> float | None:
        rows = [by_id[p["main"]] if side == "main" else variants[p["variant"]] for p in pairs]
        n = sum(r["pilots"] for r in rows)
        return round(sum(r["successes"] for r in rows) / n, 3) if n else None
    return {
        "pairs": pairs, "variant_sr": pooled("variant"), "main_sr": pooled("main"),
        "median_rounds_added": statistics.median(p["variant_rounds"] - p["main_rounds"] for p in pairs) if pairs else None,
        "median_used_added": round(statistics.median(p["variant_used"] - p["main_used"] for p in pairs), 3)
        if pairs else None,
    }


def calibration(pilots_dir: Path, *, jobs: int = 1, with_fastest: bool = True) -> dict[str, Any]:
    """The whole table (see the module docstring) as one JSON-ready dict."""
    from ..tasks.task import load_suite

    suite_of: dict[str, str] = {}
    tasks = []
    for suite in ("main", "augmented"):
        for t in load_suite(suite, validate=False):
            suite_of[t.id] = suite
            tasks.append(t)
    pilots, problems = load_pilots(pilots_dir, {t.id: t.raw for t in tasks})
    piloted_ids = {p.record.task for p in pilots}
    shown = [t for t in tasks if suite_of[t.id] == "main" or t.id in piloted_ids]
    fastest = _fastest_of(shown, jobs) if with_fastest else {}
    rows = task_rows(shown, suite_of, pilots, fastest)
    main = [r for r in rows if r["suite"] == "main"]
    augmented = [r for r in rows if r["suite"] == "augmented"]
    categories = sorted({r["category"] or "-" for r in main})
    by_category = {c: _group([r for r in main if (r["category"] or "-") == c]) for c in categories}
    overall = _group(main)
    aug = _group(augmented)
    orphans = sorted({p.record.task for p in pilots} - set(suite_of))
    sources = {t.id: source_of(Path(t.path)) for t in tasks if suite_of[t.id] == "augmented" and t.path}
    return {
        "pilots_dir": str(pilots_dir), "tasks": rows, "by_category": by_category, "overall": overall,
        "augmented": aug, "augmented_paired": paired(augmented, main, sources), "targets": _targets(main, augmented, by_category, overall, aug),
        # a pilot of a retired task is listed with the orphans, not counted again as a stale one
        "stale_pilots": sum(1 for p in pilots if p.stale and p.record.task in suite_of),
        "pilots_of_retired_tasks": orphans,
        "problems": problems, "with_fastest": with_fastest,
    }
