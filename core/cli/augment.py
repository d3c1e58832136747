"""``agentworld tasks augment``: (re)generate the augmented suite from the main tasks, or keep a model's
proven proposals (registered as a plugin; attaches to the ``tasks`` group).

Deterministic by default: the documented transformations of ``core/tasks/augment.py``, every candidate
proven like a main task, the first ``--target`` kept (``core/runs/augment.py``). With ``--model`` an
OpenAI-compatible model proposes variants instead, and only the proposals that pass the same proofs are
written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..hookspecs import hookimpl


def default_out() -> Path:
    from importlib import resources  # not at import: every command line start imports this module

    return Path(str(resources.files("agentworld.tasks"))) / "augmented"


@click.command("augment")
@click.option("--task", "task_ids", multiple=True,
              help="Only these main tasks (repeatable); replaces their variants only, other files are kept "
                   "[default: the main suite, regenerating the folder].")
@click.option("--target", type=click.IntRange(1, 10_000), default=100, show_default=True,
              help="Stop after this many proven variants, one per main task (deterministic mode).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write [default: the shipped tasks/augmented].")
@click.option("--model", help="Ask this model (provider:model, OpenAI-compatible) to propose variants instead.")
@click.option("--base-url", help="Base URL of the model's OpenAI-compatible endpoint.")
@click.option("--api-key-env", help="NAME of the environment variable holding the model's API key.")
@click.option("--proposals", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Proposals asked per task (with --model).")
@click.option("--dry-run", is_flag=True, help="Generate and prove, write nothing.")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Main tasks worked on at once (worker processes); the result is the same.")
def augment_cmd(task_ids: tuple[str, ...], target: int, out: Path | None, model: str | None, base_url: str | None,
                api_key_env: str | None, proposals: int, dry_run: bool, jobs: int) -> None:
    """Generate the augmented suite: harder variants of the main tasks (objective, spawns, starting items,
    team size), each proven like a main task. Exit 1 if fewer than --target were kept."""
    from ..console import make_console
    from ..runs.augment import ModelProposer, generate, replace_variants, write_suite, write_task
    from ..tasks.task import TaskError, find_task, load_suite

    con = make_console()
    try:
        sources = [find_task(t) for t in task_ids] if task_ids else load_suite("main")
    except (KeyError, TaskError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    out = out or default_out()
    t0 = time.perf_counter()

    def progress(task_id: str, recipe: str, ok: bool, why: str) -> None:
        mark = "[green]kept[/green]" if ok else "[dim]dropped[/dim]"
        con.print(f"{mark} {task_id} {recipe}{'' if ok else ': ' + why[:160]}", highlight=False, soft_wrap=True)

    if model:
        try:
            proposer = ModelProposer(model, base_url=base_url, api_key_env=api_key_env)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--model") from None
        kept = 0
        for task in sources:
            for i in range(1, proposals + 1):
                aug, why = proposer.propose(task, i)
                progress(task.id, f"model proposal {i}", aug is not None, why)
                if aug is not None:
                    kept += 1
                    if not dry_run:
                        con.print(f"  wrote {write_task(aug, out)}")
        con.print(f"{kept} of {len(sources) * proposals} proposals kept in {time.perf_counter() - t0:.0f} s")
        return
    augmented = generate(sources, target=target, progress=progress, jobs=jobs, piloted=_piloted())
    if not dry_run:
        try:  # --task replaces those tasks' variants only; a full run regenerates the folder
            (replace_variants if task_ids else write_suite)(augmented, out, sources)
        except ValueError as exc:  # an unreadable README: refused before any file changed
            raise click.ClickException(str(exc)) from None
    con.print(f"{len(augmented)} proven variants of {len(sources)} main tasks in {time.perf_counter() - t0:.0f} s"
              + ("" if dry_run else f", written to {out}"))
    if task_ids and not dry_run:
        for task in sources:
            if task.id not in {a.source for a in augmented}:
                con.print(f"[yellow]{task.id}: no variant proved; its old variant (if any) is kept[/yellow]")
    wanted = min(target, len(sources)) if task_ids else target  # --task X cannot reach the default 100
    if len(augmented) < wanted:
        con.print(f"[red]fewer than --target {wanted}[/red]: add recipes or main tasks")
        sys.exit(1)


def _piloted() -> dict[str, tuple[str, int]]:
    """variant id -> (digest without the budget, rounds) of the fastest pilot win on each augmented task as it
    is now, its budget aside (``core/runs/pilots.play_digest``)."""
    from ..runs.pilots import default_pilots_dir, fastest_wins
    from ..tasks.task import TaskError, load_suite

    try:
        variants = load_suite("augmented")
    except TaskError:
        return {}  # no augmented suite yet: nothing was piloted
    return {tid: (p.play, p.record.rounds) for tid, p in fastest_wins(variants, default_pilots_dir()).items()}


@hookimpl(trylast=True)  # after core/cli/tasks.py has added the `tasks` group
def register_commands(cli):
    tasks = cli.commands.get("tasks")
    if tasks is None:
        raise RuntimeError("agentworld.core.cli.augment needs the `tasks` command group (agentworld.core.cli.tasks)")
    tasks.add_command(augment_cmd)
