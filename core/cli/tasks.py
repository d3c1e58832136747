"""``agentworld tasks list/show/validate`` and ``agentworld export`` (registered as a plugin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..hookspecs import hookimpl


def _console():
    from rich.console import Console

    return Console()


@click.group("tasks")
def tasks_group() -> None:
    """Shipped tasks: list, show, validate."""


@tasks_group.command("list")
@click.option("--suite", default="main", show_default=True, help="Task suite (main, augmented).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def tasks_list(suite: str, as_json: bool) -> None:
    """List tasks: id, name, category, agents, rounds."""
    from ..tasks.task import load_suite

    tasks = load_suite(suite, validate=False)
    rows = [{"id": t.id, "name": t.name, "category": t.category, "agents": len(t.agents), "rounds": t.rounds,
             "verifiable": t.verifiable} for t in tasks]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table("id", "name", "category", "agents", "rounds", title=f"{suite} tasks ({len(rows)})")
    for r in rows:
        table.add_row(r["id"], r["name"], r["category"] or "-", str(r["agents"]), str(r["rounds"]))
    _console().print(table)


@tasks_group.command("show")
@click.argument("task_id")
def tasks_show(task_id: str) -> None:
    """Show one task: objective, agents, verifier, reference solution length."""
    from ..tasks.task import TaskError, find_task

    try:
        t = find_task(task_id, validate=False)
    except (KeyError, TaskError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    con = _console()
    con.print(f"[bold]{t.id}[/bold]: {t.name}  ({t.category or 'no category'}, {len(t.agents)} agents, "
              f"{t.rounds} rounds, {t.max_action_steps} action steps per agent)")
    if t.path:
        con.print(f"file: {t.path}")
    con.print(f"\n{t.description.strip()}\n\nObjective: {t.objectives.primary.strip()}")
    from rich.table import Table

    table = Table("agent", "username", "role", "spawn", "skills", "inventory", "equipped")
    for a in t.agents:
        table.add_row(a.agent_id, a.username, a.role, f"({a.x},{a.y})",
                      ", ".join(f"{k} {v}" for k, v in a.skills.items()),
                      ", ".join(f"{s.item} x{s.count}" for s in a.inventory),
                      ", ".join(s.item for s in a.equipment))
    con.print(table)
    if t.verifier:
        con.print("Verifier checks:")
        for c in t.verifier.checks:
            params = ", ".join(f"{k}={v}" for k, v in c.params.items())
            con.print(f"  - {c.name or c.check}: {c.check}({params})")
        if t.verifier.python:
            con.print(f"  - custom verifier: {t.verifier.python}")
    else:
        con.print("[yellow]unverifiable: the task has no verifier[/yellow]")
    if t.reference_solution:
        steps = {k: len(v) for k, v in t.reference_solution.items()}
        con.print("Reference solution: " + ", ".join(f"{k} {n} steps" for k, n in steps.items()))


@tasks_group.command("validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
def tasks_validate(files: tuple[Path, ...]) -> None:
    """Validate task files against the world (default: every shipped task). Exit 1 on any error."""
    from ..tasks.task import SUITES, TaskError, load_task, suite_files

    paths = list(files) or [p for s in SUITES for p in suite_files(s)]
    con = _console()
    bad = 0
    for p in paths:
        try:
            t = load_task(p)
        except TaskError as exc:
            bad += 1
            con.print(f"[red]FAIL[/red] {exc}", highlight=False, soft_wrap=True)
            continue
        except Exception as exc:  # noqa: BLE001 - one broken file must not stop the others being checked
            bad += 1
            from rich.markup import escape

            con.print(f"[red]FAIL[/red] {escape(str(p))}: could not be checked "
                      f"({escape(type(exc).__name__)}: {escape(str(exc)[:200])})", highlight=False, soft_wrap=True)
            continue
        note = "" if t.verifiable else "  [yellow](unverifiable: no verifier)[/yellow]"
        con.print(f"[green]ok[/green]   {p}  ({t.id}, {len(t.agents)} agents){note}", highlight=False, soft_wrap=True)
    con.print(f"{len(paths) - bad}/{len(paths)} task files valid")
    if bad:
        sys.exit(1)


@click.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["paper"]), default="paper", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the exported files.")
def export_cmd(run_dir: Path, fmt: str, out_dir: Path) -> None:
    """Export the episodes under RUN_DIR (a run or one episode folder) to the paper's trajectory JSON."""
    from ..runs.export import export_run

    try:
        paths = export_run(run_dir, out_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for p in paths:
        click.echo(str(p))
    click.echo(f"exported {len(paths)} episode(s) to {out_dir}")


@hookimpl
def register_commands(cli):
    cli.add_command(tasks_group)
    cli.add_command(export_cmd)
