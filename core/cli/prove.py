"""``agentworld tasks prove``: the proof table for shipped tasks (registered as a plugin; it also attaches
``tasks calibration`` and ``tasks record-pilot`` from core/cli/calibration.py).

Attaches a ``prove`` subcommand to the ``tasks`` group that ``core/cli/tasks.py`` registers. After the
per-task table it prints the suite's shape: tasks by category and team size, reference rounds, budget
ratios, hand-offs and how many tasks need communication.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from ..hookspecs import hookimpl

COLUMNS = [("solvable", "solvable"), ("idle fails", "idle\nfails"), ("random fails", "random\nfails"),
           ("knowable", "know-\nable"), ("collaborative", "collab-\norative"), ("every agent needed", "all\nneeded"),
           ("honest verifier", "honest\nverifier"), ("warned of deadly beasts", "deadly\nbeasts\nwarned"), ("calibrated budget", "budget\ncalib.")]


def _mark(ok: bool, warning: bool = False) -> str:
    if not ok:
        return "[red]FAIL[/red]"
    return "[yellow]ok*[/yellow]" if warning else "[green]ok[/green]"


@click.command("prove")
@click.argument("task_ids", nargs=-1)
@click.option("--all", "all_tasks", is_flag=True, help="Prove every task of the suite.")
@click.option("--suite", default="main", show_default=True, help="Suite for --all (main, augmented).")
@click.option("--random-seeds", default=5, show_default=True, type=click.IntRange(5, 50),
              help="How many random-team episodes per task (seeds 0..N-1; at least 5).")
@click.option("--allow-random", "allow_random", multiple=True, metavar="TASK_ID",
              help="A task that may pass with the random team (an easy task; reported, not failed). Repeatable.")
@click.option("--oracle-seeds", default=1, show_default=True, type=click.IntRange(1, 50),
              help="Also replay the reference solution with seeds 1..N-1 and report how often it passes "
                   "(seed 0 is the proof; other seeds show how much it depends on luck).")
@click.option("--necessity/--no-necessity", default=True, show_default=True,
              help="Replay the reference plan once per agent with that agent asleep; an agent the plan does not "
                   "need fails the proof.")
@click.option("--jobs", type=click.IntRange(1, 64), default=None,
              help="Worker processes (default: the cores available, at most 4).")
@click.option("--variants", "with_variants", is_flag=True,
              help="Also prove every protocol variant on every task: proven (idle fails, adapted plan passes) or "
                   "n/a with the reason.")
@click.option("--variant", "variant_names", multiple=True, metavar="NAME",
              help="Prove only these variants (repeatable; implies --variants).")
@click.option("--strict-budget", is_flag=True,
              help="Fail a task whose budget is not 1.25x-1.6x its fastest known solution and 25-55 rounds "
                   "(without it: a warning).")
@click.option("--pilots", "pilots_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Pilot records whose successful runs count as known solutions (default: pilots/ of the "
                   "checkout, when there is one).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("-v", "--verbose", is_flag=True, help="Print every finding's detail.")
def prove_cmd(task_ids: tuple[str, ...], all_tasks: bool, suite: str, random_seeds: int,
              allow_random: tuple[str, ...], oracle_seeds: int, necessity: bool, jobs: int | None,
              with_variants: bool, variant_names: tuple[str, ...], strict_budget: bool, pilots_dir: Path | None,
              as_json: bool, verbose: bool) -> None:
    """Prove tasks: solvable by the reference solution, failed by idle and random teams, collaborative, every
    agent needed, knowable by its agents (and needing chat exactly when marked needs_communication), and
    verified honestly, and whether its budget fits its fastest known solution (the reference plan compressed,
    or a faster pilot). Exit 1 if any task fails a proof."""
    from ..runs.prove import default_jobs, prove_tasks, suite_summary
    from ..tasks.task import SUITES, TaskError, find_task, load_suite

    if not task_ids and not all_tasks:
        raise click.UsageError("name task ids (e.g. task_205_goldfield_two_forges) or task files, or pass --all")
    if all_tasks and suite not in SUITES:
        raise click.BadParameter(f"unknown suite {suite!r}; suites: {', '.join(SUITES)}", param_hint="--suite")
    try:
        tasks = load_suite(suite) if all_tasks else [find_task(t) for t in task_ids]
    except (KeyError, TaskError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    if not tasks:
        raise click.ClickException(f"the {suite!r} suite has no tasks: nothing to prove (tasks/{suite}/ is empty)")
    t0 = time.perf_counter()
    pilots = _pilot_solutions(tasks, pilots_dir)
    proofs = prove_tasks(tasks, random_seeds=range(random_seeds), allow_random=allow_random, necessity=necessity,
                         oracle_seeds=oracle_seeds, jobs=jobs or default_jobs(), strict_budget=strict_budget,
                         pilots=pilots)
    variant_proofs = None
    if with_variants or variant_names:
        from .variant_table import variant_cells

        variant_proofs = variant_cells(tasks, variant_names)
    wall = time.perf_counter() - t0
    oracle_s = sum(p.oracle_s for p in proofs)
    failed = [p for p in proofs if not p.ok] + [c for c in variant_proofs or [] if not c.ok]
    summary = suite_summary(proofs)
    if as_json:
        extra = {"variants": [c.to_dict() for c in variant_proofs]} if variant_proofs is not None else {}
        click.echo(json.dumps({"tasks": [p.to_dict() for p in proofs], **extra, "summary": summary, "ok": not failed,
                               "wall_s": round(wall, 2), "oracle_s": round(oracle_s, 2)}, indent=2))
    else:
        con = _print_tables(proofs, summary, verbose, wall, oracle_s)
        if variant_proofs is not None:
            from .variant_table import print_variant_cells

            print_variant_cells(variant_proofs, con, verbose)
    if failed:
        sys.exit(1)


def _pilot_solutions(tasks: list, folder: Path | None) -> dict[str, tuple[int, str]]:
    """task id -> (rounds, folder name) of its fastest successful pilot on the task's current version."""
    from ..runs.pilots import default_pilots_dir, fastest_wins

    if folder is not None and not folder.is_dir():
        raise click.BadParameter(f"{folder} is not a folder of pilot records", param_hint="--pilots")
    wins = fastest_wins(tasks, folder or default_pilots_dir())
    return {tid: (p.record.rounds, p.folder.name) for tid, p in wins.items()}


