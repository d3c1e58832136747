"""Aggregate runs into the paper's tables, with 95% confidence intervals and paired comparisons.

- Table 2 shape: one row per configuration (run x framework x model x variant): SR, PSR, CCE, rounds,
  chats, actions; then the same by task category and by team size.
- Tables 3/4 shape: one row per protocol variant (baselines and ablations), next to the paper's figures.
- Paired differences: configurations compared on the episodes they share (same task and seed).

Intervals: Wilson score interval for SR (a proportion); Student's t interval for means (PSR, CCE, rounds,
chats, actions) over episodes (tasks x trials). A paired difference gets a t interval over the per-pair
differences, and for SR also McNemar's exact test on the discordant pairs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..play.records import EpisodeResult

Z95 = 1.959963984540054

# Two-sided 95% Student t critical values (df -> t); between entries the next lower df is used (conservative).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
        29: 2.045, 30: 2.042, 40: 2.021, 50: 2.009, 60: 2.000, 80: 1.990, 100: 1.984, 120: 1.980, 200: 1.972,
        500: 1.965, 1000: 1.962}

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


class ReportError(ValueError):
    """A run folder that cannot be reported (the message says which and why)."""


# ---------------------------------------------------------------------- statistics
def t95(df: int) -> float:
    if df <= 0:
        return float("nan")
    keys = [k for k in _T95 if k <= df]
    return _T95[max(keys)] if df <= 1000 else Z95


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (well behaved at 0 and 1 and for small n)."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and Student t 95% interval (a single value gives an interval of NaN: no spread to estimate)."""
    n = len(values)
    if n == 0:
        return (float("nan"),) * 3
    m = sum(values) / n
    if n == 1:
        return (m, float("nan"), float("nan"))
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    return (m, m - half, m + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs (binomial test at 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


# ---------------------------------------------------------------------- loading
@dataclass
class RunData:
    path: Path
    label: str
    manifest: dict[str, Any]
    results: list[EpisodeResult]
    cce: dict[str, float] = field(default_factory=dict)  # episode id -> CCE (episodes with a cce.json)
    errored: int = 0  # episodes recorded with an infrastructure error (left out of the tables)
    failed: int = 0  # of those, episodes failed for good (the same error max_attempts times; not retried)
    damaged: int = 0  # recorded episodes whose files are damaged (left out of the tables; resume reruns them)
    problems: list[str] = field(default_factory=list)  # what is damaged, each naming the file

    def episode_dir(self, eid: str) -> Path:
        return self.path / "episodes" / eid


def _read_cce(path: Path) -> float | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        value = data.get("cce")
        return float(value) if value is not None else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def load_runs(paths: Iterable[str | Path]) -> list[RunData]:
    """Read run folders for reporting. Every recorded episode's files are checked (runs/integrity.py): a damaged
    one is left out of the tables and named in ``RunData.problems``, as is a damaged line of results.jsonl;
    a damaged manifest is a ReportError naming the file."""
    from .integrity import episode_problem
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
        results, damaged = [], 0
        for r in everything:
            if needs_retry(r):
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
        errored = sum(1 for r in everything if needs_retry(r))
        run = RunData(path=path, label=label, manifest=manifest, results=results, errored=errored,
                      failed=sum(1 for r in everything if needs_retry(r) and r.episode_id in gave_up),
                      damaged=damaged, problems=problems)
        for r in results:
            value = _read_cce(run.episode_dir(r.episode_id) / "cce.json")
            if value is not None:
                run.cce[r.episode_id] = value
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
        r = self.result
        parts = ([self.run.label] if self.with_run_label else []) + [r.framework] + ([r.model] if r.model else [])
        return " · ".join(parts + [r.variant])


def team_size_bin(n: int) -> str:
    for lo, hi, label in TEAM_SIZE_BINS:
        if lo <= n <= hi:
            return label
    return f"{n}"


def _clamped(values: list[float], lo: float = 0.0, hi: float = float("inf")) -> dict[str, float]:
    """Mean and t interval, clipped to the metric's range (a share cannot leave [0, 1])."""
    m, a, b = mean_ci(values)
    return {"mean": m, "lo": a if a != a else max(lo, a), "hi": b if b != b else min(hi, b)}


def metrics(rows: list[Row]) -> dict[str, Any]:
    """SR, PSR, CCE, rounds, chats, actions (and usage) of a set of episodes, each with a 95% interval."""
    n = len(rows)
    succ = sum(r.result.success for r in rows)
    lo, hi = wilson(succ, n)
    out: dict[str, Any] = {"n": n, "tasks": len({r.result.task_id for r in rows}),
                           "sr": {"mean": succ / n if n else float("nan"), "lo": lo, "hi": hi}}
    out["psr"] = _clamped([r.result.psr for r in rows], 0.0, 1.0)
    for name, getter in (("rounds", lambda r: r.result.rounds), ("chats", lambda r: r.result.chats),
                         ("actions", lambda r: r.result.actions),
                         ("tokens", lambda r: r.result.tokens_in + r.result.tokens_out),
                         ("cost_usd", lambda r: r.result.cost_usd)):
        out[name] = _clamped([float(getter(r)) for r in rows])
    cces = [r.cce for r in rows if r.cce is not None]
    out["cce"] = {**_clamped(cces, 0.0, 1.0), "n": len(cces)}
    return out


def _group(rows: list[Row], key) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def canonical_variant(name: str, framework: str = "") -> str | None:
    if framework == "random":
        return "random"
    return _ALIASES.get(name.lower().replace("_", "").replace("-", "").replace(" ", ""))


def paired(rows_a: list[Row], rows_b: list[Row]) -> dict[str, Any]:
    """B minus A on the episodes both have (same task and seed)."""
    a = {(r.result.task_id, r.result.seed): r for r in rows_a}
    b = {(r.result.task_id, r.result.seed): r for r in rows_b}
    keys = sorted(set(a) & set(b))
    out: dict[str, Any] = {"pairs": len(keys)}
    if not keys:
        return out
    for name, getter in (("sr", lambda r: float(r.result.success)), ("psr", lambda r: r.result.psr),
                         ("rounds", lambda r: float(r.result.rounds)), ("actions", lambda r: float(r.result.actions)),
                         ("chats", lambda r: float(r.result.chats))):
        m, lo, hi = mean_ci([getter(b[k]) - getter(a[k]) for k in keys])
        out[name] = {"mean": m, "lo": lo, "hi": hi}
    cce_keys = [k for k in keys if a[k].cce is not None and b[k].cce is not None]
    if cce_keys:
        m, lo, hi = mean_ci([b[k].cce - a[k].cce for k in cce_keys])
        out["cce"] = {"mean": m, "lo": lo, "hi": hi, "pairs": len(cce_keys)}
    only_b = sum(1 for k in keys if b[k].result.success and not a[k].result.success)
    only_a = sum(1 for k in keys if a[k].result.success and not b[k].result.success)
    out["mcnemar"] = {"b_only": only_b, "a_only": only_a, "p": mcnemar_exact(only_a, only_b)}
    return out


def build_report(runs: list[RunData], by: str | None = None) -> dict[str, Any]:
    """Everything the terminal and HTML reports show, as plain data (JSON-serialisable)."""
    rows = [Row(run, r, run.cce.get(r.episode_id), len(runs) > 1) for run in runs for r in run.results]
    if not rows:
        raise ReportError("no finished episodes in " + ", ".join(str(r.path) for r in runs)
                          + " (errored ones are left out: `agentworld run --resume` retries them)")
    configs = _group(rows, lambda r: r.config)
    variants = _group(rows, lambda r: "random" if r.result.framework == "random" else r.result.variant)
    if by is None:
        by = "variant" if len(variants) > 1 and len({(r.run.label, r.result.framework, r.result.model)
                                                     for r in rows if r.result.framework != "random"}) <= 1 \
            else "config"
    report: dict[str, Any] = {
        "runs": [{"label": r.label, "path": str(r.path), "episodes": len(r.results), "errored": r.errored,
                  "failed": r.failed, "damaged": r.damaged, "problems": list(r.problems),
                  "planned": len(r.manifest.get("episodes", [])) or len(r.results),
                  "status": r.manifest.get("status"), "stop_reason": r.manifest.get("stop_reason"),
                  "agentworld": (r.manifest.get("environment") or {}).get("agentworld"),
                  "git": ((r.manifest.get("environment") or {}).get("git") or {}).get("commit")} for r in runs],
        "by": by,
        "has_cce": any(r.cce is not None for r in rows),
        "has_usage": any(r.result.tokens_in or r.result.tokens_out or r.result.cost_usd for r in rows),
        "overall": [{"group": k, **metrics(v)} for k, v in configs.items()],
        "by_category": [], "by_team_size": [], "variants": [], "paired": [],
        "paper_main": [{"model": m, "sr": sr, "psr": psr, "cce": cce} for m, sr, psr, cce in PAPER_MAIN],
    }
    for cfg, crow in configs.items():
        for cat, cat_rows in sorted(_group(crow, lambda r: r.result.category or "(none)").items()):
            report["by_category"].append({"group": cfg, "category": cat, **metrics(cat_rows)})
        bins = _group(crow, lambda r: team_size_bin(r.result.n_agents))
        order = [b[2] for b in TEAM_SIZE_BINS]
        for size in sorted(bins, key=lambda s: order.index(s) if s in order else 99):
            report["by_team_size"].append({"group": cfg, "team_size": size, **metrics(bins[size])})
    report["not_applicable"] = not_applicable(runs)
    na_tasks = _group_na(report["not_applicable"])
    if len(variants) > 1 or by == "variant":
        for name in [*variants, *(v for v in na_tasks if v not in variants)]:  # a variant n/a everywhere: a row too
            canon = canonical_variant(name)
            report["variants"].append({
                "variant": name, **metrics(variants.get(name, [])), "na": len(na_tasks.get(name, ())),
                "paper_baseline_sr": PAPER_BASELINES.get(canon or ""),
                "paper_ablation_sr": PAPER_ABLATIONS.get(canon or "")})
    keys = list(configs)
    if len(keys) > 1:
        base = keys[0]
        # Against the first configuration (vanilla when present: the baseline of Tables 3/4).
        for k in keys:
            if k.endswith("vanilla"):
                base = k
                break
        for k in keys:
            if k != base:
                report["paired"].append({"a": base, "b": k, **paired(configs[base], configs[k])})
    return report


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
def _num(m: dict[str, Any], digits: int = 1, scale: float = 1.0) -> str:
    """``mean [lo, hi]`` (NaN, i.e. no episodes or no spread, drops the value or the interval)."""
    if m["mean"] != m["mean"]:
        return "-"
    if m["lo"] != m["lo"]:
        return f"{scale * m['mean']:.{digits}f}"
    return f"{scale * m['mean']:.{digits}f} [{scale * m['lo']:.{digits}f}, {scale * m['hi']:.{digits}f}]"


def _pct(m: dict[str, Any]) -> str:
    return _num(m, 1, scale=100)


def _signed(m: dict[str, Any] | None, scale: float = 1.0, digits: int = 1) -> str:
    if not m or m["mean"] != m["mean"]:
        return "-"
    ci = "" if m["lo"] != m["lo"] else f" [{scale * m['lo']:+.{digits}f}, {scale * m['hi']:+.{digits}f}]"
    return f"{scale * m['mean']:+.{digits}f}{ci}"


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
    t.add_column("SR % [95% CI]", justify="right")
    t.add_column("PSR % [95% CI]", justify="right")
    if has_cce:
        t.add_column("CCE [95% CI]", justify="right")
    t.add_column("rounds", justify="right")
    t.add_column("chats", justify="right")
    t.add_column("actions", justify="right")
    for head, _ in extra:
        t.add_column(head, justify="right")
    for row in rows:
        cells = [str(row[k]) for k, _ in first] + [str(row["n"]), _pct(row["sr"]), _pct(row["psr"])]
        if has_cce:
            cells.append(_num(row["cce"], 3) if row["cce"]["n"] else "-")
        cells += [_num(row["rounds"]), _num(row["chats"]), _num(row["actions"])]
        if not row["n"] and row.get("na"):  # a variant that applies to none of the tasks: n/a, never 0 %
            cells = cells[:len(first) + 1] + ["n/a"] * (len(cells) - len(first) - 1)
        cells += [fn(row) for _, fn in extra]
        t.add_row(*cells)
    return t


def print_summary(runs: list[RunData], console: Any) -> None:
    """The short table printed at the end of `agentworld run`."""
    rep = build_report(runs, by="config")
    console.print(metric_table("Results", rep["overall"], [("group", "configuration")], rep["has_cce"],
                               extra=usage_columns(rep)))


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
    cce = rep["has_cce"]
    console.print(metric_table("Table 2 shape: overall", rep["overall"], [("group", "configuration")], cce,
                               extra=usage_columns(rep)))
    console.print(metric_table("By category", rep["by_category"],
                               [("group", "configuration"), ("category", "category")], cce))
    console.print(metric_table("By team size", rep["by_team_size"],
                               [("group", "configuration"), ("team_size", "agents")], cce))
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
        t = Table(title="Paired differences (B − A) on shared task+seed, 95% CI", title_justify="left",
                  header_style="bold")
        for head in ("A", "B", "pairs", "ΔSR pp", "ΔPSR pp", "ΔCCE", "Δrounds", "Δactions", "McNemar p"):
            t.add_column(head, justify="right" if head not in ("A", "B") else "left")
        for p in rep["paired"]:
            if not p["pairs"]:
                t.add_row(p["a"], p["b"], "0", *(["-"] * 6))
                continue
            t.add_row(p["a"], p["b"], str(p["pairs"]), _signed(p["sr"], 100), _signed(p["psr"], 100),
                      _signed(p.get("cce"), 1, 3), _signed(p["rounds"]), _signed(p["actions"]),
                      f"{p['mcnemar']['p']:.3g}")
        console.print(t)
    t = Table(title="Paper, main set (docs/paper.md)", title_justify="left", header_style="dim")
    for head in ("model", "SR %", "PSR %", "CCE"):
        t.add_column(head)
    for p in rep["paper_main"]:
        t.add_row(p["model"], f"{p['sr']:.1f}", f"{p['psr']:.1f}", f"{p['cce']:.3f}")
    console.print(t)
