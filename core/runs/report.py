"""Aggregate runs into the paper's tables, with task-clustered intervals and paired task-level comparisons.

- Table 2 shape: one row per configuration (run x framework x model x variant): SR, PSR, CCE, rounds,
  chats, actions; then the same by task category and by team size; a task x configuration SR table.
- Tables 3/4 shape: one row per protocol variant (baselines and ablations), next to the paper's figures.
- Paired differences: each configuration against a baseline, paired by task (core/runs/stats.py).
- What went wrong: end reasons, tool error kinds, infrastructure and harness errors per configuration.
- Run-to-run variation over seeds, and the communication analysis (core/cce/comms.py).
- pass^k beside SR (tau-bench's reliability figure): the chance that k trials of a task all succeed.

Intervals (docs/runs.md, "Statistics"): 95% percentile bootstrap over tasks (all episodes of a drawn task
go together), seeded; paired differences get the same interval over tasks plus an exact sign test.
CCE comes from one judge per episode: ``--judge LABEL`` picks ``cce/<LABEL>.json``; otherwise each
episode's ``cce.json``. Incomplete judgings (failed judge calls) are never averaged: they are counted
and warned about.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..cce.graph import CCE_DIR, CCE_FILE
from ..cce.score import INCOMPLETE_SUFFIX, read_stored
from ..play.records import EpisodeResult
from . import stats

# The paper's headline figures (docs/paper.md), for side-by-side tables.
PAPER_MAIN = [  # model, SR %, PSR %, CCE
    ("Gemini 3 Flash", 52.0, 71.5, 0.320), ("Claude Haiku 4.5", 45.0, 62.7, 0.294),
    ("GPT-5 Mini", 36.0, 62.6, 0.206), ("DeepSeek R1-70B", 20.0, 43.5, 0.125)]
# Baselines with Gemini 3 Flash (Table 3) and ablations on 35 tasks (Table 4): SR %.
PAPER_BASELINES = {"random": 5.7, "shared_plan_no_communication": 17.6, "no_communication": 22.9,
                   "single_agent": 28.6, "vanilla": 52.0, "oracle_communication": 60.0}
PAPER_ABLATIONS = {"full": 54.3, "no_roles": 45.7, "short_horizon": 37.1, "random_spawn": 51.4,
                   "no_documentation": 29.4}
_ALIASES = {"noroles": "no_roles", "withoutroles": "no_roles", "norole": "no_roles",
            "withoutasymmetricroles": "no_roles", "shorthorizon": "short_horizon",
            "withoutlonghorizon": "short_horizon", "randomspawn": "random_spawn",
            "nodocumentation": "no_documentation", "nodocs": "no_documentation", "nodoc": "no_documentation",
            "withoutdocumentation": "no_documentation", "nocommunication": "no_communication",
            "nocomm": "no_communication", "singleagent": "single_agent",
            "sharedplannocommunication": "shared_plan_no_communication",
            "sharedplannocomm": "shared_plan_no_communication", "oraclecommunication": "oracle_communication",
            "oraclecomm": "oracle_communication", "vanilla": "vanilla", "random": "random", "full": "full"}

TEAM_SIZE_BINS = ((3, 5, "3-5"), (6, 10, "6-10"), (11, 20, "11-20"), (21, 10**9, "21+"))
# EpisodeResult counters shown in the error table when present (later versions may add more)
ERROR_COUNTERS = ("tool_errors", "no_calls", "refused_calls", "infra_errors", "harness_errors")


class ReportError(ValueError):
    """A run folder that cannot be reported (the message says which and why)."""


@dataclass(frozen=True)
class Boot:
    """How intervals are computed (recorded in the report)."""

    reps: int = stats.DEFAULT_REPS
    seed: int = stats.DEFAULT_SEED

    def describe(self) -> dict[str, Any]:
        return {"method": "percentile bootstrap over tasks (task-clustered)", "level": stats.LEVEL,
                "reps": self.reps, "seed": self.seed, "paired_test": "exact sign test over tasks"}


# ---------------------------------------------------------------------- loading
@dataclass
class RunData:
    path: Path
    label: str
    manifest: dict[str, Any]
    results: list[EpisodeResult]
    errored_results: list[EpisodeResult] = field(default_factory=list)  # infrastructure errors: left out
    failed: int = 0  # of those, episodes failed for good (the same error max_attempts times; not retried)
    damaged: int = 0  # recorded episodes whose files are damaged (left out of the tables; resume reruns them)
    problems: list[str] = field(default_factory=list)  # what is damaged, each naming the file
    cce: dict[str, float] = field(default_factory=dict)  # episode id -> CCE of a complete judging
    cce_judge: dict[str, str] = field(default_factory=dict)  # episode id -> the judge label it comes from
    cce_incomplete: dict[str, str] = field(default_factory=dict)  # episode id -> label of an incomplete judging
    cce_other_incomplete: Counter = field(default_factory=Counter)  # label -> episodes (judges not shown)
    replay: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # episode id -> replay check (integrity)

    @property
    def errored(self) -> int:
        return len(self.errored_results)

    def episode_dir(self, eid: str) -> Path:
        return self.path / "episodes" / eid


def _load_cce(run: RunData, judge: str | None) -> None:
    for r in run.results:
        folder = run.episode_dir(r.episode_id)
        chosen = read_stored(folder / (f"{CCE_DIR}/{judge}.json" if judge else CCE_FILE))
        if chosen is not None:
            if chosen.complete and chosen.cce is not None:
                run.cce[r.episode_id] = chosen.cce
                run.cce_judge[r.episode_id] = chosen.label or judge or chosen.judge
            else:
                run.cce_incomplete[r.episode_id] = chosen.label or judge or chosen.judge
        per_judge = folder / CCE_DIR
        if per_judge.is_dir():
            for p in per_judge.glob("*.json"):
                if p.stem == judge or p.stem.endswith(INCOMPLETE_SUFFIX):
                    continue
                other = read_stored(p)
                if other is not None and not other.complete and run.cce_judge.get(r.episode_id) != p.stem:
                    run.cce_other_incomplete[p.stem] += 1


def load_runs(paths: Iterable[str | Path], judge: str | None = None) -> list[RunData]:
    """Read run folders for reporting (CCE from ``judge``'s stored results, else each episode's cce.json).

    Every recorded episode's files are checked (runs/integrity.py): a damaged one is left out of the tables
    and named in ``RunData.problems``, as is a damaged line of results.jsonl; a damaged manifest is a
    ReportError naming the file."""
    from .integrity import episode_problem, replay_status
    from .runner import MANIFEST, RESULTS, damaged_manifest, given_up, needs_retry, read_results_file

    runs: list[RunData] = []
    labels: set[str] = set()
    for p in paths:
        path = Path(p)
        if not (path / MANIFEST).is_file() and not (path / RESULTS).is_file():
            raise ReportError(f"{path}: not a run folder (no {MANIFEST} or {RESULTS}); pass runs/<run-id>")
        manifest: dict[str, Any] = {}
        if (path / MANIFEST).is_file():
            try:
                manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ReportError(damaged_manifest(path / MANIFEST, exc)) from None
            if not isinstance(manifest, dict):
                raise ReportError(damaged_manifest(path / MANIFEST, ValueError("not a run manifest")))
        problems: list[str] = []
        everything = read_results_file(path / RESULTS, problems)
        gave_up = given_up(manifest)
        results, errored, damaged = [], [], 0
        for r in everything:
            if needs_retry(r):
                errored.append(r)
                if r.episode_id in gave_up:
                    problems.append(f"episode {r.episode_id} failed for good after {gave_up[r.episode_id]['attempts']} "
                                    f"identical errors: {r.message[:160]}")
                continue
            problem = episode_problem(path / "episodes" / r.episode_id, r)
            if problem:
                damaged += 1
                problems.append(f"{problem}; left out of the tables (`agentworld run --resume {path}` reruns it)")
                continue
            results.append(r)
        label = (manifest.get("spec") or {}).get("name") or path.name
        base, k = label, 2
        while label in labels:
            label = f"{base}#{k}"
            k += 1
        labels.add(label)
        run = RunData(path=path, label=label, manifest=manifest, results=results, errored_results=errored,
                      failed=sum(1 for r in errored if r.episode_id in gave_up), damaged=damaged, problems=problems)
        _load_cce(run, judge)
        run.replay = {r.episode_id: replay_status(run.episode_dir(r.episode_id)) for r in results}
        runs.append(run)
    return runs


# ---------------------------------------------------------------------- aggregation
@dataclass(frozen=True)
class Row:
    run: RunData
    result: EpisodeResult
    cce: float | None
    with_run_label: bool = True  # several runs: rows say which run they come from

    @property
    def config(self) -> str:
        return config_label(self.run, self.result, self.with_run_label)


def config_label(run: RunData, r: EpisodeResult, with_run_label: bool) -> str:
    parts = ([run.label] if with_run_label else []) + [r.framework] + ([r.model] if r.model else [])
    return " · ".join(parts + [r.variant])


def team_size_bin(n: int) -> str:
    for lo, hi, label in TEAM_SIZE_BINS:
        if lo <= n <= hi:
            return label
    return f"{n}"


METRICS: tuple[tuple[str, Any, float, float], ...] = (  # name, getter, lower and upper bound of the metric
    ("sr", lambda r: float(r.result.success), 0.0, 1.0),
    ("psr", lambda r: r.result.psr, 0.0, 1.0),
    ("rounds", lambda r: float(r.result.rounds), 0.0, float("inf")),
    ("chats", lambda r: float(r.result.chats), 0.0, float("inf")),
    ("actions", lambda r: float(r.result.actions), 0.0, float("inf")),
    ("tokens", lambda r: float(r.result.tokens_in + r.result.tokens_out), 0.0, float("inf")),
    ("cost_usd", lambda r: r.result.cost_usd, 0.0, float("inf")),
)


def _by_task(rows: list[Row], getter) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in rows:
        out.setdefault(r.result.task_id, []).append(getter(r))
    return out


def metrics(rows: list[Row], boot: Boot = Boot()) -> dict[str, Any]:
    """SR, PSR, CCE, rounds, chats, actions (and usage) of a set of episodes, each with its 95% interval
    over tasks."""
    out: dict[str, Any] = {"n": len(rows), "tasks": len({r.result.task_id for r in rows}),
                           "successes": sum(r.result.success for r in rows)}
    for name, getter, lo, hi in METRICS:
        out[name] = stats.cluster_bootstrap(_by_task(rows, getter), reps=boot.reps, seed=boot.seed,
                                            lo=lo, hi=hi).as_dict()
    judged = [r for r in rows if r.cce is not None]
    out["cce"] = {**stats.cluster_bootstrap(_by_task(judged, lambda r: r.cce), reps=boot.reps, seed=boot.seed,
                                            lo=0.0, hi=1.0).as_dict(), "n": len(judged)}
    out["pass_k"] = pass_k_table(rows)
    return out


def pass_hat_k(trials: dict[str, tuple[int, int]], k: int) -> tuple[float, int] | None:
    """tau-bench's pass^k: for each task with n >= k trials of which c succeeded, C(c, k) / C(n, k) (the chance
    that k trials drawn without replacement all succeed), averaged over those tasks; with the number of tasks
    it averages. None when no task has k trials. ``trials[task] = (n, c)``."""
    values = [math.comb(c, k) / math.comb(n, k) for n, c in trials.values() if n >= k]
    return (sum(values) / len(values), len(values)) if values else None


def pass_k_table(rows: list[Row]) -> dict[str, Any]:
    """pass^k for k = 1 .. the most trials any task of ``rows`` has (trials: the task's episodes, one per seed).
    ``{"max_trials", "values": [{"k", "value", "tasks"}]}``; pass^1 is SR averaged per task (it equals the
    pooled SR when every task has as many trials)."""
    trials: dict[str, tuple[int, int]] = {}
    for r in rows:
        n, c = trials.get(r.result.task_id, (0, 0))
        trials[r.result.task_id] = (n + 1, c + int(r.result.success))
    most = max((n for n, _ in trials.values()), default=0)
    values = []
    for k in range(1, most + 1):
        found = pass_hat_k(trials, k)
        if found is not None:
            values.append({"k": k, "value": found[0], "tasks": found[1]})
    return {"max_trials": most, "values": values}


def _group(rows: list[Row], key) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def canonical_variant(name: str, framework: str = "") -> str | None:
    if framework == "random":
        return "random"
    return _ALIASES.get(name.lower().replace("_", "").replace("-", "").replace(" ", ""))


def paired(rows_a: list[Row], rows_b: list[Row], boot: Boot = Boot()) -> dict[str, Any]:
    """B minus A, paired by task (and by seed within a task); see stats.paired_by_task."""
    def table(rows: list[Row], getter) -> dict[str, dict[int, float]]:
        out: dict[str, dict[int, float]] = {}
        for r in rows:
            value = getter(r)
            if value is not None:
                out.setdefault(r.result.task_id, {})[r.result.seed] = value
        return out

    getters = [(name, g) for name, g, _, _ in METRICS if name in ("sr", "psr", "rounds", "chats", "actions")]
    getters.append(("cce", lambda r: r.cce))
    out: dict[str, Any] = {}
    for name, g in getters:
        res = stats.paired_by_task(table(rows_a, g), table(rows_b, g), reps=boot.reps, seed=boot.seed)
        if name == "sr":
            out["tasks"], out["pairs"] = res["tasks"], res["pairs"]
        if res["tasks"]:
            out[name] = {**res["diff"], "p": res["p"], "b_better": res["b_better"], "a_better": res["a_better"],
                         "ties": res["ties"], "tasks": res["tasks"], "pairs": res["pairs"]}
    return out


def per_task_table(configs: dict[str, list[Row]]) -> dict[str, Any]:
    """SR of every task under every configuration (cells: successes / episodes)."""
    tasks = sorted({r.result.task_id for rows in configs.values() for r in rows})
    out = []
    for t in tasks:
        cells = {}
        for cfg, rows in configs.items():
            mine = [r for r in rows if r.result.task_id == t]
            if mine:
                cells[cfg] = {"n": len(mine), "successes": sum(r.result.success for r in mine),
                              "psr": sum(r.result.psr for r in mine) / len(mine)}
        out.append({"task": t, "cells": cells})
    return {"configs": list(configs), "rows": out}


def seed_table(configs: dict[str, list[Row]]) -> list[dict[str, Any]]:
    """Run-to-run variation over seeds, for configurations with two or more seeds."""
    out = []
    for cfg, rows in configs.items():
        if len({r.result.seed for r in rows}) < 2:
            continue
        sr = stats.seed_spread((r.result.task_id, r.result.seed, float(r.result.success)) for r in rows)
        psr = stats.seed_spread((r.result.task_id, r.result.seed, r.result.psr) for r in rows)
        out.append({"group": cfg, "seeds": list(sr["per_seed"]), "sr_per_seed": list(sr["per_seed"].values()),
                    "sr_between_seed_sd": sr["between_seed_sd"], "sr_within_task_sd": sr["within_task_sd"],
                    "psr_between_seed_sd": psr["between_seed_sd"], "psr_within_task_sd": psr["within_task_sd"],
                    "tasks_with_seeds": len(sr["per_task"]), "per_task": sr["per_task"],
                    "unstable_tasks": sorted(t for t, x in sr["per_task"].items() if 0 < x["mean"] < 1)})
    return out


def _episode_facts(run: RunData, r: EpisodeResult, known_items: dict[str, set[str]]) -> tuple[Counter, Any]:
    """Tool error kinds and the communication analysis of one episode (empty without a trajectory)."""
    from ..cce.comms import _known_items, analyze_episode
    from ..cce.graph import EpisodeError, load_episode

    folder = run.episode_dir(r.episode_id)
    try:
        ep = load_episode(folder, with_task=False)
    except (EpisodeError, OSError):
        return Counter(), None
    if "items" not in known_items:  # the data pack's item keys, loaded once and only when needed
        known_items["items"] = _known_items()
    kinds = Counter(t.error for t in ep.turns if t.error and t.error not in ("infra", "no_call"))
    return kinds, analyze_episode(ep, known_items=known_items["items"])


def error_table(runs: list[RunData], with_run_label: bool) -> tuple[list[dict[str, Any]], dict[str, list]]:
    """Per configuration: end reasons, tool error kinds and error counters, over every recorded episode
    (errored ones included); plus, per configuration, the episodes' communication analyses."""
    groups: dict[str, dict[str, Any]] = {}
    comms: dict[str, list] = {}
    known: dict[str, set[str]] = {}
    for run in runs:
        errored = {r.episode_id for r in run.errored_results}
        for r in [*run.results, *run.errored_results]:
            cfg = config_label(run, r, with_run_label)
            g = groups.setdefault(cfg, {"group": cfg, "episodes": 0, "errored_episodes": 0,
                                        "end_reasons": Counter(), "tool_error_kinds": Counter(),
                                        **{c: 0 for c in ERROR_COUNTERS}})
            g["episodes"] += 1
            g["errored_episodes"] += r.episode_id in errored
            g["end_reasons"][r.end_reason] += 1
            for c in ERROR_COUNTERS:
                g[c] += int(getattr(r, c, 0) or 0)
            kinds, ec = _episode_facts(run, r, known)
            harness = kinds.pop("harness_error", 0)  # a turn the harness spoiled: not the agent's tool error
            if "harness_errors" not in r.model_fields_set:  # a result.json written before the counter existed
                g["harness_errors"] += harness
            g["tool_error_kinds"].update(kinds)
            if ec is not None and r.episode_id not in errored:
                comms.setdefault(cfg, []).append(ec)
    rows = []
    for g in groups.values():
        rows.append({**g, "end_reasons": dict(g["end_reasons"].most_common()),
                     "tool_error_kinds": dict(g["tool_error_kinds"].most_common())})
    return rows, comms


def cce_summary(runs: list[RunData], judge: str | None) -> dict[str, Any]:
    """Which judge each CCE comes from, and warnings for incomplete or mixed judgings."""
    sources: Counter = Counter()
    incomplete: Counter = Counter()
    others: Counter = Counter()
    for run in runs:
        sources.update(run.cce_judge.values())
        incomplete.update(run.cce_incomplete.values())
        others.update(run.cce_other_incomplete)
    warnings = []
    for label, n in sorted(incomplete.items()):
        warnings.append(f"judge {label}: {n} episode(s) incomplete (failed judge calls): left out of CCE, not "
                        f"counted as 0; re-score them: agentworld cce RUN_DIR --judge ... --label {label}")
    for label, n in sorted(others.items()):
        warnings.append(f"judge {label}: {n} episode(s) have an incomplete judging (not shown here)")
    if len(sources) > 1:
        warnings.append("CCE mixes judges (" + ", ".join(f"{k}: {v}" for k, v in sources.most_common())
                        + "); pick one with --judge LABEL")
    return {"judge": judge, "sources": dict(sources.most_common()), "incomplete": dict(incomplete),
            "warnings": warnings}


def build_report(runs: list[RunData], by: str | None = None, boot: Boot = Boot(),
                 judge: str | None = None, details: bool = True) -> dict[str, Any]:
    """Everything the terminal and HTML reports show, as plain data (JSON-serialisable).

    ``details=False`` leaves out what needs every trajectory read (errors, communication) and the tables
    the end-of-run summary does not print."""
    from ..cce.comms import summarize

    several = len(runs) > 1
    rows = [Row(run, r, run.cce.get(r.episode_id), several) for run in runs for r in run.results]
    if not rows:
        raise ReportError("no finished episodes in " + ", ".join(str(r.path) for r in runs)
                          + " (errored ones are left out: `agentworld run --resume` retries them)")
    configs = _group(rows, lambda r: r.config)
    variants = _group(rows, lambda r: "random" if r.result.framework == "random" else r.result.variant)
    if by is None:
        by = "variant" if len(variants) > 1 and len({(r.run.label, r.result.framework, r.result.model)
                                                     for r in rows if r.result.framework != "random"}) <= 1 \
            else "config"
    errors, comms = error_table(runs, several) if details else ([], {})
    report: dict[str, Any] = {
        "runs": [{"label": r.label, "path": str(r.path), "episodes": len(r.results), "errored": r.errored,
                  "failed": r.failed, "damaged": r.damaged, "problems": list(r.problems),
                  "planned": len(r.manifest.get("episodes", [])) or len(r.results),
                  "status": r.manifest.get("status"), "stop_reason": r.manifest.get("stop_reason"),
                  "agentworld": (r.manifest.get("environment") or {}).get("agentworld"),
                  "git": ((r.manifest.get("environment") or {}).get("git") or {}).get("commit"),
                  "source": (r.manifest.get("environment") or {}).get("source"),
                  "replay": replay_counts(r)} for r in runs],
        "by": by,
        "stats": boot.describe(),
        "cce": cce_summary(runs, judge),
        "has_cce": any(r.cce is not None for r in rows),
        "has_usage": any(r.result.tokens_in or r.result.tokens_out or r.result.cost_usd for r in rows),
        "has_pass_k": any(n_trials(v) >= 2 for v in configs.values()),
        "overall": [{"group": k, **metrics(v, boot)} for k, v in configs.items()],
        "by_category": [], "by_team_size": [], "variants": [], "paired": [],
        "per_task": per_task_table(configs) if details else {"configs": [], "rows": []},
        "errors": errors,
        "seeds": seed_table(configs) if details else [],
        "comms": [{"group": k, **summarize(v)} for k, v in comms.items()],
        "paper_main": [{"model": m, "sr": sr, "psr": psr, "cce": cce} for m, sr, psr, cce in PAPER_MAIN],
    }
    for cfg, crow in (configs.items() if details else ()):
        for cat, cat_rows in sorted(_group(crow, lambda r: r.result.category or "(none)").items()):
            report["by_category"].append({"group": cfg, "category": cat, **metrics(cat_rows, boot)})
        bins = _group(crow, lambda r: team_size_bin(r.result.n_agents))
        order = [b[2] for b in TEAM_SIZE_BINS]
        for size in sorted(bins, key=lambda s: order.index(s) if s in order else 99):
            report["by_team_size"].append({"group": cfg, "team_size": size, **metrics(bins[size], boot)})
    report["not_applicable"] = not_applicable(runs)
    na_tasks = _group_na(report["not_applicable"])
    if len(variants) > 1 or by == "variant":
        for name in [*variants, *(v for v in na_tasks if v not in variants)]:  # a variant n/a everywhere: a row too
            canon = canonical_variant(name)
            report["variants"].append({
                "variant": name, **metrics(variants.get(name, []), boot), "na": len(na_tasks.get(name, ())),
                "paper_baseline_sr": PAPER_BASELINES.get(canon or ""),
                "paper_ablation_sr": PAPER_ABLATIONS.get(canon or "")})
    keys = list(configs)
    if len(keys) > 1:
        base = next((k for k in keys if k.endswith("vanilla")), keys[0])  # the baseline of Tables 3/4
        for k in keys:
            if k != base:
                report["paired"].append({"a": base, "b": k, **paired(configs[base], configs[k], boot)})
    return report


def n_trials(rows: list[Row]) -> int:
    """The most trials (episodes) any one task has among ``rows``."""
    return max(Counter(r.result.task_id for r in rows).values(), default=0)


def replay_counts(run: RunData) -> dict[str, Any]:
    """How many of a run's episodes passed ``agentworld replay --check`` on exactly their current files, how
    many were never checked (or changed since), and which failed, with the first difference."""
    from .integrity import REPLAY_FAILED, REPLAY_NOT_CHECKED, REPLAY_VERIFIED

    statuses = [run.replay.get(r.episode_id, (REPLAY_NOT_CHECKED, None)) for r in run.results]
    return {"verified": sum(s == REPLAY_VERIFIED for s, _ in statuses),
            "not_checked": sum(s == REPLAY_NOT_CHECKED for s, _ in statuses),
            "failed": {r.episode_id: run.replay[r.episode_id][1] for r in run.results
                       if run.replay.get(r.episode_id, ("",))[0] == REPLAY_FAILED}}


def not_applicable(runs: list[RunData]) -> list[dict[str, Any]]:
    """The runs' n/a cells (a variant that does not apply to a task), one per (variant, task), with the reason."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        for c in run.manifest.get("not_applicable") or []:
            seen.setdefault((c["variant"], c["task_id"]), {"variant": c["variant"], "task_id": c["task_id"],
                                                           "reason": c["reason"]})
    return list(seen.values())


def _group_na(cells: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in cells:
        out.setdefault(c["variant"], []).append(c)
    return out


def print_not_applicable(cells: list[dict[str, Any]], console: Any) -> None:
    """n/a cells, explained: left out of every table (never counted as a 0 or a 100 %)."""
    cells = not_applicable_dedup(cells)
    console.print(f"[bold]n/a[/]: {len(cells)} (variant, task) cell(s) where the variant does not apply, left out "
                  "of the tables:")
    for c in cells:
        console.print(f"  n/a  {c['variant']} · {c['task_id']}: {c['reason']}", highlight=False, soft_wrap=True)


def not_applicable_dedup(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({(c["variant"], c["task_id"]): c for c in cells}.values())


# ---------------------------------------------------------------------- terminal output
def _nan(x: Any) -> bool:
    return x is None or x != x


def _num(m: dict[str, Any], digits: int = 1, scale: float = 1.0) -> str:
    """``mean [lo, hi]`` (NaN, i.e. no episodes or a single task, drops the value or the interval)."""
    if _nan(m.get("mean")):
        return "-"
    if _nan(m.get("lo")):
        return f"{scale * m['mean']:.{digits}f}"
    return f"{scale * m['mean']:.{digits}f} [{scale * m['lo']:.{digits}f}, {scale * m['hi']:.{digits}f}]"


def _pct(m: dict[str, Any]) -> str:
    return _num(m, 1, scale=100)


def _signed(m: dict[str, Any] | None, scale: float = 1.0, digits: int = 1) -> str:
    if not m or _nan(m.get("mean")):
        return "-"
    ci = "" if _nan(m.get("lo")) else f" [{scale * m['lo']:+.{digits}f}, {scale * m['hi']:+.{digits}f}]"
    return f"{scale * m['mean']:+.{digits}f}{ci}"


def _share(x: float | None) -> str:
    return "-" if _nan(x) else f"{100 * x:.1f}%"


def usage_columns(rep: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    if not rep.get("has_usage"):
        return ()
    return (("tokens/episode", lambda row: f"{row['tokens']['mean']:,.0f}"),
            ("cost $/episode", lambda row: f"{row['cost_usd']['mean']:.4f}"))


def metric_table(title: str, rows: list[dict[str, Any]], first: list[tuple[str, str]], has_cce: bool,
                 extra: tuple[tuple[str, Any], ...] = ()) -> Any:
    from rich.table import Table

    t = Table(title=title, title_justify="left", header_style="bold")
    for _, head in first:
        t.add_column(head)
    t.add_column("n", justify="right")
    t.add_column("tasks", justify="right")
    t.add_column("SR % [95% CI]", justify="right")
    t.add_column("PSR % [95% CI]", justify="right")
    if has_cce:
        t.add_column("CCE [95% CI] (judged)", justify="right")
    t.add_column("rounds", justify="right")
    t.add_column("chats", justify="right")
    t.add_column("actions", justify="right")
    for head, _ in extra:
        t.add_column(head, justify="right")
    for row in rows:
        cells = [str(row[k]) for k, _ in first] + [str(row["n"]), str(row["tasks"]), _pct(row["sr"]),
                                                   _pct(row["psr"])]
        if has_cce:
            cells.append(f"{_num(row['cce'], 3)} ({row['cce']['n']})" if row["cce"]["n"] else "-")
        cells += [_num(row["rounds"]), _num(row["chats"]), _num(row["actions"])]
        if not row["n"] and row.get("na"):  # a variant that applies to none of the tasks: n/a, never 0 %
            cells = cells[:len(first) + 1] + ["n/a"] * (len(cells) - len(first) - 1)
        cells += [fn(row) for _, fn in extra]
        t.add_row(*cells)
    return t


def print_summary(runs: list[RunData], console: Any) -> None:
    """The short table printed at the end of `agentworld run`."""
    rep = build_report(runs, by="config", details=False)
    console.print(metric_table("Results", rep["overall"], [("group", "configuration")], rep["has_cce"],
                               extra=usage_columns(rep)))


def pass_k_columns(rows: list[dict[str, Any]]) -> list[int]:
    """The k shown in pass^k tables: 1 .. the most trials any row's tasks have."""
    return list(range(1, max((row["pass_k"]["max_trials"] for row in rows), default=0) + 1))


def pass_k_cell(row: dict[str, Any], k: int) -> str:
    """``value % (tasks)``: pass^k over the row's tasks with at least k trials; "-" when none has k."""
    found = next((v for v in row["pass_k"]["values"] if v["k"] == k), None)
    return "-" if found is None else f"{100 * found['value']:.1f} ({found['tasks']})"


def _fixed_pct(x: float | None) -> str:
    return "-" if _nan(x) else f"{100 * x:.1f}"


def pass_k_rich(rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(title="pass^k: chance that k trials of a task all succeed (tau-bench: C(c,k)/C(n,k) averaged over "
                    "tasks with >= k trials; tasks in brackets)", title_justify="left", header_style="bold")
    t.add_column("configuration")
    t.add_column("SR %", justify="right")
    ks = pass_k_columns(rows)
    for k in ks:
        t.add_column(f"pass^{k} %", justify="right")
    for row in rows:
        t.add_row(row["group"], _fixed_pct(row["sr"]["mean"]), *(pass_k_cell(row, k) for k in ks))
    return t


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "-"


def print_report(rep: dict[str, Any], console: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    for r in rep["runs"]:
        extra = f" · stopped: {r['stop_reason']}" if r.get("stop_reason") else ""
        retried = r["errored"] - r.get("failed", 0)
        if retried:
            extra += f" · {retried} errored (left out; `agentworld run --resume` retries them)"
        if r.get("failed"):
            extra += f" · {r['failed']} failed for good (left out; not retried)"
        if r.get("damaged"):
            extra += f" · {r['damaged']} damaged (left out; `agentworld run --resume` reruns them)"
        console.print(f"[bold]{r['label']}[/] {r['path']}: {r['episodes']}/{r['planned']} episodes"
                      f" · status {r['status']}{extra}")
        for text in r.get("problems", []):
            console.print(f"  [yellow]![/] {escape(text)}", soft_wrap=True)
        rp = r.get("replay")
        if rp:
            colour = "red" if rp["failed"] else "yellow" if rp["not_checked"] else "green"
            console.print(f"  [{colour}]replay: {rp['verified']} verified, {rp['not_checked']} not checked, "
                          f"{len(rp['failed'])} failed[/]" + (" (`agentworld replay RUN_DIR --check` checks them)"
                                                              if rp["not_checked"] else ""))
            for eid, why in rp["failed"].items():
                console.print(f"  [red]✗[/] replay of {escape(eid)} differs: {escape(str(why))}", soft_wrap=True)
    st = rep["stats"]
    console.print(f"[dim]Intervals: 95% {st['method']}, {st['reps']} resamples, seed {st['seed']}; "
                  f"paired: {st['paired_test']}. A single task gives no interval.[/]")
    cce = rep["has_cce"]
    if rep["cce"]["sources"]:
        console.print("CCE from judge " + ", ".join(f"[bold]{k}[/] ({v} episodes)"
                                                     for k, v in rep["cce"]["sources"].items()))
    for w in rep["cce"]["warnings"]:
        console.print(f"[yellow]warning:[/] {w}")
    console.print(metric_table("Table 2 shape: overall", rep["overall"], [("group", "configuration")], cce,
                               extra=usage_columns(rep)))
    if rep.get("has_pass_k"):
        console.print(pass_k_rich(rep["overall"]))
    console.print(metric_table("By category", rep["by_category"],
                               [("group", "configuration"), ("category", "category")], cce))
    console.print(metric_table("By team size", rep["by_team_size"],
                               [("group", "configuration"), ("team_size", "agents")], cce))
    pt = rep["per_task"]
    t = Table(title="SR per task (successes/episodes)", title_justify="left", header_style="bold")
    t.add_column("task")
    for c in pt["configs"]:
        t.add_column(c, justify="right")
    for row in pt["rows"]:
        t.add_row(row["task"], *(f"{row['cells'][c]['successes']}/{row['cells'][c]['n']}" if c in row["cells"]
                                 else "-" for c in pt["configs"]))
    console.print(t)
    if rep["variants"]:
        def paper_ref(row: dict[str, Any]) -> str:
            return " / ".join(f"{v:.1f}" if v is not None else "-"
                              for v in (row["paper_baseline_sr"], row["paper_ablation_sr"]))

        console.print(metric_table("Tables 3/4 shape: variants (rows) · paper SR for reference", rep["variants"],
                                   [("variant", "variant")], cce,
                                   extra=(("n/a tasks", lambda row: str(row.get("na", 0))),
                                          ("paper SR % (Table 3 / Table 4)", paper_ref))))
    if rep.get("not_applicable"):
        print_not_applicable(rep["not_applicable"], console)
    if rep["paired"]:
        t = Table(title="Paired differences (B − A) by task, 95% CI; sign test over tasks", title_justify="left",
                  header_style="bold")
        for head in ("A", "B", "tasks", "ΔSR pp", "B/A/tie", "sign p", "ΔPSR pp", "ΔCCE", "Δrounds", "Δactions"):
            t.add_column(head, justify="right" if head not in ("A", "B") else "left")
        for p in rep["paired"]:
            if not p.get("tasks"):
                t.add_row(p["a"], p["b"], "0", *(["-"] * 7))
                continue
            sr = p["sr"]
            t.add_row(p["a"], p["b"], str(p["tasks"]), _signed(sr, 100), f"{sr['b_better']}/{sr['a_better']}/{sr['ties']}",
                      f"{sr['p']:.3g}", _signed(p.get("psr"), 100), _signed(p.get("cce"), 1, 3),
                      _signed(p.get("rounds")), _signed(p.get("actions")))
        console.print(t)
    t = Table(title="What happened: end reasons, tool error kinds, errors (all recorded episodes)",
              title_justify="left", header_style="bold")
    for head in ("configuration", "episodes", "end reasons", "tool error kinds", "no call", "refused",
                 "infra errors", "harness errors", "errored episodes"):
        t.add_column(head, justify="left" if head in ("configuration", "end reasons", "tool error kinds") else "right")
    for e in rep["errors"]:
        t.add_row(e["group"], str(e["episodes"]), _counts(e["end_reasons"]), _counts(e["tool_error_kinds"]),
                  str(e["no_calls"]), str(e["refused_calls"]), str(e["infra_errors"]), str(e["harness_errors"]),
                  str(e["errored_episodes"]))
    console.print(t)
    if rep["seeds"]:
        t = Table(title="Run to run: SR of each seed over all tasks, SD over seeds, mean SD within a task",
                  title_justify="left", header_style="bold")
        for head in ("configuration", "seeds", "SR % per seed", "SD pp", "within-task SD pp", "tasks that vary"):
            t.add_column(head, justify="left" if head == "configuration" else "right")
        for s in rep["seeds"]:
            t.add_row(s["group"], str(len(s["seeds"])), " ".join(f"{100 * v:.0f}" for v in s["sr_per_seed"]),
                      _num({"mean": s["sr_between_seed_sd"], "lo": None}, 1, 100),
                      _num({"mean": s["sr_within_task_sd"], "lo": None}, 1, 100), str(len(s["unstable_tasks"])))
        console.print(t)
    if rep["comms"]:
        console.print(comms_table("Communication", rep["comms"], "group", "configuration"))
    t = Table(title="Paper, main set (docs/paper.md)", title_justify="left", header_style="dim")
    for head in ("model", "SR %", "PSR %", "CCE"):
        t.add_column(head)
    for p in rep["paper_main"]:
        t.add_row(p["model"], f"{p['sr']:.1f}", f"{p['psr']:.1f}", f"{p['cce']:.3f}")
    console.print(t)


def comms_table(title: str, rows: list[dict[str, Any]], key: str, head: str, extra_key: str | None = None) -> Any:
    """The communication table (core/cce/comms.py summarize rows)."""
    from rich.table import Table

    t = Table(title=title, title_justify="left", header_style="bold")
    t.add_column(head)
    if extra_key:
        t.add_column(extra_key)
    for h in ("episodes", "SR", "chats/episode", "first chat round", "chat share", "chat share (failed)",
              "not acted on", "undelivered"):
        t.add_column(h, justify="right")
    for c in rows:
        first = "-" if _nan(c["first_chat_round"]) else f"{c['first_chat_round']:.1f}"
        t.add_row(str(c[key]), *([str(c.get(extra_key, ""))] if extra_key else []), str(c["episodes"]),
                  f"{c['success']}/{c['episodes']}",
                  "-" if _nan(c["chats_per_episode"]) else f"{c['chats_per_episode']:.1f}", first,
                  _share(c["chat_share"]), _share(c["chat_share_failed"]),
                  f"{c['unfollowed']} ({_share(c['unfollowed_share'])})", str(c["undelivered"]))
    return t
