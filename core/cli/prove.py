"""``agentworld tasks prove``: the proof table for shipped tasks (registered as a plugin).

Attaches a ``prove`` subcommand to the ``tasks`` group that ``core/cli/tasks.py`` registers.
"""

from __future__ import annotations

import json
import sys
import time

import click

from ..hookspecs import hookimpl


def _mark(ok: bool, warning: bool = False) -> str:
    if not ok:
        return "[red]FAIL[/red]"
    return "[yellow]ok*[/yellow]" if warning else "[green]ok[/green]"


@click.command("prove")
@click.argument("task_ids", nargs=-1)
@click.option("--all", "all_tasks", is_flag=True, help="Prove every task of the suite.")
@click.option("--suite", default="main", show_default=True, help="Suite for --all (main, augmented).")
@click.option("--random-seeds", default=1, show_default=True, type=click.IntRange(0, 20),
              help="How many random-team episodes per task (seeds 0..N-1).")
@click.option("--allow-random", "allow_random", multiple=True, metavar="TASK_ID",
              help="A task that may pass with the random team (an easy task; reported, not failed). Repeatable.")
@click.option("--oracle-seeds", default=1, show_default=True, type=click.IntRange(1, 50),
              help="Also replay the reference solution with seeds 1..N-1 and report how often it passes "
                   "(seed 0 is the proof; other seeds show how much it depends on luck).")
@click.option("--necessity", is_flag=True,
              help="Also replay the reference plan once per agent with that agent asleep, and report agents the "
                   "plan does not need (slower: one extra episode per agent).")
@click.option("--variants", "with_variants", is_flag=True,
              help="Also prove every protocol variant on every task: proven (idle fails, adapted plan passes) or "
                   "n/a with the reason.")
@click.option("--variant", "variant_names", multiple=True, metavar="NAME",
              help="Prove only these variants (repeatable; implies --variants).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("-v", "--verbose", is_flag=True, help="Print every finding's detail.")
def prove_cmd(task_ids: tuple[str, ...], all_tasks: bool, suite: str, random_seeds: int,
              allow_random: tuple[str, ...], oracle_seeds: int, necessity: bool, with_variants: bool,
              variant_names: tuple[str, ...], as_json: bool, verbose: bool) -> None:
    """Prove tasks: solvable by the reference solution, failed by idle and random teams, collaborative,
    and verified honestly. Exit 1 if any task fails a proof."""
    from ..runs.prove import prove_tasks
    from ..tasks.task import TaskError, find_task, load_suite

    if not task_ids and not all_tasks:
        raise click.UsageError("name task ids (e.g. task_01_staff) or pass --all")
    try:
        tasks = load_suite(suite) if all_tasks else [find_task(t) for t in task_ids]
    except (KeyError, TaskError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    t0 = time.perf_counter()
    proofs = prove_tasks(tasks, random_seeds=range(random_seeds), allow_random=allow_random, necessity=necessity,
                         oracle_seeds=oracle_seeds)
    variant_proofs = None
    if with_variants or variant_names:
        from .variant_table import variant_cells

        variant_proofs = variant_cells(tasks, variant_names)
    wall = time.perf_counter() - t0
    oracle_s = sum(p.oracle_s for p in proofs)
    failed = [p for p in proofs if not p.ok] + [c for c in variant_proofs or [] if not c.ok]
    if as_json:
        extra = {"variants": [c.to_dict() for c in variant_proofs]} if variant_proofs is not None else {}
        click.echo(json.dumps({"tasks": [p.to_dict() for p in proofs], **extra, "ok": not failed,
                               "wall_s": round(wall, 2), "oracle_s": round(oracle_s, 2)}, indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        con = Console()
        names = ["solvable", "idle fails", "random fails", "collaborative", "honest verifier"]
        heads = ["solvable", "idle\nfails", "random\nfails", "collab-\norative", "honest\nverifier"]
        table = Table(title=f"task proofs ({len(proofs)})")
        table.add_column("task", no_wrap=True)
        for h in ("category", "agents", "budget", "ref\nrounds", "slack", "steps", *heads):
            table.add_column(h, justify="right" if h in ("agents", "budget", "ref\nrounds", "slack", "steps") else "left")
        for p in proofs:
            cells = []
            for n in names:
                f = p.finding(n)
                cells.append("-" if f is None else _mark(f.ok, f.warning))
            table.add_row(p.task_id, p.category or "-", str(p.agents), str(p.budget),
                          "-" if p.ref_rounds is None else str(p.ref_rounds), "-" if p.slack is None else str(p.slack),
                          f"{p.plan_steps}/{p.max_action_steps}", *cells)
        con.print(table)
        for p in proofs:
            for f in p.findings:
                if not f.ok or f.warning or verbose:
                    con.print(f"{p.task_id} {f.name}: {_mark(f.ok, f.warning)} {f.detail}", highlight=False,
                              soft_wrap=True)
        bad_tasks = sum(not p.ok for p in proofs)
        con.print(f"{len(proofs) - bad_tasks}/{len(proofs)} tasks proven in {wall:.1f} s "
                  f"(oracle episodes {oracle_s:.1f} s)")
        if variant_proofs is not None:
            from .variant_table import print_variant_cells

            print_variant_cells(variant_proofs, con, verbose)
    if failed:
        sys.exit(1)


@hookimpl(trylast=True)  # after core/cli/tasks.py has added the `tasks` group
def register_commands(cli):
    tasks = cli.commands.get("tasks")
    if tasks is None:  # the tasks group registers in its own plugin; without it there is nothing to attach to
        raise RuntimeError("agentworld.core.cli.prove needs the `tasks` command group (agentworld.core.cli.tasks)")
    tasks.add_command(prove_cmd)