def _print_tables(proofs: list, summary: dict, verbose: bool, wall: float, oracle_s: float):
    """Print the proof table, each failure or warning, and the suite's shape; returns the console."""
    from rich.table import Table

    from ..console import make_console

    con = make_console()
    table = Table(title=f"task proofs ({len(proofs)})")
    table.add_column("task", no_wrap=True)
    numeric = ("agents", "budget", "ref\nrounds", "fast-\nest", "ratio", "hand-\noffs", "steps")
    for h in ("category", *numeric, "talk", *(h for _, h in COLUMNS)):
        table.add_column(h, justify="right" if h in numeric else "left")
    for p in proofs:
        cells = []
        for name, _ in COLUMNS:
            f = p.finding(name)
            cells.append("-" if f is None else _mark(f.ok, f.warning))
        ratio = p.fastest_ratio
        table.add_row(p.task_id, p.category or "-", str(p.agents), str(p.budget),
                      "-" if p.ref_rounds is None else str(p.ref_rounds),
                      "-" if p.fastest_rounds is None else str(p.fastest_rounds), "-" if ratio is None else f"{ratio:.2f}",
                      str(p.handoffs), f"{p.plan_steps}/{p.max_action_steps}", "yes" if p.needs_communication else "",
                      *cells)
    con.print(table)
    quiet = 0
    for p in proofs:
        for f in p.findings:
            if f.name == "calibrated budget" and f.ok and f.warning and not verbose:
                quiet += 1  # today's suite is far outside: one line for them all (-v lists each)
                continue
            if not f.ok or f.warning or verbose:
                con.print(f"{p.task_id} {f.name}: {_mark(f.ok, f.warning)} {f.detail}", highlight=False, soft_wrap=True)
    if quiet:
        con.print(f"[yellow]{quiet} task(s) with a budget outside 1.25x-1.6x of the fastest known solution or "
                  f"25-55 rounds[/yellow] (-v lists each; --strict-budget fails them)", highlight=False)
    con.print(_summary_table(summary))
    con.print(f"{summary['proven']}/{summary['tasks']} tasks proven in {wall:.1f} s (oracle episodes {oracle_s:.1f} s)")
    return con


def _summary_table(s: dict):
    from rich.table import Table

    def spread(d: dict | None, fmt: str = "{:g}") -> str:
        if not d:
            return "-"
        return " / ".join(fmt.format(d[k]) for k in ("min", "median", "mean", "max"))

    t = Table(title="suite shape", show_header=False)
    t.add_column("figure")
    t.add_column("value")
    t.add_row("tasks (proven)", f"{s['tasks']} ({s['proven']})")
    t.add_row("by category", ", ".join(f"{k} {v}" for k, v in s["by_category"].items()))
    t.add_row("by team size", ", ".join(f"{k}: {v}" for k, v in s["by_team_size"].items()))
    t.add_row("budget (min / median / mean / max)", spread(s["budget"]))
    t.add_row("reference rounds", spread(s["ref_rounds"]))
    t.add_row("budget / reference rounds", spread(s["budget_ratio"], "{:.2f}"))
    t.add_row("fastest known solution (rounds)", spread(s["fastest_rounds"]))
    t.add_row("budget / fastest known", spread(s["fastest_ratio"], "{:.2f}"))
    t.add_row("budgets outside 1.25x-1.6x or 25-55", str(s["budget_outside"]))
    t.add_row("hand-offs (items + facts)", spread(s["handoffs"]))
    t.add_row("needs communication", str(s["needs_communication"]))
    return t


@hookimpl(trylast=True)  # after core/cli/tasks.py has added the `tasks` group
def register_commands(cli):
    tasks = cli.commands.get("tasks")
    if tasks is None:  # the tasks group registers in its own plugin; without it there is nothing to attach to
        raise RuntimeError("agentworld.core.cli.prove needs the `tasks` command group (agentworld.core.cli.tasks)")
    tasks.add_command(prove_cmd)
    from .calibration import calibration_cmd, record_pilot_cmd

    tasks.add_command(calibration_cmd)
    tasks.add_command(record_pilot_cmd)
