"""``agentworld tasks list/show/validate/port`` and ``agentworld export`` (registered as a plugin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .. import plugins
from ..hookspecs import hookimpl
from .backend import EMBEDDED, parse_world, world_options


def _console():
    from ..console import make_console

    return make_console()


@click.group("tasks")
def tasks_group() -> None:
    """Shipped tasks: list, show, validate, port."""


@tasks_group.command("list")
@click.option("--suite", default="main", show_default=True, help="Task suite (main, augmented).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def tasks_list(suite: str, as_json: bool) -> None:
    """List tasks: id, name, category, design, agents, rounds, and the world mechanics each uses."""
    from ..tasks.mechanics import mechanics_of
    from ..tasks.task import load_suite

    tasks = load_suite(suite, validate=False)
    rows = [{"id": t.id, "name": t.name, "category": t.category, "design": t.design, "agents": len(t.agents),
             "rounds": t.rounds, "verifiable": t.verifiable, "mechanics": mechanics_of(t)} for t in tasks]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    designs = len({r["design"] for r in rows if r["design"]})
    table = Table("id", "name", "category", "design", "agents", "rounds", "mechanics",
                  title=f"{suite} tasks ({len(rows)}, {designs} designs)")
    for r in rows:
        table.add_row(r["id"], r["name"], r["category"] or "-", r["design"] or "-", str(r["agents"]), str(r["rounds"]),
                      ", ".join(r["mechanics"]) or "-")
    _console().print(table)


@tasks_group.command("show")
@click.argument("task_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (with the task's mechanics).")
def tasks_show(task_id: str, as_json: bool) -> None:
    """Show one task: objective, agents, verifier, reference solution length, world mechanics."""
    from ..tasks.mechanics import mechanics_of
    from ..tasks.task import TaskError, find_task

    try:
        t = find_task(task_id, validate=False)
    except (KeyError, TaskError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    if as_json:
        click.echo(json.dumps({
            "id": t.id, "name": t.name, "category": t.category, "design": t.design, "path": t.path, "agents": [
                {"agent_id": a.agent_id, "username": a.username, "role": a.role, "x": a.x, "y": a.y}
                for a in t.agents],
            "rounds": t.rounds, "max_action_steps": t.max_action_steps, "objective": t.objectives.primary.strip(),
            "needs_communication": t.needs_communication, "verifiable": t.verifiable,
            "checks": [c.model_dump(exclude_none=True) for c in (t.verifier.checks if t.verifier else [])],
            "reference_steps": {k: len(v) for k, v in (t.reference_solution or {}).items()},
            "mechanics": mechanics_of(t),
            "mechanics_spec": t.mechanics.model_dump(exclude_defaults=True) if t.mechanics else {}}, indent=2))
        return
    con = _console()
    con.print(f"[bold]{t.id}[/bold]: {t.name}  ({t.category or 'no category'}, {len(t.agents)} agents, "
              f"{t.rounds} rounds, {t.max_action_steps} action steps per agent)")
    con.print(f"design: {t.design or '- (the file names none)'}", highlight=False)
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
    mechanics = mechanics_of(t)
    con.print("World mechanics: " + (", ".join(mechanics) if mechanics else "none (the world changes only by the "
                                                                             "agents' actions)"))


@tasks_group.command("validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True,
              help="Fail on warnings too (an objective asking for an exact amount checked as 'at least').")
@world_options
def tasks_validate(files: tuple[Path, ...], strict: bool, world: str | None, server_url: str | None,
                   world_option: tuple[str, ...]) -> None:
    """Validate task files against the world (default: every shipped task). Exit 1 on any error.

    Warnings (printed, not failed without --strict): an objective that asks for an exact amount ("exactly",
    "the amounts asked", "N of") whose check passes at that amount or more (add exact: true to the check).
    With --world paper-server the task's structure is checked here and its items, skills and spawns by the
    server (scratch characters, logged out again)."""
    from ..tasks.amounts import amount_warnings
    from ..tasks.task import SUITES, TaskError, load_task, suite_files

    name, options = parse_world(world, server_url, world_option)
    check = None if name == EMBEDDED else getattr(plugins.get("world", name), "validate_task", None)
    paths = list(files) or [p for s in SUITES for p in suite_files(s)]
    con = _console()
    bad = warned = 0
    for p in paths:
        try:
            t = load_task(p, validate=name == EMBEDDED)
            problems = check(t, **options) if check is not None else []
            warnings = amount_warnings(t)
            if warnings and strict:
                problems = problems + warnings
            elif warnings:
                warned += 1
                from rich.markup import escape

                for w in warnings:
                    con.print(f"[yellow]warn[/yellow] {escape(str(p))}: {escape(str(w))}", highlight=False,
                              soft_wrap=True)
            if problems:
                raise TaskError(str(p), problems)
        except (TaskError, ValueError) as exc:
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
    con.print(f"{len(paths) - bad}/{len(paths)} task files valid" + (f" on {name}" if name != EMBEDDED else "")
              + (f"; {warned} with warnings (--strict fails them)" if warned else ""))
    if bad:
        sys.exit(1)


@tasks_group.command("port")
@click.argument("paper_task", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the ported task (default: PAPER_TASK_ported.yaml beside it).")
def tasks_port(paper_task: Path, out: Path | None) -> None:
    """Rewrite a task file of the paper's for the embedded world: items, skills and spawns mapped
    (core/tasks/data/paper_mapping.yaml), and a plain list of what could not be mapped."""
    from ..tasks.port import port_file
    from ..tasks.task import TaskError, load_task

    try:
        dest, report = port_file(paper_task, out)
    except (OSError, ValueError) as exc:  # yaml errors are ValueErrors too
        raise click.ClickException(f"{paper_task}: {exc}") from None
    for line in report.lines():
        click.echo(("  " if line.startswith("mapped") else "! ") + line)
    try:
        load_task(dest)
    except TaskError as exc:  # the table or the map changed under the port: say so, keep the file
        click.echo(f"wrote {dest}, but it does not validate yet:\n{exc}")
        sys.exit(1)
    click.echo(f"wrote {dest} ({len(report.changed)} mapped, {len(report.unmapped)} not mapped); it validates")


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
    from ..runs.export import episode_dirs
    from ..runs.integrity import replay_summary

    click.echo(replay_summary(episode_dirs(run_dir)))


@hookimpl
def register_commands(cli):
    cli.add_command(tasks_group)
    cli.add_command(export_cmd)
