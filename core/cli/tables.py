"""``agentworld baselines`` and ``agentworld ablations``: the paper's Table 3 and Table 4, one command each.

Each runs every row of its table over the selected tasks with one framework and model (the random row of
Table 3 always uses the random team), in run folders under ``--out`` (one per framework, resumable), and
prints the table in the paper's shape: one row per baseline or ablation with SR, PSR (and CCE with
``--cce``), next to the paper's SR. A (row, task) cell whose variant does not apply is left out of that row
and counted as n/a, and every n/a cell is listed with its reason under the table. Scripted teams fill the
tables offline: ``agentworld baselines --suite main --framework oracle``.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..hookspecs import hookimpl


@dataclass(frozen=True)
class TableRow:
    label: str
    variant: str
    paper_key: str  # key of the paper's figure (report.PAPER_BASELINES / PAPER_ABLATIONS)
    framework: str | None = None  # None: the command's --framework


TABLE3 = (TableRow("Random actions", "vanilla", "random", framework="random"),
          TableRow("Shared plan, no communication", "shared_plan_no_communication", "shared_plan_no_communication"),
          TableRow("No communication", "no_communication", "no_communication"),
          TableRow("Single agent", "single_agent", "single_agent"),
          TableRow("Vanilla", "vanilla", "vanilla"),
          TableRow("Oracle communication", "oracle_communication", "oracle_communication"))


def table4(short_horizon: int) -> tuple[TableRow, ...]:
    return (TableRow("Full (vanilla)", "vanilla", "full"),
            TableRow("Without asymmetric roles", "no_roles", "no_roles"),
            TableRow(f"Without long horizon ({short_horizon} rounds)", f"short_horizon:{short_horizon}",
                     "short_horizon"),
            TableRow("Random spawn", "random_spawn", "random_spawn"),
            TableRow("Without documentation", "no_documentation", "no_documentation"))


def run_rows(rows: tuple[TableRow, ...], fields: dict[str, Any], out: Path, *, framework: str,
             progress: bool, console: Any) -> tuple[dict[str, Path], list[dict[str, Any]]]:
    """Run every row's episodes (one run folder per framework, resumed when it exists); (folders, n/a cells)."""
    from ..runs.run_spec import build_spec
    from ..runs.runner import NullObserver, Runner, make_executor, plan_grid, select_tasks
    from .runs import ProgressBoard

    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(row.framework or framework, [])
        if row.variant not in groups[row.framework or framework]:
            groups[row.framework or framework].append(row.variant)
    folders: dict[str, Path] = {}
    not_applicable: list[dict[str, Any]] = []
    for fw, variants in groups.items():
        data = {**fields, "frameworks": [fw], "variants": variants}
        if fw != framework:
            data.pop("models", None)  # the random team needs no model
        spec = build_spec(data)
        jobs, na = plan_grid(spec, select_tasks(spec))
        not_applicable += [dict(c, framework=fw) for c in na]
        if not jobs:
            continue
        run_dir = out / fw
        runner = Runner(spec, run_dir, jobs=jobs, not_applicable=na, executor=make_executor(spec),
                        resume=(run_dir / "manifest.json").is_file())
        runner.observer = ProgressBoard(console, spec.concurrency) if progress else NullObserver()
        import asyncio

        asyncio.run(runner.run())
        folders[fw] = run_dir
    return folders, not_applicable


def build_table(rows: tuple[TableRow, ...], folders: dict[str, Path], not_applicable: list[dict[str, Any]],
                framework: str, paper: dict[str, float]) -> dict[str, Any]:
    from ..runs.report import Row, load_runs, metrics

    runs = {fw: load_runs([p])[0] for fw, p in folders.items()}
    table = []
    for row in rows:
        fw = row.framework or framework
        run = runs.get(fw)
        episodes = [Row(run, r, run.cce.get(r.episode_id), False) for r in run.results
                    if r.variant == row.variant] if run else []
        na = {c["task_id"]: c["reason"] for c in not_applicable if c["variant"] == row.variant and c["framework"] == fw}
        errored = sum(1 for r in run.results if r.variant == row.variant) - len(episodes) if run else 0
        table.append({"method": row.label, "variant": row.variant, "framework": fw, **metrics(episodes),
                      "na": len(na), "na_reasons": na, "errored": errored, "paper_sr": paper.get(row.paper_key)})
    return {"rows": table, "runs": {fw: str(p) for fw, p in folders.items()}}


def print_table(title: str, table: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    from ..runs.report import _num, _pct

    has_cce = any(r["cce"]["n"] for r in table["rows"])
    t = Table(title=title, title_justify="left", header_style="bold")
    for head in ("method", "team", "tasks run", "n/a", "SR % [95% CI]", "PSR % [95% CI]", *(["CCE"] if has_cce else []),
                 "paper SR %"):
        t.add_column(head, justify="left" if head in ("method", "team") else "right")
    for r in table["rows"]:
        if not r["n"]:
            scores = ["n/a" if r["na"] else "-"] * (3 if has_cce else 2)
        else:
            scores = [_pct(r["sr"]), _pct(r["psr"])] + ([_num(r["cce"], 3) if r["cce"]["n"] else "-"] if has_cce else [])
        t.add_row(r["method"], r["framework"], str(r["tasks"]), str(r["na"]), *scores,
                  "-" if r["paper_sr"] is None else f"{r['paper_sr']:.1f}")
    console.print(t)
    for r in table["rows"]:
        if r["na"]:
            console.print(f"[bold]{r['method']}[/]: n/a on {r['na']} task(s), left out of its row:")
            for task, reason in r["na_reasons"].items():
                console.print(f"  n/a  {task}: {reason}", highlight=False, soft_wrap=True)
    console.print("n/a: the variant does not apply to the task (see `agentworld tasks prove --variants`); such a "
                  "cell is never counted as a success or a failure.")


def table_options(fn: Any) -> Any:
    """The options both commands share (task selection, the team, execution)."""
    options = [
        click.option("--task", "tasks", multiple=True, help="Task id or YAML path (repeatable)."),
        click.option("--suite", type=click.Choice(["main", "augmented"]), help="Every task of a suite."),
        click.option("--category", "categories", multiple=True, help="Keep only this category (repeatable)."),
        click.option("--agents", help="Keep only tasks whose team size is in this range, e.g. 3-5."),
        click.option("--framework", default="oracle", show_default=True,
                     help="The team for every row but random (oracle, idle, autogen, camel, langgraph, openai, ...)."),
        click.option("--model", "models", multiple=True, help="Model spec provider:model (LLM frameworks)."),
        click.option("--base-url", help="Base URL of an OpenAI-compatible endpoint."),
        click.option("--api-key-env", help="NAME of the environment variable holding the API key."),
        click.option("--trials", type=int, help="Trials per task [default: 1]."),
        click.option("--seed", type=int, help="Base seed [default: 0]."),
        click.option("--concurrency", type=int, help="Episodes at once [default: 4]."),
        click.option("--cce", "cce_judge", help="Score CCE with this judge (e.g. grounded)."),
        click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                     help="Folder for the runs (one per framework; rerunning resumes) [default: runs/<table>-<time>]."),
        click.option("--no-progress", is_flag=True, help="No live display."),
        click.option("--json", "as_json", is_flag=True, help="Print the table as JSON."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _fields(tasks: tuple[str, ...], categories: tuple[str, ...], models: tuple[str, ...], flags: dict[str, Any]) -> dict:
    fields = {k: v for k, v in flags.items() if v is not None}
    for name, values in (("tasks", tasks), ("categories", categories), ("models", models)):
        if values:
            fields[name] = list(values)
    if not fields.get("tasks") and not fields.get("suite"):
        raise click.UsageError("select tasks: --task ID (repeatable) or --suite main")
    return fields


def _run_table(kind: str, rows: tuple[TableRow, ...], paper: dict[str, float], framework: str, out: Path | None,
               no_progress: bool, as_json: bool, fields: dict[str, Any]) -> None:
    from ..runs.run_spec import RunSpecError
    from ..console import make_console

    console = make_console(stderr=as_json)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = out or Path("runs") / f"{kind}-{framework}-{stamp}"
    try:
        folders, na = run_rows(rows, fields, out, framework=framework, progress=not (no_progress or as_json),
                               console=console)
    except (RunSpecError, ValueError, KeyError, ImportError) as e:
        raise click.ClickException(str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)) from None
    table = build_table(rows, folders, na, framework, paper)
    title = {"table3": "Table 3 shape: baselines", "table4": "Table 4 shape: ablations"}[kind]
    if as_json:
        click.echo(json.dumps({"table": kind, **table}, indent=2, default=str))
    else:
        print_table(f"{title} · {framework}{' · ' + ', '.join(fields['models']) if fields.get('models') else ''}",
                    table, console)
        console.print(f"runs: {', '.join(str(p) for p in folders.values())}")
    if any(r["errored"] for r in table["rows"]):
        console.print("some episodes errored (left out); rerun the same command to retry them")
        sys.exit(3)


@click.command("baselines")
@table_options
def baselines_cmd(tasks, categories, models, framework, out, no_progress, as_json, **flags) -> None:
    """Table 3: random, shared plan without communication, no communication, single agent, vanilla and
    oracle communication over the selected tasks, with n/a cells explained."""
    from ..runs.report import PAPER_BASELINES

    _run_table("table3", TABLE3, PAPER_BASELINES, framework, out, no_progress, as_json,
               _fields(tasks, categories, models, flags))


@click.command("ablations")
@table_options
@click.option("--short-horizon", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Round budget of the short-horizon row (the paper's: 10).")
def ablations_cmd(tasks, categories, models, framework, out, no_progress, as_json, short_horizon, **flags) -> None:
    """Table 4: full, without asymmetric roles, without long horizon, random spawn and without documentation
    over the selected tasks, with n/a cells explained."""
    from ..runs.report import PAPER_ABLATIONS

    _run_table("table4", table4(short_horizon), PAPER_ABLATIONS, framework, out, no_progress, as_json,
               _fields(tasks, categories, models, flags))


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(baselines_cmd)
    cli.add_command(ablations_cmd)
